fn main() {
    let _ = toolnexus::suspend!(authorization "Log in to GitHub");
}
