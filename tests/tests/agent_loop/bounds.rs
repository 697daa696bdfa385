//! Bounds of what the loop takes from a host in-process (issue 22): values nested deeper than
//! the loop's 128-level cap are refused before anything copies them, whatever their depth;
//! the deepest are tried in a child process, where a stack overflow would abort only it.

use std::process::Command;
use std::sync::{Arc, Mutex};

use serde_json::{Value, json};
use toolnexus::{FnModel, FnTool, ModelRequest, Reply, Role, RunStatus, ToolResult, Toolkit};
use toolnexus_tests::fixtures::client_for;

/// The environment variable that makes the test binary the child of
/// [`deep_in_process_arguments_are_refused_without_aborting`], with that many levels.
const CHILD: &str = "TOOLNEXUS_DEEP_ARGS_CHILD";

/// `{"v": [[[ ... 0 ... ]]]}`, `levels` deep in all, built without recursion.
fn deep_args(levels: usize) -> Value {
    let mut v = json!(0);
    for _ in 1..levels {
        v = Value::Array(vec![v]);
    }
    // (not `json!`, which would copy `v` level by level)
    let mut args = serde_json::Map::new();
    args.insert("v".to_owned(), v);
    Value::Object(args)
}

/// In the child: the loop over a model whose first turn calls `echo` with arguments `levels`
/// deep; prints what the model was shown.
fn child(levels: usize) {
    let shown = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&shown);
    let model = FnModel::new(move |req: ModelRequest| {
        let log = Arc::clone(&log);
        async move {
            let results: Vec<(String, bool)> = req
                .messages
                .iter()
                .filter(|m| m.role == Role::Tool)
                .map(|m| (m.content.clone().unwrap_or_default(), m.is_error))
                .collect();
            if results.is_empty() {
                return Reply::tool_call("echo", deep_args(levels));
            }
            let args = req
                .messages
                .iter()
                .flat_map(|m| &m.tool_calls)
                .map(|c| c.arguments.clone())
                .collect::<Vec<_>>();
            log.lock().unwrap().push((results, args));
            Reply::text("done")
        }
    });
    let echo = FnTool::builder("echo")
        .description("Echoes.")
        .handler(|args, _| async move { ToolResult::success(Value::Object(args).to_string()) })
        .build()
        .unwrap();
    let toolkit = Toolkit::builder().tool(echo).build().unwrap();
    let run = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(client_for(model).build().unwrap().run("go", &toolkit))
        .expect("the run ends");
    assert_eq!(run.status, RunStatus::Done);
    let shown = shown.lock().unwrap();
    let (results, args) = &shown[0];
    println!("levels {levels}: {:?} / {}", results[0], args[0]);
}

/// Issue 22: in-process values about 1,000 levels deep aborted the process (the loop cloned the
/// arguments before its 128-level check). At 1,000 and 10,000 levels the call is refused, the
/// model reads why, and the transcript keeps a placeholder, not the value.
#[test]
fn deep_in_process_arguments_are_refused_without_aborting() {
    if let Ok(levels) = std::env::var(CHILD) {
        child(levels.parse().expect("a number of levels"));
        return;
    }
    for levels in [1_000usize, 10_000] {
        let out = Command::new(std::env::current_exe().expect("the test binary"))
            .args([
                "--exact",
                "bounds::deep_in_process_arguments_are_refused_without_aborting",
                "--nocapture",
                "--test-threads=1",
            ])
            .env(CHILD, levels.to_string())
            .output()
            .expect("the child runs");
        let stdout = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{levels} levels: {}\n{stdout}\n{}",
            out.status,
            String::from_utf8_lossy(&out.stderr)
        );
        assert!(
            stdout.contains(&format!(
                "levels {levels}: (\"invalid arguments for echo: nested more than 128 levels deep\", true) / \"(arguments nested more than 128 levels deep, not kept)\""
            )),
            "{stdout}"
        );
    }
}

/// Just over the cap, in this process: the same refusal.
#[tokio::test]
async fn arguments_one_level_over_the_cap_are_refused() {
    let model = FnModel::new(|req: ModelRequest| async move {
        match req.messages.iter().rev().find(|m| m.role == Role::Tool) {
            None => Reply::tool_call("echo", deep_args(129)),
            Some(m) => Reply::text(m.content.clone().unwrap_or_default()),
        }
    });
    let echo = FnTool::builder("echo")
        .description("Echoes.")
        .handler(|_, _| async { ToolResult::success("ran") })
        .build()
        .unwrap();
    let toolkit = Toolkit::builder().tool(echo).build().unwrap();
    let run = client_for(model)
        .build()
        .unwrap()
        .run("go", &toolkit)
        .await
        .unwrap();
    assert_eq!(
        run.text,
        "invalid arguments for echo: nested more than 128 levels deep"
    );
    assert!(run.tool_calls[0].is_error);
}

/// The environment variable that makes the test binary the child of
/// [`a_million_content_parts_are_refused_as_a_failure_the_model_reads`], with that many parts
/// (for a peak-RSS measurement with `/usr/bin/time -v`).
const PARTS_CHILD: &str = "TOOLNEXUS_PARTS_CHILD";

/// A run whose only tool returns `n` one-byte image parts; what the model read next.
async fn run_with_parts(n: usize) -> (String, bool) {
    use toolnexus::result::ContentPart;
    let model = FnModel::new(|req: ModelRequest| async move {
        match req.messages.iter().rev().find(|m| m.role == Role::Tool) {
            None => Reply::tool_call("chart", json!({})),
            Some(m) => Reply::text(format!(
                "{} {}",
                m.is_error,
                m.content.clone().unwrap_or_default()
            )),
        }
    });
    let chart = FnTool::builder("chart")
        .description("Draws.")
        .handler(move |_, _| async move {
            let mut r = ToolResult::success("charts");
            r.parts = (0..n)
                .map(|_| ContentPart::image("AA==", "image/png"))
                .collect();
            r
        })
        .build()
        .unwrap();
    let toolkit = Toolkit::builder().tool(chart).build().unwrap();
    let run = client_for(model)
        .build()
        .unwrap()
        .run("go", &toolkit)
        .await
        .unwrap();
    let (is_error, text) = run.text.split_once(' ').unwrap();
    (text.to_owned(), is_error == "true")
}

/// Issue 22: a tool result with 1,000,000 parts made a 66 MB request and 1.9 GiB of RSS (the
/// million is measured in a child: `TOOLNEXUS_PARTS_CHILD=1000000`). Over
/// [`MAX_RESULT_PARTS`](toolnexus::limits::MAX_RESULT_PARTS) parts the result is a failure the
/// model reads; at the cap it passes.
#[tokio::test]
async fn a_million_content_parts_are_refused_as_a_failure_the_model_reads() {
    if let Ok(n) = std::env::var(PARTS_CHILD) {
        let n: usize = n.parse().unwrap();
        println!("parts {n}: {:?}", run_with_parts(n).await);
        return;
    }
    assert_eq!(toolnexus::limits::MAX_RESULT_PARTS, 100);
    assert_eq!(run_with_parts(100).await, ("charts".to_owned(), false));
    for n in [101usize, 100_000] {
        assert_eq!(
            run_with_parts(n).await,
            (
                format!(
                    "the tool's result carries {n} content parts of {} bytes; a result may carry at most 100 parts of 33554432 bytes in all: return fewer or smaller parts (a link with `url` instead of inline data)",
                    n * 13
                ),
                true
            )
        );
    }
}

/// The bytes of a result's parts are capped too.
#[tokio::test]
async fn content_parts_over_32_mib_are_refused() {
    use toolnexus::result::ContentPart;
    let big = "A".repeat(17 << 20);
    let r = ToolResult::success("x")
        .with_part(ContentPart::image(big.clone(), "image/png"))
        .with_part(ContentPart::image(big, "image/png"));
    let tool = FnTool::builder("big")
        .description("Big.")
        .handler(move |_, _| {
            let r = r.clone();
            async move { r }
        })
        .build()
        .unwrap();
    let kit = Toolkit::builder().tool(tool).build().unwrap();
    let out = kit
        .execute("big", json!({}), &toolnexus::Context::new())
        .await;
    assert!(out.is_error);
    assert!(out.parts.is_empty());
    assert_eq!(
        out.output,
        format!(
            "the tool's result carries 2 content parts of {} bytes; a result may carry at most 100 parts of 33554432 bytes in all: return fewer or smaller parts (a link with `url` instead of inline data)",
            2 * ((17 << 20) + 9)
        )
    );
}
