use toolnexus::tool;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct SearchArgs {
    query: String,
}

/// Search.
#[tool]
fn search(#[args] args: SearchArgs, limit: u32) -> String {
    format!("{} {limit}", args.query)
}

fn main() {}
