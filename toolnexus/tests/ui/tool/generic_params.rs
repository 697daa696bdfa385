use toolnexus::tool;

/// Echo anything.
#[tool]
fn echo<T: serde::de::DeserializeOwned>(value: T) -> String {
    let _ = value;
    String::new()
}

fn main() {}
