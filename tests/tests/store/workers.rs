//! 1,000 parked runs, 4 worker processes (`store_worker`) answering and resuming them
//! concurrently on one PostgreSQL schema (`Client::resume_claim`, which checkpoints after the
//! tool result), one of them killed mid-run: every run ends exactly once, and every tool side
//! effect (a row in `effects`) happens once, except for runs whose worker died inside the
//! crash window (after the side effect, before its checkpoint), which the worker that takes
//! them over runs again; a run taken over after its checkpoint does not. The test prints how
//! many of each.

use std::collections::{BTreeMap, BTreeSet};
use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use toolnexus::store::RunStore;
use toolnexus_tests::pg::{client, fresh_store, url};
use toolnexus_tests::store_conformance::Agent;

const RUNS: usize = 1000;
const WORKERS: usize = 4;
const LEASE_MS: u64 = 1500;
/// The victim is killed right after its claim number this (it pauses after each claim and
/// after each side effect, before its checkpoint, so the kill lands inside a run, before or
/// after its side effect).
const KILL_AT_CLAIM: usize = 10;
const VICTIM_PAUSE_MS: u64 = 15;

fn spawn(url: &str, schema: &str, name: &str, pause_ms: Option<u64>) -> Child {
    let mut cmd = Command::new(env!("CARGO_BIN_EXE_helpers"));
    cmd.arg("store_worker");
    if let Some(ms) = pause_ms {
        cmd.env("STORE_WORKER_PAUSE_MS", ms.to_string());
    }
    cmd.args([url, schema, name, &LEASE_MS.to_string()])
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("the worker starts")
}

/// The worker's stdout lines, read on a thread (so a killed worker's partial output counts),
/// each also sent on `live` as it arrives.
fn lines(child: &mut Child, live: mpsc::Sender<String>) -> std::thread::JoinHandle<Vec<String>> {
    let out = child.stdout.take().expect("piped stdout");
    std::thread::spawn(move || {
        BufReader::new(out)
            .lines()
            .map_while(Result::ok)
            .inspect(|line| {
                let _ = live.send(line.clone());
            })
            .collect()
    })
}

/// What the workers did: each one's stdout lines, the side effects in when the victim was
/// killed, and how long it all took.
struct Outcome {
    outputs: Vec<Vec<String>>,
    killed_at: i64,
    elapsed: Duration,
}

/// The others start once the victim has claimed this many runs: with the four started
/// together, the three fast workers could finish all the runs on a loaded machine before the
/// slowed victim reached its claim #`KILL_AT_CLAIM`, and the victim ended unkilled. From here
/// the victim needs a few more claims (tens of ms), the others hundreds of ms for the rest.
const HEAD_START: usize = KILL_AT_CLAIM - 3;

/// Starts the workers (the victim first), kills worker 0 inside a run, waits for the others
/// to finish.
async fn run_workers(url: &str, schema: &str, db: &tokio_postgres::Client) -> Outcome {
    let count_sql = format!("SELECT count(*) FROM \"{schema}\".effects");
    let started = Instant::now();
    let mut victim = spawn(url, schema, "worker-0", Some(VICTIM_PAUSE_MS));
    let (victim_live, victim_lines) = mpsc::channel();
    let mut readers = vec![lines(&mut victim, victim_live)];

    // count the victim's claims: tell when it has its head start, stop at the kill's claim
    let (head_start, started_enough) = tokio::sync::oneshot::channel();
    let victim_claims = tokio::task::spawn_blocking(move || {
        let mut head_start = Some(head_start);
        let mut n = 0;
        for line in &victim_lines {
            if line.starts_with("claimed ") || line.starts_with("taken ") {
                n += 1;
                if n == HEAD_START {
                    let _ = head_start.take().map(|tx| tx.send(()));
                }
                if n == KILL_AT_CLAIM {
                    break;
                }
            }
        }
        n
    });
    tokio::time::timeout(Duration::from_secs(120), started_enough)
        .await
        .expect("the victim claims runs")
        .expect("the victim claims its first runs alone");
    let mut children = vec![victim];
    for i in 1..WORKERS {
        let mut child = spawn(url, schema, &format!("worker-{i}"), None);
        readers.push(lines(&mut child, mpsc::channel().0));
        children.push(child);
    }

    // kill worker 0 inside a run
    let claims_seen = tokio::time::timeout(Duration::from_secs(120), victim_claims)
        .await
        .expect("the victim claims runs")
        .unwrap();
    assert_eq!(
        claims_seen, KILL_AT_CLAIM,
        "the victim ended before its claim #{KILL_AT_CLAIM}"
    );
    tokio::time::sleep(Duration::from_millis(u64::from(fastrand_ms(started)))).await;
    children[0].kill().expect("the victim is killed");
    let killed_at: i64 = db.query_one(&count_sql, &[]).await.unwrap().get(0);
    let victim = children.remove(0);
    let mut victim = victim;
    victim.wait().unwrap();
    for mut child in children {
        let deadline = Instant::now() + Duration::from_secs(180);
        loop {
            if let Some(status) = child.try_wait().unwrap() {
                assert!(status.success(), "a surviving worker failed: {status}");
                break;
            }
            assert!(Instant::now() < deadline, "a worker did not finish");
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
    let elapsed = started.elapsed();
    let outputs: Vec<Vec<String>> = readers.into_iter().map(|r| r.join().unwrap()).collect();

    Outcome {
        outputs,
        killed_at,
        elapsed,
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn four_workers_one_killed_every_run_ends_once() {
    let Some(url) = url("four_workers_one_killed_every_run_ends_once") else {
        return;
    };
    let (store, guard) = fresh_store(&url, "workers").await;
    let schema = guard.schema.clone();
    let db = client(&url).await;
    db.batch_execute(&format!(
        "CREATE TABLE \"{schema}\".effects (request_id TEXT NOT NULL, worker TEXT NOT NULL)"
    ))
    .await
    .unwrap();

    let agent = Agent::once();
    for _ in 0..RUNS {
        store.park(agent.halt().await).await.unwrap();
    }

    let Outcome {
        outputs,
        killed_at,
        elapsed,
    } = run_workers(&url, &schema, &db).await;

    // every run finished, with the answer of the worker that claimed it
    let rows = db
        .query(
            &format!("SELECT run_id, request_id, state, claims, result FROM \"{schema}\".runs"),
            &[],
        )
        .await
        .unwrap();
    assert_eq!(rows.len(), RUNS);
    let mut taken_over = BTreeSet::new();
    let mut request_of = BTreeMap::new();
    for row in &rows {
        request_of.insert(row.get::<_, String>(0), row.get::<_, String>(1));
        let (run_id, state, claims): (String, String, i64) = (row.get(0), row.get(2), row.get(3));
        assert_eq!(state, "finished", "run {run_id}");
        let result: serde_json::Value = serde_json::from_str(row.get::<_, &str>(4)).unwrap();
        let text = result["text"].as_str().unwrap();
        assert!(
            text.starts_with("done: hello \"worker-"),
            "run {run_id}: {text}"
        );
        if claims > 1 {
            taken_over.insert(row.get::<_, String>(1));
        }
    }

    // each run is reported finished by exactly one worker, never twice
    let mut finished: BTreeMap<String, usize> = BTreeMap::new();
    let mut lost = 0;
    for line in outputs.iter().flatten() {
        if let Some(run) = line.strip_prefix("finished ") {
            *finished.entry(run.to_owned()).or_default() += 1;
        }
        lost += usize::from(line.starts_with("lost "));
    }
    assert!(finished.values().all(|&n| n == 1), "a run finished twice");
    // the victim may have been killed after a finish committed and before it printed it
    let unreported = RUNS - finished.len();
    assert!(unreported <= 1, "{unreported} finishes unreported");

    let (twice, from_checkpoint) =
        side_effects(&db, &schema, &taken_over, &request_of, &outputs).await;
    let by_victim = outputs[0]
        .iter()
        .filter(|l| l.starts_with("finished "))
        .count();
    println!(
        "store::workers: {RUNS} runs, {WORKERS} workers, worker-0 killed inside its claim #{KILL_AT_CLAIM} \
         ({killed_at} side effects in, {by_victim} runs finished by it); {} runs taken over ({} from a checkpoint); {} side effects ran twice (the \
         crash window); {lost} stale finishes refused; {:.1?} in all ({:.0} runs/s)",
        taken_over.len(),
        from_checkpoint,
        twice.len(),
        elapsed,
        f64::from(u32::try_from(RUNS).unwrap()) / elapsed.as_secs_f64()
    );
}

/// Side effects: one per run, two only where the victim died in the crash window, never two
/// in a run taken over from its checkpoint. Returns the requests whose effect ran twice and how
/// many runs were taken over from a checkpoint.
async fn side_effects(
    db: &tokio_postgres::Client,
    schema: &str,
    taken_over: &BTreeSet<String>,
    request_of: &BTreeMap<String, String>,
    outputs: &[Vec<String>],
) -> (BTreeSet<String>, usize) {
    // side effects: one per run, two only where the victim died in the crash window
    let counts = db
        .query(
            &format!("SELECT request_id, count(*) FROM \"{schema}\".effects GROUP BY request_id"),
            &[],
        )
        .await
        .unwrap();
    let per_run: BTreeMap<String, i64> = counts.iter().map(|r| (r.get(0), r.get(1))).collect();
    assert_eq!(per_run.len(), RUNS, "every run's side effect happened");
    let twice: BTreeSet<String> = per_run
        .iter()
        .filter(|(_, n)| **n > 1)
        .map(|(id, _)| id.clone())
        .collect();
    assert!(
        per_run.values().all(|&n| n <= 2),
        "a side effect ran three times"
    );
    assert!(
        twice.is_subset(taken_over),
        "a side effect ran twice in a run nobody took over"
    );
    // a run taken over from its checkpoint never ran its side effect again
    let from_checkpoint: BTreeSet<&String> = outputs
        .iter()
        .flatten()
        .filter_map(|l| l.strip_prefix("taken ")?.strip_suffix(" from checkpoint"))
        .map(|run| &request_of[run])
        .collect();
    for request in &from_checkpoint {
        assert_eq!(
            per_run[*request], 1,
            "request {request}: resumed from its checkpoint"
        );
    }
    (twice, from_checkpoint.len())
}

/// A delay of 0 to 2 pauses, from the clock: the kill lands before or after the side effect.
fn fastrand_ms(started: Instant) -> u32 {
    started.elapsed().subsec_nanos() % (2 * u32::try_from(VICTIM_PAUSE_MS).unwrap_or(1))
}
