//! Feeds arbitrary JSON arguments to `#[tool]` functions through `Toolkit::execute`: never a
//! panic (the toolkit would report one as `tool <name> panicked`), and arguments are either
//! accepted or reported as `invalid arguments for <tool>: ...`.
#![no_main]

use std::collections::BTreeMap;
use std::sync::LazyLock;

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use toolnexus::{Context, Toolkit, tool};

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[allow(dead_code)]
struct Leg {
    from: String,
    to: String,
    #[serde(default)]
    stops: Vec<u8>,
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
enum Cabin {
    Economy,
    Business,
}

/// Plans a trip.
#[tool]
#[allow(clippy::too_many_arguments)]
async fn plan(
    /// Where to.
    city: String,
    nights: Option<u16>,
    #[arg(default = 2)] guests: u8,
    tags: Vec<String>,
    budget: Option<f64>,
    legs: Option<Vec<Leg>>,
    cabin: Option<Cabin>,
    flexible: bool,
    initial: char,
    offset: i64,
    notes: BTreeMap<String, Value>,
    ctx: &toolnexus::Context,
) -> Result<String, String> {
    let _ = ctx;
    Ok(format!(
        "{city} {nights:?} {guests} {tags:?} {budget:?} {legs:?} {cabin:?} {flexible} {initial} {offset} {}",
        notes.len()
    ))
}

#[derive(Debug, serde::Deserialize, schemars::JsonSchema)]
#[allow(dead_code)]
struct SearchArgs {
    query: String,
    limit: Option<u32>,
    #[serde(default)]
    exact: bool,
}

/// Searches.
#[tool]
fn search(#[args] args: SearchArgs) -> Vec<String> {
    vec![format!("{args:?}")]
}

/// Says hello.
#[tool]
fn hello(name: &str, #[arg(rename = "times")] count: Option<u8>) -> String {
    name.repeat(usize::from(count.unwrap_or(1).min(3)))
}

static TOOLKIT: LazyLock<Toolkit> = LazyLock::new(|| {
    Toolkit::builder()
        .tool(Plan)
        .tool(Search)
        .tool(Hello)
        .build()
        .unwrap()
});

static RUNTIME: LazyLock<tokio::runtime::Runtime> = LazyLock::new(|| {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap()
});

fuzz_target!(|data: &[u8]| {
    let Some((&which, json)) = data.split_first() else {
        return;
    };
    let Ok(args) = serde_json::from_slice::<Value>(json) else {
        return;
    };
    let name = ["plan", "search", "hello"][usize::from(which % 3)];
    let result = RUNTIME.block_on(TOOLKIT.execute(name, args, &Context::new()));
    if result.is_error {
        assert!(
            result
                .output
                .starts_with(&format!("invalid arguments for {name}: ")),
            "unexpected failure: {}",
            result.output
        );
    }
});
