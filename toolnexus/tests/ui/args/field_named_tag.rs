use toolnexus::Args;

#[derive(Args)]
#[serde(tag = "kind")]
enum Payment {
    Card { kind: String },
}

#[derive(Args)]
#[serde(tag = "t", content = "t")]
enum Same {
    A,
}

fn main() {}
