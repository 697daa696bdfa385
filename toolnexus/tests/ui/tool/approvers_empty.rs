/// Pays someone.
#[toolnexus::tool(approval = "Pay {amount}?", approvers = " ")]
fn pay(amount: u32) -> String {
    format!("paid {amount}")
}

fn main() {}
