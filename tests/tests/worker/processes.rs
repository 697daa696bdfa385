//! Workers as real processes (`run_worker`): PostgreSQL, 10,000 parked runs, this process
//! submitting the answers while 3 worker processes resume them, one SIGKILLed and one shut
//! down gracefully mid-way; SQLite, the same with 2 worker processes on one file and 2,000
//! runs. Every run ends exactly once; side effects (rows in `effects`) happen once except in
//! the crash window (runs taken over from the killed worker); requests nobody answers resume
//! within 1 s of their `expiresAt`. Prints runs/s, answer-to-resume latency (p50, p99) and the
//! time from the kill to the takeovers.
//!
//! Heavy, so `#[ignore]`d in `cargo test --workspace`: `.ci/run` runs them once, with
//! `--ignored --nocapture`, so their figures are in its output.

use std::collections::{BTreeMap, BTreeSet};
use std::process::{Child, ChildStdin};
use std::sync::Arc;
use std::time::{Duration, Instant, SystemTime};

use toolnexus::Request;
use toolnexus::store::{RunEvent, RunEventKind, RunInfo, RunStore, SqliteStore, StoredRun};
use toolnexus_tests::store_conformance::Agent;

/// A worker process: its stdin (dropped: graceful shutdown) and its stdout lines.
struct Proc {
    name: String,
    child: Child,
    stdin: Option<ChildStdin>,
    lines: std::sync::mpsc::Receiver<String>,
}

impl Proc {
    fn spawn(args: &[&str], name: &str, pause_ms: Option<u64>) -> Self {
        let pause = pause_ms.map(|ms| ms.to_string());
        let env: Vec<(&str, &str)> = pause
            .as_deref()
            .map(|ms| ("RUN_WORKER_PAUSE_MS", ms))
            .into_iter()
            .collect();
        let (mut child, lines) = super::run_worker(args, &env, name);
        let stdin = child.stdin.take();
        Self {
            name: name.to_owned(),
            child,
            stdin,
            lines,
        }
    }

    /// Closes stdin (graceful shutdown) and waits; returns the stats line.
    fn stop(mut self) -> String {
        drop(self.stdin.take());
        let status = self.child.wait().expect("wait");
        assert!(status.success(), "{}: {status}", self.name);
        self.lines
            .iter()
            .find_map(|l| l.strip_prefix("stats ").map(str::to_owned))
            .unwrap_or_default()
    }

    fn kill(mut self) {
        self.child.kill().expect("SIGKILL");
        let _ = self.child.wait();
    }
}

/// How a scenario goes: how many runs, how many expire unanswered, when which worker goes.
struct Scenario {
    label: &'static str,
    runs: usize,
    expiring: usize,
    /// Worker processes (the first is the victim, SIGKILLed once `kill_at` runs finished).
    workers: usize,
    kill_at: usize,
    /// The worker shut down gracefully once this many runs finished (`None`: none mid-way).
    graceful: Option<(usize, usize)>,
    lease_ms: u64,
    /// The latest an unanswered request may be resumed after its `expiresAt`.
    expiry_bound: Duration,
}

/// Parks `n` runs of `agent` on `store`, 8 at a time; returns their requests.
async fn park(store: &Arc<dyn RunStore>, agent: &Agent, n: usize) -> Vec<(RunInfo, Request)> {
    let mut tasks = Vec::new();
    for part in 0..8 {
        let (store, agent) = (Arc::clone(store), agent.clone());
        let count = n / 8 + usize::from(part < n % 8);
        tasks.push(tokio::spawn(async move {
            let mut out = Vec::with_capacity(count);
            for _ in 0..count {
                let record = agent.halt().await;
                let request = record.pending().clone();
                out.push((store.park(record).await.expect("park"), request));
            }
            out
        }));
    }
    let mut all = Vec::with_capacity(n);
    for t in tasks {
        all.extend(t.await.expect("park task"));
    }
    all
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1000.0
}

fn since(later: SystemTime, earlier: SystemTime) -> Duration {
    later.duration_since(earlier).unwrap_or_default()
}

fn percentile(sorted: &[Duration], p: usize) -> Duration {
    let rank = (sorted.len() * p).div_ceil(100).max(1);
    sorted[rank - 1]
}

/// Runs a scenario on `store` with workers started by `spawn(name, pause)`; `count_effects`
/// reads the side effects per request id; `finished` counts finished runs.
#[allow(clippy::too_many_lines)] // one scenario, read top to bottom
async fn scenario<S, E, F>(
    sc: &Scenario,
    store: Arc<dyn RunStore>,
    spawn: S,
    effects: E,
    finished: F,
) where
    S: Fn(&str, Option<u64>) -> Proc,
    E: AsyncFn() -> BTreeMap<String, i64>,
    F: AsyncFn() -> usize,
{
    let agent = Agent::once();
    let answered = park(&store, &agent, sc.runs).await;
    let expiring_agent = Agent {
        // far enough that no worker sees it expire before the workers start
        expires_ms: Some(6_000),
        ..Agent::once()
    };
    let expiring = park(&store, &expiring_agent, sc.expiring).await;

    let mut procs: Vec<Option<Proc>> = (0..sc.workers)
        .map(|i| {
            let name = format!("{}-w{i}", sc.label);
            Some(spawn(&name, (i == 0).then_some(20)))
        })
        .collect();

    // this process submits every answer, 8 at a time
    let started = Instant::now();
    let submitted_at = SystemTime::now();
    let submitter = {
        let store = Arc::clone(&store);
        let requests: Vec<Request> = answered.iter().map(|(_, r)| r.clone()).collect();
        tokio::spawn(async move {
            let chunks: Vec<Vec<Request>> = requests
                .chunks(requests.len().div_ceil(8))
                .map(<[Request]>::to_vec)
                .collect();
            let mut tasks = Vec::new();
            for chunk in chunks {
                let store = Arc::clone(&store);
                tasks.push(tokio::spawn(async move {
                    for r in chunk {
                        store
                            .submit(&r.accept(format!("user of {}", r.id)), "submitter")
                            .await
                            .expect("submit");
                    }
                }));
            }
            for t in tasks {
                t.await.expect("submit task");
            }
        })
    };

    let total = sc.runs + sc.expiring;
    let mut killed_at = None;
    let mut graceful_stats = None;
    let deadline = Instant::now() + Duration::from_secs(300);
    loop {
        let done = finished().await;
        if killed_at.is_none() && done >= sc.kill_at {
            procs[0].take().expect("the victim").kill();
            killed_at = Some(SystemTime::now());
        }
        if let Some((at, who)) = sc.graceful
            && graceful_stats.is_none()
            && done >= at
        {
            graceful_stats = Some(procs[who].take().expect("the leaver").stop());
        }
        if done >= total {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "{}: only {done} of {total} finished",
            sc.label
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    submitter.await.expect("the submitter");
    let elapsed = started.elapsed();
    let mut stats: Vec<String> = procs.into_iter().flatten().map(Proc::stop).collect();
    stats.extend(graceful_stats);
    let killed_at = killed_at.expect("the victim was killed");

    // every run ended exactly once
    let mut runs: Vec<StoredRun> = Vec::with_capacity(total);
    for (info, _) in answered.iter().chain(&expiring) {
        let run = store.get(&info.run_id).await.expect("get").expect("run");
        let ends = run
            .info
            .history
            .iter()
            .filter(|e| e.event == RunEventKind::Finished)
            .count();
        assert_eq!(
            ends, 1,
            "{}: run {} ended {ends} times",
            sc.label, info.run_id
        );
        runs.push(run);
    }
    let (answered_runs, expiring_runs) = runs.split_at(sc.runs);

    // answer-to-resume latency; the takeovers of the victim's runs; the releases
    let victim = format!("{}-w0", sc.label);
    let mut latencies = Vec::with_capacity(sc.runs);
    let mut takeovers = Vec::new();
    let mut taken_over = BTreeSet::new();
    let mut released = 0;
    let mut last_finish = submitted_at;
    for run in answered_runs {
        let h = &run.info.history;
        let answer = h
            .iter()
            .position(|e| e.event == RunEventKind::Answered)
            .expect("answered");
        let resumed = h[answer..]
            .iter()
            .find(|e| matches!(e.event, RunEventKind::Claimed | RunEventKind::TakenOver))
            .expect("resumed");
        latencies.push(since(resumed.at, h[answer].at));
        for (i, e) in h.iter().enumerate() {
            if e.event == RunEventKind::TakenOver {
                if holder(&h[..i]) == Some(victim.as_str()) {
                    takeovers.push(since(e.at, killed_at));
                }
                taken_over.insert(run.info.request_id.clone());
            }
            released += usize::from(e.event == RunEventKind::Released);
            if e.event == RunEventKind::Finished {
                last_finish = last_finish.max(e.at);
            }
        }
        assert_eq!(
            run.result.as_ref().expect("result").text,
            format!("done: hello \"user of {}\"", run.info.request_id),
            "{}",
            sc.label
        );
    }
    latencies.sort_unstable();

    // side effects: once per answered run, twice only for runs taken over from the victim
    let per_request = effects().await;
    let twice: Vec<_> = per_request
        .iter()
        .filter(|(_, n)| **n > 1)
        .map(|(id, _)| id.clone())
        .collect();
    assert_eq!(
        per_request.len(),
        sc.runs,
        "{}: every answered run's effect happened",
        sc.label
    );
    assert!(
        per_request.values().all(|&n| n <= 2),
        "{}: an effect ran three times",
        sc.label
    );
    for id in &twice {
        assert!(
            taken_over.contains(id),
            "{}: {id} ran twice but was never taken over",
            sc.label
        );
    }

    // requests nobody answered: resumed with declined/expired within 1 s of expiresAt
    let mut late_max = Duration::ZERO;
    let mut end_max = Duration::ZERO;
    let mut marked_max = Duration::ZERO;
    let mut latest = None;
    for run in expiring_runs {
        assert_eq!(
            run.result.as_ref().expect("result").text,
            "done: declined/expired: What is your name?"
        );
        // the victim may die holding expired runs too (the kill can fall on the expiry wave,
        // when every worker takes the expired runs first)
        let h = &run.info.history;
        for (i, e) in h.iter().enumerate() {
            if e.event == RunEventKind::TakenOver && holder(&h[..i]) == Some(victim.as_str()) {
                takeovers.push(since(e.at, killed_at));
            }
        }
        let expires = run.info.expires_at.expect("expiresAt");
        let end = run
            .info
            .history
            .iter()
            .find(|e| e.event == RunEventKind::Finished)
            .expect("end")
            .at;
        let resumed = run
            .info
            .history
            .iter()
            .find(|e| matches!(e.event, RunEventKind::Claimed | RunEventKind::TakenOver))
            .expect("claimed")
            .at;
        assert!(
            resumed >= expires,
            "{}: resumed before its expiresAt",
            sc.label
        );
        // resumed (claimed) on time; a run the killed worker held ends after the takeover
        if since(resumed, expires) >= late_max {
            late_max = since(resumed, expires);
            latest = Some(run.info.clone());
        }
        end_max = end_max.max(since(end, expires));
        if let Some(marked) = run
            .info
            .history
            .iter()
            .find(|e| e.event == RunEventKind::Expired)
        {
            marked_max = marked_max.max(since(marked.at, expires));
        }
    }

    takeovers.sort_unstable();

    let runs_per_s = f64::from(u32::try_from(sc.runs).unwrap_or(u32::MAX))
        / since(last_finish, submitted_at).as_secs_f64();
    println!(
        "worker processes ({}): {} runs answered by this process, {} worker processes; {}-w0 SIGKILLed after {} runs ended{}",
        sc.label,
        sc.runs,
        sc.workers,
        sc.label,
        sc.kill_at,
        sc.graceful.map_or(String::new(), |(at, who)| format!(
            ", {}-w{who} shut down gracefully after {at} ({released} runs released and resumed by the others)",
            sc.label
        )),
    );
    println!(
        "worker processes ({}): every run ended exactly once; {:.0} runs/s ({:.1?} in all); answer-to-resume latency p50 {:.1} ms, p99 {:.1} ms",
        sc.label,
        runs_per_s,
        elapsed,
        ms(percentile(&latencies, 50)),
        ms(percentile(&latencies, 99)),
    );
    println!(
        "worker processes ({}): {} runs taken over from the killed worker, {:.0} ms to {:.0} ms after the kill (lease {} ms); side effects ran twice for {} runs (the crash window), once for the other {}",
        sc.label,
        takeovers.len(),
        takeovers.first().map_or(0.0, |d| ms(*d)),
        takeovers.last().map_or(0.0, |d| ms(*d)),
        sc.lease_ms,
        twice.len(),
        sc.runs - twice.len(),
    );
    println!(
        "worker processes ({}): {} requests nobody answered resumed with declined/expired at most {:.0} ms after their expiresAt (marked expired at most {:.0} ms after it; ended at most {:.0} ms after it, a takeover included)",
        sc.label,
        sc.expiring,
        ms(late_max),
        ms(marked_max),
        ms(end_max)
    );
    for s in stats {
        println!("worker processes ({}): worker stats {s}", sc.label);
    }
    assert!(
        late_max < sc.expiry_bound,
        "{}: an expired request resumed {late_max:?} late: {latest:?}",
        sc.label
    );

    assert!(
        !takeovers.is_empty(),
        "{}: the killed worker's runs were taken over",
        sc.label
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "heavy: .ci/run runs it once with --ignored --nocapture"]
async fn postgres_10000_runs_3_worker_processes() {
    let Some(url) = toolnexus_tests::pg::url("postgres_10000_runs_3_worker_processes") else {
        return;
    };
    let (store, guard) = toolnexus_tests::pg::fresh_store(&url, "procs").await;
    let schema = guard.schema.clone();
    let db = Arc::new(toolnexus_tests::pg::client(&url).await);
    db.batch_execute(&format!(
        "CREATE TABLE \"{schema}\".effects (request_id TEXT NOT NULL, worker TEXT NOT NULL)"
    ))
    .await
    .unwrap();
    let runs = std::env::var("WORKER_PROCS_RUNS").map_or(10_000, |n| n.parse().unwrap());
    let sc = Scenario {
        label: "postgres",
        runs,
        expiring: 30,
        workers: 3,
        kill_at: runs / 4,
        graceful: Some((runs / 2, 1)),
        lease_ms: 2_000,
        // with all three workers full behind a backlog of thousands of answered runs: expiry
        // has its own loop in each worker, so it never queues behind claims
        expiry_bound: Duration::from_secs(1),
    };
    let lease = sc.lease_ms.to_string();
    let spawn = |name: &str, pause| {
        Proc::spawn(
            &["postgres", &url, &schema, name, &lease, "8", "1000"],
            name,
            pause,
        )
    };
    let effects = async || {
        db.query(
            &format!("SELECT request_id, count(*) FROM \"{schema}\".effects GROUP BY request_id"),
            &[],
        )
        .await
        .unwrap()
        .iter()
        .map(|r| (r.get(0), r.get(1)))
        .collect()
    };
    let finished = async || {
        let n: i64 = db
            .query_one(
                &format!("SELECT count(*) FROM \"{schema}\".runs WHERE state = 'finished'"),
                &[],
            )
            .await
            .unwrap()
            .get(0);
        usize::try_from(n).unwrap()
    };
    scenario(&sc, Arc::new(store), spawn, effects, finished).await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
#[ignore = "heavy: .ci/run runs it once with --ignored --nocapture"]
async fn sqlite_2000_runs_2_worker_processes() {
    let dir = std::env::temp_dir().join(format!("toolnexus-procs-{}", std::process::id()));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("runs.db");
    let store = SqliteStore::open(&path).await.unwrap();
    {
        let conn = rusqlite::Connection::open(&path).unwrap();
        conn.execute_batch("CREATE TABLE effects (request_id TEXT NOT NULL, worker TEXT NOT NULL)")
            .unwrap();
    }
    let sc = Scenario {
        label: "sqlite",
        runs: 2_000,
        expiring: 10,
        workers: 2,
        kill_at: 700,
        graceful: None,
        lease_ms: 2_000,
        expiry_bound: Duration::from_secs(1),
    };
    let file = path.to_string_lossy().into_owned();
    let lease = sc.lease_ms.to_string();
    // another process's answers reach a SQLite worker by its poll (100 ms here)
    let spawn = |name: &str, pause| {
        Proc::spawn(
            &["sqlite", &file, "-", name, &lease, "8", "100"],
            name,
            pause,
        )
    };
    let read = |sql: &'static str| {
        let path = path.clone();
        async move {
            tokio::task::spawn_blocking(move || {
                let conn = rusqlite::Connection::open(&path).unwrap();
                conn.busy_timeout(Duration::from_secs(30)).unwrap();
                let mut stmt = conn.prepare(sql).unwrap();
                stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))
                    .unwrap()
                    .collect::<Result<Vec<_>, _>>()
                    .unwrap()
            })
            .await
            .unwrap()
        }
    };
    let effects = async || {
        read("SELECT request_id, count(*) FROM effects GROUP BY request_id")
            .await
            .into_iter()
            .collect()
    };
    let finished = async || {
        let rows = read("SELECT 'n', count(*) FROM runs WHERE state = 'finished'").await;
        usize::try_from(rows[0].1).unwrap()
    };
    scenario(&sc, Arc::new(store), spawn, effects, finished).await;
    let _ = std::fs::remove_dir_all(&dir);
}

/// Who held a run at the end of `history`: the worker of its last claim or takeover.
fn holder(history: &[RunEvent]) -> Option<&str> {
    history
        .iter()
        .rev()
        .find(|e| matches!(e.event, RunEventKind::Claimed | RunEventKind::TakenOver))
        .and_then(|e| e.by.as_deref())
}
