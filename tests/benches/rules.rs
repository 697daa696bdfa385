//! The approval check ([`RuleStore::decide`]) with 10,000 exact-call rules of the principal
//! against the check with one rule, on SQLite and PostgreSQL (`TOOLNEXUS_PG_URL`; without it
//! only SQLite): an indexed lookup reads the call's candidates only, so the two should be
//! within 2x. Divan times each case; after the benchmarks (`cargo bench`), the cases run
//! interleaved round by round and the median ratio (10,000 / 1) is printed per store.
//!
//! `cargo bench -p toolnexus-tests --features bench --bench rules`

use std::path::PathBuf;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use divan::Bencher;
use serde_json::json;
use toolnexus::remember::{RuleQuery, RuleStore, Scope, call_fingerprint};
use toolnexus::store::{PostgresStore, RunStore, SqliteStore};
use toolnexus_tests::pg::{SchemaGuard, fresh_schema};
use toolnexus_tests::ratio::{benchmarking, interleaved};
use toolnexus_tests::store_bench::runtime;
use toolnexus_tests::store_conformance::alices_rule;

/// The rules of the principal in the large case.
const MANY: u64 = 10_000;

/// Checks per timed batch of the interleaved comparison.
const BATCH: u32 = 20;

fn pg_url() -> Option<String> {
    std::env::var("TOOLNEXUS_PG_URL")
        .ok()
        .filter(|u| !u.is_empty())
}

fn bench_dir(name: &str) -> PathBuf {
    std::env::temp_dir().join(format!(
        "toolnexus-bench-rules-{name}-{}",
        std::process::id()
    ))
}

/// A store holding `n` exact-call rules of alice's for `pay` (amounts `0..n`).
struct Subject {
    store: Arc<dyn RunStore>,
    _guard: Option<SchemaGuard>,
}

async fn fill(store: &dyn RunStore, n: u64) {
    let rules = store.rules().expect("rules");
    let start = UNIX_EPOCH + Duration::from_secs(1_800_000_000);
    for k in 0..n {
        rules
            .put_rule(&alices_rule(
                k,
                Scope::Args,
                false,
                start + Duration::from_millis(k),
            ))
            .await
            .expect("put");
    }
}

fn sqlite(n: u64) -> Subject {
    let dir = bench_dir(&format!("sqlite-{n}"));
    let _ = std::fs::remove_dir_all(&dir);
    std::fs::create_dir_all(&dir).expect("bench dir");
    runtime().block_on(async {
        let store = SqliteStore::open(dir.join("runs.db")).await.expect("store");
        fill(&store, n).await;
        Subject {
            store: Arc::new(store),
            _guard: None,
        }
    })
}

fn postgres(url: &str, n: u64) -> Subject {
    runtime().block_on(async {
        let schema = fresh_schema(&format!("bench_rules_{n}"));
        let store = PostgresStore::connect_in_schema(url, &schema)
            .await
            .expect("store");
        fill(&store, n).await;
        Subject {
            store: Arc::new(store),
            _guard: Some(SchemaGuard {
                url: url.to_owned(),
                schema,
            }),
        }
    })
}

fn subjects() -> &'static Vec<(&'static str, Subject, Subject)> {
    static S: OnceLock<Vec<(&'static str, Subject, Subject)>> = OnceLock::new();
    S.get_or_init(|| {
        let mut all = vec![("sqlite", sqlite(1), sqlite(MANY))];
        if let Some(url) = pg_url() {
            all.push(("postgres", postgres(&url, 1), postgres(&url, MANY)));
        } else {
            eprintln!("notice: bench rules measures SQLite only: TOOLNEXUS_PG_URL is not set");
        }
        all
    })
}

/// One check of a call one exact-call rule covers (the median amount of the large case, or
/// the one rule of the small).
async fn check(rules: &dyn RuleStore, amount: u64) {
    let fp = call_fingerprint("pay", &json!({"amount": amount, "to": "mallory"}));
    let call = RuleQuery::new("pay", &fp, SystemTime::now()).for_principal(Some("alice"));
    let rule = rules.decide(&call).await.expect("decide");
    assert!(rule.is_some(), "the call is covered");
}

fn bench(bencher: Bencher<'_, '_>, store: &str, many: bool) {
    let Some((_, one, lots)) = subjects().iter().find(|(name, ..)| *name == store) else {
        return;
    };
    let (subject, amount) = if many { (lots, MANY / 2) } else { (one, 0) };
    let rt = runtime();
    let rules = subject.store.rules().expect("rules");
    bencher.bench_local(|| rt.block_on(check(rules, amount)));
}

/// `decide` on SQLite, the principal holding one rule.
#[divan::bench(sample_count = 100, sample_size = 10)]
fn sqlite_decide_1_rule(bencher: Bencher<'_, '_>) {
    bench(bencher, "sqlite", false);
}

/// `decide` on SQLite, the principal holding 10,000 exact-call rules.
#[divan::bench(sample_count = 100, sample_size = 10)]
fn sqlite_decide_10000_rules(bencher: Bencher<'_, '_>) {
    bench(bencher, "sqlite", true);
}

/// `decide` on PostgreSQL, one rule.
#[divan::bench(sample_count = 100, sample_size = 10)]
fn postgres_decide_1_rule(bencher: Bencher<'_, '_>) {
    bench(bencher, "postgres", false);
}

/// `decide` on PostgreSQL, 10,000 exact-call rules.
#[divan::bench(sample_count = 100, sample_size = 10)]
fn postgres_decide_10000_rules(bencher: Bencher<'_, '_>) {
    bench(bencher, "postgres", true);
}

fn main() {
    divan::main();
    if benchmarking() {
        let rt = runtime();
        for (name, one, many) in subjects() {
            let time = |subject: &Subject, amount: u64| {
                let rules = subject.store.rules().expect("rules");
                let at = Instant::now();
                for _ in 0..BATCH {
                    rt.block_on(check(rules, amount));
                }
                at.elapsed()
            };
            let measured = interleaved(
                60,
                &mut [&mut || time(many, MANY / 2), &mut || time(one, 0)],
            );
            println!(
                "rules: {name}: decide with {MANY} rules {:.1} us, with 1 rule {:.1} us: ratio {:.2} (target: within 2x)",
                measured.medians[0] * 1e6 / f64::from(BATCH),
                measured.medians[1] * 1e6 / f64::from(BATCH),
                measured.ratios[0]
            );
        }
    }
    for n in [1, MANY] {
        let _ = std::fs::remove_dir_all(bench_dir(&format!("sqlite-{n}")));
    }
}
