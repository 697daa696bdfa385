use toolnexus::Args;

// keys whose meaning the schema cannot carry: each named, with its reason

#[derive(Args)]
#[serde(from = "String")]
struct Wrapped {
    text: String,
}

#[derive(Args)]
#[serde(transparent)]
struct Plain {
    text: String,
}

#[derive(Args)]
#[serde(tag = "kind")]
enum Event {
    Start { at: u64 },
    #[serde(other)]
    Unknown,
}

#[derive(Args)]
struct Raw {
    #[serde(with = "my_format")]
    at: u64,
}

fn main() {}
