use toolnexus::tool;

/// The doc comment loses to the attribute.
#[tool(description = "  ")]
fn ping() {}

fn main() {}
