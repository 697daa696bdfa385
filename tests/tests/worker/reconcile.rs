//! A worker process SIGKILLed inside a tool (`run_worker` over a SQLite file or a PostgreSQL
//! schema, the tool paused after its side effect): when the tool is not idempotent, the process that takes the runs
//! over parks each on a `reconcile` request instead of running the tool again, and each answer
//! does what it says (rerun: the tool runs again, with the answer it first ran with; record:
//! the given output is the result; fail, or a decline: the call fails); when the tool is
//! idempotent, the takeover runs it again, as before.

use std::path::PathBuf;
use std::process::Child;
use std::sync::Arc;
use std::time::{Duration, Instant};

use toolnexus::reconcile::Reconcile;
use toolnexus::store::{RunState, RunStore, SqliteStore};
use toolnexus::{DeclineReason, Request};
use toolnexus_tests::store_conformance::Agent;

/// Where the worker processes run: the store, `run_worker`'s first three arguments, and the
/// `effects` table (kept until dropped: a temporary directory or schema).
pub(super) struct Db {
    pub(super) store: Arc<dyn RunStore>,
    args: [String; 3],
    effects: Effects,
    _guard: Box<dyn std::any::Any + Send>,
}

enum Effects {
    Sqlite(PathBuf),
    Postgres(tokio_postgres::Client, String),
}

impl Db {
    pub(super) async fn sqlite(tag: &str) -> Self {
        let dir =
            std::env::temp_dir().join(format!("toolnexus-reconcile-{tag}-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join("runs.db");
        let store = SqliteStore::open(&path).await.unwrap();
        rusqlite::Connection::open(&path)
            .unwrap()
            .execute_batch("CREATE TABLE effects (request_id TEXT NOT NULL, worker TEXT NOT NULL)")
            .unwrap();
        let file = path.to_string_lossy().into_owned();
        Self {
            store: Arc::new(store),
            args: ["sqlite".to_owned(), file, "-".to_owned()],
            effects: Effects::Sqlite(path),
            _guard: Box::new(TempDir(dir)),
        }
    }

    pub(super) async fn postgres(test: &str) -> Option<Self> {
        let url = toolnexus_tests::pg::url(test)?;
        let (store, guard) = toolnexus_tests::pg::fresh_store(&url, "reconcile").await;
        let schema = guard.schema.clone();
        let db = toolnexus_tests::pg::client(&url).await;
        db.batch_execute(&format!(
            "CREATE TABLE \"{schema}\".effects (request_id TEXT NOT NULL, worker TEXT NOT NULL)"
        ))
        .await
        .unwrap();
        Some(Self {
            store: Arc::new(store),
            args: ["postgres".to_owned(), url, schema.clone()],
            effects: Effects::Postgres(db, schema),
            _guard: Box::new(guard),
        })
    }

    /// The side effects recorded for the answer to `request_id` (every one without).
    pub(super) async fn effects(&self, request_id: Option<&str>) -> Vec<String> {
        match &self.effects {
            Effects::Sqlite(path) => {
                let conn = rusqlite::Connection::open(path).unwrap();
                let mut stmt = conn
                    .prepare(
                        "SELECT worker FROM effects WHERE ?1 IS NULL OR request_id = ?1 ORDER BY rowid",
                    )
                    .unwrap();
                stmt.query_map([request_id], |r| r.get(0))
                    .unwrap()
                    .collect::<Result<_, _>>()
                    .unwrap()
            }
            Effects::Postgres(db, schema) => db
                .query(
                    &format!(
                        "SELECT worker FROM \"{schema}\".effects WHERE $1::text IS NULL OR request_id = $1 ORDER BY ctid"
                    ),
                    &[&request_id],
                )
                .await
                .unwrap()
                .iter()
                .map(|r| r.get(0))
                .collect(),
        }
    }

    /// Starts `run_worker` (lease 300 ms, 4 runs at once, poll 50 ms) with `env`; returns it
    /// once it says `ready`.
    pub(super) fn spawn(&self, name: &str, env: &[(&str, &str)]) -> Child {
        let [kind, at, schema] = &self.args;
        super::run_worker(&[kind, at, schema, name, "300", "4", "50"], env, name).0
    }

    /// `run_worker`'s first three arguments: the store's kind, where it is, its schema.
    pub(super) fn args(&self) -> &[String; 3] {
        &self.args
    }

    /// `n` runs parked on `ask` and answered (`Ada0`, `Ada1`, ...), a worker killed while all
    /// of them are inside the tool (after its side effect), and a second worker started: the
    /// runs' ids and their first requests, and the second worker.
    async fn killed_inside_the_tool(
        &self,
        n: usize,
        env: &[(&str, &str)],
    ) -> (Vec<(String, Request)>, Child) {
        let mut runs = Vec::new();
        for i in 0..n {
            let record = Agent::once().halt().await;
            let request = record.pending().clone();
            let run_id = self.store.park(record).await.unwrap().run_id;
            self.store
                .submit(&request.accept(format!("Ada{i}")), "desk")
                .await
                .unwrap();
            runs.push((run_id, request));
        }
        let mut pausing = env.to_vec();
        pausing.push(("RUN_WORKER_PAUSE_MS", "60000"));
        let mut first = self.spawn("w-killed", &pausing);
        let deadline = Instant::now() + Duration::from_secs(20);
        while self.effects(None).await.len() < n {
            assert!(Instant::now() < deadline, "the runs reach the tool");
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
        first.kill().expect("SIGKILL");
        let _ = first.wait();
        let second = self.spawn("w-next", env);
        (runs, second)
    }
}

/// Deletes its directory when dropped.
struct TempDir(PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

pub(super) fn stop(mut child: Child) {
    drop(child.stdin.take());
    let status = child.wait().expect("wait");
    assert!(status.success(), "{status}");
}

/// A worker killed inside a tool that is not idempotent: the takeover parks every run on
/// `reconcile`, and each answer does what it says.
async fn not_idempotent_leaves_it_to_a_person(db: &Db) {
    let env = [("RUN_WORKER_NOT_IDEMPOTENT", "1")];
    let (runs, next) = db.killed_inside_the_tool(4, &env).await;
    let store = &db.store;

    // the takeover parks every run on a reconcile request; the tool did not run again
    let mut asks = Vec::new();
    for (run_id, first) in &runs {
        let deadline = Instant::now() + Duration::from_secs(20);
        let request = loop {
            let run = store.get(run_id).await.unwrap().unwrap();
            if run.info.state == RunState::Parked && run.info.request_id != first.id {
                break run.record.pending().clone();
            }
            assert!(Instant::now() < deadline, "{run_id} is parked again");
            tokio::time::sleep(Duration::from_millis(50)).await;
        };
        assert_eq!(request.kind, "reconcile");
        let data = request.data.as_deref().unwrap();
        assert_eq!(data["tool"], "ask");
        assert_eq!(
            data["args"],
            serde_json::json!({"kind": "input", "expires_ms": null})
        );
        assert_eq!(data["idempotencyKey"].as_str().unwrap().len(), 64);
        asks.push(request);
    }
    for (_, first) in &runs {
        assert_eq!(db.effects(Some(&first.id)).await, ["w-killed"]);
    }

    // each answer does what it says
    let answers = [
        Reconcile::Rerun.answer(&asks[0]),
        Reconcile::Record("recorded by hand".to_owned()).answer(&asks[1]),
        Reconcile::Fail(Some("the payment bounced".to_owned())).answer(&asks[2]),
        asks[3].decline(DeclineReason::Declined),
    ];
    for answer in &answers {
        store.submit(answer, "desk").await.unwrap();
    }
    let mut ended = Vec::new();
    for (run_id, _) in &runs {
        let run = store
            .wait_finished(run_id, Duration::from_secs(20))
            .await
            .unwrap()
            .expect("the run ends");
        assert_eq!(run.info.state, RunState::Finished);
        let result = run.result.unwrap();
        let call = &result.tool_calls[0];
        ended.push((call.output.clone(), call.is_error, result.text));
    }
    stop(next);
    let declined = format!("declined/expired: {}", asks[3].prompt);
    let expected = [
        ("hello \"Ada0\"".to_owned(), false),
        ("recorded by hand".to_owned(), false),
        ("the payment bounced".to_owned(), true),
        (declined, true),
    ];
    let expected: Vec<_> = expected
        .into_iter()
        .map(|(output, is_error)| {
            let text = format!("done: {output}");
            (output, is_error, text)
        })
        .collect();
    assert_eq!(ended, expected);
    // only the rerun ran the tool again, with the answer it first ran with
    let mut counts = Vec::new();
    for (_, first) in &runs {
        counts.push(db.effects(Some(&first.id)).await);
    }
    assert_eq!(
        counts,
        [
            vec!["w-killed".to_owned(), "w-next".to_owned()],
            vec!["w-killed".to_owned()],
            vec!["w-killed".to_owned()],
            vec!["w-killed".to_owned()],
        ]
    );
}

/// A worker killed inside an idempotent tool: the takeover runs it again.
async fn idempotent_runs_again(db: &Db) {
    let (runs, next) = db.killed_inside_the_tool(2, &[]).await;
    for (i, (run_id, first)) in runs.iter().enumerate() {
        let run = db
            .store
            .wait_finished(run_id, Duration::from_secs(20))
            .await
            .unwrap()
            .expect("the run ends");
        let result = run.result.unwrap();
        assert_eq!(result.text, format!("done: hello \"Ada{i}\""));
        assert_eq!(db.effects(Some(&first.id)).await, ["w-killed", "w-next"]);
    }
    stop(next);
}

/// A person approves `pay` (not idempotent) with edited arguments, and the worker process is
/// SIGKILLed inside it (after its side effect): the process that takes the run over parks it
/// on a `reconcile` request that shows the edited arguments (what ran), not the model's, and
/// the store takes that record (nothing is refused as forged, nothing failed); the person's
/// `record` ends the call with their output, and `pay` never ran again.
async fn an_edited_approval_cut_by_a_kill_asks_a_person_with_the_edited_args(db: &Db) {
    use toolnexus_tests::store_conformance::{EditedPay, edited_pay, proposed_pay};
    let env = [("RUN_WORKER_EDITABLE_PAY", "1")];
    let store = &db.store;
    let tools = EditedPay::new();
    let halted = EditedPay::client()
        .run("Pay Ada.", &tools.toolkit)
        .await
        .unwrap();
    let approval = halted.pending.clone().expect("halted on the approval");
    assert_eq!(approval.proposed_args(), Some(&proposed_pay()));
    let run_id = store
        .park(toolnexus::PendingRun::try_from(halted).unwrap())
        .await
        .unwrap()
        .run_id;
    store
        .submit(&approval.approve_with(edited_pay()), "desk")
        .await
        .unwrap();
    let mut pausing = env.to_vec();
    pausing.push(("RUN_WORKER_PAUSE_MS", "60000"));
    let mut first = db.spawn("w-killed", &pausing);
    let deadline = Instant::now() + Duration::from_secs(20);
    while db.effects(Some(&approval.id)).await.is_empty() {
        assert!(Instant::now() < deadline, "the run reaches pay");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    first.kill().expect("SIGKILL");
    let _ = first.wait();
    let next = db.spawn("w-next", &env);

    // the takeover parks the run on reconcile, over the arguments that ran
    let deadline = Instant::now() + Duration::from_secs(20);
    let parked = loop {
        let run = store.get(&run_id).await.unwrap().unwrap();
        assert!(
            !matches!(run.info.state, RunState::Failed | RunState::Finished),
            "{:?}",
            run.info
        );
        if run.info.state == RunState::Parked && run.info.request_id != approval.id {
            break run;
        }
        assert!(Instant::now() < deadline, "the run is parked again");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    assert!(parked.info.failures().is_empty(), "{:?}", parked.info);
    let request = parked.record.pending().clone();
    assert_eq!(request.kind, "reconcile");
    let data = request.data.as_deref().unwrap();
    assert_eq!(data["tool"], "pay");
    assert_eq!(data["args"], edited_pay());
    assert_eq!(data["idempotencyKey"].as_str().unwrap().len(), 64);
    let call = parked
        .record
        .messages()
        .iter()
        .flat_map(|m| &m.tool_calls)
        .find(|c| c.name == "pay")
        .unwrap();
    assert_eq!(
        call.arguments,
        edited_pay(),
        "the transcript shows the edit"
    );
    assert_eq!(db.effects(Some(&approval.id)).await, ["w-killed"]);

    // the person records what the payment returned
    let answer = Reconcile::Record("paid 30 to Bob (by hand)".to_owned()).answer(&request);
    store.submit(&answer, "desk").await.unwrap();
    let run = store
        .wait_finished(&run_id, Duration::from_secs(20))
        .await
        .unwrap()
        .expect("the run ends");
    stop(next);
    assert_eq!(run.info.state, RunState::Finished);
    let result = run.result.unwrap();
    assert_eq!(result.text, "done: paid 30 to Bob (by hand)");
    assert_eq!(result.tool_calls[0].args, edited_pay());
    assert!(run.info.failures().is_empty(), "{:?}", run.info);
    assert_eq!(db.effects(None).await, ["w-killed"], "pay never ran again");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_an_edited_approval_cut_by_a_kill_asks_a_person_with_the_edited_args() {
    an_edited_approval_cut_by_a_kill_asks_a_person_with_the_edited_args(
        &Db::sqlite("edited").await,
    )
    .await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_an_edited_approval_cut_by_a_kill_asks_a_person_with_the_edited_args() {
    let test = "postgres_an_edited_approval_cut_by_a_kill_asks_a_person_with_the_edited_args";
    if let Some(db) = Db::postgres(test).await {
        an_edited_approval_cut_by_a_kill_asks_a_person_with_the_edited_args(&db).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_a_worker_killed_inside_a_tool_that_is_not_idempotent_leaves_it_to_a_person() {
    not_idempotent_leaves_it_to_a_person(&Db::sqlite("not-idempotent").await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_a_worker_killed_inside_an_idempotent_tool_runs_it_again() {
    idempotent_runs_again(&Db::sqlite("idempotent").await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_a_worker_killed_inside_a_tool_that_is_not_idempotent_leaves_it_to_a_person() {
    let test =
        "postgres_a_worker_killed_inside_a_tool_that_is_not_idempotent_leaves_it_to_a_person";
    if let Some(db) = Db::postgres(test).await {
        not_idempotent_leaves_it_to_a_person(&db).await;
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_a_worker_killed_inside_an_idempotent_tool_runs_it_again() {
    if let Some(db) =
        Db::postgres("postgres_a_worker_killed_inside_an_idempotent_tool_runs_it_again").await
    {
        idempotent_runs_again(&db).await;
    }
}

/// The cost of the markers: a claimed run saves one checkpoint more per call of a tool that is
/// not idempotent (before it starts), and none for an idempotent one. The resume of a
/// `CrashCut` run: `ask`'s retry (idempotent) and its turn's result, then `pay` (not
/// idempotent, one marker) beside `look` (idempotent) and their turn's result.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_marker_costs_one_checkpoint_per_call_that_is_not_idempotent() {
    use toolnexus_tests::store_conformance::CrashCut;
    let store = std::sync::Arc::new(super::failing::Flaky::default());
    let tools = CrashCut::new();
    let halted = CrashCut::client()
        .run("Greet me, then pay.", &tools.toolkit)
        .await
        .unwrap();
    let request = halted.pending.clone().unwrap();
    store
        .park(toolnexus::PendingRun::try_from(halted).unwrap())
        .await
        .unwrap();
    let claim = store.claim(&request.accept("Ada"), "w").await.unwrap();
    let done = CrashCut::client()
        .resume_claim(store.as_ref(), &claim, &tools.toolkit)
        .await
        .unwrap();
    assert_eq!(done.text, "done: paid 40 #1 | looked #1");
    let saved = store.checkpoints.lock().unwrap().clone();
    let kinds: Vec<Vec<String>> = saved
        .iter()
        .map(|c| {
            c["inFlight"]["started"]
                .as_array()
                .map(|m| {
                    m.iter()
                        .map(|m| m["tool"].as_str().unwrap().to_owned())
                        .collect()
                })
                .unwrap_or_default()
        })
        .collect();
    assert_eq!(
        kinds,
        [vec![], vec!["pay".to_owned()], vec![]],
        "ask's turn, pay's marker, the pay-and-look turn"
    );
}
