use toolnexus::Args;

#[derive(Args)]
struct Query {
    text: String,
    #[arg(rename = "text")]
    other: String,
}

#[derive(Args)]
enum Level {
    Low,
    #[serde(rename = "Low")]
    High,
}

fn main() {}
