fn main() {
    let _ = toolnexus::suspend!(42 "Which city?");
}
