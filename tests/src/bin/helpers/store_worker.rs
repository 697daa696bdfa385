//! A worker process of the multi-worker PostgreSQL test (`tests/tests/store/workers.rs`): answers
//! parked runs, resumes them and records their outcome, taking over runs whose worker died,
//! until every run of the schema is finished.
//!
//! ```text
//! store_worker <postgres url> <schema> <worker name> <lease ms>
//! ```
//!
//! Runs are resumed with `Client::resume_claim`, which checkpoints the run once the resumed
//! tool's result is in. That tool's side effect is a row in `<schema>.effects`. With
//! `STORE_WORKER_PAUSE_MS` set, the worker pauses that long after each claim and again right
//! after each side effect (before its checkpoint: the crash window), so a test that kills it
//! lands inside a run. Prints one line per event: `claimed <run>`, `taken <run>`,
//! `finished <run>`, `lost <run>`.

use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use toolnexus::store::{Claim, PendingQuery, PostgresStore, RunStore, StoreError};
use toolnexus::{Answer, Error, FnTool, ToolResult, Toolkit};
use toolnexus_tests::store_conformance::Agent;

#[tokio::main(flavor = "multi_thread", worker_threads = 2)]
pub(crate) async fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(2).collect();
    let [url, schema, name, lease] = args.as_slice() else {
        eprintln!("usage: store_worker <postgres url> <schema> <worker name> <lease ms>");
        return ExitCode::from(2);
    };
    let lease = Duration::from_millis(lease.parse().expect("lease in ms"));
    match work(url, schema, name, lease).await {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("{name}: {e}");
            ExitCode::FAILURE
        }
    }
}

async fn work(url: &str, schema: &str, name: &str, lease: Duration) -> Result<(), StoreError> {
    let store = PostgresStore::connect_in_schema(url, schema)
        .await?
        .with_lease(lease);
    let (db, conn) = tokio_postgres::connect(url, tokio_postgres::NoTls)
        .await
        .map_err(|e| StoreError::Backend(e.to_string()))?;
    tokio::spawn(conn);
    let db = Arc::new(db);
    let toolkit = toolkit(Arc::clone(&db), schema, name.to_owned());
    let agent = Agent::once();
    let offset = name.bytes().map(usize::from).sum::<usize>();
    loop {
        let page = store.list_pending(&PendingQuery::new().limit(64)).await?;
        let mut progressed = false;
        let n = page.runs.len();
        for i in 0..n {
            // workers start at different places of the page, and race where they overlap
            let run = &page.runs[(i + offset * 7) % n];
            let answer = Answer::accept(&run.request_id, name);
            match store.claim(&answer, name).await {
                Ok(claim) => {
                    println!("claimed {}", claim.run_id);
                    resume(&store, &agent, &toolkit, claim).await?;
                    progressed = true;
                }
                Err(StoreError::AlreadyAnswered { .. } | StoreError::NotFound { .. }) => {}
                Err(e) => return Err(e),
            }
        }
        if let Some(claim) = store.take_over(name).await? {
            let from = if claim.checkpoint.is_some() {
                "checkpoint"
            } else {
                "record"
            };
            println!("taken {} from {from}", claim.run_id);
            resume(&store, &agent, &toolkit, claim).await?;
            progressed = true;
        }
        if !progressed {
            let open: i64 = db
                .query_one(
                    &format!("SELECT count(*) FROM \"{schema}\".runs WHERE state <> 'finished'"),
                    &[],
                )
                .await
                .map_err(|e| StoreError::Backend(e.to_string()))?
                .get(0);
            if open == 0 {
                return Ok(());
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
    }
}

fn pause() -> Option<Duration> {
    std::env::var("STORE_WORKER_PAUSE_MS")
        .ok()
        .and_then(|ms| ms.parse().ok())
        .map(Duration::from_millis)
}

async fn resume(
    store: &PostgresStore,
    agent: &Agent,
    toolkit: &Toolkit,
    claim: Claim,
) -> Result<(), StoreError> {
    if let Some(pause) = pause() {
        tokio::time::sleep(pause).await;
    }
    match agent.client().resume_claim(store, &claim, toolkit).await {
        Ok(_) => println!("finished {}", claim.run_id),
        Err(e) => match cause(e) {
            Error::Store(StoreError::LeaseLost { .. }) => println!("lost {}", claim.run_id),
            e => return Err(StoreError::Backend(format!("resume failed: {e}"))),
        },
    }
    Ok(())
}

/// The error itself, out of the [`Error::Interrupted`] that wraps it after a tool result.
fn cause(e: Error) -> Error {
    match e {
        Error::Interrupted { error, .. } => *error,
        other => other,
    }
}

/// The `ask` tool of [`Agent`], whose answered retry has a side effect: one row in `effects`.
/// Marked idempotent, as this test is about the crash window itself (a call cut inside it is
/// run again by the worker that takes the run over); a call that is not idempotent would park a
/// `reconcile` request instead, which `tests/tests/worker/reconcile.rs` covers.
fn toolkit(db: Arc<tokio_postgres::Client>, schema: &str, name: String) -> Toolkit {
    let sql = format!("INSERT INTO \"{schema}\".effects (request_id, worker) VALUES ($1, $2)");
    let ask = FnTool::builder("ask")
        .description("Asks the user a question.")
        .idempotent()
        .handler(move |_, ctx| {
            let (db, sql, name) = (Arc::clone(&db), sql.clone(), name.clone());
            async move {
                let Some(answer) = ctx.answer() else {
                    return ToolResult::error("the worker only resumes answered runs");
                };
                let effect = db.execute(&sql, &[&answer.id, &name]).await;
                if let Some(pause) = pause() {
                    tokio::time::sleep(pause).await;
                }
                match effect {
                    Ok(_) => ToolResult::success(format!(
                        "hello {}",
                        answer.data.clone().unwrap_or_default()
                    )),
                    Err(e) => ToolResult::error(format!("side effect failed: {e}")),
                }
            }
        })
        .build()
        .expect("the ask tool builds");
    Toolkit::builder()
        .tool(ask)
        .build()
        .expect("the toolkit builds")
}
