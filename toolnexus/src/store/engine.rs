//! One implementation of [`RunStore`] over any [`Driver`]: what a call checks, which
//! [lifecycle](super::lifecycle) transition it is, and whom it wakes, written once; a driver
//! (memory, SQLite, PostgreSQL) only reads, inserts, picks, applies a change, lists and
//! waits.

use std::borrow::Cow;
use std::fmt;
use std::time::{Duration, SystemTime};

use serde_json::Value;

use super::ballot::Voted;
use super::lifecycle::{self, Answering, Change, Insert, Key};
use super::{
    Claim, ConversationStore, DamagedRun, HistoryQuery, Outcome, Page, PendingQuery, RawRow,
    RunInfo, RunState, RunStore, Seal, StoreError, StoreResult, StoredRun, WorkerSeen,
    check_answer, check_submit, from_millis, lease_ms, millis, now_ms,
};
use crate::remember::RuleStore;
use crate::request::Answer;
use crate::run::{PendingRun, RunResult};
use crate::util::BoxFuture;

/// An answer's change as a driver applied it: the row as it became, and the claim it handed
/// out (a claim's answer).
pub(crate) type Answered = (RawRow, Option<Claim>);

/// What a backend implements to be a [`RunStore`] (and keeps conversations and rules beside
/// the runs): each method one step the backend does atomically; the decisions are the
/// [lifecycle](super::lifecycle)'s.
pub(crate) trait Driver:
    ConversationStore + RuleStore + super::together::TurnDriver + Send + Sync + fmt::Debug
{
    /// The seal every record, answer and checkpoint is kept under.
    fn seal(&self) -> &Seal;

    /// How long a claim holds a run unless renewed.
    fn lease(&self) -> Duration;

    /// Inserts a parked run, with its side rows in the same transaction.
    fn insert(&self, insert: Insert) -> BoxFuture<'_, StoreResult<RunInfo>>;

    /// Applies an answer's change ([`lifecycle::answer`]) to the run waiting on it: the row as
    /// it became (and the claim it hands out); else the refusal
    /// ([`lifecycle::refuse_answer`]), expiring the run on the way when its request is past
    /// `expiresAt`. A submit wakes the workers. `plain`: only to a run whose request is
    /// neither an approval (whose votes are counted from the row as read) nor one of a turn
    /// parked together, in one step; `None`, nothing changed or refused, when no such run is
    /// answerable (a driver may always say so): the engine then answers the long way.
    fn answer<'a>(
        &'a self,
        answer: &'a Answer,
        how: &'a Answering,
        plain: bool,
    ) -> BoxFuture<'a, StoreResult<Option<Answered>>>;

    /// Applies a vote's change ([`lifecycle::votes::vote`]) to the run waiting on its
    /// request: the row as it became, or `None` when its guard (the row's version, still
    /// answerable) no longer held.
    fn apply_vote(&self, change: Change) -> BoxFuture<'_, StoreResult<Option<RawRow>>>;

    /// Claims the next run for `owner` ([`lifecycle::take_over`]): expired or lapsed first,
    /// then (`answered_too`) answered, oldest first, marking damaged each unreadable row met.
    fn pick<'a>(
        &'a self,
        owner: &'a str,
        answered_too: bool,
    ) -> BoxFuture<'a, StoreResult<Option<Claim>>>;

    /// Applies a change of `claim`, guarded by the claim still holding its run
    /// ([`StoreError::LeaseLost`] when not); a finish returns the run's columns as they
    /// became (a finish that parks keeps the request it leaves, and refuses a request id
    /// another run waits on).
    fn apply<'a>(
        &'a self,
        claim: &'a Claim,
        change: Change,
    ) -> BoxFuture<'a, StoreResult<Option<RunInfo>>>;

    /// The row `key` names (a request: the run waiting on it, or that waited on it before).
    fn row(&self, key: Key) -> BoxFuture<'_, StoreResult<Option<RawRow>>>;

    /// The run's columns, without its record.
    fn info<'a>(&'a self, run_id: &'a str) -> BoxFuture<'a, StoreResult<Option<RunInfo>>>;

    /// [`RunStore::list_pending`].
    fn list_pending<'a>(&'a self, query: &'a PendingQuery) -> BoxFuture<'a, StoreResult<Page>>;

    /// [`RunStore::list_history`].
    fn list_history<'a>(&'a self, query: &'a HistoryQuery) -> BoxFuture<'a, StoreResult<Page>>;

    /// [`RunStore::list_damaged`].
    fn list_damaged(&self, limit: usize) -> BoxFuture<'_, StoreResult<Vec<DamagedRun>>>;

    /// [`RunStore::expire`]: each due run's change is [`lifecycle::expire`].
    fn expire(&self) -> BoxFuture<'_, StoreResult<Vec<String>>>;

    /// [`RunStore::delete`].
    fn delete<'a>(&'a self, run_id: &'a str) -> BoxFuture<'a, StoreResult<bool>>;

    /// [`RunStore::next_due`].
    fn next_due(&self) -> BoxFuture<'_, StoreResult<Option<SystemTime>>>;

    /// [`RunStore::waiting`].
    fn waiting(&self) -> BoxFuture<'_, StoreResult<u64>>;

    /// [`RunStore::heartbeat`].
    fn heartbeat<'a>(&'a self, worker: &'a str, at: SystemTime) -> BoxFuture<'a, StoreResult<()>>;

    /// [`RunStore::last_worker_seen`].
    fn last_worker_seen(&self) -> BoxFuture<'_, StoreResult<Option<WorkerSeen>>>;

    /// Tells the workers a run may need one.
    fn wake_workers(&self) -> BoxFuture<'_, StoreResult<()>>;

    /// [`RunStore::outbox`]: the notification outbox, when the store was built with notifiers.
    fn outbox(&self) -> Option<&dyn crate::store::Outbox> {
        None
    }

    /// [`RunStore::wait_for_work`].
    fn wait_for_work(&self, timeout: Duration) -> BoxFuture<'_, ()>;

    /// What tells of each change of a run in this process, if anything does (the default
    /// [`wait_change`](Driver::wait_change) waits for it rather than polling).
    fn told(&self) -> Option<&tokio::sync::Notify> {
        None
    }

    /// [`RunStore::wait_change`]; the default reads [`info`](Driver::info) after each change
    /// [`told`](Driver::told) tells of, else every 50 ms.
    fn wait_change<'a>(
        &'a self,
        run_id: &'a str,
        version: u64,
        timeout: Duration,
    ) -> BoxFuture<'a, StoreResult<Option<RunInfo>>> {
        Box::pin(super::run_store::poll_change(
            || Driver::info(self, run_id),
            run_id,
            version,
            timeout,
            self.told(),
        ))
    }
}

/// When a lease taken now by `driver` runs out, in ms.
fn until<D: Driver + ?Sized>(driver: &D, now: i64) -> i64 {
    now.saturating_add(lease_ms(driver.lease()))
}

/// The answer as `driver` records it: [`answer_to_record`](crate::remember::answer_to_record)
/// for the run waiting on its request (its record read only when the answer carries a
/// remember choice); a request no run made is left to the driver's own answer (`NotFound`).
async fn checked_answer<'a, D: Driver>(
    driver: &D,
    answer: &'a Answer,
    by: &str,
    granted: bool,
) -> StoreResult<Cow<'a, Answer>> {
    if crate::remember::Remember::of_answer(answer).is_none() {
        return Ok(Cow::Borrowed(answer));
    }
    let Some(run) = driver.get_by_request(&answer.id).await? else {
        return Ok(Cow::Borrowed(answer));
    };
    crate::remember::answer_to_record(answer, run.record.principal(), by, granted)
}

/// `submit` (`granted`: `submit_granting`), by `answerer` (`None`: a plain `submit`, which
/// cannot tell who is in which group).
async fn submit_by<D: Driver>(
    driver: &D,
    answer: &Answer,
    by: &str,
    granted: bool,
    answerer: Option<&super::Answerer>,
) -> StoreResult<RunInfo> {
    check_submit(answer, by)?;
    check_group(driver, answer, answerer).await?;
    let answer = checked_answer(driver, answer, by, granted).await?;
    // a request of a run parked with every request of its turn: recorded on its own
    if let Some((info, _)) = super::together::answer(driver, &answer, by, by).await? {
        return Ok(info);
    }
    let how = Answering::Submit { by: by.to_owned() };
    match super::ballot::cast(driver, &answer, &how, by).await? {
        Voted::Answer => {}
        Voted::Waits { row, .. } | Voted::Reached(row, _) => return row.info(),
    }
    changed(driver.answer(&answer, &how, false).await?)?
        .0
        .info()
}

/// `claim` of `answer` for `owner`, given by `by` (whose vote it is, checked against the
/// run's principal when its request refuses the requester).
async fn claim_as<D: Driver>(
    driver: &D,
    answer: &Answer,
    owner: &str,
    by: &str,
) -> StoreResult<Claim> {
    check_answer(answer)?;
    let lease_end = until(driver, now_ms());
    let how = Answering::Claim {
        owner: owner.to_owned(),
        until: lease_end,
    };
    // neither votes nor a turn: one step
    if let Some(answered) = driver.answer(answer, &how, true).await? {
        return made_claim(answered);
    }
    // a request of a run parked with every request of its turn: recorded on its own, claimed
    // with the last
    if let Some(claim) = super::together::claim(driver, answer, owner, by, lease_end).await? {
        return Ok(claim);
    }
    match super::ballot::cast(driver, answer, &how, by).await? {
        Voted::Answer => {}
        Voted::Reached(row, claim) => return made_claim((row, claim.map(|c| *c))),
        Voted::Waits {
            row,
            given,
            required,
        } => {
            return Err(StoreError::Voted {
                run_id: row.run_id,
                given,
                required,
            });
        }
    }
    made_claim(changed(driver.answer(answer, &how, false).await?)?)
}

/// An answer's change, which the long way always makes (or refuses).
fn changed<T>(answered: Option<T>) -> StoreResult<T> {
    answered.ok_or_else(|| StoreError::Backend("an answer changed nothing".to_owned()))
}

/// The claim an answer's change handed out.
fn made_claim((row, claim): Answered) -> StoreResult<Claim> {
    claim.ok_or_else(|| StoreError::Backend(format!("run `{}`: a claim made no claim", row.run_id)))
}

/// Refuses (nothing recorded) an answer to a request whose current group `answerer` is not
/// in; without an answerer (a plain `submit`), an answer to any request that names a group.
async fn check_group<D: Driver>(
    driver: &D,
    answer: &Answer,
    answerer: Option<&super::Answerer>,
) -> StoreResult<()> {
    match (answerer, group_of(driver, &answer.id).await?.as_deref()) {
        (_, None) => Ok(()),
        (None, Some(group)) => Err(super::answerer::unchecked(&answer.id, group)),
        (Some(answerer), group) => answerer.check(&answer.id, group),
    }
}

/// The group that may answer request `request_id` now: the row's (an escalation moves it)
/// for the request its run waits on, the one the request names for a later request of a
/// turn parked together; `None` when it names none or no run waits on it (an unreadable
/// record: the answer's own path says so).
async fn group_of<D: Driver>(driver: &D, request_id: &str) -> StoreResult<Option<String>> {
    if let Some(row) = driver.row(Key::Request(request_id.to_owned())).await?
        && row.request_id == request_id
    {
        return Ok(row.approvers);
    }
    let Some(run_id) = driver.turn_run(request_id).await? else {
        return Ok(None);
    };
    let Some(row) = driver.row(Key::Run(run_id)).await? else {
        return Ok(None);
    };
    if row.request_id == request_id {
        return Ok(row.approvers);
    }
    let Ok(record) = row.record(driver.seal()) else {
        return Ok(None);
    };
    Ok(record
        .requests()
        .iter()
        .find(|r| r.id == request_id)
        .and_then(|r| r.approvers().map(str::to_owned)))
}

/// The run kept under `key`, opened under the driver's seal.
async fn stored<D: Driver>(driver: &D, key: Key) -> StoreResult<Option<StoredRun>> {
    let row = driver.row(key).await?;
    row.map(|row| row.decode(driver.seal())).transpose()
}

impl<D: Driver> RunStore for D {
    fn park(&self, record: PendingRun) -> BoxFuture<'_, StoreResult<RunInfo>> {
        Box::pin(async move {
            if record.is_together() {
                let ids: Vec<String> = record.requests().iter().map(|r| r.id.clone()).collect();
                super::together::check_free(self, record.run_id(), &ids).await?;
            }
            let info = self
                .insert(lifecycle::park(&record, self.seal(), now_ms()))
                .await?;
            if let Err(refused) = super::together::link(self, &record).await {
                // its turn was refused (another run holds one of its requests): the run is
                // not kept without it, where its first request alone could be answered
                Driver::delete(self, &info.run_id).await?;
                return Err(refused);
            }
            if info.expires_at.is_some() {
                // a new deadline: a worker sleeping until a later one must know
                self.wake_workers().await?;
            }
            Ok(info)
        })
    }

    fn get<'a>(&'a self, run_id: &'a str) -> BoxFuture<'a, StoreResult<Option<StoredRun>>> {
        Box::pin(stored(self, Key::Run(run_id.to_owned())))
    }

    fn get_by_request<'a>(
        &'a self,
        request_id: &'a str,
    ) -> BoxFuture<'a, StoreResult<Option<StoredRun>>> {
        Box::pin(async move {
            if let Some(run) = stored(self, Key::Request(request_id.to_owned())).await? {
                return Ok(Some(run));
            }
            // any request of a run parked with every request of its turn
            match self.turn_run(request_id).await? {
                Some(run_id) => stored(self, Key::Run(run_id)).await,
                None => Ok(None),
            }
        })
    }

    fn claim<'a>(
        &'a self,
        answer: &'a Answer,
        owner: &'a str,
    ) -> BoxFuture<'a, StoreResult<Claim>> {
        Box::pin(claim_as(self, answer, owner, owner))
    }

    fn claim_answered_by<'a>(
        &'a self,
        answer: &'a Answer,
        owner: &'a str,
        answered_by: &'a str,
    ) -> BoxFuture<'a, StoreResult<Claim>> {
        Box::pin(async move {
            check_submit(answer, answered_by)?;
            // a person whose groups are unknown here answers no grouped request
            if let Some(group) = group_of(self, &answer.id).await? {
                return Err(super::answerer::groups_unknown(&answer.id, &group));
            }
            claim_as(self, answer, owner, answered_by).await
        })
    }

    fn submit<'a>(
        &'a self,
        answer: &'a Answer,
        answered_by: &'a str,
    ) -> BoxFuture<'a, StoreResult<RunInfo>> {
        Box::pin(submit_by(self, answer, answered_by, false, None))
    }

    fn submit_granting<'a>(
        &'a self,
        answer: &'a Answer,
        answered_by: &'a str,
    ) -> BoxFuture<'a, StoreResult<RunInfo>> {
        Box::pin(submit_by(self, answer, answered_by, true, None))
    }

    fn submit_as<'a>(
        &'a self,
        answer: &'a Answer,
        answerer: &'a super::Answerer,
    ) -> BoxFuture<'a, StoreResult<RunInfo>> {
        Box::pin(submit_by(
            self,
            answer,
            answerer.who(),
            answerer.is_granting(),
            Some(answerer),
        ))
    }

    fn claim_next<'a>(&'a self, owner: &'a str) -> BoxFuture<'a, StoreResult<Option<Claim>>> {
        Box::pin(async move {
            let claim = self.pick(owner, true).await?;
            super::together::fill(self, claim).await
        })
    }

    fn release<'a>(&'a self, claim: &'a Claim) -> BoxFuture<'a, StoreResult<()>> {
        Box::pin(async move {
            self.apply(claim, lifecycle::release(claim, now_ms()))
                .await?;
            self.wake_workers().await
        })
    }

    fn fail<'a>(
        &'a self,
        claim: &'a Claim,
        error: &'a str,
        retry_at: Option<SystemTime>,
    ) -> BoxFuture<'a, StoreResult<()>> {
        Box::pin(async move {
            let change = lifecycle::fail(claim, error, retry_at.map(millis), now_ms());
            self.apply(claim, change).await.map(drop)
        })
    }

    fn next_due(&self) -> BoxFuture<'_, StoreResult<Option<SystemTime>>> {
        Driver::next_due(self)
    }

    fn waiting(&self) -> BoxFuture<'_, StoreResult<u64>> {
        Driver::waiting(self)
    }

    fn wait_for_work(&self, timeout: Duration) -> BoxFuture<'_, ()> {
        Driver::wait_for_work(self, timeout)
    }

    fn take_over<'a>(&'a self, owner: &'a str) -> BoxFuture<'a, StoreResult<Option<Claim>>> {
        Box::pin(async move {
            let claim = self.pick(owner, false).await?;
            super::together::fill(self, claim).await
        })
    }

    fn renew<'a>(&'a self, claim: &'a mut Claim) -> BoxFuture<'a, StoreResult<()>> {
        Box::pin(async move {
            let now = now_ms();
            let until = until(self, now);
            self.apply(claim, lifecycle::renew(claim, None, until, now))
                .await?;
            claim.lease.until = from_millis(until);
            Ok(())
        })
    }

    fn checkpoint<'a>(&'a self, claim: &'a Claim, state: Value) -> BoxFuture<'a, StoreResult<()>> {
        Box::pin(async move {
            let now = now_ms();
            let change = lifecycle::checkpoint(claim, &state, self.seal(), until(self, now), now);
            self.apply(claim, change).await.map(drop)
        })
    }

    fn finish<'a>(
        &'a self,
        claim: &'a Claim,
        result: RunResult,
    ) -> BoxFuture<'a, StoreResult<RunInfo>> {
        Box::pin(async move {
            let together: Vec<String> = result.pending_all.iter().map(|r| r.id.clone()).collect();
            // a turn another run holds a request of: refused before the finish changes anything
            super::together::check_free(self, &claim.run_id, &together).await?;
            let outcome = Outcome::of(&claim.run_id, result, self.seal())?;
            let change = lifecycle::finish(claim, outcome, now_ms());
            let info = self.apply(claim, change).await?.ok_or_else(|| {
                StoreError::Backend(format!(
                    "run `{}`: a finish read nothing back",
                    claim.run_id
                ))
            })?;
            super::together::link_ids(self, &claim.run_id, together).await?;
            if info.state == RunState::Parked && info.expires_at.is_some() {
                // a new deadline: a worker sleeping until a later one must know
                self.wake_workers().await?;
            }
            Ok(info)
        })
    }

    fn list_pending<'a>(&'a self, query: &'a PendingQuery) -> BoxFuture<'a, StoreResult<Page>> {
        Driver::list_pending(self, query)
    }

    fn list_history<'a>(&'a self, query: &'a HistoryQuery) -> BoxFuture<'a, StoreResult<Page>> {
        Driver::list_history(self, query)
    }

    fn list_damaged(&self, limit: usize) -> BoxFuture<'_, StoreResult<Vec<DamagedRun>>> {
        Driver::list_damaged(self, limit)
    }

    fn expire(&self) -> BoxFuture<'_, StoreResult<Vec<String>>> {
        Driver::expire(self)
    }

    fn delete<'a>(&'a self, run_id: &'a str) -> BoxFuture<'a, StoreResult<bool>> {
        Driver::delete(self, run_id)
    }

    fn heartbeat<'a>(&'a self, worker: &'a str, at: SystemTime) -> BoxFuture<'a, StoreResult<()>> {
        Driver::heartbeat(self, worker, at)
    }

    fn last_worker_seen(&self) -> BoxFuture<'_, StoreResult<Option<WorkerSeen>>> {
        Driver::last_worker_seen(self)
    }

    fn conversations(&self) -> Option<&dyn ConversationStore> {
        Some(self)
    }

    fn rules(&self) -> Option<&dyn RuleStore> {
        Some(self)
    }

    fn outbox(&self) -> Option<&dyn crate::store::Outbox> {
        Driver::outbox(self)
    }

    fn info<'a>(&'a self, run_id: &'a str) -> BoxFuture<'a, StoreResult<Option<RunInfo>>> {
        Driver::info(self, run_id)
    }

    fn wait_change<'a>(
        &'a self,
        run_id: &'a str,
        version: u64,
        timeout: Duration,
    ) -> BoxFuture<'a, StoreResult<Option<RunInfo>>> {
        Driver::wait_change(self, run_id, version, timeout)
    }
}
