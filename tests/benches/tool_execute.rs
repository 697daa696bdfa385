//! `Toolkit::execute` on a 3-parameter `#[tool]` function against the floor measured in the
//! same run: `serde_json::from_value` into the equivalent `#[derive(Deserialize)]` struct plus
//! the direct call.
//!
//! `cargo bench -p toolnexus-tests --features bench --bench tool_execute`; the ratio of the
//! `toolkit_execute` and `floor_from_value_and_call` medians is the overhead of the macro and the
//! toolkit together (target: at most 1.10x; on a noisy machine count instructions instead, see
//! `count_instructions`); `tool_execute_direct` (the generated `Tool::execute` alone) splits it
//! between the two. Under `cargo test --features bench --benches` each benchmark runs once, as a
//! smoke test.

use divan::{Bencher, black_box};
use futures_util::FutureExt;
use serde_json::{Value, json};
use toolnexus::{Context, ToolResult, Toolkit, tool};

fn main() {
    // both paths give the same result, or the comparison means nothing
    let kit = Toolkit::builder().tool(BookFlight).build().unwrap();
    let via_kit = kit
        .execute("book_flight", args(), &Context::new())
        .now_or_never()
        .unwrap();
    let a: BookArgs = serde_json::from_value(args()).unwrap();
    assert_eq!(
        via_kit,
        ToolResult::success(book_flight(a.flight, a.seats, a.window))
    );
    assert_eq!(via_kit.output, "AI-503:2:true");
    if let Ok(spec) = std::env::var("TOOL_EXECUTE_COUNT") {
        count_instructions(&spec);
        return;
    }
    divan::main();
    if toolnexus_tests::ratio::benchmarking() {
        report_ratios();
    }
}

/// Calls per batch, and rounds, of the interleaved comparison.
const BATCH: usize = 2_000;
const ROUNDS: usize = 201;

/// `Toolkit::execute` and the generated `Tool::execute` against the floor, interleaved round
/// by round (see `toolnexus_tests::ratio`), printed after divan's table.
fn report_ratios() {
    use toolnexus::Tool;
    let kit = Toolkit::builder().tool(BookFlight).build().unwrap();
    let ctx = Context::new();
    let timed = |f: &mut dyn FnMut(Value)| {
        let inputs: Vec<Value> = (0..BATCH).map(|_| args()).collect();
        let start = std::time::Instant::now();
        for v in inputs {
            f(black_box(v));
        }
        start.elapsed()
    };
    let mut via_kit = || {
        timed(&mut |v| {
            black_box(kit.execute("book_flight", v, &ctx).now_or_never().unwrap());
        })
    };
    let mut direct = || {
        timed(&mut |v| {
            let Value::Object(m) = v else { unreachable!() };
            black_box(BookFlight.execute(m, &ctx).now_or_never().unwrap());
        })
    };
    let mut floor = || {
        timed(&mut |v| {
            let a: BookArgs = serde_json::from_value(v).unwrap();
            black_box(ToolResult::success(book_flight(
                a.flight, a.seats, a.window,
            )));
        })
    };
    let m = toolnexus_tests::ratio::interleaved(ROUNDS, &mut [&mut via_kit, &mut floor]);
    let d = toolnexus_tests::ratio::interleaved(ROUNDS, &mut [&mut direct, &mut floor]);
    let ns = |s: f64| s * 1e9 / f64::from(u32::try_from(BATCH).unwrap_or(1));
    println!(
        "tool_execute, interleaved ({ROUNDS} rounds of {BATCH} calls): Toolkit::execute {:.0} ns \
         vs the floor {:.0} ns: {:.3}x; the generated Tool::execute alone: {:.3}x \
         (medians of the rounds' ratios)",
        ns(m.medians[0]),
        ns(m.medians[1]),
        m.ratios[0],
        d.ratios[0]
    );
}

/// `TOOL_EXECUTE_COUNT=<floor|kit|direct>:<calls>` runs one path `calls` times inside a
/// function of its own, for an instruction count that is stable on a noisy machine:
///
/// ```text
/// TOOL_EXECUTE_COUNT=kit:10000 valgrind --tool=callgrind --toggle-collect='*measured_*' \
///     target/release/deps/tool_execute-<hash>
/// ```
///
/// The arguments are built before the measured function runs; the per-call count is the total
/// divided by `calls`.
fn count_instructions(spec: &str) {
    let (mode, n) = spec.split_once(':').expect("<mode>:<calls>");
    let n: usize = n.parse().expect("a number of calls");
    let inputs: Vec<Value> = (0..n).map(|_| args()).collect();
    let kit = Toolkit::builder().tool(BookFlight).build().unwrap();
    let ctx = Context::new();
    let outs = match mode {
        "floor" => measured_floor(inputs),
        "kit" => measured_kit(&kit, &ctx, inputs),
        "direct" => measured_direct(&ctx, inputs),
        other => panic!("unknown mode {other}"),
    };
    assert!(outs.iter().all(|r| r.output == "AI-503:2:true"));
}

#[inline(never)]
fn measured_floor(inputs: Vec<Value>) -> Vec<ToolResult> {
    let mut outs = Vec::with_capacity(inputs.len());
    for v in inputs {
        let a: BookArgs = serde_json::from_value(black_box(v)).unwrap();
        outs.push(ToolResult::success(book_flight(
            a.flight, a.seats, a.window,
        )));
    }
    outs
}

#[inline(never)]
fn measured_kit(kit: &Toolkit, ctx: &Context, inputs: Vec<Value>) -> Vec<ToolResult> {
    let mut outs = Vec::with_capacity(inputs.len());
    for v in inputs {
        outs.push(
            kit.execute("book_flight", black_box(v), ctx)
                .now_or_never()
                .unwrap(),
        );
    }
    outs
}

#[inline(never)]
fn measured_direct(ctx: &Context, inputs: Vec<Value>) -> Vec<ToolResult> {
    use toolnexus::Tool;
    let mut outs = Vec::with_capacity(inputs.len());
    for v in inputs {
        let Value::Object(m) = v else { unreachable!() };
        outs.push(
            BookFlight
                .execute(black_box(m), ctx)
                .now_or_never()
                .unwrap(),
        );
    }
    outs
}

/// Book a flight.
#[tool]
#[allow(clippy::needless_pass_by_value)] // tools take their arguments by value
fn book_flight(
    /// The flight number.
    flight: String,
    /// How many seats.
    seats: Option<u32>,
    /// Whether a window seat is wanted.
    window: bool,
) -> String {
    format!("{flight}:{}:{window}", seats.unwrap_or(1))
}

/// The same arguments as a plain struct: what the floor decodes into.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct BookArgs {
    flight: String,
    seats: Option<u32>,
    window: bool,
}

fn args() -> Value {
    json!({"flight": "AI-503", "seats": 2, "window": true})
}

#[divan::bench(sample_count = 2000, sample_size = 32)]
fn floor_from_value_and_call(bencher: Bencher<'_, '_>) {
    bencher.with_inputs(args).bench_values(|v| {
        let a: BookArgs = serde_json::from_value(black_box(v)).unwrap();
        ToolResult::success(book_flight(a.flight, a.seats, a.window))
    });
}

#[divan::bench(sample_count = 2000, sample_size = 32)]
fn tool_execute_direct(bencher: Bencher<'_, '_>) {
    use toolnexus::Tool;
    let ctx = Context::new();
    bencher
        .with_inputs(|| match args() {
            Value::Object(m) => m,
            _ => unreachable!(),
        })
        .bench_values(|m| {
            BookFlight
                .execute(black_box(m), &ctx)
                .now_or_never()
                .unwrap()
        });
}

#[divan::bench(sample_count = 2000, sample_size = 32)]
fn toolkit_execute(bencher: Bencher<'_, '_>) {
    let kit = Toolkit::builder().tool(BookFlight).build().unwrap();
    let ctx = Context::new();
    bencher.with_inputs(args).bench_values(|v| {
        kit.execute("book_flight", black_box(v), &ctx)
            .now_or_never()
            .unwrap()
    });
}
