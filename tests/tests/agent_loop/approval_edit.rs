//! What a person does at an approval (issue 25): approve *edited* arguments, re-bound to the
//! call (CONTRACT section 2, editable approvals), through `wait_for` and through a durable
//! resume; and the time a person takes is never a tool's time.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{Value, json};
use toolnexus::client::BeforeTool;
use toolnexus::{
    Client, Context, FnTool, PendingRun, Reply, Request, RunStatus, ScriptedModel, Tool,
    ToolResult, Toolkit, tool,
};
use toolnexus_tests::fixtures::client_for;
use toolnexus_tests::tool_results;

thread_local! {
    /// How many times `pay` ran its body on this thread: each test runs its loop on its own
    /// thread (a current-thread runtime), so tests running side by side do not count each
    /// other's payments.
    static PAID: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

fn paid() -> usize {
    PAID.with(std::cell::Cell::get)
}

/// Pays someone.
#[tool(destructive, approval = "Pay {amount} EUR to {to}?", editable)]
#[allow(clippy::needless_pass_by_value)] // a tool's parameters are owned
fn pay(amount: u32, to: String) -> String {
    PAID.with(|n| n.set(n.get() + 1));
    format!("paid {amount} EUR to {to}")
}

/// Transfers money (the same body, but its approvals cannot be edited).
#[tool(destructive, approval = "Transfer {amount} EUR to {to}?")]
#[allow(clippy::needless_pass_by_value)] // a tool's parameters are owned
fn transfer(amount: u32, to: String) -> String {
    format!("transferred {amount} EUR to {to}")
}

fn script(tool: &str, args: Value) -> ScriptedModel {
    ScriptedModel::new([Reply::tool_call(tool, args), Reply::text("done")])
}

fn kit() -> Toolkit {
    Toolkit::builder().tool(Pay).tool(Transfer).build().unwrap()
}

/// A client whose `wait_for` answers with `answer(request)` and keeps the requests it saw.
fn answering(
    model: ScriptedModel,
    answer: impl Fn(&Request) -> toolnexus::Answer + Send + Sync + 'static,
) -> (Client, Arc<Mutex<Vec<Request>>>) {
    let seen: Arc<Mutex<Vec<Request>>> = Arc::default();
    let record = Arc::clone(&seen);
    let answer = Arc::new(answer);
    let client = client_for(model)
        .wait_for(move |req: Request| {
            record.lock().unwrap().push(req.clone());
            let a = answer(&req);
            async move { a }
        })
        .build()
        .unwrap();
    (client, seen)
}

#[tokio::test]
async fn an_edited_approval_runs_the_edited_arguments_and_the_transcript_shows_them() {
    let before = paid();
    let (client, seen) = answering(script("pay", json!({"amount": 40, "to": "Ada"})), |req| {
        req.approve_with(json!({"amount": 30, "to": "Ada"}))
    });
    let result = client.run("pay Ada", &kit()).await.unwrap();
    assert_eq!(result.status, RunStatus::Done);

    // the request offered the proposed arguments and the tool's own schema
    let asked = seen.lock().unwrap().clone();
    assert_eq!(asked.len(), 1);
    assert_eq!(asked[0].kind, "approval");
    assert_eq!(asked[0].prompt, "Pay 40 EUR to Ada?");
    assert_eq!(
        asked[0].proposed_args(),
        Some(&json!({"amount": 40, "to": "Ada"}))
    );
    assert_eq!(asked[0].args_schema(), Some(Pay.input_schema()));

    // the edit ran, once, and is what the record and the model's transcript show
    assert_eq!(result.tool_calls[0].output, "paid 30 EUR to Ada");
    assert_eq!(
        result.tool_calls[0].args,
        json!({"amount": 30, "to": "Ada"})
    );
    let call = result
        .messages
        .iter()
        .flat_map(|m| &m.tool_calls)
        .find(|c| c.name == "pay")
        .expect("the model's call");
    assert_eq!(call.arguments, json!({"amount": 30, "to": "Ada"}));
    assert_eq!(paid(), before + 1, "the edited call ran once");
}

#[tokio::test]
async fn an_edit_to_a_tool_that_did_not_opt_in_is_refused_and_nothing_runs() {
    let (client, seen) = answering(
        script("transfer", json!({"amount": 40, "to": "Ada"})),
        |req| req.approve_with(json!({"amount": 400, "to": "Eve"})),
    );
    let result = client.run("transfer", &kit()).await.unwrap();
    assert_eq!(seen.lock().unwrap()[0].proposed_args(), None);
    assert_eq!(
        tool_results(&result.messages)[0].1,
        "edit refused: `transfer` does not allow editing its arguments on approval; nothing ran"
    );
    assert!(result.tool_calls[0].is_error);
    // the record keeps the arguments the person was shown, never the refused edit
    assert_eq!(
        result.tool_calls[0].args,
        json!({"amount": 40, "to": "Ada"})
    );
}

#[tokio::test]
async fn an_edit_that_does_not_fit_the_tools_parameters_is_refused_and_nothing_runs() {
    let cases = [
        (
            json!({"amount": "lots", "to": "Ada"}),
            "edit refused: the edited arguments do not fit `pay`'s parameters: /amount must be integer, not string; nothing ran",
        ),
        (
            json!({"amount": 30}),
            "edit refused: the edited arguments do not fit `pay`'s parameters: the arguments: `to` is required; nothing ran",
        ),
        (
            json!({"amount": 30, "to": "Ada", "iban": "DE00"}),
            "edit refused: the edited arguments do not fit `pay`'s parameters: the arguments: `iban` is not a parameter; nothing ran",
        ),
        (
            json!(["Ada"]),
            "edit refused: the edited arguments must be a JSON object; nothing ran",
        ),
    ];
    for (edit, why) in cases {
        let before = paid();
        let answer = edit.clone();
        let (client, _) = answering(
            script("pay", json!({"amount": 40, "to": "Ada"})),
            move |req| req.approve_with(answer.clone()),
        );
        let result = client.run("pay", &kit()).await.unwrap();
        assert_eq!(tool_results(&result.messages)[0].1, why, "{edit}");
        assert_eq!(paid(), before, "nothing ran for {edit}");
    }
}

#[tokio::test]
async fn an_edit_passes_before_tool_again() {
    let seen: Arc<Mutex<Vec<Value>>> = Arc::default();
    let record = Arc::clone(&seen);
    let client = client_for(script("pay", json!({"amount": 40, "to": "Ada"})))
        .before_tool(move |call| {
            record.lock().unwrap().push(call.arguments.clone());
            let over = call.arguments["amount"].as_u64().unwrap_or(0) > 100;
            async move {
                if over {
                    BeforeTool::Return(ToolResult::error("over the limit of 100 EUR"))
                } else {
                    BeforeTool::Continue
                }
            }
        })
        .wait_for(
            |req: Request| async move { req.approve_with(json!({"amount": 900, "to": "Ada"})) },
        )
        .build()
        .unwrap();
    let before = paid();
    let result = client.run("pay", &kit()).await.unwrap();
    assert_eq!(
        *seen.lock().unwrap(),
        [
            json!({"amount": 40, "to": "Ada"}),
            json!({"amount": 900, "to": "Ada"})
        ],
        "the hook saw the model's arguments, then the person's"
    );
    assert_eq!(
        tool_results(&result.messages)[0].1,
        "over the limit of 100 EUR"
    );
    assert_eq!(paid(), before);
}

#[tokio::test]
async fn a_halted_editable_approval_resumes_durably_with_the_edit() {
    let client = client_for(script("pay", json!({"amount": 40, "to": "Ada"})))
        .build()
        .unwrap();
    let halted = client.run("pay Ada", &kit()).await.unwrap();
    assert_eq!(halted.status, RunStatus::Pending);
    let json = PendingRun::try_from(&halted).unwrap().to_json();

    // another process: load, answer with other arguments
    let record = PendingRun::from_json(&json).unwrap();
    let answer = record
        .pending()
        .approve_with(json!({"amount": 25, "to": "Bob"}));
    let model = ScriptedModel::new([Reply::text("done")]);
    let resumed = client_for(model)
        .build()
        .unwrap()
        .resume(record, answer, &kit())
        .await
        .unwrap();
    assert_eq!(resumed.status, RunStatus::Done);
    assert_eq!(resumed.tool_calls[0].output, "paid 25 EUR to Bob");
    assert_eq!(
        resumed.tool_calls[0].args,
        json!({"amount": 25, "to": "Bob"})
    );
    let call = resumed
        .messages
        .iter()
        .flat_map(|m| &m.tool_calls)
        .find(|c| c.name == "pay")
        .expect("the model's call");
    assert_eq!(call.arguments, json!({"amount": 25, "to": "Bob"}));
}

/// `login_as`: a hand-made tool whose approvals may be edited, with a credential parameter.
fn login_as(runs: Arc<AtomicUsize>) -> FnTool {
    FnTool::builder("login_as")
        .description("Signs in as a user.")
        .destructive()
        .editable()
        .schema(json!({"type": "object", "properties": {
            "user": {"type": "string"}, "password": {"type": "string"}
        }, "required": ["user"], "additionalProperties": false}))
        .handler(move |args, _ctx| {
            runs.fetch_add(1, Ordering::SeqCst);
            let user = args["user"].as_str().unwrap_or_default().to_owned();
            async move { format!("signed in as {user}") }
        })
        .build()
        .unwrap()
}

#[tokio::test]
async fn a_client_policys_approval_of_an_editable_fn_tool_offers_its_arguments() {
    let runs = Arc::new(AtomicUsize::new(0));
    let kit = Toolkit::builder()
        .tool(login_as(runs.clone()))
        .build()
        .unwrap();
    let seen: Arc<Mutex<Vec<Request>>> = Arc::default();
    let record = Arc::clone(&seen);
    let client = client_for(script("login_as", json!({"user": "ada"})))
        .approve_destructive()
        .wait_for(move |req: Request| {
            record.lock().unwrap().push(req.clone());
            async move { req.approve_with(json!({"user": "bob"})) }
        })
        .build()
        .unwrap();
    let result = client.run("sign in", &kit).await.unwrap();
    let asked = seen.lock().unwrap()[0].clone();
    assert_eq!(asked.proposed_args(), Some(&json!({"user": "ada"})));
    assert_eq!(
        asked.args_schema().and_then(|s| s.get("required")),
        Some(&json!(["user"]))
    );
    assert_eq!(result.tool_calls[0].output, "signed in as bob");
    assert_eq!(runs.load(Ordering::SeqCst), 1);
}

#[tokio::test]
async fn an_edit_that_types_a_credential_is_refused_and_nothing_runs() {
    let runs = Arc::new(AtomicUsize::new(0));
    let kit = Toolkit::builder()
        .tool(login_as(runs.clone()))
        .build()
        .unwrap();
    let client = client_for(script("login_as", json!({"user": "ada"})))
        .approve_destructive()
        .wait_for(|req: Request| async move {
            req.approve_with(json!({"user": "ada", "password": "hunter2"}))
        })
        .build()
        .unwrap();
    let result = client.run("sign in", &kit).await.unwrap();
    assert_eq!(
        tool_results(&result.messages)[0].1,
        "edit refused: the edit changes `password`, which holds a credential; secrets never pass through answer data; nothing ran"
    );
    assert_eq!(runs.load(Ordering::SeqCst), 0);
}

/// A person who takes 2 s to approve a call of a tool limited to 100 ms: the limit is the
/// tool's own time, counted from each run of it, never the person's.
#[tokio::test]
async fn human_wait_is_not_tool_time() {
    let runs = Arc::new(AtomicUsize::new(0));
    let counted = runs.clone();
    let slowish = FnTool::builder("deploy")
        .description("Deploys.")
        .handler(move |_, ctx: Context| {
            let counted = counted.clone();
            async move {
                // 60 ms of work on each run, within the 100 ms limit; the first run asks
                tokio::time::sleep(Duration::from_millis(60)).await;
                counted.fetch_add(1, Ordering::SeqCst);
                if ctx.answer().is_none() {
                    return ToolResult::suspended(Request::approval("Deploy?"));
                }
                ToolResult::success(format!(
                    "deployed (limit {:?})",
                    ctx.timeout().unwrap_or_default()
                ))
            }
        })
        .build()
        .unwrap();
    let kit = Toolkit::builder().tool(slowish).build().unwrap();
    let client = client_for(script("deploy", json!({})))
        .tool_timeout(Duration::from_millis(100))
        .wait_for(|req: Request| async move {
            tokio::time::sleep(Duration::from_secs(2)).await;
            req.accept(json!(null))
        })
        .build()
        .unwrap();
    let started = std::time::Instant::now();
    let result = client.run("deploy", &kit).await.unwrap();
    assert!(
        started.elapsed() >= Duration::from_secs(2),
        "the person took 2 s"
    );
    assert_eq!(result.tool_calls[0].output, "deployed (limit 100ms)");
    assert!(!result.tool_calls[0].is_error);
    assert_eq!(
        runs.load(Ordering::SeqCst),
        2,
        "asked, then ran with the answer"
    );
}
