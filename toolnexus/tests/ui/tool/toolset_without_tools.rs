use toolnexus::toolset;

struct Db;

#[toolset]
impl Db {
    fn helper(&self) {}
}

fn main() {}
