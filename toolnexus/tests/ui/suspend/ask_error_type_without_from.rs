fn greet(ctx: &toolnexus::Context) -> Result<String, String> {
    let name: String = toolnexus::ask!(ctx, input "Your name?");
    Ok(format!("hello {name}"))
}

fn main() {
    let _ = greet(&toolnexus::Context::new());
}
