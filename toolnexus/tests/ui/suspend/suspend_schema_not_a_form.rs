struct Trip {
    city: String,
}

fn main() {
    let _ = toolnexus::suspend!(input "Where to?", schema = Trip);
}
