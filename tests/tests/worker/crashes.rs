//! A run whose resume kills its worker process every time (a tool that aborts it) is given up
//! after the worker's `max_attempts`, on real processes (`run_worker` over a SQLite file):
//! each crash is an attempt, the next process takes the run over once the lease lapses, and
//! the one that takes it over after the last allowed crash ends it `Failed` instead of
//! running the tool again.

use std::process::{Child, ExitStatus};
use std::time::{Duration, Instant};

use toolnexus::store::{RunEventKind, RunState, RunStore, SqliteStore};
use toolnexus_tests::store_conformance::Agent;

/// Starts `run_worker` on the SQLite file (lease 300 ms, one run at a time, poll 50 ms), its
/// tool aborting the process, allowing 3 attempts; returns it once it says `ready`, with its
/// stdout lines.
fn spawn(file: &str, name: &str) -> (Child, std::sync::mpsc::Receiver<String>) {
    super::run_worker(
        &["sqlite", file, "-", name, "300", "1", "50"],
        &[("RUN_WORKER_ABORT", "1"), ("RUN_WORKER_MAX_ATTEMPTS", "3")],
        name,
    )
}

/// The child's exit status once it exits within `timeout`, else `None` (still running).
fn exited(child: &mut Child, timeout: Duration) -> Option<ExitStatus> {
    let deadline = Instant::now() + timeout;
    loop {
        if let Some(status) = child.try_wait().expect("try_wait") {
            return Some(status);
        }
        if Instant::now() >= deadline {
            return None;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_run_that_aborts_every_worker_process_is_given_up() {
    use RunEventKind::{Answered, Claimed, Failed, Requested, TakenOver};
    let dir = std::env::temp_dir().join(format!("toolnexus-crashes-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("runs.db");
    let store = SqliteStore::open(&path).await.unwrap();
    rusqlite::Connection::open(&path)
        .unwrap()
        .execute_batch("CREATE TABLE effects (request_id TEXT NOT NULL, worker TEXT NOT NULL)")
        .unwrap();
    let record = Agent::once().halt().await;
    let request = record.pending().clone();
    let run_id = store.park(record).await.unwrap().run_id;
    store.submit(&request.accept("Ada"), "desk").await.unwrap();
    let file = path.to_string_lossy().into_owned();

    // each process takes the run (the first claims it, the next ones take it over once the
    // dead one's lease lapses), runs the tool, and dies
    for n in 1..=3 {
        let name = format!("crashing-{n}");
        let (mut child, _) = spawn(&file, &name);
        let status = exited(&mut child, Duration::from_secs(20))
            .unwrap_or_else(|| panic!("{name} did not crash"));
        assert!(!status.success(), "{name}: {status}");
        #[cfg(unix)]
        {
            use std::os::unix::process::ExitStatusExt;
            assert_eq!(status.signal(), Some(6), "{name} aborted: {status}");
        }
    }
    // the fourth takes it over after the third crash and gives it up: it does not die
    let (mut last, lines) = spawn(&file, "w-limit");
    let run = store
        .wait_finished(&run_id, Duration::from_secs(20))
        .await
        .unwrap()
        .expect("the run is given up");
    assert!(
        exited(&mut last, Duration::from_millis(300)).is_none(),
        "the last worker did not run the tool"
    );
    drop(last.stdin.take());
    let stopped = exited(&mut last, Duration::from_secs(20)).expect("a graceful shutdown");
    assert!(stopped.success(), "{stopped}");
    let line = lines
        .iter()
        .find_map(|l| l.strip_prefix("stats ").map(str::to_owned))
        .expect("its stats");
    let stats: serde_json::Value = serde_json::from_str(&line).unwrap();
    assert_eq!(
        (&stats["taken_over"], &stats["gave_up"], &stats["finished"]),
        (&1.into(), &1.into(), &0.into()),
        "{stats}"
    );

    assert_eq!(run.info.state, RunState::Failed);
    assert_eq!(
        run.info.failures(),
        [
            "the run crashed its worker 3 times (each resume ended with no outcome: the worker \
             process died, or stalled past its lease); given up after 3 attempts"
        ]
    );
    let events: Vec<_> = run
        .info
        .history
        .iter()
        .map(|e| (e.event, e.by.clone().unwrap_or_default(), e.attempt))
        .collect();
    let by = |s: &str| s.to_owned();
    assert_eq!(
        events,
        [
            (Requested, by(""), None),
            (Answered, by("desk"), None),
            (Claimed, by("crashing-1"), None),
            (TakenOver, by("crashing-2"), Some(2)),
            (TakenOver, by("crashing-3"), Some(3)),
            (TakenOver, by("w-limit"), Some(4)),
            // the takeover that gave it up is no attempt: 3 were made
            (Failed, by("w-limit"), Some(3)),
        ]
    );
    assert_eq!(run.info.attempts, 3, "never more than the maximum");
    // the tool's side effect ran once per crashed attempt, never in the last process
    let effects: Vec<String> = {
        let conn = rusqlite::Connection::open(&path).unwrap();
        let mut stmt = conn
            .prepare("SELECT worker FROM effects ORDER BY rowid")
            .unwrap();
        stmt.query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    };
    assert_eq!(effects, ["crashing-1", "crashing-2", "crashing-3"]);
    let _ = std::fs::remove_dir_all(&dir);
}
