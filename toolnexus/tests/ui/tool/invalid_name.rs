use toolnexus::tool;

/// Book a flight.
#[tool(name = "book flight")]
fn book() -> String {
    String::new()
}

fn main() {}
