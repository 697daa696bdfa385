use toolnexus::tool;

/// Pays someone.
#[tool(approvals = 2)]
fn pay(amount: u32) -> String {
    format!("paid {amount}")
}

/// Refunds someone.
#[tool(approval = "Refund {amount}?", approvals = 0)]
fn refund(amount: u32) -> String {
    format!("refunded {amount}")
}

/// Deploys.
#[tool(not_by_requester)]
fn deploy() -> String {
    String::new()
}

/// Transfers.
#[tool(approval = "Transfer {amount}?", approvals = "two")]
fn transfer(amount: u32) -> String {
    format!("moved {amount}")
}

fn main() {}
