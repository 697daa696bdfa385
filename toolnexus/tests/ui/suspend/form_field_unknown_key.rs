#[derive(toolnexus::Form, serde::Deserialize)]
struct Expense {
    #[form(title = "Cost center")]
    cost_center: String,
}

fn main() {
    let _ = toolnexus::suspend!(input "Which?", schema = Expense);
}
