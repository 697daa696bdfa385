use toolnexus::tool;

/// Deletes a file.
#[tool(read_only, destructive)]
fn delete_file(path: String) -> String {
    path
}

fn main() {
    let _ = DeleteFile;
}
