//! A turn's questions together through the `Worker`, on every store: the run is resumed once
//! the last of its answers is recorded, each call executed once with its own answer; a run
//! whose first request expires is resumed with its unanswered requests declined.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use toolnexus::Answer;
use toolnexus::store::RunState;
use toolnexus_tests::store_conformance::{
    halt_together, halt_together_expiring, together_client, together_toolkit,
};

use super::{start, stores, worker};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_worker_resumes_a_together_run_once_its_last_answer_arrives() {
    for s in stores(
        "the_worker_resumes_a_together_run_once_its_last_answer_arrives",
        Duration::from_secs(30),
    )
    .await
    {
        let ran = Arc::new(AtomicUsize::new(0));
        let record = halt_together(&ran, None).await;
        let ids: Vec<String> = record.requests().iter().map(|r| r.id.clone()).collect();
        let run_id = s.store.park(record).await.unwrap().run_id;
        let w = worker(&s, together_client(None), together_toolkit(&ran), "w-1");
        let running = start(w);
        s.store
            .submit(&Answer::accept(&ids[2], "12A"), "carol")
            .await
            .unwrap();
        s.store
            .submit(&Answer::accept(&ids[1], "May 1"), "bob")
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(300)).await;
        let waiting = s.store.info(&run_id).await.unwrap().unwrap();
        assert_eq!(
            waiting.state,
            RunState::Parked,
            "{}: one still waits",
            s.name
        );
        s.store
            .submit(&Answer::accept(&ids[0], "Oslo"), "alice")
            .await
            .unwrap();
        let done = s
            .store
            .wait_finished(&run_id, Duration::from_secs(20))
            .await
            .unwrap()
            .unwrap_or_else(|| panic!("{}: the run did not finish", s.name));
        assert_eq!(
            done.result.unwrap().text,
            r#"city is "Oslo"; date is "May 1"; seat is "12A""#,
            "{}",
            s.name
        );
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
    for s in stores(
        "an_expired_together_run_reads_its_unanswered_requests_declined",
        Duration::from_secs(30),
    )
    .await
    {
        let ran = Arc::new(AtomicUsize::new(0));
        // the run's deadline is its first request's
        let record = halt_together_expiring(&ran, [Some(600), None, None]).await;
        let ids: Vec<String> = record.requests().iter().map(|r| r.id.clone()).collect();
        let run_id = s.store.park(record).await.unwrap().run_id;
        s.store
            .submit(&Answer::accept(&ids[1], "May 1"), "bob")
            .await
            .unwrap();
        let w = worker(&s, together_client(None), together_toolkit(&ran), "w-1");
        let running = start(w);
        let done = s
            .store
            .wait_finished(&run_id, Duration::from_secs(20))
            .await
            .unwrap()
            .unwrap_or_else(|| panic!("{}: the run did not finish", s.name));
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
    for s in stores(
        "a_together_answer_recorded_in_time_is_not_read_as_expired",
        Duration::from_secs(30),
    )
    .await
    {
        let ran = Arc::new(AtomicUsize::new(0));
        let record = halt_together(&ran, Some(300)).await;
        let ids: Vec<String> = record.requests().iter().map(|r| r.id.clone()).collect();
        let deadline = record.requests()[1].expires_at_time().unwrap();
        let run_id = s.store.park(record).await.unwrap().run_id;
        s.store
            .submit(&Answer::accept(&ids[1], "May 1"), "bob")
            .await
            .unwrap();
        while std::time::SystemTime::now() <= deadline + Duration::from_millis(50) {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        s.store
            .submit(&Answer::accept(&ids[2], "12A"), "carol")
            .await
            .unwrap();
        s.store
            .submit(&Answer::accept(&ids[0], "Oslo"), "alice")
            .await
            .unwrap();
        let w = worker(&s, together_client(None), together_toolkit(&ran), "w-1");
        let running = start(w);
        let done = s
            .store
            .wait_finished(&run_id, Duration::from_secs(20))
            .await
            .unwrap()
            .unwrap_or_else(|| panic!("{}: the run did not finish", s.name));
        assert_eq!(
            done.result.unwrap().text,
            r#"city is "Oslo"; date is "May 1"; seat is "12A""#,
            "{}",
            s.name
        );
        running.stop().await;
    }
}

/// Attack: alice's run asks two approvals in one turn of a together client, each refusing its
/// requester and the second needing two approvers. They keep their rules: the turn parks the
/// family's way (one request at a time), alice's own answer is refused (nothing recorded),
/// and one person's acceptance of the second is one vote; each call runs once.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn governed_approvals_asked_together_keep_their_rules() {
    use toolnexus::Request;
    use toolnexus::store::StoreError;
    for s in stores("governed_approvals_asked_together", Duration::from_secs(30)).await {
        let (client, toolkit) = super::rules::two_deploys(|env| {
            let approvals = if env == "b" { 2 } else { 1 };
            Request::approval(format!("Deploy {env}?"))
                .with_approvals(approvals)
                .with_not_by_requester()
        });
        let parked = client
            .for_principal("alice")
            .run("Deploy both.", &toolkit)
            .await
            .unwrap();
        let record = toolnexus::PendingRun::try_from(parked).unwrap();
        assert!(!record.is_together(), "{}: parked the family's way", s.name);
        let first = record.pending().id.clone();
        s.store.park(record).await.unwrap();
        let own = s.store.submit(&Answer::ok(&first), "alice").await;
        assert!(
            matches!(own, Err(StoreError::NotAllowed(_))),
            "{}: {own:?}",
            s.name
        );
        s.store.submit(&Answer::ok(&first), "bob").await.unwrap();
        // the second surfaces once the first is resumed, with the id it was made with
        let claim = s.store.claim_next("w-1").await.unwrap().expect("answered");
        let again = client
            .resume_claim(s.store.as_ref(), &claim, &toolkit)
            .await
            .unwrap();
        let second = again
            .pending
            .as_deref()
            .expect("parked on the second")
            .clone();
        assert_eq!(second.prompt, "Deploy b?", "{}", s.name);
        assert_eq!(second.required_approvals(), 2);
        let own = s.store.submit(&Answer::ok(&second.id), "alice").await;
        assert!(
            matches!(own, Err(StoreError::NotAllowed(_))),
            "{}: {own:?}",
            s.name
        );
        let info = s
            .store
            .submit(&Answer::ok(&second.id), "bob")
            .await
            .unwrap();
        assert_eq!(
            info.state,
            RunState::Parked,
            "{}: the second needs one more approver",
            s.name
        );
        let info = s
            .store
            .submit(&Answer::ok(&second.id), "carol")
            .await
            .unwrap();
        assert_eq!(info.state, RunState::Answered, "{}", s.name);
        let claim = s.store.claim_next("w-1").await.unwrap().expect("answered");
        let done = client
            .resume_claim(s.store.as_ref(), &claim, &toolkit)
            .await
            .unwrap();
        assert_eq!(done.text, "done", "{}", s.name);
        let outputs: Vec<&str> = done.tool_calls.iter().map(|c| c.output.as_str()).collect();
        assert_eq!(outputs, ["deployed a", "deployed b"], "{}", s.name);
    }
}
