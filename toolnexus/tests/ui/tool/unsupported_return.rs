use toolnexus::tool;

struct Booking;

/// Book a flight.
#[tool]
fn book(flight: String) -> Booking {
    let _ = flight;
    Booking
}

fn main() {}
