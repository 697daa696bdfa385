use toolnexus::{tool, toolset};

struct Db;

#[toolset]
impl Clone for Db {
    /// Clone it.
    #[tool]
    fn clone(&self) -> Self {
        Db
    }
}

fn main() {}
