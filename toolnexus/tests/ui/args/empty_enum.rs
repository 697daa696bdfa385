use toolnexus::Args;

#[derive(Args)]
enum Never {}

fn main() {}
