//! Issue 26, tasks: a client that declares the Tasks extension (`io.modelcontextprotocol/tasks`)
//! gets a task for a call that parks in the run store; `tasks/get`, `tasks/update` and
//! `tasks/cancel` follow the parked run, in the same process or after a restart.

use std::time::Duration;

use rmcp::model::{
    CallToolRequestParams, CallToolResponse, CancelTaskParams, GetTaskParams, GetTaskResult,
    InputRequest, InputResponses, TaskPayload, TaskStatus, UpdateTaskParams,
};
use rmcp::service::{RoleClient, RunningService};
use serde_json::{Value, json};
use toolnexus_tests::mcp_fixtures::Script;

use super::parked::{in_process, process_with, with_memory_store};

type Session = RunningService<RoleClient, Script>;

/// Calls `name`, which parks: the task's id (its status `input_required`).
async fn start_task(client: &Session, name: &str, args: Option<Value>) -> String {
    let mut params = CallToolRequestParams::new(name.to_owned());
    params.arguments = args.and_then(|a| a.as_object().cloned());
    match client.call_tool_once(params).await.expect("tools/call") {
        CallToolResponse::Task(created) => {
            assert_eq!(created.task.status, TaskStatus::InputRequired);
            created.task.task_id
        }
        other => panic!("a task: {other:?}"),
    }
}

async fn get(client: &Session, id: &str) -> GetTaskResult {
    client
        .get_task(GetTaskParams::new(id))
        .await
        .expect("tasks/get")
}

/// `tasks/get` until the task no longer works (at most 10 s).
async fn settled(client: &Session, id: &str) -> GetTaskResult {
    for _ in 0..1000 {
        let got = get(client, id).await;
        if got.task.status() != TaskStatus::Working {
            return got;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("the task still works after 10 s");
}

async fn answer(client: &Session, id: &str, key: &str, reply: Value) {
    let mut responses = InputResponses::new();
    responses.insert(key.to_owned(), reply);
    client
        .update_task(UpdateTaskParams::new(id, responses))
        .await
        .expect("tasks/update");
}

/// The keys of an `input_required` task's requests, and the first one's wire JSON.
fn asked(got: &GetTaskResult) -> (Vec<String>, Value) {
    let TaskPayload::InputRequired { input_requests } = &got.task.payload else {
        panic!("input_required: {got:?}");
    };
    let keys = input_requests.keys().cloned().collect::<Vec<_>>();
    let Some(InputRequest::Elicitation(e)) = input_requests.values().next() else {
        panic!("an elicitation: {input_requests:?}");
    };
    (keys, serde_json::to_value(e).expect("serializes"))
}

/// A completed task's result: its text and `isError`.
fn completed(got: &GetTaskResult) -> (String, bool) {
    let TaskPayload::Completed { result } = &got.task.payload else {
        panic!("completed: {got:?}");
    };
    (
        result["content"][0]["text"]
            .as_str()
            .expect("a text block")
            .to_owned(),
        result["isError"].as_bool().unwrap_or(false),
    )
}

fn accept_city(city: &str) -> Value {
    json!({"action": "accept", "content": {"city": city}})
}

#[tokio::test]
async fn a_parked_call_is_a_task_answered_once_through_tasks_update() {
    let client = in_process(with_memory_store(), Script::new().with_tasks(), true).await;
    let id = start_task(&client, "book_trip", None).await;

    let waiting = get(&client, &id).await;
    let (keys, wire) = asked(&waiting);
    assert_eq!(keys, ["r-city"]);
    assert_eq!(wire["params"]["message"], "Which city?");
    assert_eq!(wire["params"]["_meta"]["toolnexus/pending"]["id"], "r-city");
    assert_eq!(waiting.task.task.task_id, id);

    // a response under a key the task did not ask for is ignored: it still waits
    answer(&client, &id, "r-other", accept_city("Bergen")).await;
    assert_eq!(asked(&get(&client, &id).await).0, ["r-city"]);

    answer(&client, &id, "r-city", accept_city("Oslo")).await;
    let done = settled(&client, &id).await;
    assert_eq!(completed(&done), ("booked to Oslo".to_owned(), false));

    // once: a second answer is ignored, the result stays
    answer(&client, &id, "r-city", accept_city("Bergen")).await;
    assert_eq!(
        completed(&settled(&client, &id).await),
        ("booked to Oslo".to_owned(), false)
    );
    let _ = client.cancel().await;
}

#[tokio::test]
async fn a_cancelled_task_ends_with_the_tools_answer_to_the_cancellation() {
    let client = in_process(with_memory_store(), Script::new().with_tasks(), true).await;
    let id = start_task(&client, "delete_file", Some(json!({"path": "/tmp/x"}))).await;
    assert_eq!(asked(&get(&client, &id).await).0, ["r-delete"]);
    client
        .cancel_task(CancelTaskParams::new(&id))
        .await
        .expect("tasks/cancel");
    assert_eq!(
        completed(&settled(&client, &id).await),
        ("declined/expired: Delete /tmp/x?".to_owned(), true)
    );
    let _ = client.cancel().await;
}

#[tokio::test]
async fn a_task_is_unknown_to_another_principal_and_a_forged_id_is_unknown() {
    let who = std::sync::Arc::new(std::sync::Mutex::new("ada".to_owned()));
    let current = std::sync::Arc::clone(&who);
    let service =
        with_memory_store().with_principal(move |_| Some(current.lock().unwrap().clone()));
    let client = in_process(service, Script::new().with_tasks(), true).await;
    let id = start_task(&client, "book_trip", None).await;

    *who.lock().unwrap() = "mallory".to_owned();
    let refused = client
        .get_task(GetTaskParams::new(&id))
        .await
        .expect_err("another principal's tasks/get is refused")
        .to_string();
    assert!(refused.contains("unknown task"), "{refused}");
    let mut responses = InputResponses::new();
    responses.insert("r-city".to_owned(), accept_city("Bergen"));
    let refused = client
        .update_task(UpdateTaskParams::new(&id, responses))
        .await
        .expect_err("another principal's tasks/update is refused")
        .to_string();
    assert!(refused.contains("unknown task"), "{refused}");

    let forged = client
        .get_task(GetTaskParams::new("task-forged"))
        .await
        .expect_err("a forged task id is refused")
        .to_string();
    assert!(forged.contains("unknown task: task-forged"), "{forged}");

    // its own principal still finds it waiting, and answers it
    *who.lock().unwrap() = "ada".to_owned();
    assert_eq!(asked(&get(&client, &id).await).0, ["r-city"]);
    answer(&client, &id, "r-city", accept_city("Oslo")).await;
    assert_eq!(
        completed(&settled(&client, &id).await),
        ("booked to Oslo".to_owned(), false)
    );
    let _ = client.cancel().await;
}

#[tokio::test]
async fn a_task_survives_a_server_restart_and_completes_once() {
    let dir = std::env::temp_dir().join(format!("toolnexus-mcp-tasks-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("a temp dir");
    let file = dir.join("runs.sqlite");

    // process 1: the call parks and is a task
    let (client, pid) = process_with(&file, Script::new().with_tasks()).await;
    let id = start_task(&client, "book_trip", None).await;
    let killed = std::process::Command::new("kill")
        .args(["-9", &pid.to_string()])
        .status()
        .expect("kill runs");
    assert!(killed.success());
    let _ = client.cancel().await;

    // process 2 on the same file: the task is there, waiting, and its answer completes it
    let (client, _) = process_with(&file, Script::new().with_tasks()).await;
    assert_eq!(asked(&get(&client, &id).await).0, ["r-city"]);
    answer(&client, &id, "r-city", accept_city("Oslo")).await;
    assert_eq!(
        completed(&settled(&client, &id).await),
        ("booked to Oslo".to_owned(), false)
    );
    let _ = client.cancel().await;

    // process 3: the result is kept in the store; a late answer changes nothing
    let (client, _) = process_with(&file, Script::new().with_tasks()).await;
    answer(&client, &id, "r-city", accept_city("Bergen")).await;
    assert_eq!(
        completed(&get(&client, &id).await),
        ("booked to Oslo".to_owned(), false)
    );
    let _ = client.cancel().await;
    tokio::time::sleep(Duration::from_millis(10)).await;
    let _ = std::fs::remove_dir_all(&dir);
}

/// #25, reconcile over MCP: a served call of `pay` (not idempotent), approved through
/// `tasks/update`, is cut inside the tool (its resume stalls there, its lease lapses); the
/// worker that takes the run over parks it on a `reconcile` request, and the task asks the
/// client for it as an elicitation whose form offers the action as a string enum; the
/// answer (record this output) completes the task with that output, and `pay` never ran again.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_crash_cut_served_call_asks_the_client_to_reconcile() {
    use std::sync::Arc;
    use std::sync::atomic::Ordering;
    use toolnexus::store::{MemoryStore, RunStore};

    let lease = Duration::from_millis(200);
    let (toolkit, runs, inside) = super::replay::stalling_pay();
    let store: Arc<dyn RunStore> = Arc::new(MemoryStore::new().with_lease(lease));
    let service = toolnexus::mcp::McpService::new(toolkit.clone()).with_store(Arc::clone(&store));
    let client = in_process(service, Script::new().with_tasks(), true).await;

    let id = start_task(&client, "pay", None).await;
    let (keys, _) = asked(&get(&client, &id).await);
    answer(&client, &id, &keys[0], json!({"action": "accept"})).await;
    // a worker takes the run over from the started marker: it parks on `reconcile`
    let (_, request) =
        super::replay::taken_over_to_reconcile(store.as_ref(), &toolkit, &inside, lease).await;

    let waiting = get(&client, &id).await;
    let (keys, wire) = asked(&waiting);
    assert_eq!(keys, std::slice::from_ref(&request.id));
    let params = &wire["params"];
    assert_eq!(params["message"], request.prompt);
    assert_eq!(params["_meta"]["toolnexus/pending"]["kind"], "reconcile");
    assert_eq!(params["_meta"]["toolnexus/pending"]["data"]["tool"], "pay");
    let form = &params["requestedSchema"];
    assert_eq!(
        form["properties"]["action"]["enum"],
        json!(["rerun", "record", "fail"])
    );
    assert_eq!(form["properties"]["output"]["type"], "string");
    assert_eq!(form["required"], json!(["action"]));

    answer(
        &client,
        &id,
        &request.id,
        json!({"action": "accept", "content": {"action": "record", "output": "paid by hand"}}),
    )
    .await;
    let done = settled(&client, &id).await;
    assert_eq!(completed(&done), ("paid by hand".to_owned(), false));
    assert_eq!(runs.load(Ordering::SeqCst), 1, "pay never ran again");
    let _ = client.cancel().await;
}

/// Pays, once two people approved.
#[toolnexus::tool(approval = "Pay {amount} EUR?", approvals = 2)]
fn pay_by_two(amount: u32) -> String {
    format!("paid {amount} EUR")
}

/// Deploys, once someone other than the requester approved.
#[toolnexus::tool(approval = "Deploy build {build}?", not_by_requester)]
fn deploy_by_another(build: u32) -> String {
    format!("deployed build {build}")
}

/// A task over `store` for a client that is `principal`, with both governed tools.
async fn governed_session(
    store: &std::sync::Arc<toolnexus::store::MemoryStore>,
    principal: &'static str,
) -> Session {
    let toolkit = toolnexus::Toolkit::builder()
        .tool(PayByTwo)
        .tool(DeployByAnother)
        .build()
        .unwrap();
    let service = toolnexus::mcp::McpService::new(toolkit)
        .with_store(store.clone() as std::sync::Arc<dyn toolnexus::store::RunStore>)
        .with_principal(move |_| Some(principal.to_owned()));
    in_process(service, Script::new().with_tasks(), true).await
}

/// Attack: bob's `tasks/update` of a request that needs two approvals is his one vote. The
/// task must then say `working` (it waits for someone else), not ask bob again what he
/// answered; his second acceptance is still one vote.
#[tokio::test]
async fn a_task_waiting_for_a_second_approval_is_working_for_the_client_that_voted() {
    use toolnexus::store::{PendingQuery, RunState, RunStore as _};
    let store = std::sync::Arc::new(toolnexus::store::MemoryStore::new());
    let client = governed_session(&store, "bob").await;
    let id = start_task(&client, "pay_by_two", Some(json!({"amount": 4000}))).await;
    let (keys, _) = asked(&get(&client, &id).await);
    let accept = json!({"action": "accept", "content": {}});
    answer(&client, &id, &keys[0], accept.clone()).await;
    let page = store.list_pending(&PendingQuery::new()).await.unwrap();
    let run = store.get(&page.runs[0].run_id).await.unwrap().unwrap();
    assert_eq!(run.info.state, RunState::Parked);
    assert_eq!(
        run.votes.iter().map(|v| v.by.as_str()).collect::<Vec<_>>(),
        ["bob"]
    );
    assert_eq!(get(&client, &id).await.task.status(), TaskStatus::Working);
    answer(&client, &id, &keys[0], accept).await;
    let run = store.get(&run.info.run_id).await.unwrap().unwrap();
    assert_eq!(run.votes.len(), 1, "bob counts once");
    assert_eq!(get(&client, &id).await.task.status(), TaskStatus::Working);
    let _ = client.cancel().await;
}

/// Attack: alice's task of a call whose approval refuses its requester waits on someone
/// else: `working` for her from the start, and her own `tasks/update` records nothing.
#[tokio::test]
async fn a_task_that_refuses_its_requester_is_working_for_the_requester() {
    use toolnexus::store::{PendingQuery, RunState, RunStore as _};
    let store = std::sync::Arc::new(toolnexus::store::MemoryStore::new());
    let client = governed_session(&store, "alice").await;
    let id = start_task(&client, "deploy_by_another", Some(json!({"build": 7}))).await;
    assert_eq!(get(&client, &id).await.task.status(), TaskStatus::Working);
    let page = store.list_pending(&PendingQuery::new()).await.unwrap();
    let request_id = page.runs[0].request_id.clone();
    answer(
        &client,
        &id,
        &request_id,
        json!({"action": "accept", "content": {}}),
    )
    .await;
    let run = store.get(&page.runs[0].run_id).await.unwrap().unwrap();
    assert_eq!(run.info.state, RunState::Parked);
    assert_eq!(run.info.answered_by(), None);
    assert_eq!(get(&client, &id).await.task.status(), TaskStatus::Working);
    let _ = client.cancel().await;
}
