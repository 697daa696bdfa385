//! A turn's questions together in a store: a run parked with every request of its turn
//! ([`PendingRun::is_together`]) keeps one turn row per request (schema version 9:
//! `turn_requests`), each with its own sealed answer, who gave it and when. Answers come in any
//! order, each checked and recorded on its own ([`lifecycle::together`](super::lifecycle::together));
//! the run becomes answered, claimable by a worker, once every request of the turn has one;
//! the claim carries them all ([`Claim::other_answers`]). Written once over any
//! [`Driver`]; a driver only keeps the turn rows ([`TurnDriver`]).

use super::engine::Driver;
use super::lifecycle::together::{answer_one, first_answer, govern, other_answers, turn_rows};
#[cfg(doc)]
use super::lifecycle::together::{check_link, takes_answer};
use super::lifecycle::{self, Change, Key};
pub(crate) use super::outbox::Step;
use super::types::Recorded;
use super::{Claim, RunInfo, StoreError, StoreResult, now_ms};
use crate::request::Answer;
use crate::run::PendingRun;

#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) mod sql;
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) use sql::together_schema;

/// One request of a together run's turn, as a store keeps it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct TurnRow {
    pub(crate) request_id: String,
    /// Its place among the turn's requests (0: the run's first, [`PendingRun::pending`]).
    pub(crate) position: i64,
    /// Its answer, as the seal keeps it (bound to the request), once given.
    pub(crate) answer: Option<String>,
    pub(crate) answered_by: Option<String>,
    pub(crate) answered_at: Option<i64>,
}

/// What a backend keeps of together runs, beside its runs.
pub(crate) trait TurnDriver {
    /// In one step: keeps `rows` (none answered) as run `run_id`'s, each unless kept already,
    /// when [`check_link`] allows it; else nothing kept, its refusal.
    fn turn_link<'a>(&'a self, run_id: &'a str, rows: Vec<TurnRow>) -> Step<'a, ()>;

    /// The run whose turn made request `request_id`, if any.
    fn turn_run<'a>(&'a self, request_id: &'a str) -> Step<'a, Option<String>>;

    /// The turn rows of run `run_id`, in position order (of every turn it parked together).
    fn turn_rows<'a>(&'a self, run_id: &'a str) -> Step<'a, Vec<TurnRow>>;

    /// In one step: applies `change` to run `run_id` (its guard checked) and keeps `row`'s
    /// answer on its turn row, if that row still [takes it](takes_answer); `false`, nothing
    /// kept, when either no longer holds (another change came between).
    fn turn_answer<'a>(&'a self, run_id: &'a str, change: Change, row: TurnRow) -> Step<'a, bool>;
}

/// How many times an answer is tried again when other answers to its run came between.
const TRIES: usize = 32;

/// Refuses, before anything is kept, a turn of run `run_id` one of whose `requests` another
/// run holds (the request of its row, now or before, or of its turn): request ids name one
/// run. One read per request, made only for a turn parked together (a park's or a finish's);
/// the link itself checks again in its own step.
///
/// # Errors
///
/// [`StoreError::Conflict`] naming the first such request; a store failure.
pub(crate) async fn check_free<D: Driver + ?Sized>(
    driver: &D,
    run_id: &str,
    requests: &[String],
) -> StoreResult<()> {
    for id in requests {
        let held = match driver.turn_run(id).await? {
            Some(holder) => holder != run_id,
            None => driver
                .row(Key::Request(id.clone()))
                .await?
                .is_some_and(|row| row.run_id != run_id),
        };
        if held {
            return Err(lifecycle::park_conflict(run_id, id, false));
        }
    }
    Ok(())
}

/// Keeps the turn rows of a together `record` just parked (nothing for another record).
pub(crate) async fn link<D: Driver + ?Sized>(driver: &D, record: &PendingRun) -> StoreResult<()> {
    if !record.is_together() {
        return Ok(());
    }
    let ids = record.requests().iter().map(|r| r.id.clone()).collect();
    link_ids(driver, record.run_id(), ids).await
}

/// Keeps the turn rows of the together run a finish parked again (`requests`: its result's
/// requests when it parked on several).
pub(crate) async fn link_ids<D: Driver + ?Sized>(
    driver: &D,
    run_id: &str,
    requests: Vec<String>,
) -> StoreResult<()> {
    if requests.is_empty() {
        return Ok(());
    }
    driver.turn_link(run_id, turn_rows(requests)).await
}

/// An answer to a request of a together run, recorded by `by` at the time it arrives (given
/// by `voter`, whom the request's rules check: [`govern`]): the run as it became and whether
/// this answer completed its turn; `None` when no together run made the request (the caller
/// answers it the usual way).
///
/// # Errors
///
/// As [`govern`] and [`answer_one`]; a store failure.
pub(crate) async fn answer<D: Driver + ?Sized>(
    driver: &D,
    answer: &Answer,
    by: &str,
    voter: &str,
) -> StoreResult<Option<(RunInfo, bool)>> {
    let Some(run_id) = driver.turn_run(&answer.id).await? else {
        return Ok(None);
    };
    for _ in 0..TRIES {
        let row =
            driver
                .row(Key::Run(run_id.clone()))
                .await?
                .ok_or_else(|| StoreError::NotFound {
                    key: answer.id.clone(),
                })?;
        let record = row.record(driver.seal())?;
        govern(&record, answer, voter)?;
        let turn = driver.turn_rows(&run_id).await?;
        let step = answer_one(&row, &record, &turn, answer, by, driver.seal(), now_ms())?;
        let completes = step.change.set.state.is_some();
        if driver.turn_answer(&run_id, step.change, step.row).await? {
            if completes {
                driver.wake_workers().await?;
            }
            if let Some(refused) = step.refused {
                return Err(refused);
            }
            let info = driver
                .info(&run_id)
                .await?
                .ok_or_else(|| StoreError::NotFound {
                    key: answer.id.clone(),
                })?;
            return Ok(Some((info, completes)));
        }
    }
    Err(StoreError::Backend(format!(
        "run `{run_id}`: the answer to `{}` kept meeting other answers; try again",
        answer.id
    )))
}

/// A claim of a together run by `owner` with `answer` (given by `voter`): the answer is
/// recorded; the run is claimed when it completes the turn (else [`StoreError::Conflict`] says
/// how many requests still wait, the answer kept). `None`: no together run made the request.
pub(crate) async fn claim<D: Driver + ?Sized>(
    driver: &D,
    answer: &Answer,
    owner: &str,
    voter: &str,
    until: i64,
) -> StoreResult<Option<Claim>> {
    let Some((info, completes)) = self::answer(driver, answer, owner, voter).await? else {
        return Ok(None);
    };
    if !completes {
        let turn = driver.turn_rows(&info.run_id).await?;
        let waiting = turn.iter().filter(|t| t.answer.is_none()).count();
        return Err(StoreError::Conflict(format!(
            "the answer to `{}` is recorded; run `{}` waits on {waiting} more request(s) of its turn before it can be claimed",
            answer.id, info.run_id
        )));
    }
    let row = driver
        .row(Key::Run(info.run_id.clone()))
        .await?
        .ok_or_else(|| StoreError::NotFound {
            key: answer.id.clone(),
        })?;
    let change =
        lifecycle::take_over(&row, driver.seal(), owner, until, now_ms()).map_err(|_| {
            StoreError::Corrupt {
                run_id: row.run_id.clone(),
                message: "the answered run cannot be read".to_owned(),
            }
        })?;
    let Some(claim) = change.claim.clone() else {
        return Err(StoreError::Backend("a claim made no claim".to_owned()));
    };
    driver.apply(&claim, change).await.map_err(|e| match e {
        StoreError::LeaseLost { run_id } => StoreError::AlreadyAnswered {
            run_id,
            request_id: answer.id.clone(),
            state: super::RunState::Claimed,
        },
        other => other,
    })?;
    fill(driver, Some(claim)).await
}

/// Adds to a claim of a together run the answers to its other requests.
pub(crate) async fn fill<D: Driver + ?Sized>(
    driver: &D,
    claim: Option<Claim>,
) -> StoreResult<Option<Claim>> {
    let Some(mut claim) = claim else {
        return Ok(None);
    };
    if claim.record.is_together() {
        let turn = driver.turn_rows(&claim.run_id).await?;
        claim.other_answers = other_answers(&claim.run_id, &claim.record, &turn, driver.seal())?;
        // the first request's answer as its turn row keeps it, when it has one: a run that
        // expired with its turn incomplete still resumes with what was recorded in time
        if let Some((answer, at)) =
            first_answer(&claim.run_id, &claim.record, &turn, driver.seal())?
        {
            claim.answer = answer;
            claim.answered_at = at.map(super::from_millis).or(claim.answered_at);
        }
        // each answer counts from when it was recorded, not from when the turn completed,
        // and is who gave it
        claim.turn = claim
            .record
            .requests()
            .iter()
            .map(
                |request| match turn.iter().find(|t| t.request_id == request.id) {
                    Some(row) => Recorded {
                        at: row.answered_at.map(super::from_millis),
                        by: row.answered_by.clone(),
                    },
                    None => Recorded::default(),
                },
            )
            .collect();
    }
    Ok(Some(claim))
}
