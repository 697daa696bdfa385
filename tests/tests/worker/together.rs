//! A turn's questions together through the `Worker`, on every store: the run is resumed once
//! the last of its answers is recorded, each call executed once with its own answer; a run
//! whose first request expires is resumed with its unanswered requests declined.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use toolnexus::store::RunState;
use toolnexus::{Answer, PendingRun};
use toolnexus_tests::store_conformance::{
    halt_together, halt_together_expiring, together_client, together_toolkit,
};

use super::{Backend, Running, accept, every_store, finished, resume_next, start, worker};

/// Parks `record` in `s`'s store: its request ids and its run's id.
async fn parked(s: &Backend, record: PendingRun) -> (Vec<String>, String) {
    let ids = record.requests().iter().map(|r| r.id.clone()).collect();
    (ids, s.store.park(record).await.unwrap().run_id)
}

/// A together run (`halt_together`, no deadline) parked in `s`'s store: the counter of its
/// calls, its request ids and its run's id.
async fn parked_together(s: &Backend) -> (Arc<AtomicUsize>, Vec<String>, String) {
    let ran = Arc::new(AtomicUsize::new(0));
    let (ids, run_id) = parked(s, halt_together(&ran, None).await).await;
    (ran, ids, run_id)
}

/// Waits until together run `run_id` of `s`'s store finished, and asserts that it read every
/// answer as given.
async fn finished_as_answered(s: &Backend, run_id: &str) {
    let done = finished(s, run_id).await;
    assert_eq!(
        done.result.unwrap().text,
        r#"city is "Oslo"; date is "May 1"; seat is "12A""#,
        "{}",
        s.name
    );
}

/// Starts a worker (`w-1`) over `s`'s store resuming together runs, counting calls in `ran`.
fn start_together(s: &Backend, ran: &Arc<AtomicUsize>) -> Running {
    start(worker(
        s,
        together_client(None),
        together_toolkit(ran),
        "w-1",
    ))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_worker_resumes_a_together_run_once_its_last_answer_arrives() {
    for s in every_store("the_worker_resumes_a_together_run_once_its_last_answer_arrives").await {
        let (ran, ids, run_id) = parked_together(&s).await;
        let running = start_together(&s, &ran);
        accept(&s, &ids[2], "12A", "carol").await;
        accept(&s, &ids[1], "May 1", "bob").await;
        tokio::time::sleep(Duration::from_millis(300)).await;
        let waiting = s.store.info(&run_id).await.unwrap().unwrap();
        assert_eq!(
            waiting.state,
            RunState::Parked,
            "{}: one still waits",
            s.name
        );
        accept(&s, &ids[0], "Oslo", "alice").await;
        finished_as_answered(&s, &run_id).await;
        assert_eq!(
            ran.load(Ordering::SeqCst),
            6,
            "{}: each call once more",
            s.name
        );
        let stats = running.stop().await;
        assert_eq!(
            (stats.claimed, stats.finished),
            (1, 1),
            "{}: {stats:?}",
            s.name
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_expired_together_run_reads_its_unanswered_requests_declined() {
    for s in every_store("an_expired_together_run_reads_its_unanswered_requests_declined").await {
        let ran = Arc::new(AtomicUsize::new(0));
        // the run's deadline is its first request's
        let record = halt_together_expiring(&ran, [Some(600), None, None]).await;
        let (ids, run_id) = parked(&s, record).await;
        accept(&s, &ids[1], "May 1", "bob").await;
        let running = start_together(&s, &ran);
        let done = finished(&s, &run_id).await;
        assert!(
            done.info
                .history
                .iter()
                .any(|e| e.event == toolnexus::store::RunEventKind::Expired),
            "{}",
            s.name
        );
        assert_eq!(
            done.result.unwrap().text,
            "declined/expired: city?; date is \"May 1\"; declined/expired: seat?",
            "{}",
            s.name
        );
        running.stop().await;
    }
}

/// Across processes: a together run parked in a SQLite file by this process, its two answers
/// submitted here in reverse order while a worker process (`run_worker`) polls the file; the
/// worker resumes the run once, after the last answer, and each answered call's side effect
/// (a row in `effects`) happens exactly once.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_process_resumes_a_together_run_answered_in_another_process() {
    use toolnexus::store::RunStore;
    use toolnexus::{Client, FnModel, ModelRequest, PendingRun, Reply, Role};
    use toolnexus_tests::store_conformance::Agent;

    let dir = std::env::temp_dir().join(format!("toolnexus-together-proc-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("runs.db");
    let store = toolnexus::store::SqliteStore::open(&path).await.unwrap();
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute_batch("CREATE TABLE effects (request_id TEXT NOT NULL, worker TEXT NOT NULL)")
        .unwrap();
    // one turn calling `ask` twice (Agent's tool, which the worker process resumes), together
    let model = FnModel::new(|req: ModelRequest| async move {
        if req.messages.iter().any(|m| m.role == Role::Tool) {
            Reply::text("unused")
        } else {
            Reply::tool_call("ask", serde_json::json!({})).with_call("ask", serde_json::json!({}))
        }
    });
    let client = Client::builder(model)
        .model_name("conformance")
        .questions_together(true)
        .build()
        .unwrap();
    let halted = client.run("Greet us.", &Agent::toolkit()).await.unwrap();
    let record = PendingRun::try_from(halted).unwrap();
    let ids: Vec<String> = record.requests().iter().map(|r| r.id.clone()).collect();
    assert_eq!(ids.len(), 2);
    let run_id = store.park(record).await.unwrap().run_id;

    let file = path.to_string_lossy().into_owned();
    let (mut child, lines) = super::run_worker(
        &["sqlite", &file, "-", "w-proc", "2000", "1", "50"],
        &[],
        "w-proc",
    );
    store
        .submit(&Answer::accept(&ids[1], "Bob"), "bob")
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(300)).await;
    assert_eq!(
        store.info(&run_id).await.unwrap().unwrap().state,
        RunState::Parked,
        "the worker waits for the other answer"
    );
    store
        .submit(&Answer::accept(&ids[0], "Ada"), "ada")
        .await
        .unwrap();
    let done = store
        .wait_finished(&run_id, Duration::from_secs(20))
        .await
        .unwrap()
        .expect("the worker process finished the run");
    drop(child.stdin.take());
    assert!(child.wait().unwrap().success());
    drop(lines);
    assert_eq!(done.result.unwrap().text, "done: hello \"Bob\"");
    assert_eq!(done.info.resumed_by(), Some("w-proc"));
    let conn = rusqlite::Connection::open(&path).unwrap();
    let mut effects: Vec<(String, i64)> = conn
        .prepare("SELECT request_id, count(*) FROM effects GROUP BY request_id")
        .unwrap()
        .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap();
    effects.sort();
    let mut want = vec![(ids[0].clone(), 1), (ids[1].clone(), 1)];
    want.sort();
    assert_eq!(effects, want, "each answered call's side effect once");
    let _ = std::fs::remove_dir_all(&dir);
}

/// Attack: a together turn whose `date` request expires 300 ms after it is asked. `date` is
/// answered at once (in time), `seat` and `city` only after its deadline (they have none). The
/// store recorded `date`'s answer in time, so the resumed run must read it as given, not as
/// `declined/expired` because the turn completed later.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_together_answer_recorded_in_time_is_not_read_as_expired_when_the_turn_completes_later() {
    for s in every_store("a_together_answer_recorded_in_time_is_not_read_as_expired").await {
        let ran = Arc::new(AtomicUsize::new(0));
        let record = halt_together(&ran, Some(300)).await;
        let deadline = record.requests()[1].expires_at_time().unwrap();
        let (ids, run_id) = parked(&s, record).await;
        accept(&s, &ids[1], "May 1", "bob").await;
        while std::time::SystemTime::now() <= deadline + Duration::from_millis(50) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        accept(&s, &ids[2], "12A", "carol").await;
        accept(&s, &ids[0], "Oslo", "alice").await;
        let running = start_together(&s, &ran);
        finished_as_answered(&s, &run_id).await;
        running.stop().await;
    }
}

/// `by`'s approval of request `id`, recorded in `s`'s store: the run's info after it.
async fn approve(s: &Backend, id: &str, by: &str) -> toolnexus::store::RunInfo {
    s.store.submit(&Answer::ok(id), by).await.unwrap()
}

/// Asserts that `by` may not approve request `id` in `s`'s store
/// ([`StoreError::NotAllowed`](toolnexus::store::StoreError::NotAllowed)).
async fn not_allowed(s: &Backend, id: &str, by: &str) {
    let own = s.store.submit(&Answer::ok(id), by).await;
    assert!(
        matches!(own, Err(toolnexus::store::StoreError::NotAllowed(_))),
        "{}: {own:?}",
        s.name
    );
}

/// Attack: alice's run asks two approvals in one turn of a together client, each refusing its
/// requester and the second needing two approvers. They keep their rules: the turn parks the
/// family's way (one request at a time), alice's own answer is refused (nothing recorded),
/// and one person's acceptance of the second is one vote; each call runs once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn governed_approvals_asked_together_keep_their_rules() {
    use toolnexus::Request;
    for s in every_store("governed_approvals_asked_together").await {
        let (client, toolkit) = super::rules::two_deploys(|env| {
            let approvals = if env == "b" { 2 } else { 1 };
            Request::approval(format!("Deploy {env}?"))
                .with_approvals(approvals)
                .with_not_by_requester()
        });
        let record = super::rules::parked_for_alice(&client, "Deploy both.", &toolkit).await;
        assert!(!record.is_together(), "{}: parked the family's way", s.name);
        let first = record.pending().id.clone();
        s.store.park(record).await.unwrap();
        not_allowed(&s, &first, "alice").await;
        approve(&s, &first, "bob").await;
        // the second surfaces once the first is resumed, with the id it was made with
        let again = resume_next(&s, "w-1", &client, &toolkit).await;
        let second = again
            .pending
            .as_deref()
            .expect("parked on the second")
            .clone();
        assert_eq!(second.prompt, "Deploy b?", "{}", s.name);
        assert_eq!(second.required_approvals(), 2);
        not_allowed(&s, &second.id, "alice").await;
        let info = approve(&s, &second.id, "bob").await;
        assert_eq!(
            info.state,
            RunState::Parked,
            "{}: the second needs one more approver",
            s.name
        );
        let info = approve(&s, &second.id, "carol").await;
        assert_eq!(info.state, RunState::Answered, "{}", s.name);
        let done = resume_next(&s, "w-1", &client, &toolkit).await;
        assert_eq!(done.text, "done", "{}", s.name);
        let outputs: Vec<&str> = done.tool_calls.iter().map(|c| c.output.as_str()).collect();
        assert_eq!(outputs, ["deployed a", "deployed b"], "{}", s.name);
    }
}
