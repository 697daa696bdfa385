//! The transitions of a claimed run, each guarded by the claim still holding it: renew,
//! checkpoint, finish, fail and release.

use super::{Change, Guard, Key, LeaseSet};
use crate::request::DeclineReason;
use crate::store::{Claim, Outcome, RunEvent, RunEventKind, RunState, Seal, token_i64};

/// The claim's own change: guarded by the claim still holding the run.
fn of_claim(claim: &Claim, now: i64, events: &[RunEvent]) -> Change {
    Change::new(
        Key::Run(claim.run_id.clone()),
        now,
        Guard::Claimed {
            token: token_i64(claim),
        },
        events,
    )
}

/// Renews the claim's lease until `until` (ms), saving `checkpoint` (as the seal keeps it)
/// when given. No event: a renewal is not history.
pub(crate) fn renew(claim: &Claim, checkpoint: Option<String>, until: i64, now: i64) -> Change {
    let mut change = of_claim(claim, now, &[]);
    change.set.lease = LeaseSet::Until(until);
    change.set.checkpoint = checkpoint;
    change
}

/// Saves the claimed run's progress `state` and renews its lease until `until`.
pub(crate) fn checkpoint(
    claim: &Claim,
    state: &serde_json::Value,
    seal: &Seal,
    until: i64,
    now: i64,
) -> Change {
    renew(
        claim,
        Some(seal.checkpoint(&claim.run_id, state)),
        until,
        now,
    )
}

/// Records how the claimed run ended at `now`: parked again on its new request, or finished
/// with its result.
pub(crate) fn finish(claim: &Claim, outcome: Outcome, now: i64) -> Change {
    let mut change = of_claim(claim, now, &[outcome.event(now)]);
    change.set.lease = LeaseSet::Clear;
    match outcome {
        Outcome::Parked(cols) => {
            change.set.state = Some(RunState::Parked);
            change.set.request = Some(cols);
        }
        Outcome::Finished(json, _) => {
            change.set.state = Some(RunState::Finished);
            change.set.result = Some(json);
        }
    }
    change
}

/// Records a failed resume of the claim (`error`) at `now`: kept claimed until `retry_at`
/// (ms) and then taken over, or, without, given up ([`Failed`](RunState::Failed)). Its event
/// says how many attempts at the answer were made: this claim's included, unless it gave the
/// run up without resuming it.
pub(crate) fn fail(claim: &Claim, error: &str, retry_at: Option<i64>, now: i64) -> Change {
    let made = if claim.gives_up {
        claim.attempt() - 1
    } else {
        claim.attempt()
    };
    let event = RunEvent::new(RunEventKind::Failed, now)
        .by(&claim.lease.owner)
        .error(error)
        .attempt(made);
    if let Some(at) = retry_at {
        let mut change = of_claim(claim, now, &[event]);
        change.set.lease = LeaseSet::Until(at);
        change
    } else {
        let mut change = of_claim(claim, now, &[event.outcome("failed")]);
        change.set.state = Some(RunState::Failed);
        change.set.lease = LeaseSet::Clear;
        change
    }
}

/// Hands the claimed run back unfinished at `now`: `expired` again for a run resuming with
/// `declined/expired` (so workers take it first again), else `answered`.
pub(crate) fn release(claim: &Claim, now: i64) -> Change {
    let mut change = of_claim(
        claim,
        now,
        &[RunEvent::new(RunEventKind::Released, now).by(&claim.lease.owner)],
    );
    let expired = !claim.answer.ok && claim.answer.reason == Some(DeclineReason::Expired);
    change.set.state = Some(if expired {
        RunState::Expired
    } else {
        RunState::Answered
    });
    change.set.lease = LeaseSet::Clear;
    change
}
