//! The loop's own cost: per turn (an instant model, one tool call per turn) against calling
//! the same tool directly, and suspend + persist + resume against answering in-process.
//!
//! `cargo bench -p toolnexus-tests --features bench --bench loop_overhead`

use divan::Bencher;
use serde_json::{Value, json};
use toolnexus::{Client, Context, PendingRun, Request, Toolkit};
use toolnexus_tests::{InstantModel, asker, echo};

const TURNS: usize = 10;

fn main() {
    divan::main();
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

/// A model that calls `tool` with `args` on each of its first `tool_turns` turns, then answers.
fn instant(tool: &str, args: Value, tool_turns: usize) -> InstantModel {
    InstantModel {
        tool: tool.to_owned(),
        args,
        tool_turns,
    }
}

fn echo_kit() -> Toolkit {
    Toolkit::builder().tool(echo().0).build().expect("toolkit")
}

/// Baseline: the tool work alone, `TURNS` direct calls of `echo`.
#[divan::bench]
fn baseline_direct_tool_calls(bencher: Bencher<'_, '_>) {
    let rt = runtime();
    let toolkit = echo_kit();
    let ctx = Context::new();
    bencher.bench_local(|| {
        rt.block_on(async {
            for _ in 0..TURNS {
                let r = toolkit.execute("echo", json!({"text": "hi"}), &ctx).await;
                divan::black_box(r);
            }
        });
    });
}

/// The loop: `TURNS` turns of one `echo` call each, then an answer (`TURNS + 1` model turns).
#[divan::bench]
fn loop_turns_one_call_each(bencher: Bencher<'_, '_>) {
    let rt = runtime();
    let toolkit = echo_kit();
    let model = instant("echo", json!({"text": "hi"}), TURNS);
    let client = Client::builder(model)
        .model_name("instant")
        .max_turns(u32::try_from(TURNS).expect("small") + 1)
        .build()
        .expect("client");
    bencher.bench_local(|| {
        let r = rt.block_on(client.run("go", &toolkit)).expect("run");
        assert_eq!(r.turns as usize, TURNS + 1);
        divan::black_box(r);
    });
}

/// A run with a single answering turn: the fixed cost of a run.
#[divan::bench]
fn loop_single_turn(bencher: Bencher<'_, '_>) {
    let rt = runtime();
    let toolkit = echo_kit();
    let model = instant("echo", json!({}), 0);
    let client = Client::builder(model)
        .model_name("instant")
        .build()
        .expect("client");
    bencher.bench_local(|| divan::black_box(rt.block_on(client.run("go", &toolkit)).expect("run")));
}

fn ask_model() -> InstantModel {
    instant("ask", json!({}), 1)
}

/// Baseline for durability: suspend and answer in-process through `wait_for`.
#[divan::bench]
fn suspend_answered_in_process(bencher: Bencher<'_, '_>) {
    let rt = runtime();
    let toolkit = Toolkit::builder()
        .tool(asker("ask", "Which city?").0)
        .build()
        .expect("toolkit");
    let client = Client::builder(ask_model())
        .model_name("instant")
        .wait_for(|req: Request| async move { req.accept("Oslo") })
        .build()
        .expect("client");
    bencher.bench_local(|| divan::black_box(rt.block_on(client.run("go", &toolkit)).expect("run")));
}

/// Suspend, halt, persist to JSON, read back, resume with the answer in a fresh client.
#[divan::bench]
fn suspend_persist_resume(bencher: Bencher<'_, '_>) {
    let rt = runtime();
    let toolkit = Toolkit::builder()
        .tool(asker("ask", "Which city?").0)
        .build()
        .expect("toolkit");
    let client = Client::builder(ask_model())
        .model_name("instant")
        .build()
        .expect("client");
    bencher.bench_local(|| {
        rt.block_on(async {
            let halted = client.run("go", &toolkit).await.expect("run");
            let json = PendingRun::try_from(halted).expect("pending").to_json();
            let record = PendingRun::from_json(&json).expect("record");
            let answer = record.pending().accept("Oslo");
            let resumer = Client::builder(ask_model())
                .model_name("instant")
                .build()
                .expect("client");
            let done = resumer
                .resume(record, answer, &toolkit)
                .await
                .expect("resume");
            divan::black_box(done)
        })
    });
}
