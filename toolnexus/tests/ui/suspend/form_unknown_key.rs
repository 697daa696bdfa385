#[derive(toolnexus::Form, serde::Deserialize)]
#[form(krate = toolnexus)]
struct Trip {
    city: String,
}

fn main() {
    let _ = toolnexus::suspend!(input "Where to?", schema = Trip);
}
