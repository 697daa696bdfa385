#[derive(toolnexus::Form)]
struct City(String);

fn main() {}
