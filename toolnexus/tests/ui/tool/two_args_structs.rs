use toolnexus::tool;

#[derive(serde::Deserialize, schemars::JsonSchema)]
struct A {
    a: u8,
}

/// Two structs.
#[tool]
fn both(#[args] first: A, #[args] second: A) -> u8 {
    first.a + second.a
}

fn main() {}
