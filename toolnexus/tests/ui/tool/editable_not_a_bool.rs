/// Pays someone.
#[toolnexus::tool(approval = "Pay {amount}?", editable = "yes")]
fn pay(amount: u32) -> String {
    format!("paid {amount}")
}

fn main() {}
