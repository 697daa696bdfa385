use toolnexus::Args;

#[derive(Args)]
struct Query<'a> {
    text: &'a str,
}

fn main() {}
