use toolnexus::Args;

#[derive(Args)]
struct Query {
    text: String,
    filter: dyn Fn(&str) -> bool,
}

fn main() {}
