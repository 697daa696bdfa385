//! `SqliteStore` against bare SQL on the same kind of database file:
//!
//! - park + claim + finish of one run, against a bare `INSERT` + `UPDATE` (and `INSERT` + two
//!   `UPDATE`s, one per store transaction) of a row of the same size;
//! - `list_pending` latency with 100,000 parked runs (first page, a rare kind, a deep page);
//! - bytes per parked run on disk (printed before the benchmarks);
//! - a park alone, in a store without notifiers and in one with one notifier (the park's
//!   outbox row, written in its transaction: issue 37).
//!
//! `cargo bench -p toolnexus-tests --features bench --bench store_sqlite`

use std::path::PathBuf;
use std::sync::OnceLock;

use divan::Bencher;
use toolnexus::PendingRun;
use toolnexus::store::{PendingQuery, SqliteStore};
use toolnexus_tests::ratio::benchmarking;
use toolnexus_tests::store_bench::{
    PARKED, bench_request, compare_with_floors, deep_page, first_page, fresh_cycle, fresh_record,
    list_page, mb, park_claim_finish, park_only, rare_kind, runtime, sample, timed_batch,
};

fn main() {
    let big = big();
    let bytes = std::fs::metadata(&big.path).expect("db file").len();
    println!(
        "store_sqlite: {PARKED} parked runs: {} MB on disk, {} bytes per run (record JSON {} bytes)",
        mb(bytes),
        bytes / PARKED as u64,
        big.record_len
    );
    divan::main();
    if benchmarking() {
        report_ratios();
    }
    for name in [
        "sqlite-big",
        "sqlite-cycle",
        "sqlite-floor1",
        "sqlite-floor2",
        "sqlite-paired",
        "sqlite-paired1",
        "sqlite-paired2",
        "sqlite-park",
        "sqlite-park-notify",
    ] {
        let _ = std::fs::remove_dir_all(bench_dir(name));
    }
}

fn bench_dir(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!("toolnexus-bench-{name}-{}", std::process::id()))
}

fn dir(name: &str) -> PathBuf {
    let dir = bench_dir(name);
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("bench dir");
    dir
}

struct Big {
    path: PathBuf,
    record_len: usize,
}

/// A store file with `PARKED` parked runs (rows written in one transaction, each a real record
/// with its own request id), checkpointed so the file holds them all.
fn big() -> &'static Big {
    static BIG: OnceLock<Big> = OnceLock::new();
    BIG.get_or_init(|| {
        let path = dir("sqlite-big").join("runs.db");
        runtime().block_on(async {
            drop(SqliteStore::open(&path).await.expect("store"));
        });
        let (record, _) = sample();
        let json = record.to_json();
        let id = record.pending().id.clone();
        let mut conn = rusqlite::Connection::open(&path).expect("db");
        let tx = conn.transaction().expect("tx");
        {
            let mut insert = tx
                .prepare(
                    "INSERT INTO runs (run_id, request_id, kind, prompt, created_at, state, version,
                         claims, record)
                     VALUES (?1, ?2, ?3, 'What is your name?', ?4, 'parked', 1, 0, ?5)",
                )
                .expect("insert");
            for i in 0..PARKED {
                let request = bench_request(i);
                let kind = if i % 100 == 0 { "approval" } else { "input" };
                insert
                    .execute((
                        format!("run-{request}"),
                        &request,
                        kind,
                        1_800_000_000_000_i64 + i64::try_from(i).expect("small"),
                        json.replace(&id, &request),
                    ))
                    .expect("row");
            }
        }
        tx.commit().expect("commit");
        conn.query_row("PRAGMA wal_checkpoint(TRUNCATE)", [], |_| Ok(()))
            .expect("checkpoint");
        Big {
            path,
            record_len: json.len(),
        }
    })
}

/// The store: park a fresh record, claim it with the answer, finish it.
#[divan::bench(sample_count = 200, sample_size = 10)]
fn store_park_claim_finish(bencher: Bencher<'_, '_>) {
    let rt = runtime();
    let store = rt
        .block_on(SqliteStore::open(dir("sqlite-cycle").join("runs.db")))
        .expect("store");
    bencher
        .with_inputs(|| fresh_cycle(&rt))
        .bench_local_values(|record| park_claim_finish(&rt, &store, record));
}

/// A park alone, in a store without notifiers.
#[divan::bench(sample_count = 200, sample_size = 10)]
fn store_park_alone(bencher: Bencher<'_, '_>) {
    let rt = runtime();
    let store = rt
        .block_on(SqliteStore::open(dir("sqlite-park").join("runs.db")))
        .expect("store");
    bencher
        .with_inputs(|| fresh_record(&rt))
        .bench_local_values(|record| park_only(&rt, &store, record));
}

/// A park alone, in a store with one notifier: the park writes its outbox row in its
/// transaction.
#[divan::bench(sample_count = 200, sample_size = 10)]
fn store_park_with_a_notifier(bencher: Bencher<'_, '_>) {
    let rt = runtime();
    let store = rt
        .block_on(SqliteStore::open(dir("sqlite-park-notify").join("runs.db")))
        .expect("store")
        .with_notifiers(["webhook"])
        .expect("a notifier name");
    bencher
        .with_inputs(|| fresh_record(&rt))
        .bench_local_values(|record| park_only(&rt, &store, record));
}

/// For comparison: three empty `spawn_blocking` round trips (one per store call of a cycle),
/// what a cycle would pay in thread hand-offs alone were its calls not run in place.
#[divan::bench(sample_count = 200, sample_size = 10)]
fn spawn_blocking_hops_x3(bencher: Bencher<'_, '_>) {
    let rt = runtime();
    bencher.bench_local(|| {
        rt.block_on(async {
            for _ in 0..3 {
                tokio::task::spawn_blocking(|| divan::black_box(1))
                    .await
                    .expect("hop");
            }
        });
    });
}

/// The record work of a cycle without the database: encode at park, decode and check at
/// claim, encode the result at finish.
#[divan::bench(sample_count = 200, sample_size = 10)]
fn record_json_of_a_cycle(bencher: Bencher<'_, '_>) {
    let (record, done) = sample();
    bencher.bench_local(|| {
        let json = record.to_json();
        let back = PendingRun::from_json(&json).expect("record");
        let result = serde_json::to_string(done).expect("result");
        divan::black_box((back, result));
    });
}

fn floor_connection(name: &str) -> rusqlite::Connection {
    let conn = rusqlite::Connection::open(dir(name).join("floor.db")).expect("db");
    conn.pragma_update(None, "journal_mode", "WAL")
        .expect("wal");
    conn.pragma_update(None, "synchronous", "NORMAL")
        .expect("sync");
    conn.execute_batch(
        "CREATE TABLE runs (run_id TEXT PRIMARY KEY, request_id TEXT NOT NULL UNIQUE,
             kind TEXT NOT NULL, prompt TEXT NOT NULL, created_at INTEGER NOT NULL,
             expires_at INTEGER, state TEXT NOT NULL, lease_owner TEXT, lease_until INTEGER,
             version INTEGER NOT NULL, claims INTEGER NOT NULL, record TEXT NOT NULL,
             answer TEXT, checkpoint TEXT, result TEXT);
         CREATE INDEX runs_by_state ON runs (state, created_at, run_id);
         CREATE INDEX runs_by_lease ON runs (state, lease_until);",
    )
    .expect("schema");
    conn
}

/// The bare statements of a cycle on a table of the store's shape: `INSERT`, then one
/// `UPDATE` (or two, one per store transaction), autocommit, with the JSON made beforehand.
struct Floor {
    conn: rusqlite::Connection,
    json: String,
    answer: String,
    result: String,
    n: u64,
    updates: usize,
}

impl Floor {
    fn new(name: &str, updates: usize) -> Self {
        let (record, done) = sample();
        Self {
            conn: floor_connection(name),
            json: record.to_json(),
            answer: serde_json::to_string(&record.pending().accept("Ada")).expect("answer"),
            result: serde_json::to_string(done).expect("result"),
            n: 0,
            updates,
        }
    }

    fn cycle(&mut self) {
        self.n += 1;
        let (n, conn) = (self.n, &self.conn);
        let id = format!("run-{n}");
        conn.execute(
            "INSERT INTO runs (run_id, request_id, kind, prompt, created_at, state, version,
                 claims, record) VALUES (?1, ?2, 'input', 'What is your name?', ?3, 'parked', 1, 0, ?4)",
            (&id, format!("sus-{n}"), i64::try_from(n).expect("small"), &self.json),
        )
        .expect("insert");
        if self.updates == 1 {
            conn.execute(
                "UPDATE runs SET state = 'finished', answer = ?2, result = ?3 WHERE run_id = ?1",
                (&id, &self.answer, &self.result),
            )
            .expect("update");
        } else {
            conn.execute(
                "UPDATE runs SET state = 'claimed', answer = ?2, lease_owner = 'bench' WHERE run_id = ?1",
                (&id, &self.answer),
            )
            .expect("update");
            conn.execute(
                "UPDATE runs SET state = 'finished', result = ?2 WHERE run_id = ?1",
                (&id, &self.result),
            )
            .expect("update");
        }
    }
}

impl Floor {
    /// [`BATCH`] cycles, timed.
    fn batch(&mut self) -> std::time::Duration {
        timed_batch(|| self.cycle())
    }
}

fn floor(bencher: Bencher<'_, '_>, name: &str, updates: usize) {
    let mut floor = Floor::new(name, updates);
    bencher.bench_local(|| floor.cycle());
}

/// The store's cycle against both floors, interleaved round by round (see
/// [`interleaved`]): the ratios the target is about, printed after divan's table.
fn report_ratios() {
    let rt = runtime();
    let store = rt
        .block_on(SqliteStore::open(dir("sqlite-paired").join("runs.db")))
        .expect("store");
    let (mut bare1, mut bare2) = (
        Floor::new("sqlite-paired1", 1),
        Floor::new("sqlite-paired2", 2),
    );
    println!(
        "{}",
        compare_with_floors("sqlite", &rt, &store, &mut || bare1.batch(), &mut || bare2
            .batch())
    );
}

/// The floor: one `INSERT` and one `UPDATE` of a row of the same size, autocommit.
#[divan::bench(sample_count = 200, sample_size = 10)]
fn floor_insert_update(bencher: Bencher<'_, '_>) {
    floor(bencher, "sqlite-floor1", 1);
}

/// The floor with one statement per store transaction: `INSERT`, `UPDATE`, `UPDATE`.
#[divan::bench(sample_count = 200, sample_size = 10)]
fn floor_insert_two_updates(bencher: Bencher<'_, '_>) {
    floor(bencher, "sqlite-floor2", 2);
}

fn list(bencher: Bencher<'_, '_>, query: &PendingQuery) {
    let rt = runtime();
    let store = rt.block_on(SqliteStore::open(&big().path)).expect("store");
    bencher.bench_local(|| list_page(&rt, &store, query));
}

/// `list_pending`, first page of 100, with 100,000 parked.
#[divan::bench(sample_count = 30, sample_size = 5)]
fn list_pending_first_page(bencher: Bencher<'_, '_>) {
    list(bencher, &first_page());
}

/// `list_pending` of a kind 1 in 100 runs have, first page of 100.
#[divan::bench(sample_count = 30, sample_size = 5)]
fn list_pending_rare_kind(bencher: Bencher<'_, '_>) {
    list(bencher, &rare_kind());
}

/// `list_pending`, a page of 100 in the middle (cursor after run 50,000).
#[divan::bench(sample_count = 30, sample_size = 5)]
fn list_pending_deep_page(bencher: Bencher<'_, '_>) {
    list(bencher, &deep_page());
}
