#[derive(toolnexus::Form)]
struct Address {
    street: String,
}

#[derive(toolnexus::Form)]
struct Stop {
    city: String,
    address: Address,
}

fn main() {}
