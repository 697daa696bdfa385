#[derive(toolnexus::Form, serde::Deserialize)]
struct Expense {
    #[form(label = " ")]
    cost_center: String,
}

fn main() {
    let _ = toolnexus::suspend!(input "Which?", schema = Expense);
}
