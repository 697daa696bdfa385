/// Pays someone.
#[toolnexus::tool(approvers = "finance")]
fn pay(amount: u32) -> String {
    format!("paid {amount}")
}

fn main() {}
