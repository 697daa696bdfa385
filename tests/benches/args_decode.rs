//! Decoding a user type through `#[derive(toolnexus::Args)]` against `serde_json::from_value`
//! of the same struct (which also derives `serde::Deserialize`), measured interleaved in the
//! same run (see `toolnexus_tests::ratio`).
//!
//! `cargo bench -p toolnexus-tests --features bench --bench args_decode`; the ratios printed after
//! divan's table are derive / serde (target: at most 1.0x). Two types: the compile-time benchmark's
//! three fields (`String`, `u32`, `Option<bool>`), and a nested one (a list of structs with a
//! string enum). Under `cargo test --features bench --benches` each benchmark runs once, as a smoke
//! test.

use divan::{Bencher, black_box};
use serde_json::{Value, json};
use toolnexus::__private::ArgType;
use toolnexus::Args;

/// The compile-time benchmark's user type.
#[derive(Args, serde::Deserialize, Debug, PartialEq)]
struct Query {
    /// What to look for.
    text: String,
    /// At most this many results.
    limit: u32,
    /// Whether to match exactly.
    exact: Option<bool>,
}

#[derive(Args, serde::Deserialize, Debug, PartialEq)]
struct Expense {
    amount: u32,
    note: Option<String>,
    category: Category,
}

#[derive(Args, serde::Deserialize, Debug, PartialEq)]
#[serde(rename_all = "snake_case")]
enum Category {
    Travel,
    OfficeSupplies,
}

#[derive(Args, serde::Deserialize, Debug, PartialEq)]
struct Report {
    title: String,
    expenses: Vec<Expense>,
}

fn query() -> Value {
    json!({"text": "invoices from march", "limit": 20, "exact": true})
}

fn report() -> Value {
    json!({
        "title": "March",
        "expenses": [
            {"amount": 1250, "note": "taxi", "category": "travel"},
            {"amount": 399, "note": null, "category": "office_supplies"},
            {"amount": 8000, "category": "travel"}
        ]
    })
}

fn main() {
    // both decoders give the same value, or the comparison means nothing
    assert_eq!(
        Query::__toolnexus_decode(query()).unwrap(),
        serde_json::from_value::<Query>(query()).unwrap()
    );
    assert_eq!(
        Report::__toolnexus_decode(report()).unwrap(),
        serde_json::from_value::<Report>(report()).unwrap()
    );
    divan::main();
    if toolnexus_tests::ratio::benchmarking() {
        report_ratios();
    }
}

/// Decodes per batch, and rounds, of the interleaved comparison.
const BATCH: usize = 2_000;
const ROUNDS: usize = 201;

fn timed(make: fn() -> Value, f: &mut dyn FnMut(Value)) -> std::time::Duration {
    let inputs: Vec<Value> = (0..BATCH).map(|_| make()).collect();
    let start = std::time::Instant::now();
    for v in inputs {
        f(black_box(v));
    }
    start.elapsed()
}

fn ratio<T: ArgType + serde::de::DeserializeOwned>(name: &str, make: fn() -> Value) {
    let mut derive = || {
        timed(make, &mut |v| {
            black_box(T::__toolnexus_decode(v).ok());
        })
    };
    let mut serde = || {
        timed(make, &mut |v| {
            black_box(serde_json::from_value::<T>(v).ok());
        })
    };
    let r = toolnexus_tests::ratio::interleaved(ROUNDS, &mut [&mut derive, &mut serde]);
    let ns = |s: f64| s * 1e9 / f64::from(u32::try_from(BATCH).unwrap_or(1));
    println!(
        "args_decode {name}, interleaved ({ROUNDS} rounds of {BATCH}): derive {:.0} ns, \
         serde_json::from_value {:.0} ns, ratio derive / serde {:.3}x (target: at most 1.0x)",
        ns(r.medians[0]),
        ns(r.medians[1]),
        r.ratios[0]
    );
}

fn report_ratios() {
    ratio::<Query>("query (3 fields)", query);
    ratio::<Report>("report (nested)", report);
}

#[divan::bench]
fn query_derive(b: Bencher<'_, '_>) {
    b.with_inputs(query)
        .bench_values(|v| Query::__toolnexus_decode(v).ok());
}

#[divan::bench]
fn query_serde_from_value(b: Bencher<'_, '_>) {
    b.with_inputs(query)
        .bench_values(|v| serde_json::from_value::<Query>(v).ok());
}

#[divan::bench]
fn report_derive(b: Bencher<'_, '_>) {
    b.with_inputs(report)
        .bench_values(|v| Report::__toolnexus_decode(v).ok());
}

#[divan::bench]
fn report_serde_from_value(b: Bencher<'_, '_>) {
    b.with_inputs(report)
        .bench_values(|v| serde_json::from_value::<Report>(v).ok());
}
