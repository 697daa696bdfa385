use toolnexus::Args;

#[derive(Args)]
struct Inner {
    a: u32,
}

#[derive(Args)]
struct Outer {
    #[serde(flatten)]
    inner: Inner,
}

fn main() {}
