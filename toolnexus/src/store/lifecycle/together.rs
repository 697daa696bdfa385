//! A turn's questions together: the answer to one of the several requests a run parked with
//! ([`PendingRun::is_together`]), as a pure transition. Each answer is checked on its own
//! (the run still parked, the request one of the run's, not answered before, not past its own
//! `expiresAt`) and recorded on its own: the run's row gains an `Answered` event and one more
//! version (the guard: no other change came between the read and this one), the request's
//! turn row its sealed answer; the answer that completes the turn also makes the run
//! answered, its `answer` column the first request's answer, so a worker claims it as any
//! answered run.

use super::{Change, Guard, Key, refusal};
use crate::request::{Answer, DeclineReason};
use crate::run::PendingRun;
use crate::store::together::TurnRow;
use crate::store::{RawRow, RunEvent, RunEventKind, RunState, Seal, StoreError};

/// What one answer to a together run does: the run row's change and the request's turn row
/// as it becomes; `refused`: the answer came after its request's `expiresAt`, so the request
/// is recorded declined (`expired`) and the caller is told so.
#[derive(Debug)]
pub(crate) struct TurnAnswer {
    pub(crate) change: Change,
    pub(crate) row: TurnRow,
    pub(crate) refused: Option<StoreError>,
}

/// The answer `answer`, given by `by` at `now`, to one request of the together run `row`
/// (as read, with its `record` and its requests' turn rows `turn`).
///
/// # Errors
///
/// [`StoreError::AlreadyAnswered`] when the run is no longer parked or the request has an
/// answer already (a replay), [`StoreError::Expired`] when the run expired,
/// [`StoreError::NotFound`] when the request is not one of the run's.
pub(crate) fn answer_one(
    row: &RawRow,
    record: &PendingRun,
    turn: &[TurnRow],
    answer: &Answer,
    by: &str,
    seal: &Seal,
    now: i64,
) -> Result<TurnAnswer, StoreError> {
    let not_found = || StoreError::NotFound {
        key: answer.id.clone(),
    };
    let current = turn
        .iter()
        .find(|t| t.request_id == answer.id)
        .ok_or_else(not_found)?;
    let state = row.info()?.state;
    if current.answer.is_some() {
        // a replay: the request has its answer
        return Err(StoreError::AlreadyAnswered {
            run_id: row.run_id.clone(),
            request_id: answer.id.clone(),
            state,
        });
    }
    if state != RunState::Parked {
        return Err(refusal(&row.run_id, &answer.id, state));
    }
    let requests = record.requests();
    let Some(request) = requests.iter().find(|r| r.id == answer.id) else {
        // a request of an earlier turn that went on without its answer: it expired
        return Err(StoreError::Expired {
            run_id: row.run_id.clone(),
        });
    };
    // past its own deadline: recorded declined (expired), the answer refused
    let late = request
        .expires_at
        .as_ref()
        .is_some_and(|_| request.expires_at_time().is_none_or(|at| crate::store::millis(at) <= now));
    let (kept, refused) = if late {
        (
            Answer::decline(&answer.id, DeclineReason::Expired),
            Some(StoreError::Expired {
                run_id: row.run_id.clone(),
            }),
        )
    } else {
        (answer.clone(), None)
    };
    let sealed = seal.answer(&kept);
    let mut event = RunEvent::new(RunEventKind::Answered, now).request(&answer.id);
    if refused.is_none() {
        event = event.by(by);
    }
    let mut change = Change::new(
        Key::Run(row.run_id.clone()),
        now,
        Guard::Version(row.version),
        &[event],
    );
    let complete = turn
        .iter()
        .all(|t| t.request_id == answer.id || t.answer.is_some());
    if complete {
        let first = record.pending().id.as_str();
        let first_answer = if first == answer.id {
            Some(sealed.clone())
        } else {
            turn.iter()
                .find(|t| t.request_id == first)
                .and_then(|t| t.answer.clone())
        };
        change.set.state = Some(RunState::Answered);
        change.set.answer = Some(first_answer.ok_or_else(|| StoreError::Corrupt {
            run_id: row.run_id.clone(),
            message: "a together run's first request has no turn row".to_owned(),
        })?);
    }
    Ok(TurnAnswer {
        change,
        row: TurnRow {
            request_id: answer.id.clone(),
            position: current.position,
            answer: Some(sealed),
            answered_by: refused.is_none().then(|| by.to_owned()),
            answered_at: Some(now),
        },
        refused,
    })
}

/// The answers a claim of a together run resumes with besides its first request's, in call
/// order, opened under `seal`: a request left unanswered (the run expired) reads as declined,
/// `expired`.
///
/// # Errors
///
/// [`StoreError::Corrupt`] when a kept answer does not open (an edit at rest).
pub(crate) fn other_answers(
    run_id: &str,
    record: &PendingRun,
    turn: &[TurnRow],
    seal: &Seal,
) -> Result<Vec<Answer>, StoreError> {
    let requests = record.requests();
    requests
        .iter()
        .skip(1)
        .map(|request| {
            match turn
                .iter()
                .find(|t| t.request_id == request.id)
                .and_then(|t| t.answer.as_deref())
            {
                Some(text) => seal.open_answer(run_id, &request.id, text),
                None => Ok(Answer::decline(&request.id, DeclineReason::Expired)),
            }
        })
        .collect()
}
