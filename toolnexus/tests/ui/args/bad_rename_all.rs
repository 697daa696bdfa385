use toolnexus::Args;

#[derive(Args)]
#[serde(rename_all = "camel")]
struct Query {
    max_hits: u32,
}

fn main() {}
