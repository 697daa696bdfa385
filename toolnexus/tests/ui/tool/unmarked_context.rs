use toolnexus::{Context, tool};

/// Book a flight.
#[tool]
fn book(flight: String, ctx: &Context) -> String {
    let _ = ctx;
    flight
}

fn main() {}
