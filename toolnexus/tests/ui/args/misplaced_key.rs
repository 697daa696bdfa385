use toolnexus::Args;

// each key where it means nothing: one error on each key

#[derive(Args)]
#[arg(skip, rename = "Q")]
struct Query {
    #[arg(tag = "kind", rename_all = "camelCase")]
    text: String,
    #[serde(crate = "toolnexus", content = "c")]
    limit: u32,
}

#[derive(Args)]
#[arg(default)]
#[serde(rename_all = "lowercase")]
enum Level {
    #[arg(default, crate = toolnexus)]
    Low,
    #[serde(rename_all_fields = "camelCase")]
    High,
}

fn main() {}
