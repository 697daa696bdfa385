fn main() {
    let _ = || -> toolnexus::ToolResult {
        let city: String = toolnexus::ask!(input "Which city?");
        toolnexus::ToolResult::success(city)
    };
    let _ = || -> toolnexus::ToolResult {
        let () = toolnexus::ask!(authorization, url = "https://example.com/login");
        toolnexus::ToolResult::success("")
    };
}
