use toolnexus::tool;

/// Book a flight.
#[tool]
fn book(first: &toolnexus::Context, flight: String, second: &toolnexus::Context) -> String {
    let _ = (first, second);
    flight
}

fn main() {}
