use toolnexus::{tool, toolset};

struct Db<T>(T);

#[toolset]
impl<T: Send + Sync> Db<T> {
    /// Ping.
    #[tool]
    fn ping(&self) -> &'static str {
        "pong"
    }
}

fn main() {}
