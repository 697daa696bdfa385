use toolnexus::tool;

/// Deletes a file.
#[tool(approval = "Delete {path:?}?")]
fn delete_file(path: String) -> String {
    path
}

/// Moves a file.
#[tool(approval = "Move {from to {to}?")]
fn move_file(from: String, to: String) -> String {
    format!("{from} {to}")
}

/// Copies a file.
#[tool(approval = "Copy } {from}?")]
fn copy_file(from: String) -> String {
    from
}

fn main() {
    let _ = (DeleteFile, MoveFile, CopyFile);
}
