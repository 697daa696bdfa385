fn main() {
    let r = toolnexus::ToolResult::success("x");
    toolnexus::assert_pending!(r, input "x", expires_in = std::time::Duration::from_secs(1));
}
