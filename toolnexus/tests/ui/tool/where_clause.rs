use toolnexus::tool;

/// Ping.
#[tool]
fn ping() -> String
where
    String: Clone,
{
    String::new()
}

fn main() {}
