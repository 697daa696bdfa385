//! Property test of durable depth: what the loop accepts it can persist and read back. Runs
//! whose tool arguments and answers are nested exactly to the loop's limit
//! ([`MAX_DEPTH`]) halt, are written as a record (plain and sealed), read back equal, and
//! resume; one level deeper, the loop refuses the arguments and the tool does not run.

use proptest::prelude::*;
use serde_json::{Map, Value, json};
use toolnexus::limits::MAX_DEPTH;
use toolnexus::run::SealKey;
use toolnexus::{
    Client, FnTool, PendingRun, Reply, Request, RunStatus, ScriptedModel, ToolResult, Toolkit,
};
use toolnexus_tests::Calls;

/// One level of a deep value: an object under `key` (with a scalar sibling when `sibling`)
/// or an array holding the deeper value after `sibling`.
#[derive(Clone, Debug)]
struct Level {
    object: bool,
    key: String,
    sibling: Option<i64>,
}

fn level() -> impl Strategy<Value = Level> {
    (
        any::<bool>(),
        // no key that names a credential (`pin`, `cvc`): the trust boundary refuses an answer
        // that carries one, at any depth, and this property is about depth
        "[a-z]{1,3}".prop_filter("a credential name", |k| {
            !toolnexus::form::is_credential_field(k)
        }),
        proptest::option::of(any::<i64>()),
    )
        .prop_map(|(object, key, sibling)| Level {
            object,
            key,
            sibling,
        })
}

/// A value nested exactly `levels.len()` levels deep (built bottom-up, without recursion).
fn build(levels: &[Level], leaf: &str) -> Value {
    let mut value = Value::String(leaf.to_owned());
    for l in levels.iter().rev() {
        value = if l.object {
            let mut map = Map::new();
            if let Some(s) = l.sibling {
                map.insert(format!("{}_", l.key), json!(s));
            }
            map.insert(l.key.clone(), value);
            Value::Object(map)
        } else {
            let mut items: Vec<Value> = l.sibling.map(Value::from).into_iter().collect();
            items.push(value);
            Value::Array(items)
        };
    }
    value
}

/// Tool-call arguments (an object) nested exactly `depth` levels deep.
fn arguments(levels: &[Level], leaf: &str) -> Value {
    let mut top = levels.to_vec();
    top[0].object = true;
    build(&top, leaf)
}

/// `ask`: suspends with its arguments in the request's data; once answered, returns the
/// answer's data in its metadata (so the next record holds the answer, as deep as it came).
fn ask(calls: Calls) -> Toolkit {
    let tool = FnTool::builder("ask")
        .description("Asks, keeping what it was given.")
        .handler(move |args, ctx| {
            calls.bump();
            let reply = match ctx.accepted() {
                Some(answer) => ToolResult::success("noted")
                    .with_metadata("answer", answer.data.clone().unwrap_or_default()),
                // an approval: the trust boundary refuses `input` data nested past the depth
                // limit (it cannot be checked for credentials), and `args` sits one level
                // below `data`
                None => ToolResult::suspended(
                    Request::approval("More?").with_data_entry("args", Value::Object(args)),
                ),
            };
            async move { reply }
        })
        .build()
        .unwrap();
    Toolkit::builder().tool(tool).build().unwrap()
}

fn client(replies: Vec<Reply>) -> Client {
    Client::builder(ScriptedModel::new(replies))
        .model_name("m")
        .system("sys")
        .build()
        .unwrap()
}

/// Writes `record` plain and sealed, reads both back, and checks they are the same record.
fn round_trip(record: &PendingRun) -> Result<PendingRun, TestCaseError> {
    let read = PendingRun::from_json(&record.to_json());
    prop_assert!(read.is_ok(), "{}", read.unwrap_err());
    let read = read.unwrap();
    prop_assert_eq!(&read, record);
    let key = SealKey::new("k", [3u8; 32]).unwrap();
    let opened = PendingRun::open(&record.seal(&key), &key);
    prop_assert!(opened.is_ok(), "{}", opened.unwrap_err());
    prop_assert_eq!(&opened.unwrap(), record);
    Ok(read)
}

async fn scenario(args: Value, answer: Value) -> Result<(), TestCaseError> {
    let calls = Calls::default();
    let toolkit = ask(calls.clone());
    let call = Reply::tool_call("ask", args.clone());

    // halt on the deep call; the record holds the arguments three times over (transcript,
    // tool-call record, request data) at the limit
    let halted = client(vec![call.clone()])
        .run("go", &toolkit)
        .await
        .unwrap();
    prop_assert_eq!(halted.status, RunStatus::Pending);
    let record = round_trip(&PendingRun::try_from(&halted).unwrap())?;
    prop_assert_eq!(&record.tool_calls()[0].args, &args);

    // resume with the deep answer; the model calls again, so the run halts again and the
    // next record holds the answer as well
    let answer = record.pending().accept(answer.clone());
    let again = client(vec![call])
        .resume(record, answer.clone(), &toolkit)
        .await
        .unwrap();
    prop_assert_eq!(again.status, RunStatus::Pending);
    let next = round_trip(&PendingRun::try_from(&again).unwrap())?;
    let kept = next.tool_calls()[0]
        .metadata
        .as_ref()
        .and_then(|m| m.extra.get("answer"));
    prop_assert_eq!(kept, answer.data.as_ref());
    prop_assert_eq!(calls.get(), 3);
    Ok(())
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_time()
        .build()
        .unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 32, failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn records_with_arguments_and_answers_at_the_depth_limit_are_read_back(
        arg_levels in prop::collection::vec(level(), MAX_DEPTH),
        answer_levels in prop::collection::vec(level(), MAX_DEPTH),
        leaf in "[ -~]{0,8}",
    ) {
        let args = arguments(&arg_levels, &leaf);
        let answer = build(&answer_levels, &leaf);
        runtime().block_on(scenario(args, answer))?;
    }

    #[test]
    fn arguments_one_level_deeper_are_refused_by_the_loop_as_a_tool_failure(
        levels in prop::collection::vec(level(), MAX_DEPTH + 1),
        as_text in any::<bool>(),
    ) {
        let calls = Calls::default();
        let toolkit = ask(calls.clone());
        let args = arguments(&levels, "x");
        // a provider may hand the arguments over as JSON text
        let sent = if as_text { Value::String(args.to_string()) } else { args };
        let done = runtime()
            .block_on(client(vec![Reply::tool_call("ask", sent), Reply::text("ok")]).run("go", &toolkit))
            .unwrap();
        prop_assert_eq!(done.status, RunStatus::Done);
        prop_assert_eq!(
            &done.tool_calls[0].output,
            "invalid arguments for ask: nested more than 128 levels deep"
        );
        prop_assert_eq!(calls.get(), 0, "the tool did not run");
    }
}
