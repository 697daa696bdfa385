use toolnexus::tool;

struct Db;

impl Db {
    /// Run a query.
    #[tool]
    fn query(&self, sql: String) -> String {
        sql
    }
}

fn main() {
    let _ = Db;
}
