#[derive(serde::Deserialize)]
struct Common {
    name: String,
}

#[derive(toolnexus::Form, serde::Deserialize)]
struct Person {
    #[serde(flatten)]
    common: Common,
}

fn main() {}
