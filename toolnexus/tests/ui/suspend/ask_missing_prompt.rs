fn main() {
    let ctx = toolnexus::Context::new();
    let _ = || -> toolnexus::ToolResult {
        let () = toolnexus::ask!(ctx, approval);
        toolnexus::ToolResult::success("")
    };
}
