//! One person's answer from a process of its own (`tests/tests/worker/votes.rs`): accepts (or,
//! with `decline`, declines) the request `<request id>` as `<by>` in a PostgreSQL schema or a
//! SQLite file, and prints what the store said: `state <state> votes <n>` or `refused <error>`.
//!
//! ```text
//! submit_answer postgres <url> <schema> <request id> <by> [decline]
//! submit_answer sqlite <file> - <request id> <by> [decline]
//! ```

use std::process::ExitCode;
use std::sync::Arc;

use toolnexus::store::{PostgresStore, RunStore, SqliteStore};
use toolnexus::{Answer, DeclineReason};

#[tokio::main(flavor = "current_thread")]
pub(crate) async fn main() -> ExitCode {
    let args: Vec<String> = std::env::args().skip(2).collect();
    let (kind, at, schema, request_id, by, decline) = match args.as_slice() {
        [kind, at, schema, request_id, by] => (kind, at, schema, request_id, by, false),
        [kind, at, schema, request_id, by, d] if d == "decline" => {
            (kind, at, schema, request_id, by, true)
        }
        _ => {
            eprintln!(
                "usage: submit_answer <postgres|sqlite> <url|file> <schema|-> <request id> <by> [decline]"
            );
            return ExitCode::from(2);
        }
    };
    let store: Arc<dyn RunStore> = match kind.as_str() {
        "postgres" => Arc::new(
            PostgresStore::connect_in_schema(at, schema)
                .await
                .expect("the store connects"),
        ),
        "sqlite" => Arc::new(SqliteStore::open(at).await.expect("the store opens")),
        other => {
            eprintln!("unknown store `{other}`");
            return ExitCode::from(2);
        }
    };
    let answer = if decline {
        Answer::decline(request_id, DeclineReason::Declined)
    } else {
        Answer::ok(request_id)
    };
    match store.submit(&answer, by).await {
        Ok(info) => {
            let votes = match store.get(&info.run_id).await {
                Ok(Some(run)) => run.votes.len(),
                _ => 0,
            };
            println!("state {} votes {votes}", info.state.as_str());
        }
        Err(e) => println!("refused {e}"),
    }
    ExitCode::SUCCESS
}
