//! `PostgresStore` against bare SQL on the same server (`TOOLNEXUS_PG_URL`; see
//! `scripts/postgres.sh`; without it this prints a notice and measures nothing):
//!
//! - park + claim + finish of one run, against a bare `INSERT` + `UPDATE` (and `INSERT` + two
//!   `UPDATE`s, one per store transaction) of a row of the same size, interleaved, in three
//!   layouts: the bench and the server on separate CPUs, both on one CPU (see
//!   `store_bench::Pinned`; `TOOLNEXUS_BENCH_PIN=0` skips both), and unpinned;
//! - `list_pending` latency with 100,000 parked runs (first page, a rare kind, a deep page);
//! - bytes per parked run on disk (printed before the benchmarks);
//! - a park alone, in a store without notifiers and in one with one notifier (the park's
//!   outbox row, written by its statement: issue 37).
//!
//! `cargo bench -p toolnexus-tests --features bench --bench store_postgres`

use std::sync::OnceLock;

use divan::Bencher;
use toolnexus::store::{PendingQuery, PostgresStore};
use toolnexus_tests::pg::{SchemaGuard, fresh_schema, fresh_store};
use toolnexus_tests::ratio::benchmarking;
use toolnexus_tests::store_bench::{
    Layout, PARKED, Pinned, compare_with_floors, deep_page, first_page, fresh_cycle, fresh_record,
    list_page, mb, park_claim_finish, park_only, rare_kind, runtime, sample, timed_batch,
};

fn url() -> Option<String> {
    std::env::var("TOOLNEXUS_PG_URL")
        .ok()
        .filter(|u| !u.is_empty())
}

fn main() {
    let Some(url) = url() else {
        eprintln!("notice: store_postgres measures nothing: TOOLNEXUS_PG_URL is not set");
        return;
    };
    let big = big(&url);
    let rt = runtime();
    let bytes: i64 = rt.block_on(async {
        let db = connect(&url).await;
        db.batch_execute(&format!("VACUUM ANALYZE \"{}\".runs", big.guard.schema))
            .await
            .expect("vacuum");
        db.query_one(
            &format!(
                "SELECT pg_total_relation_size('\"{}\".runs')",
                big.guard.schema
            ),
            &[],
        )
        .await
        .expect("size")
        .get(0)
    });
    println!(
        "store_postgres: {PARKED} parked runs: {} MB on disk (table, TOAST and indexes), {} bytes per run",
        mb(u64::try_from(bytes).unwrap_or(0)),
        bytes / i64::try_from(PARKED).unwrap_or(1)
    );
    divan::main();
    if benchmarking() {
        report_ratios(&url);
    }
    // the static's guard is never dropped: drop the schema through a guard of the same name
    drop(SchemaGuard {
        url,
        schema: big.guard.schema.clone(),
    });
}

async fn connect(url: &str) -> tokio_postgres::Client {
    let (client, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .expect("connect");
    tokio::spawn(conn);
    client
}

struct Big {
    guard: SchemaGuard,
}

/// A schema with `PARKED` parked runs, each a real record with its own request id.
fn big(url: &str) -> &'static Big {
    static BIG: OnceLock<Big> = OnceLock::new();
    BIG.get_or_init(|| {
        let schema = fresh_schema("bench_big");
        let (record, _) = sample();
        let rt = runtime();
        rt.block_on(async {
            drop(
                PostgresStore::connect_in_schema(url, &schema)
                    .await
                    .expect("store"),
            );
            let db = connect(url).await;
            db.execute(
                &format!(
                    "INSERT INTO \"{schema}\".runs (run_id, request_id, kind, prompt, created_at,
                         state, version, claims, record)
                     SELECT 'run-sus-bench-' || lpad(i::text, 6, '0'), 'sus-bench-' || lpad(i::text, 6, '0'),
                         CASE WHEN i % 100 = 0 THEN 'approval' ELSE 'input' END,
                         'What is your name?', 1800000000000 + i, 'parked', 1, 0,
                         replace($1, $2, 'sus-bench-' || lpad(i::text, 6, '0'))
                     FROM generate_series(0::bigint, $3::bigint - 1) AS i"
                ),
                &[
                    &record.to_json(),
                    &record.pending().id,
                    &i64::try_from(PARKED).expect("small"),
                ],
            )
            .await
            .expect("rows");
        });
        Big {
            guard: SchemaGuard {
                url: url.to_owned(),
                schema,
            },
        }
    })
}

/// The store: park a fresh record, claim it with the answer, finish it.
#[divan::bench(sample_count = 20, sample_size = 10)]
fn store_park_claim_finish(bencher: Bencher<'_, '_>) {
    let url = url().expect("url");
    let rt = runtime();
    let (store, _guard) = rt.block_on(fresh_store(&url, "bench_cycle"));
    bencher
        .with_inputs(|| fresh_cycle(&rt))
        .bench_local_values(|record| park_claim_finish(&rt, &store, record));
}

/// A park alone, in a store without notifiers.
#[divan::bench(sample_count = 20, sample_size = 10)]
fn store_park_alone(bencher: Bencher<'_, '_>) {
    let url = url().expect("url");
    let rt = runtime();
    let (store, _guard) = rt.block_on(fresh_store(&url, "bench_park"));
    bencher
        .with_inputs(|| fresh_record(&rt))
        .bench_local_values(|record| park_only(&rt, &store, record));
}

/// A park alone, in a store with one notifier: the park's statement writes its outbox row too.
#[divan::bench(sample_count = 20, sample_size = 10)]
fn store_park_with_a_notifier(bencher: Bencher<'_, '_>) {
    let url = url().expect("url");
    let rt = runtime();
    let (store, _guard) = rt.block_on(fresh_store(&url, "bench_park_notify"));
    let store = store.with_notifiers(["webhook"]).expect("a notifier name");
    bencher
        .with_inputs(|| fresh_record(&rt))
        .bench_local_values(|record| park_only(&rt, &store, record));
}

/// The bare statements of a cycle in a schema made by the store: `INSERT`, then one
/// `UPDATE` (or two, one per store transaction), autocommit, prepared, with the JSON made
/// beforehand. (Fields drop in order: the client before its runtime, the schema last.)
struct Floor {
    db: tokio_postgres::Client,
    rt: tokio::runtime::Runtime,
    statements: [tokio_postgres::Statement; 4],
    json: String,
    answer: String,
    result: String,
    n: i64,
    updates: usize,
    _guard: SchemaGuard,
}

impl Floor {
    fn new(url: &str, updates: usize) -> Self {
        let rt = runtime();
        let schema = fresh_schema("bench_floor");
        let guard = SchemaGuard {
            url: url.to_owned(),
            schema: schema.clone(),
        };
        let db = rt.block_on(async {
            // the store's own schema, made by the store
            drop(
                PostgresStore::connect_in_schema(url, &schema)
                    .await
                    .expect("store"),
            );
            connect(url).await
        });
        let statements = [
            format!(
                "INSERT INTO \"{schema}\".runs (run_id, request_id, kind, prompt, created_at, state,
                     version, claims, record)
                 VALUES ($1, $2, 'input', 'What is your name?', $3, 'parked', 1, 0, $4)"
            ),
            format!(
                "UPDATE \"{schema}\".runs SET state = 'claimed', answer = $2, lease_owner = 'bench'
                 WHERE run_id = $1"
            ),
            format!(
                "UPDATE \"{schema}\".runs SET state = 'finished', result = $2 WHERE run_id = $1"
            ),
            format!(
                "UPDATE \"{schema}\".runs SET state = 'finished', answer = $2, result = $3
                 WHERE run_id = $1"
            ),
        ]
        .map(|sql| rt.block_on(db.prepare(&sql)).expect("prepare"));
        let (record, done) = sample();
        Self {
            db,
            rt,
            statements,
            json: record.to_json(),
            answer: serde_json::to_string(&record.pending().accept("Ada")).expect("answer"),
            result: serde_json::to_string(done).expect("result"),
            n: 0,
            updates,
            _guard: guard,
        }
    }

    fn cycle(&mut self) {
        self.n += 1;
        let (n, db) = (self.n, &self.db);
        let [insert, claim, finish, both] = &self.statements;
        let id = format!("run-{n}");
        self.rt.block_on(async {
            db.execute(insert, &[&id, &format!("sus-{n}"), &n, &self.json])
                .await
                .expect("insert");
            if self.updates == 1 {
                db.execute(both, &[&id, &self.answer, &self.result])
                    .await
                    .expect("update");
            } else {
                db.execute(claim, &[&id, &self.answer])
                    .await
                    .expect("update");
                db.execute(finish, &[&id, &self.result])
                    .await
                    .expect("update");
            }
        });
    }

    /// [`BATCH`] cycles, timed.
    fn batch(&mut self) -> std::time::Duration {
        timed_batch(|| self.cycle())
    }
}

fn floor(bencher: Bencher<'_, '_>, updates: usize) {
    let mut floor = Floor::new(&url().expect("url"), updates);
    bencher.bench_local(|| floor.cycle());
}

/// The store's cycle against both floors, interleaved round by round (see
/// [`interleaved`]): the ratios the target is about, printed after divan's table.
fn report_ratios(url: &str) {
    let rt = runtime();
    let (store, _guard) = rt.block_on(fresh_store(url, "bench_paired"));
    let compare = |how: &str| {
        // fresh floors (connections, so server processes) in each layout
        let (mut bare1, mut bare2) = (Floor::new(url, 1), Floor::new(url, 2));
        println!("postgres, {how}:");
        println!(
            "{}",
            compare_with_floors("postgres", &rt, &store, &mut || bare1.batch(), &mut || {
                bare2.batch()
            })
        );
    };
    // each layout held in turn (see `Pinned`), then none; `TOOLNEXUS_BENCH_PIN=0`: only none
    if std::env::var("TOOLNEXUS_BENCH_PIN").is_ok_and(|v| v == "0") {
        println!("postgres: the held layouts are skipped (TOOLNEXUS_BENCH_PIN=0)");
    } else {
        // a connection kept open while the layouts are held: its server process names the
        // server (its parent) whose processes are moved
        let probe = rt.block_on(connect(url));
        let backend: i32 = rt
            .block_on(probe.query_one("SELECT pg_backend_pid()", &[]))
            .expect("the backend's pid")
            .get(0);
        for layout in Layout::ALL {
            if let Some(pinned) = Pinned::new(layout, backend.unsigned_abs()) {
                compare(layout.describe());
                drop(pinned);
            }
        }
        drop(probe);
    }
    compare("unpinned (where the scheduler puts each side: varies from run to run)");
}

/// The floor: one `INSERT` and one `UPDATE` of a row of the same size, autocommit.
#[divan::bench(sample_count = 20, sample_size = 10)]
fn floor_insert_update(bencher: Bencher<'_, '_>) {
    floor(bencher, 1);
}

/// The floor with one statement per store transaction: `INSERT`, `UPDATE`, `UPDATE`.
#[divan::bench(sample_count = 20, sample_size = 10)]
fn floor_insert_two_updates(bencher: Bencher<'_, '_>) {
    floor(bencher, 2);
}

fn list(bencher: Bencher<'_, '_>, query: &PendingQuery) {
    let url = url().expect("url");
    let rt = runtime();
    let store = rt
        .block_on(PostgresStore::connect_in_schema(
            &url,
            &big(&url).guard.schema,
        ))
        .expect("store");
    bencher.bench_local(|| list_page(&rt, &store, query));
}

/// `list_pending`, first page of 100, with 100,000 parked.
#[divan::bench(sample_count = 20, sample_size = 5)]
fn list_pending_first_page(bencher: Bencher<'_, '_>) {
    list(bencher, &first_page());
}

/// `list_pending` of a kind 1 in 100 runs have, first page of 100.
#[divan::bench(sample_count = 20, sample_size = 5)]
fn list_pending_rare_kind(bencher: Bencher<'_, '_>) {
    list(bencher, &rare_kind());
}

/// `list_pending`, a page of 100 in the middle (cursor after run 50,000).
#[divan::bench(sample_count = 20, sample_size = 5)]
fn list_pending_deep_page(bencher: Bencher<'_, '_>) {
    list(bencher, &deep_page());
}
