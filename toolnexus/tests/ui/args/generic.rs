use toolnexus::Args;

#[derive(Args)]
struct Page<T> {
    items: Vec<T>,
}

fn main() {}
