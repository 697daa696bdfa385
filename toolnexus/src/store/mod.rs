//! Run stores: where parked and in-flight runs live between a halt and its answer.
//!
//! A [`RunStore`] keeps each halted run's [`PendingRun`](crate::PendingRun) record with its request id, kind,
//! prompt and expiry in indexed columns, hands it to exactly one worker when the answer arrives
//! ([`RunStore::claim`]), and records how the resumed run ended ([`RunStore::finish`]).
//!
//! Three implementations: [`MemoryStore`] (always available), `SqliteStore` (feature `sqlite`:
//! one file, several processes on one machine) and `PostgresStore` (feature `postgres`: many
//! machines). Each also keeps [conversations](ConversationStore) by id.
//!
//! The module, one concept a file: the stored run's types (`types`), the [`RunStore`] trait
//! (`run_store`), listing ([`PendingQuery`], `query`), the history of answered runs
//! ([`HistoryQuery`], `history`), the row codec every store shares (`row`),
//! conversations (`conversation`), what the two SQL stores share (`sql/`: columns, the listing
//! statement, the schema and its migrations), and one folder per store.
//!
//! # The life of a stored run
//!
//! ```text
//! park ──> parked ──claim(answer)──> claimed ──finish(done)──> finished
//!            │  ^                       │  │
//!            │  └──finish(halted again)─┘  └─lease runs out──> take_over ─> claimed
//!            └─expire (past expiresAt)──> expired ──take_over──> claimed (answer: declined/expired)
//! ```
//!
//! # Guarantees
//!
//! - **One winner.** Of any number of concurrent [`claim`](RunStore::claim)s for one request,
//!   exactly one returns a [`Claim`]; the others get [`StoreError::AlreadyAnswered`].
//! - **One error per situation.** An answer to a request that was answered already is
//!   [`StoreError::AlreadyAnswered`] (with the run and the request), whichever request of the
//!   run it was and whoever won the race; an answer to a request no run made is
//!   [`StoreError::NotFound`]; one that came after the request's `expiresAt` is
//!   [`StoreError::Expired`].
//! - **Leases.** A claim holds the run for the store's lease time (30 s unless set); a worker
//!   renews it ([`RunStore::renew`]) while the run goes on. When a worker dies, its lease runs
//!   out and [`RunStore::take_over`] hands the run, its answer and its last
//!   [`checkpoint`](RunStore::checkpoint), to another worker. A worker whose lease was taken
//!   over gets [`StoreError::LeaseLost`] from `checkpoint`, `renew` and `finish`, so a run is
//!   finished exactly once. A takeover of a lapsed lease is an attempt at the answer like a
//!   [failed](RunStore::fail) resume ([`Claim::attempt`], [`Claim::crashes`]; its history
//!   event carries the number), so a worker can give up a run that crashes every worker
//!   that resumes it.
//! - **Checkpoints.** [`Client::resume_claim`](crate::Client::resume_claim) (and so
//!   [`Client::answer`](crate::Client::answer)) saves the run's state as the claim's checkpoint
//!   each time the tool results of a turn are all in; a claim that took a run over goes on from
//!   its checkpoint, and the tools it records do not run again.
//! - **The crash window.** An [idempotent](crate::tool::ToolAnnotations::is_idempotent) tool
//!   that ran after the last checkpoint, in a worker that died before the next one (or before
//!   `finish`), runs again in the worker that takes over; a tool that is not idempotent saved
//!   a started marker first, and the worker that takes over asks a person instead
//!   ([`reconcile`](crate::reconcile)). That window, between a tool's side effect and the next
//!   checkpoint (at most the tools of one turn), is the only place a side effect can happen
//!   twice, and only for tools that say it is safe. A tool with side effects dedupes
//!   it with [`Context::idempotency_key`](crate::Context::idempotency_key), stable per run and
//!   call.
//! - **Expiry.** An answer that arrives after the request's `expiresAt` is refused
//!   ([`StoreError::Expired`]); the run's answer becomes `declined/expired`, and a worker that
//!   takes it over resumes it with that answer, so the model learns the request expired.
//!   The deadline is judged once, here, against the time the store records the answer: an
//!   answer recorded in time counts however late a worker resumes the run, and
//!   [`expire`](RunStore::expire) only expires runs still waiting for an answer.
//! - **Bad rows stay local.** A row whose record cannot be read gives
//!   [`StoreError::Corrupt`] naming the run; every other run works as before. A worker that
//!   meets such a row when it claims or takes over a run marks it
//!   [`damaged`](RunState::Damaged) (its history says why and which worker found it), so it
//!   leaves the claimable set at once and no worker is offered it again. A row whose indexed
//!   columns cannot be read (an unknown state; in SQLite, text in a timestamp) never fails a
//!   page of [`list_pending`](RunStore::list_pending): it is reported in [`Page::damaged`]
//!   with its run id. [`RunStore::list_damaged`] lists every such run for an operator, with
//!   why.
//! - **Sealed rows.** A store given seal keys (`with_seal_keys`) seals every record,
//!   checkpoint and answer it writes and refuses, as [`StoreError::Corrupt`] for that run
//!   only, a row that does not open under its keys or holds another row's record or answer. A store without keys
//!   trusts whoever can write its rows: a record is checked against itself, which catches
//!   damage but not a consistent forgery.
//!
//! ```
//! use toolnexus::store::{MemoryStore, RunStore};
//! use toolnexus::{Client, PendingRun, Reply, Request, ScriptedModel, ToolResult, Toolkit, FnTool};
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let ask = FnTool::builder("ask").description("Asks.")
//!     .handler(|_, ctx| async move {
//!         match ctx.answer_data::<String>() {
//!             Ok(Some(name)) => ToolResult::success(format!("hello {name}")),
//!             _ => ToolResult::suspended(Request::input("Your name?")),
//!         }
//!     })
//!     .build().unwrap();
//! let toolkit = Toolkit::builder().tool(ask).build().unwrap();
//! let script = [Reply::tool_call("ask", serde_json::json!({})), Reply::text("done")];
//! let client = Client::builder(ScriptedModel::new(script)).model_name("m").build().unwrap();
//! let store = MemoryStore::new();
//!
//! // the run halts: park it
//! let halted = client.run("greet me", &toolkit).await.unwrap();
//! let parked = store.park(PendingRun::try_from(halted).unwrap()).await.unwrap();
//!
//! // later, anywhere: the answer claims the run, a worker resumes it and records the outcome
//! let answer = toolnexus::Answer::accept(&parked.request_id, "Ada");
//! let claim = store.claim(&answer, "worker-1").await.unwrap();
//! let result = client.resume(claim.record.clone(), claim.answer.clone(), &toolkit).await.unwrap();
//! let done = store.finish(&claim, result).await.unwrap();
//! assert_eq!(done.state, toolnexus::store::RunState::Finished);
//!
//! // a second answer to the same request loses
//! let again = store.claim(&answer, "worker-2").await.unwrap_err();
//! assert!(matches!(again, toolnexus::store::StoreError::AlreadyAnswered { .. }));
//! # });
//! ```

use std::time::Duration;

mod answerer;
mod ballot;
#[cfg(any(feature = "sqlite", feature = "postgres", feature = "test-support"))]
mod cell;
mod conversation;
pub(crate) mod conversation_rows;
mod engine;
mod event_display;
pub(crate) mod history;
pub(crate) mod lifecycle;
mod memory;
pub mod outbox;
#[cfg(feature = "postgres")]
mod postgres;
mod query;
mod row;
pub(crate) mod rules;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
mod sql;

mod run_store;
mod seal;
#[cfg(feature = "sqlite")]
mod sqlite;
pub(crate) mod together;
mod types;
mod votes;
mod wake;
mod workers;

pub use answerer::Answerer;
pub use conversation::{
    Conversation, ConversationInfo, ConversationPage, ConversationStore, Waiting,
};
pub use history::HistoryQuery;
pub use memory::MemoryStore;
pub use outbox::{Attempt, Notification, NotificationState, NotifyReason, Outbox};
#[cfg(feature = "postgres")]
#[cfg_attr(docsrs, doc(cfg(feature = "postgres")))]
pub use postgres::PostgresStore;
pub use query::{DEFAULT_PAGE_SIZE, Page, PendingQuery};
pub use run_store::RunStore;
#[cfg(feature = "sqlite")]
#[cfg_attr(docsrs, doc(cfg(feature = "sqlite")))]
pub use sqlite::SqliteStore;
pub use types::{
    Claim, DamagedRun, Lease, RunEvent, RunEventKind, RunInfo, RunState, StoreError, StoreResult,
    StoredRun,
};
pub use votes::Vote;
pub use workers::{HEARTBEAT_EVERY, WORKER_GONE_AFTER, WorkerSeen};

pub(crate) use crate::ledger::{from_millis, lease_ms, millis, now_ms};
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) use cell::Cell;
pub(crate) use row::{
    Columns, Outcome, RawRow, check_answer, check_submit, events_json, first_history, token_i64,
};
pub(crate) use seal::Seal;
pub(crate) use wake::Wake;

/// The row decoding the stores share, opened for fuzzing and tests (feature `test-support`):
/// a row as a SQL database hands it over ([`rows::Cell`]s in column order) and what each
/// read of it gives. Not for production use.
#[cfg(feature = "test-support")]
#[cfg_attr(docsrs, doc(cfg(feature = "test-support")))]
pub mod rows {
    pub use super::cell::Cell;
    use super::{Claim, DamagedRun, Page, RawRow, RunInfo, Seal, StoreResult, StoredRun};
    use crate::run::SealKey;

    /// What each read of one row gives.
    #[derive(Debug)]
    #[non_exhaustive]
    pub struct Decoded {
        /// Its indexed columns ([`RunStore::info`](super::RunStore::info)).
        pub info: StoreResult<RunInfo>,
        /// The whole run ([`RunStore::get`](super::RunStore::get)).
        pub run: StoreResult<StoredRun>,
        /// The claim a takeover makes of it (`None` without an answer to resume with).
        pub takeover: StoreResult<Claim>,
        /// The row on a page of [`list_pending`](super::RunStore::list_pending).
        pub page: Page,
        /// The row as [`list_damaged`](super::RunStore::list_damaged) reports it.
        pub damaged: Option<DamagedRun>,
    }

    /// The store's seal of `keys` (the first seals; none: unsealed).
    fn seal_of(keys: &[SealKey]) -> Seal {
        match keys.split_first() {
            Some((current, retired)) => Seal::new(current.clone(), retired.iter().cloned()),
            None => Seal::default(),
        }
    }

    /// The text a store with `keys` keeps `answer` as (in the `answer` column).
    pub fn answer_text(keys: &[SealKey], answer: &crate::request::Answer) -> String {
        seal_of(keys).answer(answer)
    }

    /// The text a store with `keys` keeps the checkpoint `state` of run `run_id` as.
    pub fn checkpoint_text(keys: &[SealKey], run_id: &str, state: &serde_json::Value) -> String {
        seal_of(keys).checkpoint(run_id, state)
    }

    /// Decodes one row, given as the columns of
    /// `run_id, request_id, kind, prompt, created_at, expires_at, state, lease_owner,
    /// lease_until, version, claims, history, record, answer, checkpoint, result` in this
    /// order (fewer: the columns left out are missing), with a store's seal keys (the first
    /// seals; none: an unsealed store), through the decoding the SQL stores use.
    pub fn decode(cells: Vec<Cell>, keys: &[SealKey]) -> Decoded {
        let seal = seal_of(keys);
        let row = RawRow::from_cells(cells);
        Decoded {
            info: row.info(),
            run: row.decode(&seal),
            takeover: super::lifecycle::takeover_claim(&row, &seal, "fuzz", 0, false),
            page: Page::of_rows(vec![row.clone()], 1),
            damaged: row.as_damaged(),
        }
    }
}

/// How long a claim holds a run unless renewed, when the store is not told otherwise: 30
/// seconds.
pub const DEFAULT_LEASE: Duration = Duration::from_secs(30);

/// The version of the SQL stores' database schema this release writes (kept in a
/// `schema_version` table; a store migrates an older database on connect and refuses a newer
/// one). Version 1 is the initial schema: the runs with their history, the requests each run
/// waited on before its current one (so an answer to one of them is
/// [`StoreError::AlreadyAnswered`], not [`StoreError::NotFound`]) and the conversations.
/// Version 2 adds the [remembered decisions](crate::remember) (a `rules` table); version 3 an
/// index of the answered runs, newest first, for [`RunStore::list_history`]; version 4 the
/// indexes the approval check ([`RuleStore::decide`](crate::remember::RuleStore::decide))
/// looks rules up by; version 5 the workers' heartbeats (a `workers` table, for
/// [`RunStore::last_worker_seen`]); version 6 the [notification outbox](outbox) (a
/// `notifications` table); version 7 the [votes](Vote) of a request that needs several approvals
/// (the `votes` column of `runs`); version 8 the group that may answer a run and its escalation (the
/// `approvers` and `escalate` columns of `runs`); version 9 the requests of runs parked with every
/// request of their turn (a `turn_requests` table, see
/// [`ClientBuilder::questions_together`](crate::client::ClientBuilder::questions_together)).
pub const SCHEMA_VERSION: i64 = 9;
