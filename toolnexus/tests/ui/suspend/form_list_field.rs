#[derive(toolnexus::Form)]
struct Trip {
    cities: Vec<String>,
    stops: Option<[u8; 3]>,
}

fn main() {}
