//! The vote: an answer to a governed approval ([`Request::with_approvals`],
//! [`Request::with_not_by_requester`]), decided from the row as read. An answer by the run's
//! own principal where the request refuses it is refused before anything is written; an
//! acceptance below the count is a change that appends the vote, keeps the run parked and
//! adds a `voted` event; the acceptance that reaches the count is the ordinary answer (the
//! run answered or claimed) with its vote. Every change is guarded by the row's version: of
//! two racing votes one applies, the other reads the row again and is decided afresh, so both
//! count.

#[cfg(doc)]
use crate::request::Request;

use super::{Answering, Change, Guard, Key, answer};
use crate::request::Answer;
use crate::store::votes::{Vote, count_for, voted_args, votes_json};
use crate::store::{RawRow, RunEvent, RunEventKind, Seal, StoreError, StoreResult, from_millis};

/// What a governed answer does to the run, decided from its row as read.
#[derive(Debug)]
pub(crate) enum Ballot {
    /// Not a vote (the request is not governed, or needs one approval, or the answer
    /// declines, or the run no longer waits): the ordinary answer applies.
    Answer,
    /// The vote is kept and the run waits for `required - given` more.
    Wait {
        change: Change,
        given: u32,
        required: u32,
    },
    /// The vote reaches the count: the answer's change, with the vote.
    Reached(Change),
    /// This person voted for these arguments already: nothing changes.
    Again { given: u32, required: u32 },
}

/// The refusal of an answer by the run's own principal to a request that refuses it.
pub(crate) fn by_requester(request_id: &str, by: &str) -> StoreError {
    StoreError::NotAllowed(format!(
        "the answer to `{}` is refused, nothing was recorded: `{}` asked for this call (the run's principal) and the request may not be answered by its requester (notByRequester); someone else must answer it",
        crate::limits::excerpt(request_id),
        crate::limits::excerpt(by)
    ))
}

/// The answer `answer`, given by `by` (`how`: a claim or a submit), to the run `row` (the
/// row waiting on `answer.id`, as read) at `now`. Refused with
/// [`StoreError::NotAllowed`] when the request refuses its requester and `by` is the run's
/// principal.
pub(crate) fn vote(
    row: &RawRow,
    answer_in: &Answer,
    how: &Answering,
    by: &str,
    seal: &Seal,
    now: i64,
) -> StoreResult<Ballot> {
    if row.request_id != answer_in.id {
        return Ok(Ballot::Answer);
    }
    // an unreadable row: the ordinary answer says so
    let Ok(record) = row.record(seal) else {
        return Ok(Ballot::Answer);
    };
    let request = record.pending();
    if !request.is_governed() {
        return Ok(Ballot::Answer);
    }
    if request.not_by_requester() && record.principal() == Some(by) {
        return Err(by_requester(&answer_in.id, by));
    }
    let required = request.required_approvals();
    let answerable = Guard::Answerable { now }.holds(row);
    if required <= 1 || !answer_in.ok || !answerable {
        return Ok(Ballot::Answer);
    }
    let mut votes = row.votes(seal)?;
    let args = voted_args(answer_in, request.proposed_args());
    if votes.iter().any(|v| v.by == by && v.args == args) {
        return Ok(Ballot::Again {
            given: count_for(&votes, &args),
            required,
        });
    }
    votes.push(Vote {
        by: by.to_owned(),
        at: from_millis(now),
        args: args.clone(),
    });
    let given = count_for(&votes, &args);
    let kept = seal.votes(&row.request_id, &votes_json(&votes));
    let event = RunEvent::new(RunEventKind::Voted, now)
        .request(&answer_in.id)
        .by(by);
    let guard = Guard::Votable {
        version: row.version,
        now,
    };
    if given < required {
        let mut change = Change::new(Key::Request(answer_in.id.clone()), now, guard, &[event]);
        change.set.votes = Some(kept);
        return Ok(Ballot::Wait {
            change,
            given,
            required,
        });
    }
    let mut change = answer(answer_in, how, seal, now);
    change.guard = guard;
    change.set.votes = Some(kept);
    change.events = format!("{},{}", event.json(), change.events);
    Ok(Ballot::Reached(change))
}

#[cfg(test)]
#[path = "votes_tests.rs"]
mod tests;
