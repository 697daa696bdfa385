/// Pays someone.
#[toolnexus::tool(approval = "Pay {amount}?", expires_in = "1 hour")]
fn pay(amount: u32) -> String {
    format!("paid {amount}")
}

/// Refunds someone.
#[toolnexus::tool(approval = "Refund {amount}?", escalate(approvers = "cfo", after = "1h"))]
fn refund(amount: u32) -> String {
    format!("refunded {amount}")
}

/// Charges someone.
#[toolnexus::tool(approval = "Charge {amount}?", expires_in = "1h", escalate(approvers = "cfo"))]
fn charge(amount: u32) -> String {
    format!("charged {amount}")
}

fn main() {}
