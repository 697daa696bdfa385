use toolnexus::Args;

#[derive(Args)]
struct Query {
    #[serde(alias = "q")]
    query: String,
}

fn main() {}
