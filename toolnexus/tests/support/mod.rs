//! What the modules of this crate's `api` test binary share (it includes it with
//! `#[path = "../support/mod.rs"] mod support;`). `skip.rs` beside it, the record of skipped tests,
//! is shared with the `toolnexus-tests` crate's binaries (see its docs).

use serde_json::{Map, Value};
use toolnexus::{BoxFuture, Context, Tool, ToolResult};

/// A hand-written tool: a name, a description and a schema no builder checked. It succeeds
/// with an empty text.
pub(crate) struct RawTool {
    pub(crate) name: String,
    pub(crate) description: &'static str,
    pub(crate) schema: Value,
}

impl Tool for RawTool {
    fn name(&self) -> &str {
        &self.name
    }
    fn description(&self) -> &str {
        self.description
    }
    fn input_schema(&self) -> &Value {
        &self.schema
    }
    fn execute<'a>(
        &'a self,
        _args: Map<String, Value>,
        _ctx: &'a Context,
    ) -> BoxFuture<'a, ToolResult> {
        Box::pin(async { ToolResult::success("") })
    }
}
