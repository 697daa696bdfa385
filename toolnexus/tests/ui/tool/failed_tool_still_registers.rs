// A `#[tool]` with a mistake still declares its struct and an `impl Tool`: registering it
// gives no second error (one mistake, one error).
use toolnexus::{Toolkit, tool};

#[tool]
fn book_flight(flight: String) -> String {
    flight
}

fn main() {
    let _ = Toolkit::builder().tool(BookFlight).build();
}
