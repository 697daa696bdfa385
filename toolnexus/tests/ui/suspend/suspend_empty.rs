fn main() {
    let _ = toolnexus::suspend!();
}
