//! The durable record of a run: what a run of the agent loop returns ([`RunResult`]), the
//! record of a halted run a host persists and resumes anywhere ([`PendingRun`]), its checks,
//! its seal and the fingerprint that binds an answer to its call, and the checkpoint format a
//! claimed run saves ([contract section 4](crate::contract)).
//!
//! Data at rest and its checks only: nothing here runs a tool or calls a model. The agent loop
//! ([`client`](crate::client)) makes and resumes these records; the run stores
//! ([`store`](crate::store)) keep them. Both import this module; it imports neither.
//!
//! - `result`: [`RunResult`], [`RunStatus`], [`Limit`], [`ToolCallRecord`];
//! - `pending`: [`PendingRun`] and its version ([`PENDING_RUN_VERSION`]); the values it holds
//!   nest at most [`MAX_DEPTH`](crate::limits::MAX_DEPTH) levels;
//! - `verify`: the checks a record passes on load;
//! - `seal`: [`SealKey`], [`SealKeys`], sealed records;
//! - `fingerprint`: the fingerprint of a halted call, and the idempotency key of a call;
//! - `checkpoint`: the checkpoint format and its check;
//! - `error`: [`RecordError`], folded into [`Error`](crate::Error).

mod checkpoint;
mod error;
mod fingerprint;
mod pending;
mod result;
mod seal;
mod verify;
mod written;

pub use error::{RecordError, RecordResult};
pub use pending::{PENDING_RUN_VERSION, PendingRun};
pub use result::{Limit, RunResult, RunStatus, ToolCallRecord};
pub use seal::{MIN_SEAL_KEY_LEN, SealKey, SealKeys};

pub(crate) use checkpoint::{
    InFlight, Marker, check_checkpoint, checkpoint_of_claim, tag_checkpoint, tag_in_flight,
};
pub(crate) use fingerprint::call as call_fingerprint;
pub(crate) use fingerprint::idempotency_key;
pub(crate) use fingerprint::{Ids as FingerprintIds, of as fingerprint_of};
pub(crate) use pending::{Deferred, Halted, together_requests};
