//! CONTRACT section 2, `expiresAt`: generated with millisecond precision, and an answer that
//! arrives after it is refused on every path (resume and `wait_for`) without running the tool.

use std::time::{Duration, SystemTime};

use serde_json::json;
use toolnexus::{
    Client, FnTool, PendingRun, Reply, Request, RunStatus, ScriptedModel, ToolResult, Toolkit,
};
use toolnexus_tests::{Calls, tool_results};

const TTL: Duration = Duration::from_millis(500);
const LATE: Duration = Duration::from_millis(600);

/// `deploy`: asks for approval with a 500 ms expiry; once approved, returns `deployed`.
fn deploy() -> (Toolkit, Calls) {
    let calls = Calls::default();
    let seen = calls.clone();
    let tool = FnTool::builder("deploy")
        .description("Deploys after an approval.")
        .handler(move |_, ctx| {
            seen.bump();
            let reply = if ctx.accepted().is_some() {
                ToolResult::success("deployed")
            } else {
                ToolResult::suspended(Request::approval("Deploy?").expires_in(TTL))
            };
            async move { reply }
        })
        .build()
        .unwrap();
    (Toolkit::builder().tool(tool).build().unwrap(), calls)
}

fn script() -> [Reply; 2] {
    [Reply::tool_call("deploy", json!({})), Reply::text("over")]
}

/// Halts and returns the record read back from its JSON.
async fn halt(toolkit: &Toolkit) -> PendingRun {
    let client = Client::builder(ScriptedModel::new(script()))
        .model_name("m")
        .build()
        .unwrap();
    let before = SystemTime::now();
    let halted = client.run("ship it", toolkit).await.unwrap();
    let after = SystemTime::now();
    assert_eq!(halted.status, RunStatus::Pending);
    let record = PendingRun::from_json(&PendingRun::try_from(&halted).unwrap().to_json()).unwrap();
    // the request was made between `before` and `after`: its expiry is 500 ms later, to the
    // millisecond (truncated below it)
    let raw = record.pending().expires_at.clone().unwrap();
    let at = record.pending().expires_at_time().unwrap();
    assert!(
        at + Duration::from_millis(1) > before + TTL && at <= after + TTL,
        "expiresAt {raw} is not 500 ms after the request was made"
    );
    record
}

async fn resume(record: PendingRun, toolkit: &Toolkit) -> Vec<(String, String, bool)> {
    let answer = record.pending().accept(true);
    let client = Client::builder(ScriptedModel::new(script().into_iter().skip(1)))
        .model_name("m")
        .build()
        .unwrap();
    let done = client.resume(record, answer, toolkit).await.unwrap();
    assert_eq!(done.status, RunStatus::Done);
    tool_results(&done.messages)
}

#[tokio::test]
async fn a_500_ms_expiry_answered_at_once_is_accepted_on_resume() {
    let (toolkit, calls) = deploy();
    let record = halt(&toolkit).await;
    let results = resume(record, &toolkit).await;
    assert_eq!(
        results,
        [("call_1_0".to_owned(), "deployed".to_owned(), false)]
    );
    assert_eq!(calls.get(), 2, "the approved tool ran again");
}

#[tokio::test]
async fn a_500_ms_expiry_answered_after_600_ms_is_refused_on_resume() {
    let (toolkit, calls) = deploy();
    let record = halt(&toolkit).await;
    tokio::time::sleep(LATE).await;
    let results = resume(record, &toolkit).await;
    assert_eq!(
        results,
        [(
            "call_1_0".to_owned(),
            "declined/expired: Deploy?".to_owned(),
            true
        )]
    );
    assert_eq!(calls.get(), 1, "the tool did not run again");
}

async fn with_wait_for(delay: Duration) -> (Vec<(String, String, bool)>, usize) {
    let (toolkit, calls) = deploy();
    let client = Client::builder(ScriptedModel::new(script()))
        .model_name("m")
        .wait_for(move |req: Request| async move {
            tokio::time::sleep(delay).await;
            req.accept(true)
        })
        .build()
        .unwrap();
    let done = client.run("ship it", &toolkit).await.unwrap();
    assert_eq!(done.status, RunStatus::Done);
    (tool_results(&done.messages), calls.get())
}

#[tokio::test]
async fn a_500_ms_expiry_answered_at_once_is_accepted_by_wait_for() {
    let (results, calls) = with_wait_for(Duration::ZERO).await;
    assert_eq!(
        results,
        [("call_1_0".to_owned(), "deployed".to_owned(), false)]
    );
    assert_eq!(calls, 2);
}

#[tokio::test]
async fn a_500_ms_expiry_answered_after_600_ms_is_refused_by_wait_for() {
    let (results, calls) = with_wait_for(LATE).await;
    assert_eq!(
        results,
        [(
            "call_1_0".to_owned(),
            "declined/expired: Deploy?".to_owned(),
            true
        )]
    );
    assert_eq!(calls, 1, "the tool did not run again");
}
