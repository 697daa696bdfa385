use toolnexus::tool;

/// Reads a file.
#[tool(read_only = "yes")]
fn read_file(path: String) -> String {
    path
}

fn main() {
    let _ = ReadFile;
}
