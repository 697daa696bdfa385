//! Approval before a call runs: the client's policies (`approve_destructive`,
//! `approval_policy`) and a `#[tool(approval = "..")]`, through the loop rule (contract
//! section 3): `wait_for` answers in-process, or the run halts and resumes durably.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use serde_json::json;
use toolnexus::{
    Client, FnTool, PendingRun, Reply, Request, RunStatus, ScriptedModel, Toolkit,
    request::DeclineReason, tool,
};
use toolnexus_tests::fixtures::client_for;
use toolnexus_tests::{Log, echo, tool_results};

/// How many times `rm` ran.
#[derive(Clone, Default)]
struct Runs(Arc<AtomicUsize>);

impl Runs {
    fn get(&self) -> usize {
        self.0.load(Ordering::SeqCst)
    }
}

/// `rm`: destructive, counts its calls.
fn rm() -> (FnTool, Runs) {
    let calls = Runs::default();
    let seen = calls.clone();
    let tool = FnTool::builder("rm")
        .description("Deletes a file.")
        .destructive()
        .handler(move |args, _ctx| {
            seen.0.fetch_add(1, Ordering::SeqCst);
            let path = args["path"].as_str().unwrap_or_default().to_owned();
            async move { format!("deleted {path}") }
        })
        .build()
        .unwrap();
    (tool, calls)
}

const RM_PROMPT: &str = r#"Run the destructive tool `rm` with {"path":"/tmp/x"}?"#;

fn one_turn() -> ScriptedModel {
    ScriptedModel::new([
        Reply::tool_call("rm", json!({"path": "/tmp/x"})).with_call("echo", json!({"text": "hi"})),
        Reply::text("done"),
    ])
}

#[tokio::test]
async fn approve_destructive_asks_before_a_destructive_tool_and_an_accepted_answer_runs_it_once() {
    let (rm, rm_calls) = rm();
    let (echo, echo_calls) = echo();
    let toolkit = Toolkit::builder().tool(rm).tool(echo).build().unwrap();
    let seen: Arc<Mutex<Vec<Request>>> = Arc::default();
    let record = Arc::clone(&seen);
    let log = Log::default();
    let client = client_for(one_turn())
        .approve_destructive()
        .on_event(log.sink())
        .wait_for(move |req: Request| {
            record.lock().unwrap().push(req.clone());
            async move { req.accept(json!(null)) }
        })
        .build()
        .unwrap();
    let result = client.run("clean up", &toolkit).await.unwrap();
    assert_eq!(result.status, RunStatus::Done);
    let asked = seen.lock().unwrap();
    assert_eq!(asked.len(), 1, "only the destructive tool is asked about");
    assert_eq!(asked[0].kind, "approval");
    assert_eq!(asked[0].prompt, RM_PROMPT);
    assert_eq!(rm_calls.get(), 1, "the tool ran once, after the approval");
    assert_eq!(echo_calls.get(), 1);
    assert_eq!(
        tool_results(&result.messages),
        [
            ("call_1_0".to_owned(), "deleted /tmp/x".to_owned(), false),
            ("call_1_1".to_owned(), "hi".to_owned(), false),
        ]
    );
    let pending: Vec<_> = log
        .all()
        .into_iter()
        .filter(|e| e["type"] == "pending")
        .collect();
    assert_eq!(pending.len(), 1);
    assert_eq!(pending[0]["request"]["kind"], "approval");
    assert_eq!(pending[0]["request"]["prompt"], RM_PROMPT);
}

#[tokio::test]
async fn a_declined_approval_feeds_back_declined_and_the_tool_never_runs() {
    let (rm, rm_calls) = rm();
    let (echo, _) = echo();
    let toolkit = Toolkit::builder().tool(rm).tool(echo).build().unwrap();
    let client = client_for(one_turn())
        .approve_destructive()
        .wait_for(|req: Request| async move { req.decline(DeclineReason::Declined) })
        .build()
        .unwrap();
    let result = client.run("clean up", &toolkit).await.unwrap();
    assert_eq!(result.status, RunStatus::Done);
    assert_eq!(rm_calls.get(), 0);
    assert_eq!(
        tool_results(&result.messages)[0],
        (
            "call_1_0".to_owned(),
            format!("declined/expired: {RM_PROMPT}"),
            true
        )
    );
}

#[tokio::test]
async fn without_wait_for_the_run_halts_on_the_approval_and_resumes_durably() {
    let (rm, rm_calls) = rm();
    let (echo, _) = echo();
    let toolkit = Toolkit::builder().tool(rm).tool(echo).build().unwrap();
    let halted = client_for(one_turn())
        .approve_destructive()
        .build()
        .unwrap()
        .run("clean up", &toolkit)
        .await
        .unwrap();
    assert_eq!(halted.status, RunStatus::Pending);
    assert_eq!(halted.text, RM_PROMPT);
    let request = halted.pending.clone().unwrap();
    assert_eq!(request.kind, "approval");
    assert_eq!(rm_calls.get(), 0, "nothing ran before the approval");

    let json = PendingRun::try_from(&halted).unwrap().to_json();
    let record = PendingRun::from_json(&json).unwrap();
    let resumer = Client::builder(ScriptedModel::new([Reply::text("done")]))
        .model_name("m")
        .approve_destructive()
        .build()
        .unwrap();
    let answer = record.pending().accept(json!(null));
    let done = resumer.resume(record, answer, &toolkit).await.unwrap();
    assert_eq!(done.status, RunStatus::Done);
    assert_eq!(
        rm_calls.get(),
        1,
        "the approved retry is not asked about again"
    );
    assert_eq!(
        tool_results(&done.messages),
        [
            ("call_1_0".to_owned(), "deleted /tmp/x".to_owned(), false),
            ("call_1_1".to_owned(), "hi".to_owned(), false),
        ]
    );
}

#[tokio::test]
async fn an_approval_policy_sees_the_tool_and_the_arguments_and_the_first_prompt_wins() {
    let (echo, echo_calls) = echo();
    let toolkit = Toolkit::builder().tool(echo).build().unwrap();
    let model = ScriptedModel::new([
        Reply::tool_call("echo", json!({"text": "quiet"}))
            .with_call("echo", json!({"text": "LOUD"})),
        Reply::text("done"),
    ]);
    let asked: Arc<Mutex<Vec<String>>> = Arc::default();
    let record = Arc::clone(&asked);
    let client = client_for(model)
        .approval_policy(|tool, args| {
            let text = args["text"].as_str()?;
            (text.chars().all(char::is_uppercase))
                .then(|| format!("Let `{}` shout {text}?", tool.name()))
        })
        .approval_policy(|_, _| Some("the second policy asks the rest".to_owned()))
        .wait_for(move |req: Request| {
            record.lock().unwrap().push(req.prompt.clone());
            async move { req.decline(DeclineReason::Declined) }
        })
        .build()
        .unwrap();
    let result = client.run("go", &toolkit).await.unwrap();
    assert_eq!(
        *asked.lock().unwrap(),
        ["the second policy asks the rest", "Let `echo` shout LOUD?"]
    );
    assert_eq!(echo_calls.get(), 0);
    assert_eq!(
        tool_results(&result.messages),
        [
            (
                "call_1_0".to_owned(),
                "declined/expired: the second policy asks the rest".to_owned(),
                true
            ),
            (
                "call_1_1".to_owned(),
                "declined/expired: Let `echo` shout LOUD?".to_owned(),
                true
            ),
        ]
    );
}

/// Deletes a file.
#[tool(approval = "Delete {path}?")]
fn delete(path: &str) -> String {
    format!("deleted {path}")
}

#[tokio::test]
async fn a_tool_with_declarative_approval_asks_through_the_loop() {
    let toolkit = Toolkit::builder().tool(Delete).build().unwrap();
    let model = ScriptedModel::new([
        Reply::tool_call("delete", json!({"path": "/etc"})),
        Reply::text("done"),
    ]);
    let asked: Arc<Mutex<Vec<Request>>> = Arc::default();
    let record = Arc::clone(&asked);
    let client = client_for(model)
        .wait_for(move |req: Request| {
            record.lock().unwrap().push(req.clone());
            async move { req.accept(json!(null)) }
        })
        .build()
        .unwrap();
    let result = client.run("go", &toolkit).await.unwrap();
    let asked = asked.lock().unwrap();
    assert_eq!(asked.len(), 1);
    assert_eq!(
        (asked[0].kind.as_str(), asked[0].prompt.as_str()),
        ("approval", "Delete /etc?")
    );
    assert_eq!(
        tool_results(&result.messages),
        [("call_1_0".to_owned(), "deleted /etc".to_owned(), false)]
    );
}
