fn main() {
    let _ = toolnexus::suspend!(input "Which city?", id = "a", id = "b");
}
