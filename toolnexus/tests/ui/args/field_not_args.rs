use toolnexus::Args;

struct Money {
    cents: u64,
}

#[derive(Args)]
struct Expense {
    amount: Money,
}

fn main() {}
