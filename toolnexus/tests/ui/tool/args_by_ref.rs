use toolnexus::tool;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct SearchArgs {
    query: String,
}

/// Search.
#[tool]
fn search(#[args] args: &SearchArgs) -> String {
    args.query.clone()
}

fn main() {}
