use toolnexus::Args;

#[derive(Args)]
struct Meters(f64);

fn main() {}
