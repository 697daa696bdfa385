//! Memory held by 10,000 runs parked in `wait_for` at once, measured with a counting global
//! allocator (live bytes = allocated - freed while they are parked), against a baseline of
//! 10,000 bare tasks parked on the same gate.
//!
//! `cargo bench -p toolnexus-tests --features bench --bench parked_memory`

use std::alloc::System;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::json;
use stats_alloc::{INSTRUMENTED_SYSTEM, Region, StatsAlloc};
use tokio::sync::Semaphore;
use toolnexus::{Client, Request, RunStatus, Toolkit};
use toolnexus_tests::{InstantModel, asker};

#[global_allocator]
static GLOBAL: &StatsAlloc<System> = &INSTRUMENTED_SYSTEM;

const RUNS: usize = 10_000;

fn live(region: &Region<'_, System>) -> isize {
    let c = region.change();
    isize::try_from(c.bytes_allocated).unwrap_or(isize::MAX)
        - isize::try_from(c.bytes_deallocated).unwrap_or(isize::MAX)
}

async fn wait_until(count: &AtomicUsize, n: usize) {
    while count.load(Ordering::SeqCst) < n {
        tokio::task::yield_now().await;
    }
}

fn main() {
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    rt.block_on(async {
        // baseline: bare tasks parked on a closed gate
        let gate = Arc::new(Semaphore::new(0));
        let parked = Arc::new(AtomicUsize::new(0));
        let region = Region::new(GLOBAL);
        let mut tasks = Vec::with_capacity(RUNS);
        for _ in 0..RUNS {
            let (gate, parked) = (Arc::clone(&gate), Arc::clone(&parked));
            tasks.push(tokio::spawn(async move {
                parked.fetch_add(1, Ordering::SeqCst);
                let permit = gate.acquire().await.expect("open");
                permit.forget();
            }));
        }
        wait_until(&parked, RUNS).await;
        let baseline = live(&region);
        gate.add_permits(RUNS);
        for t in tasks {
            t.await.expect("task");
        }

        // the loop: each run's tool suspends and `wait_for` parks on the gate
        let toolkit = Arc::new(
            Toolkit::builder()
                .tool(asker("ask", "Which city?").0)
                .build()
                .expect("toolkit"),
        );
        let gate = Arc::new(Semaphore::new(0));
        let parked = Arc::new(AtomicUsize::new(0));
        let (g, p) = (Arc::clone(&gate), Arc::clone(&parked));
        let client = Client::builder(InstantModel {
            tool: "ask".to_owned(),
            args: json!({}),
            tool_turns: 1,
        })
        .model_name("instant")
        .system("You book flights.")
        .wait_for(move |req: Request| {
            let (gate, parked) = (Arc::clone(&g), Arc::clone(&p));
            async move {
                parked.fetch_add(1, Ordering::SeqCst);
                gate.acquire().await.expect("open").forget();
                req.accept("Oslo")
            }
        })
        .build()
        .expect("client");
        let region = Region::new(GLOBAL);
        let mut runs = Vec::with_capacity(RUNS);
        for i in 0..RUNS {
            let (client, toolkit) = (client.clone(), Arc::clone(&toolkit));
            runs.push(tokio::spawn(async move {
                client.run(format!("Book flight {i}"), &toolkit).await
            }));
        }
        wait_until(&parked, RUNS).await;
        let held = live(&region);
        gate.add_permits(RUNS);
        let mut done = 0;
        for r in runs {
            if r.await.expect("task").expect("run").status == RunStatus::Done {
                done += 1;
            }
        }
        assert_eq!(done, RUNS);

        let per_run = held / isize::try_from(RUNS).expect("small");
        let per_task = baseline / isize::try_from(RUNS).expect("small");
        println!("parked runs: {RUNS}");
        println!(
            "live bytes held by {RUNS} runs parked in wait_for: {held} ({per_run} bytes per run)"
        );
        println!("baseline, {RUNS} bare parked tasks: {baseline} ({per_task} bytes per task)");
        println!(
            "the loop's own state per parked run: {} bytes ({:.1}x a bare task)",
            per_run - per_task,
            ratio(per_run, per_task)
        );
    });
}

#[allow(clippy::cast_precision_loss)] // byte counts far below 2^52
fn ratio(a: isize, b: isize) -> f64 {
    a as f64 / b as f64
}
