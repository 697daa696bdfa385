fn main() {
    let _ = toolnexus::suspend!(input);
    let _ = toolnexus::suspend!("review", id = "r1");
}
