//! The [`RunStore`] trait.

use std::fmt;
use std::time::{Duration, SystemTime};

use serde_json::Value;

use super::{
    Claim, ConversationStore, DamagedRun, HistoryQuery, Page, PendingQuery, RunInfo, RunState,
    StoreError, StoreResult, StoredRun, WorkerSeen,
};
use crate::request::Answer;
use crate::run::{PendingRun, RunResult};
use crate::util::BoxFuture;

/// A store of parked and in-flight runs. Object-safe: hold one as `Arc<dyn RunStore>`.
///
/// Every method is atomic on its own; see the [module docs](super) for the guarantees.
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
    ///
    /// A request the run waited on before its current one (answered, or expired, and the run
    /// went on) finds the run too, so a host can tell "answered already" from "never made".
    fn get_by_request<'a>(
        &'a self,
        request_id: &'a str,
    ) -> BoxFuture<'a, StoreResult<Option<StoredRun>>>;

    /// The request `request_id` names, while a run waits on it (parked), or waited on it last
    /// (answered, claimed, expired, finished: the record keeps its last request): the one
    /// call a host needs to show a request to a person. `None` when no run made it, or a run
    /// made it before its current request (the record keeps only its last).
    ///
    /// ```
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// use std::sync::Arc;
    /// use toolnexus::store::{MemoryStore, RunStore};
    /// use toolnexus::{Client, FnTool, Reply, Request, ScriptedModel, ToolResult, Toolkit};
    ///
    /// let ask = FnTool::builder("ask").description("Asks.")
    ///     .handler(|_, _| async { ToolResult::suspended(Request::input("Your name?")) })
    ///     .build().unwrap();
    /// let toolkit = Toolkit::builder().tool(ask).build().unwrap();
    /// let store = Arc::new(MemoryStore::new());
    /// let script = [Reply::tool_call("ask", serde_json::json!({}))];
    /// let client = Client::builder(ScriptedModel::new(script))
    ///     .model_name("m").store(store.clone()).build().unwrap();
    /// let id = client.run("greet me", &toolkit).await.unwrap().pending.unwrap().id;
    ///
    /// let request = store.request(&id).await.unwrap().expect("parked");
    /// assert_eq!(request.prompt, "Your name?");
    /// assert!(store.request("no-such-request").await.unwrap().is_none());
    /// # });
    /// ```
    ///
    /// # Errors
    ///
    /// [`StoreError::Corrupt`] when the run's row cannot be read.
    fn request<'a>(
        &'a self,
        request_id: &'a str,
    ) -> BoxFuture<'a, StoreResult<Option<crate::request::Request>>> {
        Box::pin(async move {
            Ok(self
                .get_by_request(request_id)
                .await?
                .map(|run| run.record.pending().clone())
                .filter(|request| request.id == request_id))
        })
    }

    /// Claims the run whose request the answer echoes (`answer.id`), for `owner`, with a lease.
    ///
    /// # Errors
    ///
    /// [`StoreError::NotFound`] when no run made that request; [`StoreError::AlreadyAnswered`]
    /// when it was answered already (whichever request of the run it was); [`StoreError::Expired`] when the request expired (the run's
    /// answer becomes `declined/expired`); [`StoreError::Corrupt`] when the record cannot be
    /// read (the run stays parked).
    fn claim<'a>(&'a self, answer: &'a Answer, owner: &'a str)
    -> BoxFuture<'a, StoreResult<Claim>>;

    /// [`claim`](Self::claim), the answer given by `answered_by` (a person, as
    /// [`submit`](Self::submit) records one): for a request that needs several approvals
    /// ([`Request::with_approvals`](crate::Request::with_approvals)) the acceptance is
    /// `answered_by`'s vote, and for one that refuses its requester
    /// ([`Request::with_not_by_requester`](crate::Request::with_not_by_requester))
    /// `answered_by` is checked against the run's principal. `claim` alone takes `owner`
    /// for both. The default (a store of another crate) is `claim`.
    ///
    /// # Errors
    ///
    /// As [`claim`](Self::claim); and [`StoreError::Voted`] when the vote is kept and the
    /// run waits for more approvals (no claim yet); [`StoreError::NotAllowed`] when
    /// `answered_by` is the run's principal and the request refuses it, or when the request
    /// names a group ([`Request::with_approvers`](crate::Request::with_approvers)): this door
    /// knows no one's groups, so such a request is answered through
    /// [`submit_as`](Self::submit_as) (nothing recorded).
    fn claim_answered_by<'a>(
        &'a self,
        answer: &'a Answer,
        owner: &'a str,
        answered_by: &'a str,
    ) -> BoxFuture<'a, StoreResult<Claim>> {
        let _ = answered_by;
        self.claim(answer, owner)
    }

    /// Records the answer to the request it echoes (`answer.id`), given by `answered_by` (a
    /// user, a session, a service: whatever the host's own authentication says), without
    /// resuming the run: the run becomes [`Answered`](RunState::Answered), keeps the answer
    /// and who gave it in its [history](RunInfo::history), and a worker
    /// ([`claim_next`](RunStore::claim_next), a `Worker`) resumes
    /// it. Needs no model and no toolkit: a web tier calls it and returns at once.
    ///
    /// The checks are [`claim`](RunStore::claim)'s: the answer must echo a parked request's
    /// id, arrive before its `expiresAt`, and be the first: of any number of concurrent
    /// submitters (or claimants) exactly one is recorded.
    ///
    /// # Errors
    ///
    /// [`StoreError::NotFound`] when no run made that request; [`StoreError::AlreadyAnswered`]
    /// when it was answered already (whichever request of the run it was); [`StoreError::Expired`] when the request expired (the
    /// run's answer becomes `declined/expired`); [`StoreError::Corrupt`] when the record cannot
    /// be read (the run stays parked).
    ///
    /// An answer that asks to [remember](crate::remember) its decision makes a rule covering
    /// the runs of the run's principal: `submit` records it only when `answered_by` *is* that
    /// principal ([`submit_granting`](RunStore::submit_granting) for an answerer the host lets
    /// grant for them), and writes whose runs it covers into the recorded remember
    /// (`data.remember.for`).
    ///
    /// # Errors
    ///
    /// As above, and [`StoreError::NotAllowed`] (nothing recorded) for a remember
    /// `answered_by` may not make: a rule for another principal's runs, or `within: principal`
    /// on a run for nobody; [`StoreError::Invalid`] for one that does not read, and (nothing
    /// recorded) for answer data over
    /// [`MAX_ANSWER_DATA_BYTES`](crate::limits::MAX_ANSWER_DATA_BYTES) or nested deeper than
    /// [`MAX_DEPTH`](crate::limits::MAX_DEPTH), or an `answered_by` longer than
    /// [`MAX_NAME_BYTES`](crate::limits::MAX_NAME_BYTES).
    fn submit<'a>(
        &'a self,
        answer: &'a Answer,
        answered_by: &'a str,
    ) -> BoxFuture<'a, StoreResult<RunInfo>>;

    /// As [`submit`](RunStore::submit), by an answerer the host has checked may make
    /// [remembered decisions](crate::remember) for the run's principal (an operator, a
    /// delegate): the rule the answer asks for covers the principal's runs and names
    /// `answered_by` as who made it. Check the grant before calling this; an answer without a
    /// remember choice is recorded as by `submit`.
    ///
    /// The provided method is `submit` (for a store that keeps no rules); the stores of this
    /// crate record the grant, and a store that wraps another forwards it.
    ///
    /// # Errors
    ///
    /// As [`submit`](RunStore::submit), but for another principal's rule.
    fn submit_granting<'a>(
        &'a self,
        answer: &'a Answer,
        answered_by: &'a str,
    ) -> BoxFuture<'a, StoreResult<RunInfo>> {
        self.submit(answer, answered_by)
    }

    /// As [`submit`](RunStore::submit), by `answerer`, whose groups are checked against the
    /// group that may answer the request now ([`RunInfo::approvers`]: the request's
    /// `data.approvers`, or the group an escalation moved it to): an answer from outside it is
    /// refused and nothing is recorded. A request that names no group takes anyone's answer.
    ///
    /// A plain [`submit`](RunStore::submit) cannot say who is in which group, so it refuses
    /// every answer to a request that names one ([`StoreError::NotAllowed`], naming the group);
    /// a host that checks groups its own way says so with [`Answerer::checked`](super::Answerer::checked).
    /// [`claim`](RunStore::claim) (the host resuming in-process) checks no group. The group is
    /// judged as the answer is checked: an answer checked before an escalation moved the
    /// request is recorded if it arrives before the new deadline.
    ///
    /// The provided method checks the group of the run [`get_by_request`](RunStore::get_by_request)
    /// reads and then submits with the answerer checked; the stores of this crate check it
    /// themselves, and a store that wraps another forwards it.
    ///
    /// # Errors
    ///
    /// As [`submit`](RunStore::submit), and [`StoreError::NotAllowed`] (nothing recorded) when
    /// the answerer is not in the request's group.
    fn submit_as<'a>(
        &'a self,
        answer: &'a Answer,
        answerer: &'a super::Answerer,
    ) -> BoxFuture<'a, StoreResult<RunInfo>> {
        Box::pin(async move {
            if let Some(run) = self.get_by_request(&answer.id).await?
                && run.info.request_id == answer.id
            {
                answerer.check(&answer.id, run.info.approvers.as_deref())?;
            }
            let checked = answerer.clone().checked();
            if checked.is_granting() {
                self.submit_granting(answer, checked.who()).await
            } else {
                self.submit(answer, checked.who()).await
            }
        })
    }

    /// Claims the next run that needs a worker, for `owner`: first one to
    /// [take over](RunStore::take_over) (expired, or claimed with a lapsed lease), else one
    /// whose answer was [submitted](RunStore::submit), oldest first. `None` when there is
    /// none. Concurrent callers never get the same run.
    ///
    /// # Errors
    ///
    /// [`StoreError::Backend`] when the database fails. A run whose row cannot be read is
    /// skipped (logged), so it never blocks the others.
    fn claim_next<'a>(&'a self, owner: &'a str) -> BoxFuture<'a, StoreResult<Option<Claim>>>;

    /// Hands a claimed run back unfinished (a worker shutting down): the run becomes
    /// [`Answered`](RunState::Answered) again with its answer and last checkpoint, so another
    /// worker's [`claim_next`](RunStore::claim_next) goes on at once instead of after the lease.
    ///
    /// # Errors
    ///
    /// [`StoreError::LeaseLost`] when the claim is no longer the run's.
    fn release<'a>(&'a self, claim: &'a Claim) -> BoxFuture<'a, StoreResult<()>>;

    /// Records that a resume of the claimed run failed with `error` (what
    /// [`Client::resume_claim`](crate::Client::resume_claim) returned: the model, a tool's
    /// host, the store), as a [`Failed`](super::RunEventKind::Failed) event of its history
    /// (by the claim's owner). With `retry_at`, the run stays claimed until then and is
    /// [taken over](RunStore::take_over) from its last checkpoint by the first worker with room
    /// after it; without, it is given up: [`Failed`](RunState::Failed), never resumed again.
    ///
    /// The default, for a store that cannot record it, refuses ([`StoreError::Invalid`]); a
    /// worker then leaves the claim to run out, so the run is retried after the lease.
    ///
    /// # Errors
    ///
    /// [`StoreError::LeaseLost`] when the claim is no longer the run's.
    fn fail<'a>(
        &'a self,
        claim: &'a Claim,
        error: &'a str,
        retry_at: Option<SystemTime>,
    ) -> BoxFuture<'a, StoreResult<()>> {
        let _ = (claim, error, retry_at);
        Box::pin(async {
            Err(StoreError::Invalid(
                "this run store cannot record failed resumes".to_owned(),
            ))
        })
    }

    /// The nearest moment a run will need a worker without anyone answering: the earliest
    /// `expiresAt` of a parked request, or the earliest lease end of a claimed run. `None`
    /// when no run has one. A worker sleeps until then (or until woken).
    ///
    /// # Errors
    ///
    /// [`StoreError::Backend`] when the database fails.
    fn next_due(&self) -> BoxFuture<'_, StoreResult<Option<SystemTime>>>;

    /// How many runs wait for a worker now: answered, expired, or claimed with a lapsed lease
    /// (a worker's queue depth).
    ///
    /// # Errors
    ///
    /// [`StoreError::Backend`] when the database fails.
    fn waiting(&self) -> BoxFuture<'_, StoreResult<u64>>;

    /// Waits until a run may need a worker (an answer was submitted, a run parked or was
    /// released) or `timeout` passes. A wake-up is a hint, never a promise: a worker then
    /// calls [`claim_next`](RunStore::claim_next).
    ///
    /// Stores that can be told wait for it (MemoryStore and SqliteStore in this process,
    /// PostgresStore by LISTEN/NOTIFY from any process); the default sleeps `timeout`.
    fn wait_for_work(&self, timeout: Duration) -> BoxFuture<'_, ()> {
        Box::pin(tokio::time::sleep(timeout))
    }

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

    /// The runs people answered: every run with at least one request answered (or expired
    /// unanswered), whatever it did since, newest request first (by the `created_at` of its
    /// current or last request, then run id), one page at a time. Each run's
    /// [history](RunInfo::history) says who answered each request and when, and how the run
    /// ended ([`RunInfo::answered_by`], [`RunInfo::answered_at`], [`RunInfo::outcome`]). What an
    /// answer page's history view shows.
    ///
    /// A row whose indexed columns cannot be read is reported in [`Page::damaged`]
    /// (SQLite: one whose `created_at` is not an integer is left out, as it has no place in
    /// the order; [`list_damaged`](RunStore::list_damaged) lists it).
    ///
    /// The SQL stores walk an index of the answered runs (schema version 3), so a page reads
    /// only its rows; the memory store scans its runs. The index holds every answered run
    /// until it is [deleted](RunStore::delete).
    ///
    /// The default, for a store that cannot list its history, refuses
    /// ([`StoreError::Invalid`]).
    ///
    /// # Errors
    ///
    /// [`StoreError::Invalid`] for a cursor no history page returned.
    fn list_history<'a>(&'a self, query: &'a HistoryQuery) -> BoxFuture<'a, StoreResult<Page>> {
        let _ = query;
        Box::pin(async {
            Err(StoreError::Invalid(
                "this run store cannot list the runs people answered".to_owned(),
            ))
        })
    }

    /// The runs an operator should look at, by run id, at most `limit`: every run a worker
    /// marked [`Damaged`](RunState::Damaged) (with the error it met, from its history), and
    /// every row whose indexed columns cannot be read (an unknown state; in SQLite, whose
    /// columns hold any value, a timestamp that is not an integer), with why. A run whose
    /// record, answer or checkpoint alone is damaged is listed once a worker met it (a
    /// [`get`](RunStore::get) only reports it, as [`StoreError::Corrupt`]). May read every
    /// row of the store: an operator's tool, not a hot path.
    ///
    /// # Errors
    ///
    /// [`StoreError::Backend`] when the store cannot be reached.
    fn list_damaged(&self, limit: usize) -> BoxFuture<'_, StoreResult<Vec<DamagedRun>>>;

    /// Marks every parked run whose request is past `expiresAt` as expired (its answer becomes
    /// `declined/expired`, for [`take_over`](RunStore::take_over)); returns their ids.
    fn expire(&self) -> BoxFuture<'_, StoreResult<Vec<String>>>;

    /// Deletes the run; `false` when there was none.
    fn delete<'a>(&'a self, run_id: &'a str) -> BoxFuture<'a, StoreResult<bool>>;

    /// Records that the worker `worker` is alive at `at` (a [`Worker`](crate::worker::Worker)
    /// does, when it starts and every [`HEARTBEAT_EVERY`](super::HEARTBEAT_EVERY)). A store
    /// keeps the latest heartbeat of each worker name (an earlier `at` than the one kept
    /// changes nothing).
    ///
    /// The default, for a store that does not record workers, records nothing.
    ///
    /// # Errors
    ///
    /// [`StoreError::Backend`] when the database fails.
    fn heartbeat<'a>(&'a self, worker: &'a str, at: SystemTime) -> BoxFuture<'a, StoreResult<()>> {
        let _ = (worker, at);
        Box::pin(async { Ok(()) })
    }

    /// The worker whose heartbeat is the latest, `None` when no worker was ever seen. An
    /// answer page says "answered; no worker has taken it up" when it is `None` or
    /// [not running](WorkerSeen::is_running_at).
    ///
    /// The default, for a store that does not record workers, refuses
    /// ([`StoreError::Invalid`]): nobody can tell.
    ///
    /// # Errors
    ///
    /// [`StoreError::Backend`] when the database fails.
    fn last_worker_seen(&self) -> BoxFuture<'_, StoreResult<Option<WorkerSeen>>> {
        Box::pin(async {
            Err(StoreError::Invalid(
                "this run store does not record workers".to_owned(),
            ))
        })
    }

    /// The conversations kept beside the runs, when this store keeps them (the three stores of
    /// this crate do). [`Client::answer`](crate::Client::answer) completes a conversation's
    /// turn through it.
    fn conversations(&self) -> Option<&dyn ConversationStore> {
        None
    }

    /// The [remembered decisions](crate::remember) kept beside the runs, when this store keeps
    /// them (the three stores of this crate do). The loop checks them before a call asks for
    /// approval, and keeps the rules an answer asks to remember.
    fn rules(&self) -> Option<&dyn crate::remember::RuleStore> {
        None
    }

    /// The [notification outbox](super::outbox) kept beside the runs, when this store was
    /// built with notifier names (`with_notifiers` on each store of this crate): a park then
    /// writes one notification per notifier in its transaction. `None` without notifiers.
    fn outbox(&self) -> Option<&dyn super::Outbox> {
        None
    }

    /// The run's indexed columns and history, without reading its record: what an operator
    /// looks at for a run whose record cannot be read (a [`Damaged`](RunState::Damaged) run,
    /// whose [`get`](RunStore::get) is [`StoreError::Corrupt`]). `None` when no run has that id.
    fn info<'a>(&'a self, run_id: &'a str) -> BoxFuture<'a, StoreResult<Option<RunInfo>>> {
        Box::pin(async move { Ok(self.get(run_id).await?.map(|run| run.info)) })
    }

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
        Box::pin(poll_change(
            || self.info(run_id),
            run_id,
            version,
            timeout,
            None,
        ))
    }

    /// Waits until the run is finished (or [given up](RunState::Failed)), for at most
    /// `timeout`; `None` on timeout.
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
                if matches!(run.info.state, RunState::Finished | RunState::Failed) {
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

/// Reads the run's info (`info`) until its version passes `version`, for at most `timeout`:
/// again after each change `told` tells of (a store told of its changes in this process),
/// else every 50 ms. [`RunStore::wait_change`] of a store that cannot be woken from outside.
pub(super) async fn poll_change<'a, F>(
    info: F,
    run_id: &str,
    version: u64,
    timeout: Duration,
    told: Option<&tokio::sync::Notify>,
) -> StoreResult<Option<RunInfo>>
where
    F: Fn() -> BoxFuture<'a, StoreResult<Option<RunInfo>>>,
{
    let deadline = tokio::time::Instant::now() + timeout;
    loop {
        // listening before the read: a change between the read and the wait is not missed
        let notified = told.map(tokio::sync::Notify::notified);
        tokio::pin!(notified);
        if let Some(notified) = notified.as_mut().as_pin_mut() {
            notified.enable();
        }
        let info = info().await?.ok_or_else(|| StoreError::NotFound {
            key: run_id.to_owned(),
        })?;
        if info.version > version {
            return Ok(Some(info));
        }
        let now = tokio::time::Instant::now();
        if now >= deadline {
            return Ok(None);
        }
        match notified.as_pin_mut() {
            Some(notified) => drop(tokio::time::timeout_at(deadline, notified).await),
            None => tokio::time::sleep(Duration::from_millis(50).min(deadline - now)).await,
        }
    }
}
