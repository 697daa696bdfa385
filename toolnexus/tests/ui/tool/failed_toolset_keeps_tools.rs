// A `#[toolset]` with a mistake still has its `tools()` constructor: calling it gives no
// second error (one mistake, one error).
use std::sync::Arc;
use toolnexus::{Toolkit, tool, toolset};

struct Db;

#[toolset]
impl Db {
    #[tool]
    fn query(&self, sql: String) -> String {
        sql
    }
}

fn main() {
    let _ = Toolkit::builder().tools(Arc::new(Db).tools()).build();
}
