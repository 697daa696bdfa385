use toolnexus::{tool, toolset};

struct Counter {
    n: u32,
}

#[toolset]
impl Counter {
    /// Count one more.
    #[tool]
    fn bump(&mut self) -> u32 {
        self.n += 1;
        self.n
    }
}

fn main() {}
