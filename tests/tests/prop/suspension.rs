//! Property test of suspension in the loop: for any sequence of tool calls in one turn where
//! any subset suspends, a run without `wait_for` halts on the first suspending call in call
//! order; each halted run, persisted (`PendingRun` to and from JSON) and resumed by a fresh
//! client, goes on to the next one; the finished transcript is balanced (each call answered
//! once, in call order); and every suspended call is resolved exactly once, keeping the
//! request it was first made with and never running again before its own answer.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

use proptest::prelude::*;
use serde_json::{Value, json};
use toolnexus::{
    Client, FnTool, PendingRun, Reply, Request, Role, RunResult, RunStatus, ScriptedModel,
    ToolResult, Toolkit, request::DeclineReason,
};

/// Per call `k`: how many times the tool ran, and how many of those ran with an answer.
#[derive(Clone, Default)]
struct Counts(Arc<Mutex<BTreeMap<u64, (usize, usize)>>>);

impl Counts {
    fn bump(&self, k: u64, answered: bool) {
        let mut map = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        let entry = map.entry(k).or_default();
        entry.0 += 1;
        entry.1 += usize::from(answered);
    }

    fn get(&self, k: u64) -> (usize, usize) {
        let map = self.0.lock().unwrap_or_else(PoisonError::into_inner);
        map.get(&k).copied().unwrap_or_default()
    }
}

/// `step {"k", "ask"}`: when `ask`, suspends with request `req-<k>` until answered.
fn step(counts: Counts) -> FnTool {
    FnTool::builder("step")
        .description("One step; some ask a human first.")
        .handler(move |args, ctx| {
            let k = args.get("k").and_then(Value::as_u64).unwrap_or(u64::MAX);
            let ask = args.get("ask").and_then(Value::as_bool).unwrap_or(false);
            let answer = ctx.accepted().cloned();
            counts.bump(k, answer.is_some());
            let reply = match (ask, answer) {
                (false, _) => ToolResult::success(format!("step {k} done")),
                (true, Some(a)) => {
                    ToolResult::success(format!("step {k} got {}", a.data.unwrap_or(Value::Null)))
                }
                (true, None) => ToolResult::suspended(
                    Request::approval(format!("Step {k}?")).with_id(format!("req-{k}")),
                ),
            };
            async move { reply }
        })
        .build()
        .unwrap()
}

fn client(model: ScriptedModel) -> Client {
    Client::builder(model).model_name("m").build().unwrap()
}

fn check_transcript(
    result: &RunResult,
    asks: &[bool],
    accepts: &[bool],
) -> Result<(), TestCaseError> {
    let messages = &result.messages;
    let at = messages
        .iter()
        .position(|m| m.role == Role::Assistant)
        .unwrap();
    let calls = &messages[at].tool_calls;
    prop_assert_eq!(calls.len(), asks.len());
    // exactly one result per call, in call order, then the final answer
    prop_assert_eq!(messages.len(), at + 1 + asks.len() + 1);
    for (k, call) in calls.iter().enumerate() {
        let m = &messages[at + 1 + k];
        prop_assert_eq!(m.role, Role::Tool);
        prop_assert_eq!(m.tool_call_id.as_deref(), Some(call.id.as_str()));
        let expected = match (asks[k], accepts[k]) {
            (false, _) => format!("step {k} done"),
            (true, true) => format!("step {k} got \"yes {k}\""),
            (true, false) => format!("declined/expired: Step {k}?"),
        };
        prop_assert_eq!(m.content.as_deref(), Some(expected.as_str()));
        prop_assert_eq!(m.is_error, asks[k] && !accepts[k]);
    }
    prop_assert_eq!(messages.last().unwrap().content.as_deref(), Some("done"));
    prop_assert_eq!(result.tool_calls.len(), asks.len());
    Ok(())
}

async fn scenario(asks: Vec<bool>, accepts: Vec<bool>) -> Result<(), TestCaseError> {
    let counts = Counts::default();
    let toolkit = Toolkit::builder()
        .tool(step(counts.clone()))
        .build()
        .unwrap();
    let turn = asks
        .iter()
        .enumerate()
        .fold(Reply::default(), |reply, (k, ask)| {
            reply.with_call("step", json!({"k": k, "ask": ask}))
        });
    let mut outcome = client(ScriptedModel::new([turn, Reply::text("done")]))
        .run("go", &toolkit)
        .await
        .unwrap();
    let suspending: Vec<usize> = (0..asks.len()).filter(|&k| asks[k]).collect();
    let mut halts = Vec::new();
    while outcome.status == RunStatus::Pending {
        let pending = outcome.pending.clone().unwrap();
        halts.push(pending.id.clone());
        // persisted and read back, as another process would
        let json = PendingRun::try_from(&outcome).unwrap().to_json();
        let record = PendingRun::from_json(&json).unwrap();
        prop_assert_eq!(record.to_json(), json);
        let k: usize = pending.id.trim_start_matches("req-").parse().unwrap();
        let answer = if accepts[k] {
            record.pending().accept(format!("yes {k}"))
        } else {
            record.pending().decline(DeclineReason::Declined)
        };
        prop_assert!(
            halts.len() <= suspending.len(),
            "more halts than suspending calls"
        );
        outcome = client(ScriptedModel::new([Reply::text("done")]))
            .resume(record, answer, &toolkit)
            .await
            .unwrap();
    }
    prop_assert_eq!(outcome.status, RunStatus::Done);
    // halted on each suspending call in call order, the first one first
    let expected: Vec<String> = suspending.iter().map(|k| format!("req-{k}")).collect();
    prop_assert_eq!(halts, expected);
    check_transcript(&outcome, &asks, &accepts)?;
    for (k, &ask) in asks.iter().enumerate() {
        let (runs, answered) = counts.get(k as u64);
        if ask {
            // resolved exactly once: one run with the answer when accepted, none when declined;
            // and never run again before its own answer (its request is kept, CONTRACT 4)
            let accepted = usize::from(accepts[k]);
            prop_assert_eq!((runs, answered), (1 + accepted, accepted), "call {}", k);
        } else {
            prop_assert_eq!((runs, answered), (1, 0), "call {}", k);
        }
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 48, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn any_subset_of_suspending_calls_halts_in_order_and_resolves_each_once(
        calls in prop::collection::vec((any::<bool>(), any::<bool>()), 1..7),
    ) {
        let (asks, accepts): (Vec<bool>, Vec<bool>) = calls.into_iter().unzip();
        tokio::runtime::Builder::new_current_thread()
            .enable_time()
            .build()
            .unwrap()
            .block_on(scenario(asks, accepts))?;
    }
}
