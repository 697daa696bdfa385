use toolnexus::Args;

#[derive(Args)]
struct Card {
    last4: String,
}

#[derive(Args)]
#[serde(tag = "kind")]
enum Payment {
    Card(Card),
    Cash,
}

fn main() {}
