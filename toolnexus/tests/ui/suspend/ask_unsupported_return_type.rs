fn greet(ctx: &toolnexus::Context) -> String {
    let name: String = toolnexus::ask!(ctx, input "Your name?");
    format!("hello {name}")
}

fn main() {
    let _ = greet(&toolnexus::Context::new());
}
