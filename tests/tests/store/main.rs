//! The run stores, one module per subject: the run-store conformance suite against
//! `MemoryStore` (`memory`), `SqliteStore` (`sqlite`) and `PostgresStore` on a real server
//! (`postgres`), 1,000 runs resumed by 4 worker processes on one PostgreSQL schema
//! (`workers`), `Client` with a run store (`client`), and durable runs that cannot be forged,
//! replayed or lost (`durable::`, in its own folder `tests/durable/`).
//!
//! The `postgres` and `workers` tests need `TOOLNEXUS_PG_URL` (`scripts/postgres.sh`): without
//! it they print a notice and pass, except under `CI=true`, where they fail.
//! `cargo test -p toolnexus-tests --test store -- postgres:: workers::` runs only them.

mod client;
// the `durable` binary, as a module of this one (each test binary links the whole graph:
// issue 38, the test command's cold CPU); its files stay in their own folder
#[path = "../durable/mod.rs"]
mod durable;
mod memory;
mod postgres;
mod skip_summary;
mod sqlite;
mod votes_schema;
mod workers;

// last: what this binary skipped (its tests that need a missing component pass without running)
toolnexus_tests::skip_summary!();
