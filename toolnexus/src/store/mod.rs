//! Run stores: where parked and in-flight runs live between a halt and its answer.
//!
//! A [`RunStore`] keeps each halted run's [`PendingRun`] record with its request id, kind,
//! prompt and expiry in indexed columns, hands it to exactly one worker when the answer arrives
//! ([`RunStore::claim`]), and records how the resumed run ended ([`RunStore::finish`]).
//!
//! Three implementations: [`MemoryStore`] (always available), `SqliteStore` (feature `sqlite`:
//! one file, several processes on one machine) and `PostgresStore` (feature `postgres`: many
//! machines).
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
//!   exactly one returns a [`Claim`]; the others get [`StoreError::AlreadyClaimed`].
//! - **Leases.** A claim holds the run for the store's lease time (30 s unless set); a worker
//!   renews it ([`RunStore::renew`]) while the run goes on. When a worker dies, its lease runs
//!   out and [`RunStore::take_over`] hands the run, its answer and its last
//!   [`checkpoint`](RunStore::checkpoint), to another worker. A worker whose lease was taken
//!   over gets [`StoreError::LeaseLost`] from `checkpoint`, `renew` and `finish`, so a run is
//!   finished exactly once.
//! - **The crash window.** A tool that ran after the last checkpoint, in a worker that died
//!   before the next one (or before `finish`), runs again in the worker that takes over: that
//!   window, between a tool's side effect and the next checkpoint, is the only place a side
//!   effect can happen twice. A tool with side effects dedupes it with a key that is stable per
//!   run and call.
//! - **Expiry.** An answer that arrives after the request's `expiresAt` is refused
//!   ([`StoreError::Expired`]); the run's answer becomes `declined/expired`, and a worker that
//!   takes it over resumes it with that answer, so the model learns the request expired.
//! - **Bad rows stay local.** A row whose record cannot be read gives
//!   [`StoreError::Corrupt`] naming the run; every other run works as before.
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
//! assert!(matches!(again, toolnexus::store::StoreError::AlreadyClaimed { .. }));
//! # });
//! ```

use std::fmt;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::Value;

use crate::client::{PendingRun, RunResult, RunStatus};
use crate::request::{Answer, DeclineReason};
use crate::tool::BoxFuture;

mod memory;
#[cfg(feature = "postgres")]
mod postgres;
#[cfg(feature = "sqlite")]
mod sqlite;

pub use memory::MemoryStore;
#[cfg(feature = "postgres")]
#[cfg_attr(docsrs, doc(cfg(feature = "postgres")))]
pub use postgres::PostgresStore;
#[cfg(feature = "sqlite")]
#[cfg_attr(docsrs, doc(cfg(feature = "sqlite")))]
pub use sqlite::SqliteStore;

/// How long a claim holds a run unless renewed, when the store is not told otherwise.
pub const DEFAULT_LEASE: Duration = Duration::from_secs(30);

/// The version of the stores' database schema this release writes (kept in a
/// `schema_version` table; a store migrates an older database on connect).
pub const SCHEMA_VERSION: i64 = 1;

/// What went wrong in a [`RunStore`]. Messages are lowercase and name the run.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StoreError {
    /// No run has that id, or no parked run waits on that request id.
    #[error("no run found for `{key}`")]
    NotFound {
        /// The run id or request id looked up.
        key: String,
    },
    /// The run's request was already answered: another claimant won, or the run finished.
    #[error("run `{run_id}` is already {state}: its request was answered")]
    AlreadyClaimed {
        /// The run.
        run_id: String,
        /// Its state (`claimed` or `finished`).
        state: RunState,
    },
    /// The request expired before the answer arrived; the run's answer is `declined/expired`.
    #[error("the request of run `{run_id}` expired before the answer arrived")]
    Expired {
        /// The run.
        run_id: String,
    },
    /// The claim is no longer this worker's: its lease ran out and another worker took the run
    /// over, or the run was finished or deleted. Stop working on the run.
    #[error("the claim on run `{run_id}` was lost: another worker took it over or it ended")]
    LeaseLost {
        /// The run.
        run_id: String,
    },
    /// A run with that id, or a parked run waiting on that request id, is already stored.
    #[error("{0}")]
    Conflict(String),
    /// A stored row that cannot be read (an edited or damaged record). Other runs are
    /// unaffected.
    #[error("run `{run_id}` has an unreadable record: {message}")]
    Corrupt {
        /// The run.
        run_id: String,
        /// What could not be read.
        message: String,
    },
    /// A record or result the store cannot keep (for example a pending result without its
    /// resume state).
    #[error("{0}")]
    Invalid(String),
    /// The store's database failed (connection, I/O, SQL).
    #[error("run store database error: {0}")]
    Backend(String),
}

/// `Result<T, StoreError>`.
pub type StoreResult<T> = std::result::Result<T, StoreError>;

/// Where a stored run is in its life.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum RunState {
    /// Halted, waiting for the answer to its request.
    Parked,
    /// Answered and held by a worker's lease while it resumes.
    Claimed,
    /// Its request expired unanswered; waiting for a worker to resume it with
    /// `declined/expired`.
    Expired,
    /// Ended (done or incomplete); its [`RunResult`] is kept.
    Finished,
}

impl RunState {
    /// The state's name, as stored: `parked`, `claimed`, `expired`, `finished`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Parked => "parked",
            Self::Claimed => "claimed",
            Self::Expired => "expired",
            Self::Finished => "finished",
        }
    }

    pub(crate) fn parse(s: &str) -> Option<Self> {
        Some(match s {
            "parked" => Self::Parked,
            "claimed" => Self::Claimed,
            "expired" => Self::Expired,
            "finished" => Self::Finished,
            _ => return None,
        })
    }
}

impl fmt::Display for RunState {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A worker's hold on a claimed run.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Lease {
    /// The worker that holds it (the `owner` given to `claim` or `take_over`).
    pub owner: String,
    /// When it runs out unless renewed.
    pub until: SystemTime,
}

/// The indexed columns of a stored run: what listing and lookups read without decoding the
/// record.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct RunInfo {
    /// The run's id (stable across halts of the same run).
    pub run_id: String,
    /// The id of the request the run waits (or last waited) on.
    pub request_id: String,
    /// That request's kind.
    pub kind: String,
    /// That request's prompt.
    pub prompt: String,
    /// When the run was parked on that request.
    pub created_at: SystemTime,
    /// When that request stops accepting answers.
    pub expires_at: Option<SystemTime>,
    /// Where the run is.
    pub state: RunState,
    /// The worker's lease, while claimed.
    pub lease: Option<Lease>,
    /// Bumped by every change of the row.
    pub version: u64,
}

/// A stored run, decoded.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct StoredRun {
    /// The indexed columns.
    pub info: RunInfo,
    /// The run's last parked record.
    pub record: PendingRun,
    /// The answer it was claimed with (or `declined/expired` once expired).
    pub answer: Option<Answer>,
    /// The last checkpoint a worker saved while resuming it.
    pub checkpoint: Option<Value>,
    /// How it ended, once finished.
    pub result: Option<RunResult>,
}

/// A worker's claim on a run: the record and answer to resume it with, and the lease.
///
/// Hand it back to [`RunStore::checkpoint`], [`RunStore::renew`] and [`RunStore::finish`];
/// each checks that the lease is still this claim's.
#[derive(Clone, Debug)]
#[non_exhaustive]
pub struct Claim {
    /// The run.
    pub run_id: String,
    /// The parked record to resume.
    pub record: PendingRun,
    /// The answer to resume it with.
    pub answer: Answer,
    /// The last checkpoint of an earlier worker, when this claim took the run over.
    pub checkpoint: Option<Value>,
    /// The lease this claim holds.
    pub lease: Lease,
    /// Whether the run was taken over from a worker whose lease ran out (or, for an expired
    /// request, from nobody).
    pub taken_over: bool,
    /// The fencing token: how many claims the run has had, this one included.
    pub token: u64,
}

/// Which pending runs [`RunStore::list_pending`] returns, oldest first.
///
/// ```
/// use std::time::{Duration, SystemTime};
/// use toolnexus::store::PendingQuery;
///
/// let q = PendingQuery::new()
///     .kind("approval")
///     .older_than(Duration::from_secs(3600))
///     .expiring_before(SystemTime::now() + Duration::from_secs(600))
///     .limit(50);
/// assert_eq!(q.page_size(), 50);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PendingQuery {
    kind: Option<String>,
    created_before: Option<SystemTime>,
    expiring_before: Option<SystemTime>,
    limit: Option<usize>,
    cursor: Option<String>,
}

/// The default page size of [`PendingQuery`].
pub const DEFAULT_PAGE_SIZE: usize = 100;

impl PendingQuery {
    /// Every pending run, [`DEFAULT_PAGE_SIZE`] at a time.
    pub fn new() -> Self {
        Self::default()
    }

    /// Only runs waiting on requests of this kind.
    #[must_use]
    pub fn kind(mut self, kind: impl Into<String>) -> Self {
        self.kind = Some(kind.into());
        self
    }

    /// Only runs parked before this instant.
    #[must_use]
    pub fn created_before(mut self, at: SystemTime) -> Self {
        self.created_before = Some(at);
        self
    }

    /// Only runs parked at least `age` ago.
    #[must_use]
    pub fn older_than(self, age: Duration) -> Self {
        let at = SystemTime::now().checked_sub(age).unwrap_or(UNIX_EPOCH);
        self.created_before(at)
    }

    /// Only runs whose request expires before this instant (runs without `expiresAt` are left
    /// out).
    #[must_use]
    pub fn expiring_before(mut self, at: SystemTime) -> Self {
        self.expiring_before = Some(at);
        self
    }

    /// At most this many runs per page (at least one).
    #[must_use]
    pub fn limit(mut self, n: usize) -> Self {
        self.limit = Some(n.max(1));
        self
    }

    /// Continue after the page that returned this cursor ([`Page::next`]).
    #[must_use]
    pub fn after(mut self, cursor: impl Into<String>) -> Self {
        self.cursor = Some(cursor.into());
        self
    }

    /// The page size.
    pub fn page_size(&self) -> usize {
        self.limit.unwrap_or(DEFAULT_PAGE_SIZE)
    }

    pub(crate) fn kind_filter(&self) -> Option<&str> {
        self.kind.as_deref()
    }

    pub(crate) fn created_before_ms(&self) -> Option<i64> {
        self.created_before.map(millis)
    }

    pub(crate) fn expiring_before_ms(&self) -> Option<i64> {
        self.expiring_before.map(millis)
    }

    /// The decoded cursor: the last run's `(created_at ms, run id)`.
    pub(crate) fn cursor(&self) -> StoreResult<Option<(i64, String)>> {
        let Some(raw) = &self.cursor else {
            return Ok(None);
        };
        let bad = || StoreError::Invalid(format!("`{raw}` is not a cursor a page returned"));
        let (ms, id) = raw.split_once(':').ok_or_else(bad)?;
        let ms = ms.parse::<i64>().map_err(|_| bad())?;
        Ok(Some((ms, id.to_owned())))
    }
}

/// One page of [`RunStore::list_pending`].
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Page {
    /// The runs, oldest first (by `created_at`, then run id).
    pub runs: Vec<RunInfo>,
    /// The cursor of the next page ([`PendingQuery::after`]); `None` on the last page.
    pub next: Option<String>,
}

impl Page {
    pub(crate) fn new(mut runs: Vec<RunInfo>, size: usize) -> Self {
        let next = if runs.len() > size {
            runs.truncate(size);
            runs.last()
                .map(|r| format!("{}:{}", millis(r.created_at), r.run_id))
        } else {
            None
        };
        Self { runs, next }
    }
}

/// A store of parked and in-flight runs. Object-safe: hold one as `Arc<dyn RunStore>`.
///
/// Every method is atomic on its own; see the [module docs](self) for the guarantees.
pub trait RunStore: Send + Sync + fmt::Debug {
    /// Parks a halted run. The run id comes from the record; the run waits on
    /// `record.pending()`.
    ///
    /// # Errors
    ///
    /// [`StoreError::Conflict`] when the run or a parked run with the same request id is
    /// already stored.
    fn park(&self, record: PendingRun) -> BoxFuture<'_, StoreResult<RunInfo>>;

    /// The run with this id.
    ///
    /// # Errors
    ///
    /// [`StoreError::Corrupt`] when its row cannot be read.
    fn get<'a>(&'a self, run_id: &'a str) -> BoxFuture<'a, StoreResult<Option<StoredRun>>>;

    /// The run that waits (or last waited) on this request id.
    ///
    /// # Errors
    ///
    /// [`StoreError::Corrupt`] when its row cannot be read.
    fn get_by_request<'a>(
        &'a self,
        request_id: &'a str,
    ) -> BoxFuture<'a, StoreResult<Option<StoredRun>>>;

    /// Claims the run whose request the answer echoes (`answer.id`), for `owner`, with a lease.
    ///
    /// # Errors
    ///
    /// [`StoreError::NotFound`] when no run waits on that request; [`StoreError::AlreadyClaimed`]
    /// when it was answered already; [`StoreError::Expired`] when the request expired (the run's
    /// answer becomes `declined/expired`); [`StoreError::Corrupt`] when the record cannot be
    /// read (the run stays parked).
    fn claim<'a>(&'a self, answer: &'a Answer, owner: &'a str)
    -> BoxFuture<'a, StoreResult<Claim>>;

    /// Claims one run that needs a worker: a claimed run whose lease ran out (resumed from its
    /// last checkpoint with its answer), or an expired one (resumed with `declined/expired`).
    /// `None` when there is none.
    ///
    /// # Errors
    ///
    /// [`StoreError::Corrupt`] when the chosen run's record cannot be read.
    fn take_over<'a>(&'a self, owner: &'a str) -> BoxFuture<'a, StoreResult<Option<Claim>>>;

    /// Extends the claim's lease by the store's lease time from now.
    ///
    /// # Errors
    ///
    /// [`StoreError::LeaseLost`] when the claim is no longer the run's.
    fn renew<'a>(&'a self, claim: &'a mut Claim) -> BoxFuture<'a, StoreResult<()>>;

    /// Saves the resumed run's progress; a worker that takes the run over gets it in
    /// [`Claim::checkpoint`]. Also renews the lease.
    ///
    /// # Errors
    ///
    /// [`StoreError::LeaseLost`] when the claim is no longer the run's.
    fn checkpoint<'a>(&'a self, claim: &'a Claim, state: Value) -> BoxFuture<'a, StoreResult<()>>;

    /// Records how the resumed run ended: a pending result parks the run again on its new
    /// request (same run id); any other is kept as the run's result.
    ///
    /// # Errors
    ///
    /// [`StoreError::LeaseLost`] when the claim is no longer the run's; [`StoreError::Invalid`]
    /// for a pending result without its resume state; [`StoreError::Conflict`] when another
    /// parked run already waits on the new request id.
    fn finish<'a>(
        &'a self,
        claim: &'a Claim,
        result: RunResult,
    ) -> BoxFuture<'a, StoreResult<RunInfo>>;

    /// Parked runs matching the query, oldest first, one page at a time.
    ///
    /// # Errors
    ///
    /// [`StoreError::Invalid`] for a cursor no page returned.
    fn list_pending<'a>(&'a self, query: &'a PendingQuery) -> BoxFuture<'a, StoreResult<Page>>;

    /// Marks every parked run whose request is past `expiresAt` as expired (its answer becomes
    /// `declined/expired`, for [`take_over`](RunStore::take_over)); returns their ids.
    fn expire(&self) -> BoxFuture<'_, StoreResult<Vec<String>>>;

    /// Deletes the run; `false` when there was none.
    fn delete<'a>(&'a self, run_id: &'a str) -> BoxFuture<'a, StoreResult<bool>>;

    /// Waits until the run's row changes past `version` (an answer claimed it, it finished,
    /// parked again, expired or was deleted) or `timeout` passes. Returns the run's new
    /// columns, `None` on timeout, [`StoreError::NotFound`] once it is gone.
    ///
    /// Stores that can be told of a change wait for it (MemoryStore in-process, PostgresStore
    /// by LISTEN/NOTIFY); others poll every 50 ms.
    fn wait_change<'a>(
        &'a self,
        run_id: &'a str,
        version: u64,
        timeout: Duration,
    ) -> BoxFuture<'a, StoreResult<Option<RunInfo>>> {
        Box::pin(poll_change(self, run_id, version, timeout))
    }

    /// Waits until the run is finished, for at most `timeout`; `None` on timeout.
    fn wait_finished<'a>(
        &'a self,
        run_id: &'a str,
        timeout: Duration,
    ) -> BoxFuture<'a, StoreResult<Option<StoredRun>>> {
        Box::pin(async move {
            let deadline = tokio::time::Instant::now() + timeout;
            loop {
                let run = self
                    .get(run_id)
                    .await?
                    .ok_or_else(|| StoreError::NotFound {
                        key: run_id.to_owned(),
                    })?;
                if run.info.state == RunState::Finished {
                    return Ok(Some(run));
                }
                let left = deadline.saturating_duration_since(tokio::time::Instant::now());
                if left.is_zero()
                    || self
                        .wait_change(run_id, run.info.version, left)
                        .await?
                        .is_none()
                {
                    return Ok(None);
                }
            }
        })
    }
}

async fn poll_change<S: RunStore + ?Sized>(
    store: &S,
    run_id: &str,
    version: u64,
    timeout: Duration,
) -> StoreResult<Option<RunInfo>> {
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        let info = store
            .get(run_id)
            .await?
            .ok_or_else(|| StoreError::NotFound {
                key: run_id.to_owned(),
            })?
            .info;
        if info.version > version {
            return Ok(Some(info));
        }
        let now = tokio::time::Instant::now();
        if now >= deadline {
            return Ok(None);
        }
        tokio::time::sleep(Duration::from_millis(50).min(deadline - now)).await;
    }
}

/// The run id a record is stored under.
pub(crate) fn run_id_of(record: &PendingRun) -> String {
    record.run_id().to_owned()
}

/// Reads a stored record. A store's rows are its own, written by this or an earlier release,
/// so this is where a record of an older version is read.
pub(crate) fn decode_record(json: &str) -> crate::error::Result<PendingRun> {
    #[derive(serde::Deserialize)]
    struct Version {
        version: Option<u32>,
    }
    // a row is the store's own: a version-1 record in it (written before records carried a
    // run id and a fingerprint) is trusted and migrated; anything else is read as written
    match serde_json::from_str::<Version>(json) {
        Ok(Version { version: Some(1) }) => PendingRun::migrate_v1(json),
        _ => PendingRun::from_json(json),
    }
}

/// Milliseconds since the Unix epoch (negative before it).
pub(crate) fn millis(at: SystemTime) -> i64 {
    match at.duration_since(UNIX_EPOCH) {
        Ok(d) => i64::try_from(d.as_millis()).unwrap_or(i64::MAX),
        Err(e) => -i64::try_from(e.duration().as_millis()).unwrap_or(i64::MAX),
    }
}

pub(crate) fn from_millis(ms: i64) -> SystemTime {
    if ms >= 0 {
        UNIX_EPOCH + Duration::from_millis(ms.unsigned_abs())
    } else {
        UNIX_EPOCH - Duration::from_millis(ms.unsigned_abs())
    }
}

pub(crate) fn now_ms() -> i64 {
    millis(SystemTime::now())
}

pub(crate) fn lease_ms(lease: Duration) -> i64 {
    i64::try_from(lease.as_millis()).unwrap_or(i64::MAX)
}

/// The indexed columns of a record about to be parked.
pub(crate) struct Columns {
    pub(crate) run_id: String,
    pub(crate) request_id: String,
    pub(crate) kind: String,
    pub(crate) prompt: String,
    pub(crate) expires_at: Option<i64>,
    pub(crate) record: String,
}

impl Columns {
    pub(crate) fn of(run_id: String, record: &PendingRun) -> Self {
        let pending = record.pending();
        Self {
            run_id,
            request_id: pending.id.clone(),
            kind: pending.kind.clone(),
            prompt: pending.prompt.clone(),
            // an `expiresAt` that cannot be read is expired already (the request cannot be
            // honoured)
            expires_at: pending
                .expires_at
                .as_ref()
                .map(|_| pending.expires_at_time().map_or(i64::MIN, millis)),
            record: record.to_json(),
        }
    }
}

/// The conflict a refused insert of `cols` is: the run is stored already, or its request id
/// names another run.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) fn park_conflict(cols: &Columns, run_exists: bool) -> StoreError {
    if run_exists {
        StoreError::Conflict(format!(
            "run `{}` is already stored: a parked run is parked once",
            cols.run_id
        ))
    } else {
        StoreError::Conflict(format!(
            "request `{}` is already the request of another run: request ids name one run",
            cols.request_id
        ))
    }
}

/// The result of a finish: either the run parks again or it is done.
pub(crate) enum Outcome {
    Parked(Columns),
    Finished(String),
}

impl Outcome {
    pub(crate) fn of(run_id: &str, result: RunResult) -> StoreResult<Self> {
        if result.status == RunStatus::Pending {
            let record = PendingRun::try_from(result).map_err(|e| {
                StoreError::Invalid(format!("cannot park run `{run_id}` again: {e}"))
            })?;
            Ok(Self::Parked(Columns::of(run_id.to_owned(), &record)))
        } else {
            let json = serde_json::to_string(&result).map_err(|e| {
                StoreError::Invalid(format!("cannot keep the result of run `{run_id}`: {e}"))
            })?;
            Ok(Self::Finished(json))
        }
    }
}

/// A row as a store keeps it: indexed columns and JSON blobs.
#[derive(Clone, Debug)]
pub(crate) struct RawRow {
    pub(crate) run_id: String,
    pub(crate) request_id: String,
    pub(crate) kind: String,
    pub(crate) prompt: String,
    pub(crate) created_at: i64,
    pub(crate) expires_at: Option<i64>,
    pub(crate) state: String,
    pub(crate) lease_owner: Option<String>,
    pub(crate) lease_until: Option<i64>,
    pub(crate) version: i64,
    pub(crate) claims: i64,
    pub(crate) record: String,
    pub(crate) answer: Option<String>,
    pub(crate) checkpoint: Option<String>,
    pub(crate) result: Option<String>,
}

impl RawRow {
    pub(crate) fn info(&self) -> StoreResult<RunInfo> {
        let state = RunState::parse(&self.state)
            .ok_or_else(|| self.corrupt(format!("unknown state `{}`", self.state)))?;
        let lease = match (&self.lease_owner, self.lease_until) {
            (Some(owner), Some(until)) if state == RunState::Claimed => Some(Lease {
                owner: owner.clone(),
                until: from_millis(until),
            }),
            _ => None,
        };
        Ok(RunInfo {
            run_id: self.run_id.clone(),
            request_id: self.request_id.clone(),
            kind: self.kind.clone(),
            prompt: self.prompt.clone(),
            created_at: from_millis(self.created_at),
            expires_at: self.expires_at.map(from_millis),
            state,
            lease,
            version: u64::try_from(self.version).unwrap_or(0),
        })
    }

    fn corrupt(&self, message: String) -> StoreError {
        StoreError::Corrupt {
            run_id: self.run_id.clone(),
            message,
        }
    }

    pub(crate) fn record(&self) -> StoreResult<PendingRun> {
        decode_record(&self.record).map_err(|e| self.corrupt(e.to_string()))
    }

    pub(crate) fn answer(&self) -> StoreResult<Option<Answer>> {
        self.answer
            .as_deref()
            .map(|a| serde_json::from_str(a).map_err(|e| self.corrupt(format!("answer: {e}"))))
            .transpose()
    }

    pub(crate) fn checkpoint(&self) -> StoreResult<Option<Value>> {
        self.checkpoint
            .as_deref()
            .map(|c| serde_json::from_str(c).map_err(|e| self.corrupt(format!("checkpoint: {e}"))))
            .transpose()
    }

    pub(crate) fn decode(&self) -> StoreResult<StoredRun> {
        let result = self
            .result
            .as_deref()
            .map(|r| serde_json::from_str(r).map_err(|e| self.corrupt(format!("result: {e}"))))
            .transpose()?;
        Ok(StoredRun {
            info: self.info()?,
            record: self.record()?,
            answer: self.answer()?,
            checkpoint: self.checkpoint()?,
            result,
        })
    }

    /// The claim this row becomes once claimed by `owner` until `until`.
    pub(crate) fn claim(
        &self,
        owner: &str,
        until: i64,
        answer: Answer,
        taken_over: bool,
    ) -> StoreResult<Claim> {
        Ok(Claim {
            run_id: self.run_id.clone(),
            record: self.record()?,
            answer,
            checkpoint: self.checkpoint()?,
            lease: Lease {
                owner: owner.to_owned(),
                until: from_millis(until),
            },
            taken_over,
            token: u64::try_from(self.claims + 1).unwrap_or(0),
        })
    }
}

/// The JSON of the answer an expired run is resumed with.
pub(crate) fn expired_answer(request_id: &str) -> String {
    serde_json::to_string(&Answer::decline(request_id, DeclineReason::Expired)).unwrap_or_default()
}

pub(crate) fn answer_json(answer: &Answer) -> String {
    serde_json::to_string(answer).unwrap_or_default()
}

pub(crate) fn token_i64(claim: &Claim) -> i64 {
    i64::try_from(claim.token).unwrap_or(i64::MAX)
}

/// Why a claim failed, from the run's current columns.
pub(crate) fn refusal(run_id: &str, state: RunState) -> StoreError {
    match state {
        RunState::Expired => StoreError::Expired {
            run_id: run_id.to_owned(),
        },
        other => StoreError::AlreadyClaimed {
            run_id: run_id.to_owned(),
            state: other,
        },
    }
}

/// A parameter of a SQL statement built at run time.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
#[derive(Clone, Debug)]
pub(crate) enum SqlParam {
    Text(String),
    Int(i64),
}

/// The SQL columns every store query reads, in [`RawRow`] order.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) const COLUMNS: &str = "run_id, request_id, kind, prompt, created_at, expires_at, state, \
     lease_owner, lease_until, version, claims, record, answer, checkpoint, result";

/// The `list_pending` statement for `query` (one row more than a page, to know whether another
/// follows), with `placeholder(n)` naming the n-th parameter (from 1).
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) fn pending_sql(
    query: &PendingQuery,
    placeholder: fn(usize) -> String,
) -> StoreResult<(String, Vec<SqlParam>)> {
    let mut sql = format!("SELECT {COLUMNS} FROM runs WHERE state = 'parked'");
    let mut params = Vec::new();
    let mut push = |sql: &mut String, clause: &str, values: Vec<SqlParam>| {
        sql.push_str(" AND ");
        let mut values = values.into_iter();
        for (i, piece) in clause.split('?').enumerate() {
            if i > 0 {
                if let Some(v) = values.next() {
                    params.push(v);
                }
                sql.push_str(&placeholder(params.len()));
            }
            sql.push_str(piece);
        }
    };
    if let Some(kind) = query.kind_filter() {
        push(&mut sql, "kind = ?", vec![SqlParam::Text(kind.to_owned())]);
    }
    if let Some(at) = query.created_before_ms() {
        push(&mut sql, "created_at < ?", vec![SqlParam::Int(at)]);
    }
    if let Some(at) = query.expiring_before_ms() {
        push(&mut sql, "expires_at < ?", vec![SqlParam::Int(at)]);
    }
    if let Some((ms, id)) = query.cursor()? {
        push(
            &mut sql,
            "(created_at, run_id) > (?, ?)",
            vec![SqlParam::Int(ms), SqlParam::Text(id)],
        );
    }
    let limit = i64::try_from(query.page_size().saturating_add(1)).unwrap_or(i64::MAX);
    sql.push_str(" ORDER BY created_at, run_id LIMIT ");
    sql.push_str(&limit.to_string());
    Ok((sql, params))
}

/// The claim a takeover makes of `row`; `None` (logged) when its row cannot be read, so one
/// damaged run never blocks the others.
pub(crate) fn takeover_claim(row: &RawRow, owner: &str, until: i64) -> Option<Claim> {
    let claim = row.answer().and_then(|answer| {
        let answer = answer.ok_or_else(|| StoreError::Corrupt {
            run_id: row.run_id.clone(),
            message: "a claimed or expired run has no answer".to_owned(),
        })?;
        row.claim(owner, until, answer, true)
    });
    match claim {
        Ok(claim) => Some(claim),
        Err(e) => {
            tracing::warn!(run_id = %row.run_id, error = %e, "run store: skipping a run that cannot be taken over");
            None
        }
    }
}
