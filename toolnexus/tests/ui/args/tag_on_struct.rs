use toolnexus::Args;

#[derive(Args)]
#[serde(tag = "type")]
struct Query {
    text: String,
}

fn main() {}
