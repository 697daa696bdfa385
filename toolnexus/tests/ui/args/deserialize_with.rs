use toolnexus::Args;

#[derive(Args)]
struct Amount {
    #[serde(deserialize_with = "cents")]
    cents: u64,
}

fn main() {}
