//! What the store benchmarks (`benches/store_{sqlite,postgres}.rs`) share: the runtime, the
//! sample record and result, the measured cycle and listing, the queries over 100,000 parked
//! runs, and how sizes print.
//!
//! Every helper panics when the store under measurement fails: a benchmark has no other way
//! to stop.

// the panics are how a benchmark stops on a failing store, documented once above
#![allow(clippy::missing_panics_doc)]

use std::sync::OnceLock;

use toolnexus::store::{MemoryStore, PendingQuery, RunStore};
use toolnexus::{PendingRun, RunResult};

use crate::ratio::{Interleaved, interleaved};
use crate::store_conformance::Agent;

/// How many runs the listing benchmarks park.
pub const PARKED: usize = 100_000;

/// Cycles per batch, and rounds, of a store benchmark's interleaved comparison.
pub const BATCH: usize = 20;
/// See [`BATCH`].
pub const ROUNDS: usize = 101;

/// A current-thread runtime, as a benchmark drives one call at a time.
pub fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

/// A halted record and the finished result of resuming it, made once.
pub fn sample() -> &'static (PendingRun, RunResult) {
    static SAMPLE: OnceLock<(PendingRun, RunResult)> = OnceLock::new();
    SAMPLE.get_or_init(|| {
        runtime().block_on(async {
            let agent = Agent::once();
            let record = agent.halt().await;
            let done = agent.resume(&record, record.pending().accept("Ada")).await;
            (record, done)
        })
    })
}

/// A fresh halted record (the input of one measured cycle).
pub fn fresh_record(rt: &tokio::runtime::Runtime) -> PendingRun {
    rt.block_on(Agent::once().halt())
}

/// The inputs of one measured cycle, made before its timer starts (as the floors' JSON is): a
/// fresh halted record, and a copy of the sample result to finish it with.
pub fn fresh_cycle(rt: &tokio::runtime::Runtime) -> (PendingRun, RunResult) {
    (fresh_record(rt), sample().1.clone())
}

/// One measured cycle: park the record, claim it with the answer, finish it with the result.
pub fn park_claim_finish(
    rt: &tokio::runtime::Runtime,
    store: &dyn RunStore,
    (record, done): (PendingRun, RunResult),
) {
    rt.block_on(async {
        let answer = record.pending().accept("Ada");
        store.park(record).await.expect("park");
        let claim = store.claim(&answer, "bench").await.expect("claim");
        store.finish(&claim, done).await.expect("finish");
    });
}

/// One measured park of `record` (alone: the park's own cost, with or without a notification
/// outbox row per notifier the store was built with).
pub fn park_only(rt: &tokio::runtime::Runtime, store: &dyn RunStore, record: PendingRun) {
    rt.block_on(async {
        store.park(record).await.expect("park");
    });
}

/// One measured listing: a page of 100 of `query`.
pub fn list_page(rt: &tokio::runtime::Runtime, store: &dyn RunStore, query: &PendingQuery) {
    let page = rt.block_on(store.list_pending(query)).expect("list");
    assert_eq!(page.runs.len(), 100);
    std::hint::black_box(page);
}

/// The listing queries: the first page, a kind 1 in 100 runs have, a page in the middle
/// (the parked runs' `created_at` is `1_800_000_000_000 + i`, their ids `run-sus-bench-<i>`).
pub fn first_page() -> PendingQuery {
    PendingQuery::new().limit(100)
}

/// A kind 1 in 100 of the parked runs have (`i % 100 == 0`), first page of 100.
pub fn rare_kind() -> PendingQuery {
    PendingQuery::new().kind("approval").limit(100)
}

/// A page of 100 after run 50,000.
pub fn deep_page() -> PendingQuery {
    PendingQuery::new()
        .limit(100)
        .after("1800000050000:run-sus-bench-050000")
}

/// The request id of parked run `i` (`sus-bench-000042`).
pub fn bench_request(i: usize) -> String {
    format!("sus-bench-{i:06}")
}

/// Bytes as megabytes with one decimal.
pub fn mb(bytes: u64) -> String {
    format!("{}.{}", bytes / 1_000_000, bytes / 100_000 % 10)
}

/// `f` run [`BATCH`] times, timed.
pub fn timed_batch(mut f: impl FnMut()) -> std::time::Duration {
    let start = std::time::Instant::now();
    for _ in 0..BATCH {
        f();
    }
    start.elapsed()
}

/// The CPU time this thread has used so far (`/proc/thread-self/schedstat`, nanoseconds), where
/// the system reports it. A benchmark's current-thread runtime runs the client and its
/// connection tasks on this thread, so the difference over a batch is the client's own work.
fn thread_cpu() -> Option<std::time::Duration> {
    let text = std::fs::read_to_string("/proc/thread-self/schedstat").ok()?;
    let ns: u64 = text.split_whitespace().next()?.parse().ok()?;
    Some(std::time::Duration::from_nanos(ns))
}

/// `batch` (a timed batch), its thread CPU time added to `cpu`.
fn cpu_counted(
    cpu: &std::cell::Cell<std::time::Duration>,
    batch: impl FnOnce() -> std::time::Duration,
) -> std::time::Duration {
    let before = thread_cpu();
    let took = batch();
    if let (Some(before), Some(after)) = (before, thread_cpu()) {
        cpu.set(cpu.get() + after.saturating_sub(before));
    }
    took
}

/// The store's cycle against the two floors (`one`: `INSERT` + `UPDATE`, `two`: `INSERT` + two
/// `UPDATE`s, each a timed batch), interleaved round by round (see [`interleaved`]): the line
/// a store benchmark prints after divan's table, and a second line with the client's CPU time
/// per cycle of each (what of the difference is this process's work, not the database's), and
/// of the same cycle on a [`MemoryStore`], interleaved too: the lifecycle's own share of it.
pub fn compare_with_floors(
    name: &str,
    rt: &tokio::runtime::Runtime,
    store: &dyn RunStore,
    one: &mut dyn FnMut() -> std::time::Duration,
    two: &mut dyn FnMut() -> std::time::Duration,
) -> String {
    let cpu: [std::cell::Cell<std::time::Duration>; 4] = Default::default();
    let batches = std::cell::Cell::new(0u32);
    let cycles_of = |store: &dyn RunStore, cpu: &std::cell::Cell<std::time::Duration>| {
        let mut records: Vec<(PendingRun, RunResult)> =
            (0..BATCH).map(|_| fresh_cycle(rt)).collect();
        cpu_counted(cpu, || {
            timed_batch(|| park_claim_finish(rt, store, records.pop().expect("a record per cycle")))
        })
    };
    let mut subject = || {
        batches.set(batches.get() + 1);
        cycles_of(store, &cpu[0])
    };
    let mut one = || cpu_counted(&cpu[1], &mut *one);
    let mut two = || cpu_counted(&cpu[2], &mut *two);
    // the same cycle with no database: what of the store's CPU is the lifecycle's own work
    // (the record's check, the result's JSON, the history), the same for every driver
    let memory = MemoryStore::new();
    let mut lifecycle = || cycles_of(&memory, &cpu[3]);
    // one interleaving of all of them, so both floors are measured in the same rounds as the
    // store (two separate ones measured the floors minutes apart, and on a shared machine the
    // two-statement floor once came out slower than the three-statement one)
    let m = interleaved(
        ROUNDS,
        &mut [&mut subject, &mut one, &mut two, &mut lifecycle],
    );
    let cycles = f64::from(batches.get()) * f64::from(u32::try_from(BATCH).unwrap_or(1));
    let per_cycle = |c: &std::cell::Cell<std::time::Duration>| c.get().as_secs_f64() * 1e6 / cycles;
    format!(
        "{}\n{name} client CPU per cycle (this thread: the client and its connection): \
         store {:.0} us, INSERT+UPDATE {:.0} us, INSERT+two UPDATEs {:.0} us; \
         the same cycle on a MemoryStore (the lifecycle's own work, warm, no database) {:.0} us",
        ratios_line(name, &m),
        per_cycle(&cpu[0]),
        per_cycle(&cpu[1]),
        per_cycle(&cpu[2]),
        per_cycle(&cpu[3]),
    )
}

/// The line a store benchmark prints for its interleaved comparison `[store, INSERT + UPDATE,
/// INSERT + two UPDATEs]`.
fn ratios_line(store: &str, m: &Interleaved) -> String {
    let us = |s: f64| s * 1e6 / f64::from(u32::try_from(BATCH).unwrap_or(1));
    format!(
        "{store} park+claim+finish, interleaved with both floors ({ROUNDS} rounds of {BATCH} cycles, after {} warm-up rounds): \
         {:.0} us vs INSERT+UPDATE {:.0} us: {:.2}x; vs INSERT+two UPDATEs {:.0} us: {:.2}x \
         (medians of the rounds' ratios)",
        crate::ratio::warm_up(ROUNDS),
        us(m.medians[0]),
        us(m.medians[1]),
        m.ratios[0],
        us(m.medians[2]),
        m.ratios[1],
    )
}

/// Where a comparison runs: the bench's thread and the PostgreSQL server's processes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// The bench on CPU 0, the server on CPU 1: each side on its own CPU, as a deployment has
    /// them (the database on another machine); every round trip wakes the other CPU.
    SplitCpus,
    /// Both on CPU 0: no cross-CPU wake-up, so the time is the two sides' work, one after the
    /// other (the client's own CPU time counts in full).
    SameCpu,
}

impl Layout {
    /// Both layouts, as the reports name them.
    pub const ALL: [Self; 2] = [Self::SplitCpus, Self::SameCpu];

    /// What the report says of this layout.
    pub fn describe(self) -> &'static str {
        match self {
            Self::SplitCpus => "bench on CPU 0, server on CPU 1",
            Self::SameCpu => "bench and server on CPU 0",
        }
    }

    /// The server's affinity mask (`taskset`'s hexadecimal form).
    fn server_mask(self) -> &'static str {
        match self {
            Self::SplitCpus => "2",
            Self::SameCpu => "1",
        }
    }
}

/// The bench's own thread and the processes of the PostgreSQL server it measures held to a
/// [`Layout`] while it lives (each process's affinity put back on drop, new server processes
/// included; no other server on the machine is touched).
///
/// On a machine of few CPUs, each connection's server process lands on the client's CPU or
/// another one, and a round trip across CPUs costs far more than one on the same CPU (the
/// wake-up of the other side). Where each of the three connections of a comparison (the
/// store's, each floor's) landed decided the ratio: on a 2-vCPU machine the same code measured
/// 1.24x, 1.35x, 2.29x and 2.48x against the three bare statements in four runs. Held to one
/// layout, all three pay the same wake-ups, and runs agree within 5% (1% split).
#[derive(Debug)]
pub struct Pinned {
    /// The server's first process (the postmaster), whose children are its other processes.
    postmaster: u32,
    /// The server processes' affinity mask before (as `taskset -p` prints it).
    mask: String,
}

impl Pinned {
    /// Holds this thread and the processes of the PostgreSQL server whose process one of
    /// its connections is served by (`backend`: `SELECT pg_backend_pid()`) to `layout`
    /// (`taskset`; no other server on the machine is touched); `None`, with a notice, when
    /// that cannot be done (fewer than 2 CPUs for [`Layout::SplitCpus`], no `taskset`, the
    /// server's processes not found, or no permission: the comparison is not made).
    pub fn new(layout: Layout, backend: u32) -> Option<Self> {
        if layout == Layout::SplitCpus
            && std::thread::available_parallelism().map_or(1, std::num::NonZero::get) < 2
        {
            eprintln!("notice: one CPU: the split layout is not measured");
            return None;
        }
        let Some(first) = parent_of(backend) else {
            eprintln!(
                "notice: the PostgreSQL server's processes are not found: the layouts cannot be held"
            );
            return None;
        };
        let servers = server_pids(first);
        let mask = std::process::Command::new("taskset")
            .args(["-p", &first.to_string()])
            .output()
            .ok()
            .filter(|o| o.status.success())
            .and_then(|o| {
                let text = String::from_utf8_lossy(&o.stdout).into_owned();
                text.rsplit(": ").next().map(|m| m.trim().to_owned())
            });
        let Some(mask) = mask else {
            eprintln!(
                "notice: `taskset` cannot read the server's CPUs: the layouts cannot be held"
            );
            return None;
        };
        // the bench and the server's first process must be held (new server processes are
        // forked from it); a process that ended meanwhile (a closed connection's) needs nothing
        let held = set_mask(std::process::id(), "1")
            && servers.iter().all(|&pid| {
                set_mask(pid, layout.server_mask())
                    || (pid != first && !std::path::Path::new(&format!("/proc/{pid}")).exists())
            });
        // made before the check: a partial hold is put back by its drop
        let pinned = Self {
            postmaster: first,
            mask,
        };
        if !held {
            eprintln!(
                "notice: cannot hold the bench and the PostgreSQL server to CPUs (permission?): the layouts cannot be held"
            );
            return None;
        }
        Some(pinned)
    }
}

impl Drop for Pinned {
    fn drop(&mut self) {
        for pid in std::iter::once(std::process::id()).chain(server_pids(self.postmaster)) {
            set_mask(pid, &self.mask);
        }
    }
}

/// Sets the CPU affinity of `pid` (one thread: the main thread for a process id) to `mask`.
fn set_mask(pid: u32, mask: &str) -> bool {
    std::process::Command::new("taskset")
        .args(["-p", mask, &pid.to_string()])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .status()
        .is_ok_and(|s| s.success())
}

/// The parent of process `pid` (`PPid` in `/proc/<pid>/status`).
fn parent_of(pid: u32) -> Option<u32> {
    std::fs::read_to_string(format!("/proc/{pid}/status"))
        .ok()?
        .lines()
        .find_map(|l| l.strip_prefix("PPid:"))?
        .trim()
        .parse()
        .ok()
}

/// The server's processes: its first one (`postmaster`) and every child of it, that first.
fn server_pids(postmaster: u32) -> Vec<u32> {
    let children = std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .flatten()
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .filter(|&pid: &u32| pid != postmaster && parent_of(pid) == Some(postmaster));
    std::iter::once(postmaster).chain(children).collect()
}
