use toolnexus::tool;

/// Read raw memory.
#[tool]
unsafe fn peek(addr: usize) -> usize {
    addr
}

fn main() {}
