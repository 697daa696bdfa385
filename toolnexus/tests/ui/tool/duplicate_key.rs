use toolnexus::tool;

/// Book a flight.
#[tool(name = "book", name = "book_flight")]
fn book() {}

fn main() {}
