//! `#[toolset]` (tools bound to one shared instance) and the context parameter.

// Tools take their arguments by value and may be `async` without awaiting: these tests write
// tools the way users do, and the expectations are long golden strings.
#![allow(
    clippy::needless_pass_by_value,
    clippy::unused_async,
    clippy::result_large_err,
    clippy::too_many_lines,
    clippy::unnecessary_wraps
)]

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::json;
use toolnexus::{Answer, Context, Request, Suspension, Tool, ToolResult, Toolkit, tool, toolset};

struct Db {
    rows: Mutex<Vec<String>>,
    queries: AtomicU32,
}

#[toolset]
impl Db {
    /// Insert a row.
    #[tool]
    async fn insert(
        &self,
        /// The row's text.
        row: String,
    ) -> usize {
        let mut rows = self.rows.lock().unwrap();
        rows.push(row);
        rows.len()
    }

    /// Count rows matching a prefix.
    #[tool(name = "count_rows")]
    fn count(&self, prefix: Option<String>, ctx: &toolnexus::Context) -> String {
        self.queries.fetch_add(1, Ordering::SeqCst);
        let _ = ctx;
        let rows = self.rows.lock().unwrap();
        let p = prefix.unwrap_or_default();
        rows.iter()
            .filter(|r| r.starts_with(&p))
            .count()
            .to_string()
    }

    /// Say which version this is (no receiver).
    #[tool]
    fn version() -> &'static str {
        "1"
    }

    /// A tool named like a method of `Arc`: still reaches `Db`.
    #[tool]
    #[allow(clippy::should_implement_trait)] // the name is the point of the test
    fn clone(&self) -> String {
        format!("{} rows", self.rows.lock().unwrap().len())
    }

    fn helper(&self) -> u32 {
        self.queries.load(Ordering::SeqCst)
    }
}

#[tokio::test]
async fn tools_share_one_instance() {
    let db = Arc::new(Db {
        rows: Mutex::new(vec!["seed".into()]),
        queries: AtomicU32::new(0),
    });
    let tools = Arc::clone(&db).tools();
    let names: Vec<&str> = tools.iter().map(|t| t.name()).collect();
    assert_eq!(names, ["insert", "count_rows", "version", "clone"]);
    assert_eq!(tools[0].description(), "Insert a row.");
    assert_eq!(
        serde_json::to_string(tools[0].input_schema()).unwrap(),
        r#"{"additionalProperties":false,"properties":{"row":{"description":"The row's text.","type":"string"}},"required":["row"],"type":"object"}"#
    );
    assert_eq!(
        serde_json::to_string(tools[1].input_schema()).unwrap(),
        r#"{"additionalProperties":false,"properties":{"prefix":{"type":["string","null"]}},"type":"object"}"#
    );

    let kit = Toolkit::builder().tools(tools).build().unwrap();
    let ctx = Context::new();
    assert_eq!(
        kit.execute("insert", json!({"row": "sample"}), &ctx).await,
        ToolResult::success("2")
    );
    assert_eq!(
        kit.execute("count_rows", json!({"prefix": "s"}), &ctx)
            .await,
        ToolResult::success("2")
    );
    assert_eq!(
        kit.execute("count_rows", json!({}), &ctx).await,
        ToolResult::success("2")
    );
    assert_eq!(
        kit.execute("version", json!({}), &ctx).await,
        ToolResult::success("1")
    );
    assert_eq!(
        kit.execute("clone", json!({}), &ctx).await,
        ToolResult::success("2 rows")
    );
    // the caller's instance saw every call
    assert_eq!(db.helper(), 2);
    assert_eq!(db.rows.lock().unwrap().as_slice(), ["seed", "sample"]);
    // and the methods stay callable
    assert_eq!(db.insert("direct".into()).await, 3);
    assert_eq!(Db::version(), "1");
}

/// Book, asking for the city first.
#[tool]
async fn book(flight: String, ctx: &::toolnexus::Context) -> Result<String, Suspension> {
    match ctx.answer_data::<String>() {
        Ok(Some(city)) => Ok(format!("{flight} to {city}")),
        _ => Err(Suspension::new(
            Request::input("Which city?").with_id("r-city"),
        )),
    }
}

/// Takes the context by value.
#[tool]
fn owned_ctx(ctx: toolnexus::Context) -> String {
    ctx.call_id().unwrap_or("none").to_owned()
}

mod renamed {
    use toolnexus::Context;
    use toolnexus::tool;

    /// Takes a marked context whose type is imported.
    #[tool]
    pub(crate) fn marked(#[ctx] c: &Context, n: u8) -> String {
        format!("{n} {}", c.is_cancelled())
    }

    /// The other marker spelling.
    #[tool]
    pub(crate) fn marked_too(#[context] c: Context) -> bool {
        c.answer().is_some()
    }
}

#[tokio::test]
async fn the_context_reaches_the_function_and_is_not_in_the_schema() {
    assert_eq!(
        serde_json::to_string(Book.input_schema()).unwrap(),
        r#"{"additionalProperties":false,"properties":{"flight":{"type":"string"}},"required":["flight"],"type":"object"}"#
    );
    let kit = Toolkit::builder()
        .tool(Book)
        .tool(OwnedCtx)
        .tool(renamed::Marked)
        .tool(renamed::MarkedToo)
        .build()
        .unwrap();
    let args = json!({"flight": "AI-503"});
    let first = kit.execute("book", args.clone(), &Context::new()).await;
    let req = toolnexus::pending_of(&first).unwrap().clone();
    assert_eq!(req.id, "r-city");
    let ctx = Context::new().with_answer(req.accept("Oslo"));
    assert_eq!(
        kit.execute("book", args, &ctx).await,
        ToolResult::success("AI-503 to Oslo")
    );

    assert_eq!(
        kit.execute("owned_ctx", json!({}), &Context::new().with_call_id("c7"))
            .await,
        ToolResult::success("c7")
    );
    assert_eq!(
        serde_json::to_string(renamed::Marked.input_schema()).unwrap(),
        r#"{"additionalProperties":false,"properties":{"n":{"format":"uint8","maximum":255,"minimum":0,"type":"integer"}},"required":["n"],"type":"object"}"#
    );
    assert_eq!(
        kit.execute("marked", json!({"n": 4}), &Context::new())
            .await,
        ToolResult::success("4 false")
    );
    let answered = Context::new().with_answer(Answer::ok("x"));
    assert_eq!(
        kit.execute("marked_too", json!({}), &answered).await,
        ToolResult::success("true")
    );
}

/// A crate that re-exports toolnexus under another name.
mod facade {
    pub(crate) use toolnexus as engine;
}

/// Reaches the runtime through `crate = path`.
#[tool(crate = facade::engine)]
fn via_facade(x: u8, ctx: &facade::engine::Context) -> u8 {
    let _ = ctx;
    x + 1
}

/// The string spelling of `crate`.
#[tool(crate = "facade::engine")]
fn via_facade_str() -> u8 {
    0
}

#[tokio::test]
async fn the_runtime_path_can_be_overridden() {
    let kit = Toolkit::builder()
        .tool(ViaFacade)
        .tool(ViaFacadeStr)
        .build()
        .unwrap();
    assert_eq!(
        kit.execute("via_facade", json!({"x": 1}), &Context::new())
            .await,
        ToolResult::success("2")
    );
    assert_eq!(
        serde_json::to_string(ViaFacade.input_schema()).unwrap(),
        r#"{"additionalProperties":false,"properties":{"x":{"format":"uint8","maximum":255,"minimum":0,"type":"integer"}},"required":["x"],"type":"object"}"#
    );
    assert_eq!(
        kit.execute("via_facade_str", json!({}), &Context::new())
            .await,
        ToolResult::success("0")
    );
}

/// Panics.
#[tool]
fn panics() -> String {
    panic!("boom")
}

#[tokio::test]
async fn a_panicking_tool_is_a_failure_naming_it() {
    let kit = Toolkit::builder().tool(Panics).build().unwrap();
    assert_eq!(
        kit.execute("panics", json!({}), &Context::new()).await,
        ToolResult::error("tool panics panicked: boom")
    );
}
