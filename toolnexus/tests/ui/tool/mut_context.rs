use toolnexus::tool;

/// Ping.
#[tool]
fn ping(ctx: &mut toolnexus::Context) {
    let _ = ctx;
}

fn main() {}
