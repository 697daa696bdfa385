use toolnexus::Args;

#[derive(Args)]
#[serde(untagged)]
enum Id {
    Number { n: u64 },
    Name { s: String },
}

fn main() {}
