fn main() {
    let _ = toolnexus::suspend!(input "Which city?", urll = "https://x");
}
