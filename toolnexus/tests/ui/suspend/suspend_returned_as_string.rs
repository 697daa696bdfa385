// A suspension is not text: rustc's hint to add `.to_string()` must not compile, or the
// approval would silently become a plain success.
fn delete(path: &str) -> String {
    return toolnexus::suspend!(approval format!("Delete {path}?"));
}

fn delete_as_text(path: &str) -> String {
    toolnexus::suspend!(approval format!("Delete {path}?")).to_string()
}

fn main() {
    let _ = delete("a");
    let _ = delete_as_text("a");
}
