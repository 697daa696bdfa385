#[derive(toolnexus::Form, serde::Deserialize)]
struct Expense {
    #[form(label = "Your banking password")]
    note: String,
}

fn main() {
    let _ = toolnexus::suspend!(input "Why?", schema = Expense);
}
