use toolnexus::tool;

#[tool]
fn book_flight(flight: String) -> String {
    flight
}

fn main() {}
