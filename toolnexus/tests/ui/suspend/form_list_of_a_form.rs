#[derive(toolnexus::Form)]
struct Stop {
    city: String,
}

#[derive(toolnexus::Form)]
struct Trip {
    // a multi-select lists the options of a choice (an enum), not forms
    stops: Vec<Stop>,
}

fn main() {}
