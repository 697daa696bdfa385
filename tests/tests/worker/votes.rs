//! Two of three, through processes (`run_worker` over a SQLite file or a PostgreSQL schema,
//! `helpers submit_answer` for each person): a run parked on an approval that needs two approvers is
//! approved by one person from a process of its own and stays parked (the worker process
//! running meanwhile does not resume it); a second person's process reaches the count; the
//! worker that claims the run is SIGKILLed before the tool's side effect, another worker
//! process takes it over and runs the tool, once; a third person's approval comes too late.

use std::process::Command;
use std::time::{Duration, Instant};

use toolnexus::store::{RunEventKind, RunState};
use toolnexus::{FnTool, PendingRun, Request, ToolResult, Toolkit};
use toolnexus_tests::store_conformance::Agent;

use super::reconcile::{Db, stop};

/// A run of [`Agent`] parked on its `ask` call, whose request is an approval that needs two
/// approvers (the worker processes resume it with `run_worker`'s own `ask`).
async fn parked_for_two() -> PendingRun {
    let ask = FnTool::builder("ask")
        .description("Asks the user a question.")
        .handler(|_, _| async {
            ToolResult::suspended(Request::approval("Pay 4,000 EUR to ACME?").with_approvals(2))
        })
        .build()
        .unwrap();
    let toolkit = Toolkit::builder().tool(ask).build().unwrap();
    let result = Agent::once().client().run("Pay.", &toolkit).await.unwrap();
    PendingRun::try_from(result).unwrap()
}

/// `submit_answer` as `by`: what it printed.
fn approve(db: &Db, request_id: &str, by: &str) -> String {
    let [kind, at, schema] = db.args();
    let out = Command::new(env!("CARGO_BIN_EXE_helpers"))
        .arg("submit_answer")
        .args([kind, at, schema, request_id, by])
        .output()
        .expect("submit_answer runs");
    assert!(out.status.success(), "{out:?}");
    String::from_utf8(out.stdout).unwrap().trim().to_owned()
}

async fn two_of_three_through_processes(db: &Db) {
    let store = &db.store;
    let record = parked_for_two().await;
    let request = record.pending().clone();
    assert_eq!(request.required_approvals(), 2);
    let run_id = store.park(record).await.unwrap().run_id;
    // the victim: it claims the run once answered, and stalls before the tool's side effect
    let mut victim = db.spawn("w-killed", &[("RUN_WORKER_PAUSE_BEFORE_MS", "60000")]);

    assert_eq!(approve(db, &request.id, "bob"), "state parked votes 1");
    // the worker has nothing to resume: the run waits for the second approval
    tokio::time::sleep(Duration::from_millis(400)).await;
    let run = store.get(&run_id).await.unwrap().unwrap();
    assert_eq!(run.info.state, RunState::Parked);
    assert_eq!(run.approvals_missing(), 1);

    assert_eq!(approve(db, &request.id, "carol"), "state answered votes 2");
    let deadline = Instant::now() + Duration::from_secs(20);
    loop {
        let run = store.get(&run_id).await.unwrap().unwrap();
        if run.info.state == RunState::Claimed && run.info.resumed_by() == Some("w-killed") {
            break;
        }
        assert!(Instant::now() < deadline, "w-killed claims the run");
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    victim.kill().expect("SIGKILL");
    let _ = victim.wait();
    assert!(
        db.effects(None).await.is_empty(),
        "killed before the tool ran"
    );

    let next = db.spawn("w-next", &[]);
    let deadline = Instant::now() + Duration::from_secs(20);
    let done = loop {
        let run = store.get(&run_id).await.unwrap().unwrap();
        if run.info.state == RunState::Finished {
            break run;
        }
        assert!(Instant::now() < deadline, "w-next finishes the run");
        tokio::time::sleep(Duration::from_millis(50)).await;
    };
    stop(next);
    assert_eq!(db.effects(None).await, ["w-next"], "the tool ran once");
    assert_eq!(done.info.answered_by(), Some("carol"));
    assert!(
        done.info
            .history
            .iter()
            .any(|e| e.event == RunEventKind::TakenOver && e.by.as_deref() == Some("w-next")),
        "{:?}",
        done.info.history
    );
    assert_eq!(
        done.votes.iter().map(|v| v.by.as_str()).collect::<Vec<_>>(),
        ["bob", "carol"]
    );
    let late = approve(db, &request.id, "dave");
    assert!(
        late.starts_with("refused ") && late.contains("already answered"),
        "{late}"
    );
    assert_eq!(db.effects(None).await, ["w-next"]);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn sqlite_two_of_three_approved_from_two_processes_runs_once_across_a_kill() {
    two_of_three_through_processes(&Db::sqlite("votes").await).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn postgres_two_of_three_approved_from_two_processes_runs_once_across_a_kill() {
    let Some(db) =
        Db::postgres("postgres_two_of_three_approved_from_two_processes_runs_once_across_a_kill")
            .await
    else {
        return;
    };
    two_of_three_through_processes(&db).await;
}
