use toolnexus::tool;

/// Book a flight.
#[tool(title = "Book", name = "book")]
fn book(#[arg(rename = "flightNo", defualt = 1)] flight: u32) -> u32 {
    flight
}

fn main() {}
