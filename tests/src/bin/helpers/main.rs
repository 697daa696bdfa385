//! The processes the tests start, in one binary (issue 38: linking a binary is most of its
//! cold cost, and `cargo test` links every binary of the package): `helpers <role> <args>`,
//! the role one of
//!
//! - `request_ids`: request and run ids made by one process (`tests/tests/durable/ids.rs`, in the `store` binary);
//! - `run_worker`: a worker process of the worker tests (`tests/tests/worker/`);
//! - `store_worker`: a worker process of the multi-worker PostgreSQL test
//!   (`tests/tests/store/workers.rs`);
//! - `submit_answer`: one person's answer from a process of its own
//!   (`tests/tests/worker/votes.rs`);
//! - `with_fake_provider`: runs a command against the fake provider (CI's run of the
//!   `openai_compatible` example).
//!
//! Each role's module says its arguments (those after the role).

use std::process::ExitCode;

mod request_ids;
mod run_worker;
mod store_worker;
mod submit_answer;
mod with_fake_provider;

fn main() -> ExitCode {
    match std::env::args().nth(1).as_deref() {
        Some("request_ids") => {
            request_ids::main();
            ExitCode::SUCCESS
        }
        Some("run_worker") => run_worker::main(),
        Some("store_worker") => store_worker::main(),
        Some("submit_answer") => submit_answer::main(),
        Some("with_fake_provider") => with_fake_provider::main(),
        other => {
            eprintln!(
                "helpers: unknown role {other:?}; one of request_ids, run_worker, store_worker, submit_answer, with_fake_provider"
            );
            ExitCode::from(2)
        }
    }
}
