fn main() {
    let _ = toolnexus::suspend!(inptu "Which city?");
}
