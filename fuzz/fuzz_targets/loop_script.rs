//! Drives the agent loop from a fuzzed model script: turns of tool calls (tools that succeed,
//! fail, suspend, suspend again on their retry, or are unknown), text, model failures; a
//! `before_tool` hook that continues, rewrites, returns a result or suspends; `wait_for`
//! that accepts, declines or fails. Halted runs are persisted (`PendingRun::to_json` /
//! `from_json`) and resumed with an accepted, declined or mismatched answer; checkpoints an
//! error carries go through their JSON into `resume_checkpoint`.
//!
//! After every step: the transcript is balanced (each call answered at most once, in call
//! order, all of them unless the run is pending), no call is resolved twice (a tool's final
//! result per idempotency key), and no request is lost (every request a tool made is
//! answered or is the one pending; a finished run left none unanswered).
#![no_main]

use std::collections::{HashMap, HashSet, VecDeque};
use std::sync::{Arc, LazyLock, Mutex};

use libfuzzer_sys::fuzz_target;
use serde_json::{Map, Value, json};
use toolnexus::client::BeforeTool;
use toolnexus::request::DeclineReason;
use toolnexus::{
    Answer, Client, Error, FnModel, FnTool, PendingRun, Reply, Request, Role, RunResult,
    RunStatus, ToolResult, Toolkit,
};

/// What one fuzz input has seen: the requests tools made and which were answered, and the
/// final results per idempotency key.
#[derive(Default)]
struct Ledger {
    issued: HashSet<String>,
    answered: HashSet<String>,
    resolved: HashMap<String, usize>,
}

static LEDGER: LazyLock<Mutex<Ledger>> = LazyLock::new(Mutex::default);

fn ledger() -> std::sync::MutexGuard<'static, Ledger> {
    LEDGER.lock().unwrap_or_else(std::sync::PoisonError::into_inner)
}

/// A tool whose behaviour is its `mode` argument: 0 succeeds, 1 fails, 2 suspends then
/// succeeds, 3 suspends and suspends again on its retry.
fn tool() -> FnTool {
    FnTool::builder("t")
        .description("Fuzzed.")
        .handler(|args, ctx| {
            let mode = args.get("mode").and_then(Value::as_u64).unwrap_or(0);
            let key = ctx.idempotency_key().expect("the loop sets a key").to_owned();
            let reply = if ctx.answer().is_none() && mode >= 2 || mode == 3 {
                let request = Request::input("Go?");
                if ctx.answer().is_none() {
                    ledger().issued.insert(request.id.clone());
                }
                ToolResult::suspended(request)
            } else {
                *ledger().resolved.entry(key.clone()).or_default() += 1;
                assert_eq!(
                    ledger().resolved[&key],
                    1,
                    "call {key} resolved twice"
                );
                if mode == 1 {
                    ToolResult::error("failed")
                } else {
                    ToolResult::success(format!("ok {}", args.len()))
                }
            };
            async move { reply }
        })
        .build()
        .unwrap()
}

static TOOLKIT: LazyLock<Toolkit> =
    LazyLock::new(|| Toolkit::builder().tool(tool()).build().unwrap());

static RUNTIME: LazyLock<tokio::runtime::Runtime> = LazyLock::new(|| {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap()
});

/// The fuzz input, read a byte at a time (0 once exhausted).
struct Bytes<'a>(&'a [u8]);

impl Bytes<'_> {
    fn next(&mut self) -> u8 {
        let Some((first, rest)) = self.0.split_first() else {
            return 0;
        };
        self.0 = rest;
        *first
    }
}

/// One model turn of the script.
enum Step {
    Text,
    Fail,
    Calls(Vec<(u8, u8)>),
}

type Script = Arc<Mutex<VecDeque<Step>>>;

fn script(bytes: &mut Bytes<'_>) -> Script {
    let steps = (0..bytes.next() % 8)
        .map(|_| {
            let b = bytes.next();
            match b % 8 {
                0 => Step::Text,
                1 => Step::Fail,
                _ => Step::Calls(
                    (0..1 + (b >> 3) % 3)
                        .map(|_| (bytes.next() % 5, bytes.next() % 4))
                        .collect(),
                ),
            }
        })
        .collect();
    Arc::new(Mutex::new(steps))
}

/// A client on the shared script, with `wait_for` (answering from `answers`) and
/// `before_tool` as `flags` says.
fn client(script: &Script, flags: u8, answers: &Arc<Mutex<VecDeque<u8>>>) -> Client {
    let script = script.clone();
    let model = FnModel::new(move |_| {
        let step = script.lock().unwrap().pop_front();
        async move {
            match step {
                None | Some(Step::Text) => Ok(Reply::text("end")),
                Some(Step::Fail) => Err("the provider failed"),
                Some(Step::Calls(calls)) => {
                    let args = |(mode, hook): (u8, u8)| json!({"mode": mode, "hook": hook});
                    let name = |(mode, _): (u8, u8)| if mode == 4 { "nope" } else { "t" };
                    let mut reply = Reply::tool_call(name(calls[0]), args(calls[0]));
                    for &call in &calls[1..] {
                        reply = reply.with_call(name(call), args(call));
                    }
                    Ok(reply)
                }
            }
        }
    });
    let mut builder = Client::builder(model).model_name("m").max_turns(6);
    if flags & 1 != 0 {
        let answers = answers.clone();
        builder = builder.wait_for(move |request: Request| {
            let pick = answers.lock().unwrap().pop_front().unwrap_or(0);
            async move {
                match pick % 3 {
                    0 => Ok(answer(&request, true)),
                    1 => Ok(answer(&request, false)),
                    _ => Err("the host failed"),
                }
            }
        });
    }
    if flags & 2 != 0 {
        builder = builder.before_tool(|call| {
            let hook = call.arguments.get("hook").and_then(Value::as_u64).unwrap_or(0);
            async move {
                match hook {
                    1 => {
                        let mut args = Map::new();
                        args.insert("mode".to_owned(), json!(0));
                        args.insert("rewritten".to_owned(), json!(true));
                        BeforeTool::Rewrite(args)
                    }
                    2 => BeforeTool::Return(ToolResult::success("hooked")),
                    3 => {
                        let request = Request::input("Hook?");
                        ledger().issued.insert(request.id.clone());
                        BeforeTool::Return(ToolResult::suspended(request))
                    }
                    _ => BeforeTool::Continue,
                }
            }
        });
    }
    builder.build().unwrap()
}

/// An answer to `request`, noted as given.
fn answer(request: &Request, ok: bool) -> Answer {
    ledger().answered.insert(request.id.clone());
    if ok {
        request.accept("yes")
    } else {
        request.decline(DeclineReason::Declined)
    }
}

/// Every assistant turn's calls are answered in call order, each at most once; all of them
/// unless the run is pending (then the last turn ends on the halted call's placeholder).
fn check_balanced(run: &RunResult) {
    let messages = &run.messages;
    let mut k = 0;
    while k < messages.len() {
        let m = &messages[k];
        k += 1;
        if m.role != Role::Assistant || m.tool_calls.is_empty() {
            assert_ne!(m.role, Role::Tool, "a tool result without its call");
            continue;
        }
        let mut answered = 0;
        while k < messages.len() && messages[k].role == Role::Tool {
            let call = m.tool_calls.get(answered).expect("more results than calls");
            assert_eq!(
                messages[k].tool_call_id.as_deref(),
                Some(call.id.as_str()),
                "a result out of call order"
            );
            answered += 1;
            k += 1;
        }
        if answered < m.tool_calls.len() {
            assert!(
                run.status == RunStatus::Pending && k == messages.len(),
                "a turn left unbalanced: {} of {} calls answered ({})",
                answered,
                m.tool_calls.len(),
                run.status
            );
        }
    }
    assert_eq!(run.tool_call_count, run.tool_calls.len());
}

/// The pending request is one a tool made and nobody answered yet.
fn check_pending(run: &RunResult) {
    let pending = run.pending.as_ref().expect("a pending run has its request");
    let ledger = ledger();
    assert!(ledger.issued.contains(&pending.id), "a request nobody made");
    assert!(!ledger.answered.contains(&pending.id), "a request answered twice");
    assert_eq!(run.text, pending.prompt);
}

/// The run is over: every request a tool made was answered (none lost on the way).
fn check_none_lost() {
    let ledger = ledger();
    let lost: Vec<_> = ledger.issued.difference(&ledger.answered).collect();
    assert!(lost.is_empty(), "requests lost: {lost:?}");
}

fuzz_target!(|data: &[u8]| {
    *ledger() = Ledger::default();
    let mut bytes = Bytes(data);
    let script = script(&mut bytes);
    let answers: Arc<Mutex<VecDeque<u8>>> =
        Arc::new(Mutex::new((0..8).map(|_| bytes.next()).collect()));
    let mut flags = bytes.next();
    let mut outcome = RUNTIME.block_on(client(&script, flags, &answers).run("go", &TOOLKIT));
    for _ in 0..16 {
        let run = match outcome {
            Ok(run) => run,
            Err(error) => match error.into_halted_run() {
                Some(run) => run,
                // nothing ran in that call: no state to keep, nothing was pending
                None => {
                    check_none_lost();
                    return;
                }
            },
        };
        check_balanced(&run);
        flags = bytes.next();
        let next = client(&script, flags, &answers);
        outcome = match run.status {
            RunStatus::Done => {
                check_none_lost();
                return;
            }
            RunStatus::Incomplete if run.limit.is_some() => return,
            RunStatus::Incomplete => {
                let json = serde_json::to_string(&run).unwrap();
                let back: RunResult = serde_json::from_str(&json).unwrap();
                assert_eq!(back, run, "a checkpoint reads back");
                RUNTIME.block_on(next.resume_checkpoint(back, &TOOLKIT))
            }
            RunStatus::Pending => {
                check_pending(&run);
                let record = PendingRun::try_from(&run).expect("a pending run persists");
                let record = PendingRun::from_json(&record.to_json()).expect("and reads back");
                let pick = bytes.next();
                let record = if pick % 4 == 3 {
                    let wrong = Answer::accept("not-the-id", "yes");
                    let err = RUNTIME
                        .block_on(next.resume(record, wrong, &TOOLKIT))
                        .unwrap_err();
                    assert!(matches!(err, Error::AnswerMismatch { .. }), "{err:?}");
                    err.into_pending_run().expect("the record is handed back")
                } else {
                    record
                };
                let reply = answer(record.pending(), pick % 4 != 1);
                RUNTIME.block_on(next.resume(record, reply, &TOOLKIT))
            }
        };
    }
});
