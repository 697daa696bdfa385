#[derive(toolnexus::Form)]
struct Wrapper<T> {
    value: T,
}

fn main() {}
