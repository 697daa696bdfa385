//! A worker process SIGKILLed inside a tool (`run_worker` over a SQLite file, the tool paused
//! after its side effect): when the tool is not idempotent, the process that takes the runs
//! over parks each on a `reconcile` request instead of running the tool again, and each answer
//! does what it says (rerun: the tool runs again, with the answer it first ran with; record:
//! the given output is the result; fail, or a decline: the call fails); when the tool is
//! idempotent, the takeover runs it again, as before.

use std::io::{BufRead, BufReader};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use toolnexus::reconcile::Reconcile;
use toolnexus::store::{RunState, RunStore, SqliteStore};
use toolnexus::{DeclineReason, Request};
use toolnexus_tests::store_conformance::Agent;

/// Starts `run_worker` on the SQLite file (lease 300 ms, 4 runs at once, poll 50 ms) with
/// `env`; returns it once it says `ready`.
fn spawn(file: &str, name: &str, env: &[(&str, &str)]) -> Child {
    let mut child = Command::new(env!("CARGO_BIN_EXE_run_worker"))
        .args(["sqlite", file, "-", name, "300", "4", "50"])
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("the worker starts");
    let out = child.stdout.take().expect("stdout");
    let (tx, lines) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(out).lines().map_while(Result::ok) {
            let _ = tx.send(line);
        }
    });
    let ready = lines
        .recv_timeout(Duration::from_secs(30))
        .expect("the worker says ready");
    assert_eq!(ready, "ready", "{name}");
    child
}

/// The side effects recorded for the answer to `request_id`.
fn effects(path: &Path, request_id: &str) -> Vec<String> {
    let conn = rusqlite::Connection::open(path).unwrap();
    let mut stmt = conn
        .prepare("SELECT worker FROM effects WHERE request_id = ?1 ORDER BY rowid")
        .unwrap();
    stmt.query_map([request_id], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

fn all_effects(path: &Path) -> usize {
    let conn = rusqlite::Connection::open(path).unwrap();
    conn.query_row("SELECT COUNT(*) FROM effects", [], |r| r.get::<_, i64>(0))
        .unwrap()
        .try_into()
        .unwrap()
}

/// `n` runs parked on `ask` and answered (`Ada0`, `Ada1`, ...), a worker killed while all of
/// them are inside the tool (after its side effect), and a second worker started: the store,
/// the runs' ids and their first requests, and the second worker.
async fn killed_inside_the_tool(
    path: &Path,
    n: usize,
    env: &[(&str, &str)],
) -> (SqliteStore, Vec<(String, Request)>, Child) {
    let store = SqliteStore::open(path).await.unwrap();
    rusqlite::Connection::open(path)
        .unwrap()
        .execute_batch("CREATE TABLE effects (request_id TEXT NOT NULL, worker TEXT NOT NULL)")
        .unwrap();
    let mut runs = Vec::new();
    for i in 0..n {
        let record = Agent::once().halt().await;
        let request = record.pending().clone();
        let run_id = store.park(record).await.unwrap().run_id;
        store
            .submit(&request.accept(format!("Ada{i}")), "desk")
            .await
            .unwrap();
        runs.push((run_id, request));
    }
    let file = path.to_string_lossy().into_owned();
    let mut pausing = env.to_vec();
    pausing.push(("RUN_WORKER_PAUSE_MS", "60000"));
    let mut first = spawn(&file, "w-killed", &pausing);
    let deadline = Instant::now() + Duration::from_secs(20);
    while all_effects(path) < n {
        assert!(Instant::now() < deadline, "the runs reach the tool");
        std::thread::sleep(Duration::from_millis(20));
    }
    first.kill().expect("SIGKILL");
    let _ = first.wait();
    let second = spawn(&file, "w-next", env);
    (store, runs, second)
}

fn stop(mut child: Child) {
    drop(child.stdin.take());
    let status = child.wait().expect("wait");
    assert!(status.success(), "{status}");
}

fn temp_db(tag: &str) -> (std::path::PathBuf, std::path::PathBuf) {
    let dir =
        std::env::temp_dir().join(format!("toolnexus-reconcile-{tag}-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("runs.db");
    (dir, path)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_killed_inside_a_tool_that_is_not_idempotent_leaves_it_to_a_person() {
    let (dir, path) = temp_db("not-idempotent");
    let env = [("RUN_WORKER_NOT_IDEMPOTENT", "1")];
    let (store, runs, next) = killed_inside_the_tool(&path, 4, &env).await;

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
        assert_eq!(effects(&path, &first.id), ["w-killed"]);
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
    assert_eq!(
        ended,
        [
            (
                "hello \"Ada0\"".to_owned(),
                false,
                "done: hello \"Ada0\"".to_owned()
            ),
            (
                "recorded by hand".to_owned(),
                false,
                "done: recorded by hand".to_owned()
            ),
            (
                "the payment bounced".to_owned(),
                true,
                "done: the payment bounced".to_owned()
            ),
            (
                format!("declined/expired: {}", asks[3].prompt),
                true,
                format!("done: declined/expired: {}", asks[3].prompt)
            ),
        ]
    );
    // only the rerun ran the tool again, with the answer it first ran with
    let counts: Vec<Vec<String>> = runs.iter().map(|(_, r)| effects(&path, &r.id)).collect();
    assert_eq!(
        counts,
        [
            vec!["w-killed".to_owned(), "w-next".to_owned()],
            vec!["w-killed".to_owned()],
            vec!["w-killed".to_owned()],
            vec!["w-killed".to_owned()],
        ]
    );
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_worker_killed_inside_an_idempotent_tool_runs_it_again() {
    let (dir, path) = temp_db("idempotent");
    let (store, runs, next) = killed_inside_the_tool(&path, 2, &[]).await;
    for (i, (run_id, first)) in runs.iter().enumerate() {
        let run = store
            .wait_finished(run_id, Duration::from_secs(20))
            .await
            .unwrap()
            .expect("the run ends");
        let result = run.result.unwrap();
        assert_eq!(result.text, format!("done: hello \"Ada{i}\""));
        assert_eq!(effects(&path, &first.id), ["w-killed", "w-next"]);
    }
    stop(next);
    let _ = std::fs::remove_dir_all(&dir);
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
