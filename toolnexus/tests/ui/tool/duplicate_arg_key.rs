use toolnexus::tool;

/// Count.
#[tool]
fn count(#[arg(default = 1, default = 2)] n: u8) -> u8 {
    n
}

fn main() {}
