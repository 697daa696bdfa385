use toolnexus::tool;

/// A struct is not a tool.
#[tool]
struct Ping;

fn main() {}
