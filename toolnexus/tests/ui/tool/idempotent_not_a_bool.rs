/// Pays someone.
#[toolnexus::tool(idempotent = 3)]
fn pay(amount: u32) -> String {
    format!("paid {amount}")
}

fn main() {}
