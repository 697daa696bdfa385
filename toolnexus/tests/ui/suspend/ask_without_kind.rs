fn main() {
    let ctx = toolnexus::Context::new();
    let _ = || -> toolnexus::ToolResult {
        let () = toolnexus::ask!(ctx);
        toolnexus::ToolResult::success("")
    };
}
