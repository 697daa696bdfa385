//! The expansion of `#[tool]` and `#[toolset]` is clean under strict user lints: this file
//! compiles with them denied (and `cargo clippy --all-targets` checks it with pedantic on).

#![deny(
    missing_docs,
    unused_qualifications,
    unused,
    rust_2018_idioms,
    missing_debug_implementations,
    unreachable_pub,
    non_camel_case_types,
    non_upper_case_globals,
    non_snake_case
)]
#![deny(clippy::all, clippy::pedantic)]

/// Tools under strict lints; everything the runtime names is also in scope here, so any
/// needless qualification in the expansion would be reported.
pub mod strict {
    use std::sync::Arc;

    use serde_json::{Map, Value};
    use toolnexus::{BoxFuture, Context as Ctx, SharedTool, Tool, ToolResult, tool, toolset};

    /// A nested argument.
    #[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
    pub struct Point {
        /// Horizontal.
        pub x: i32,
        /// Vertical.
        pub y: i32,
    }

    /// Arguments as one struct.
    #[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
    pub struct MoveArgs {
        /// Where to.
        pub to: Point,
    }

    /// Measure a distance.
    ///
    /// In kilometres.
    ///
    /// # Errors
    ///
    /// Never; the signature shows the `Result` mapping.
    #[tool]
    pub async fn distance(
        /// From here.
        from: Point,
        /// To there.
        to: Option<Point>,
        /// Rounding.
        #[arg(default = 2)]
        digits: u8,
        #[arg(rename = "unitName")] unit: &str,
        ctx: &toolnexus::Context,
    ) -> Result<String, std::io::Error> {
        let _ = ctx;
        std::future::ready(()).await;
        let to = to.unwrap_or(Point { x: 0, y: 0 });
        Ok(format!(
            "{} {digits} {unit}",
            (from.x - to.x).abs() + (from.y - to.y).abs()
        ))
    }

    /// Move somewhere.
    #[tool(name = "move-to")]
    #[must_use]
    pub fn move_to(#[args] args: MoveArgs, #[ctx] ctx: &Ctx) -> ToolResult {
        let _ = ctx;
        let MoveArgs { to } = args;
        ToolResult::success(format!("{},{}", to.x, to.y))
    }

    /// A stateful toolset.
    #[derive(Debug, Default)]
    pub struct Store {
        items: std::sync::Mutex<Vec<String>>,
    }

    #[toolset]
    impl Store {
        /// Add an item.
        #[tool]
        pub fn add(&self, item: String) -> usize {
            let mut items = self
                .items
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner);
            items.push(item);
            items.len()
        }

        /// List items.
        #[tool]
        pub async fn list(&self) -> Vec<String> {
            std::future::ready(()).await;
            self.items
                .lock()
                .unwrap_or_else(std::sync::PoisonError::into_inner)
                .clone()
        }
    }

    /// Everything here, as shared tools.
    #[must_use]
    pub fn all() -> Vec<SharedTool> {
        let mut v: Vec<SharedTool> = vec![Arc::new(Distance), Arc::new(MoveTo)];
        v.extend(Arc::new(Store::default()).tools());
        v
    }

    /// The arguments a tool receives.
    pub type Args = Map<String, Value>;

    /// Runs a tool by hand, naming the remaining imports so none is unused.
    pub fn run<'a>(tool: &'a dyn Tool, args: Args, ctx: &'a Ctx) -> BoxFuture<'a, ToolResult> {
        tool.execute(args, ctx)
    }
}

/// A module that imports `tool` only for the methods of a `#[toolset]`: the import counts as
/// used.
pub mod only_toolset {
    use toolnexus::{tool, toolset};

    /// A greeter.
    #[derive(Debug)]
    pub struct Greeter;

    #[toolset]
    impl Greeter {
        /// Greet someone.
        #[tool]
        #[must_use]
        pub fn greet(&self, name: &str) -> String {
            format!("hello {name}")
        }
    }
}

#[tokio::test]
async fn strict_tools_work() {
    assert_eq!(
        std::sync::Arc::new(only_toolset::Greeter).tools()[0].name(),
        "greet"
    );
    let kit = toolnexus::Toolkit::from_tools(strict::all()).unwrap();
    let r = strict::run(
        &strict::MoveTo,
        strict::Args::new(),
        &toolnexus::Context::new(),
    )
    .await;
    assert_eq!(
        r.output,
        "invalid arguments for move-to: missing field `to`"
    );
    let r = kit
        .execute(
            "distance",
            serde_json::json!({"from": {"x": 3, "y": 4}, "unitName": "km"}),
            &toolnexus::Context::new(),
        )
        .await;
    assert_eq!(r.output, "7 2 km");
    let r = kit
        .execute(
            "move-to",
            serde_json::json!({"to": {"x": 1, "y": 2}}),
            &toolnexus::Context::new(),
        )
        .await;
    assert_eq!(r.output, "1,2");
}
