//! Cross-crate, end-to-end and conformance tests of toolnexus live in `tests/`; shared fakes
//! live in this library.

pub mod fake_provider;
pub mod fixtures;
pub mod inbox_support;
#[cfg(feature = "mcp")]
pub mod mcp_fixtures;
pub mod pg;
// the benchmarks' own helpers (feature `bench`): the test command does not compile them
#[cfg(feature = "bench")]
pub mod ratio;
pub mod receivers;
pub mod recorder;
// one file for both crates' tests: the runtime's own tests cannot depend on this crate
#[path = "../../toolnexus/tests/support/skip.rs"]
pub mod skip;
#[cfg(feature = "bench")]
pub mod store_bench;
pub mod store_conformance;

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use serde_json::Value;
use toolnexus::{Event, FnTool, Request, ToolResult};

/// How many times a fake tool ran.
#[derive(Clone, Debug, Default)]
pub struct Calls(Arc<AtomicUsize>);

impl Calls {
    /// The count so far.
    pub fn get(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }

    /// Counts one more call; returns the new count.
    pub fn bump(&self) -> usize {
        self.0.fetch_add(1, Ordering::SeqCst) + 1
    }
}

/// A tool that asks `prompt` (an `input` request with id `<name>-<n>`, n counting its
/// suspensions from 1) and, once answered, returns `<name> got <answer data as JSON>`.
///
/// # Panics
///
/// When `name` is not a valid tool name.
pub fn asker(name: &str, prompt: &str) -> (FnTool, Calls) {
    let calls = Calls::default();
    let asked = Calls::default();
    let seen = calls.clone();
    let (tool, prompt) = (name.to_owned(), prompt.to_owned());
    let built = FnTool::builder(name)
        .description("Asks a human.")
        .handler(move |_args, ctx| {
            seen.bump();
            let reply = match ctx.accepted() {
                Some(answer) => ToolResult::success(format!(
                    "{tool} got {}",
                    answer.data.clone().unwrap_or(Value::Null)
                )),
                None => ToolResult::suspended(
                    Request::input(prompt.clone()).with_id(format!("{tool}-{}", asked.bump())),
                ),
            };
            async move { reply }
        })
        .build()
        .expect("valid tool");
    (built, calls)
}

/// A tool that suspends on every call, answered or not (id `<name>-<n>`).
///
/// # Panics
///
/// When `name` is not a valid tool name.
pub fn stubborn(name: &str, prompt: &str) -> (FnTool, Calls) {
    let calls = Calls::default();
    let seen = calls.clone();
    let (tool, prompt) = (name.to_owned(), prompt.to_owned());
    let built = FnTool::builder(name)
        .description("Always asks.")
        .handler(move |_args, _ctx| {
            let n = seen.bump();
            let reply = ToolResult::suspended(
                Request::approval(prompt.clone()).with_id(format!("{tool}-{n}")),
            );
            async move { reply }
        })
        .build()
        .expect("valid tool");
    (built, calls)
}

/// `echo`: returns its `text` argument; counts its calls.
///
/// # Panics
///
/// Never (the tool's definition is valid).
pub fn echo() -> (FnTool, Calls) {
    let calls = Calls::default();
    let seen = calls.clone();
    let built = FnTool::builder("echo")
        .description("Echoes its text.")
        .schema(serde_json::json!({
            "type": "object",
            "properties": {"text": {"type": "string"}},
            "required": ["text"]
        }))
        .handler(move |args, _ctx| {
            seen.bump();
            let text = args
                .get("text")
                .and_then(Value::as_str)
                .unwrap_or_default()
                .to_owned();
            async move { text }
        })
        .build()
        .expect("valid tool");
    (built, calls)
}

/// A shared log of events (as JSON) and host markers, in order.
#[derive(Clone, Debug, Default)]
pub struct Log(Arc<Mutex<Vec<Value>>>);

impl Log {
    /// Appends an event.
    ///
    /// # Panics
    ///
    /// Never: events always serialize.
    pub fn event(&self, event: &Event) {
        let json = serde_json::to_value(event).expect("events serialize");
        self.push(json);
    }

    /// Appends a marker (say, `"wait_for called"`).
    pub fn push(&self, value: Value) {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(value);
    }

    /// Everything so far.
    pub fn all(&self) -> Vec<Value> {
        self.0
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// The `type` of each event (markers as they are).
    pub fn types(&self) -> Vec<String> {
        self.all()
            .iter()
            .map(|v| match v.get("type") {
                Some(Value::String(t)) => t.clone(),
                _ => v.as_str().unwrap_or_default().to_owned(),
            })
            .collect()
    }

    /// A sink closure for `on_event` / `stream`.
    pub fn sink(&self) -> impl Fn(&Event) + Send + Sync + 'static {
        let log = self.clone();
        move |e| log.event(e)
    }
}

/// A model that answers instantly and allocates little: for its first `tool_turns` turns it
/// calls `tool` with `args`, then it answers `done`. It decides from the transcript (the
/// number of assistant messages), so it is stateless and shareable.
#[derive(Clone, Debug)]
pub struct InstantModel {
    /// The tool it calls.
    pub tool: String,
    /// The arguments it passes.
    pub args: Value,
    /// How many turns call the tool before the answer.
    pub tool_turns: usize,
}

impl toolnexus::Model for InstantModel {
    fn complete<'a>(
        &'a self,
        request: &'a toolnexus::ModelRequest,
        _stream: Option<toolnexus::model::DeltaSink<'a>>,
    ) -> toolnexus::BoxFuture<'a, toolnexus::Result<toolnexus::model::ModelTurn>> {
        let turn = request
            .messages
            .iter()
            .filter(|m| m.role == toolnexus::Role::Assistant)
            .count();
        let reply = if turn < self.tool_turns {
            toolnexus::model::ModelTurn::tool_calls(vec![toolnexus::model::ToolCall::new(
                format!("call_{turn}"),
                self.tool.clone(),
                self.args.clone(),
            )])
        } else {
            toolnexus::model::ModelTurn::text("done")
        };
        Box::pin(async move { Ok(reply) })
    }
}

/// The tool results among `messages` as `(tool_call_id, content, isError)`, in order: what a
/// test compares against the exact transcript it expects.
pub fn tool_results(messages: &[toolnexus::Message]) -> Vec<(String, String, bool)> {
    messages
        .iter()
        .filter(|m| m.role == toolnexus::Role::Tool)
        .map(|m| {
            (
                m.tool_call_id.clone().unwrap_or_default(),
                m.content.clone().unwrap_or_default(),
                m.is_error,
            )
        })
        .collect()
}

/// The keys of the JSON object `text` is, in the order the text has them (a `serde_json::Value`
/// has them in its map's order: sorted, unless a crate turns on `preserve_order`).
///
/// # Panics
///
/// When `text` is not a JSON object.
pub fn keys_in_order(text: &str) -> Vec<String> {
    keys_in_order_at(text, &[])
}

/// The keys of the object at `path` (member names from the root) inside the JSON object
/// `text` is, in the order the text has them.
///
/// # Panics
///
/// When `text` is not a JSON object, or holds no object at `path`.
pub fn keys_in_order_at(text: &str, path: &[&str]) -> Vec<String> {
    use serde::de::{DeserializeSeed, IgnoredAny, MapAccess, Visitor};
    struct At<'p>(&'p [&'p str]);
    impl<'de> DeserializeSeed<'de> for At<'_> {
        type Value = Option<Vec<String>>;
        fn deserialize<D: serde::Deserializer<'de>>(self, d: D) -> Result<Self::Value, D::Error> {
            d.deserialize_map(self)
        }
    }
    impl<'de> Visitor<'de> for At<'_> {
        type Value = Option<Vec<String>>;
        fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
            f.write_str("a JSON object")
        }
        fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
            let mut keys = Vec::new();
            let mut found = None;
            while let Some(key) = map.next_key::<String>()? {
                match self.0.split_first() {
                    Some((first, rest)) if *first == key => {
                        found = map.next_value_seed(At(rest))?;
                    }
                    _ => {
                        map.next_value::<IgnoredAny>()?;
                    }
                }
                keys.push(key);
            }
            Ok(if self.0.is_empty() { Some(keys) } else { found })
        }
    }
    let mut de = serde_json::Deserializer::from_str(text);
    At(path)
        .deserialize(&mut de)
        .unwrap_or_else(|e| panic!("not a JSON object ({e}): {text}"))
        .unwrap_or_else(|| panic!("no object at {path:?} in {text}"))
}

/// The rules `store` keeps (`list_rules(10)`).
///
/// # Panics
/// When `store` keeps no rules or cannot list them.
pub async fn kept_rules(store: &dyn toolnexus::store::RunStore) -> Vec<toolnexus::remember::Rule> {
    store.rules().expect("rules").list_rules(10).await.unwrap()
}
