use toolnexus::tool;

/// Deletes a file.
#[tool(approval = "Delete {pth}?")]
fn delete_file(path: String, force: bool) -> String {
    format!("{path} {force}")
}

/// Deletes everything.
#[tool(approval = "Delete {what}?")]
fn delete_all() -> String {
    String::new()
}

fn main() {
    let _ = (DeleteFile, DeleteAll);
}
