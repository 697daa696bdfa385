//! What a parked run's deadline does: the next step of its escalation (the request goes to
//! another group with a new deadline) or, with no step left, the expiry. Pure, like the rest
//! of the lifecycle: the stores read the few columns [`Due`] names, apply the [`Change`] and,
//! with notifiers, write the escalation's notifications in the same transaction.
//!
//! The run's record stays as it was sealed (its request keeps its original `expiresAt`): the
//! row's `expires_at` is the deadline of the current step, and every check of an answer's
//! lateness (the answer's guard, the claim, the resume) reads that one.

use serde::Deserialize;

use super::{Change, Guard, Key, RunEvent, RunEventKind, Seal, expire_request};

/// A step of a run's escalation plan, as the `escalate` column keeps it
/// ([`escalation_plan`](crate::request::escalation_plan)).
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
struct Step {
    #[serde(rename = "step")]
    number: u32,
    approvers: String,
    at: i64,
}

/// What an escalation sets on the row: the group that may answer now, the new deadline (ms)
/// and the steps still ahead (a JSON array; `None`: the new deadline declines).
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Escalate {
    pub(crate) approvers: String,
    pub(crate) expires_at: i64,
    pub(crate) rest: Option<String>,
    /// Which step this is (from 1): the notifications' ids name it.
    pub(crate) step: u32,
}

/// What the deadline of a parked run reads of its row.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Due<'a> {
    pub(crate) run_id: &'a str,
    pub(crate) request_id: &'a str,
    pub(crate) version: i64,
    pub(crate) approvers: Option<&'a str>,
    pub(crate) escalate: Option<&'a str>,
}

/// The change the passed deadline of `due` makes at `now`: the next step of its escalation
/// (guarded by the row's `version`, so of two workers that saw the deadline pass exactly one
/// escalates it), or, with no step left, [`expire_request`]. A plan that cannot be read is
/// no plan: the deadline declines, as without escalation.
pub(crate) fn at_deadline(due: &Due<'_>, seal: &Seal, now: i64) -> Change {
    let steps: Vec<Step> = due
        .escalate
        .and_then(|plan| serde_json::from_str(plan).ok())
        .unwrap_or_default();
    let Some((next, rest)) = steps.split_first() else {
        return expire_request(due.run_id, due.request_id, seal, now);
    };
    let mut change = Change::new(
        Key::Run(due.run_id.to_owned()),
        now,
        Guard::Version(due.version),
        &[RunEvent::new(RunEventKind::Escalated, now)
            .request(due.request_id)
            .escalation(due.approvers, &next.approvers, next.at)],
    );
    change.set.escalate = Some(Escalate {
        approvers: next.approvers.clone(),
        expires_at: next.at,
        rest: (!rest.is_empty()).then(|| plan_json(rest)),
        step: next.number,
    });
    change
}

fn plan_json(steps: &[Step]) -> String {
    let steps: Vec<serde_json::Value> = steps
        .iter()
        .map(|s| serde_json::json!({"step": s.number, "approvers": s.approvers, "at": s.at}))
        .collect();
    serde_json::Value::Array(steps).to_string()
}

#[cfg(test)]
mod tests {
    use super::{Due, Escalate, at_deadline};
    use crate::store::lifecycle::{Guard, Key};
    use crate::store::{RunEvent, RunState, Seal};

    const PLAN: &str =
        r#"[{"step":1,"approvers":"cfo","at":5000},{"step":2,"approvers":"ceo","at":9000}]"#;

    fn due<'a>(approvers: Option<&'a str>, escalate: Option<&'a str>) -> Due<'a> {
        Due {
            run_id: "run-1",
            request_id: "q-1",
            version: 3,
            approvers,
            escalate,
        }
    }

    #[test]
    fn a_deadline_with_steps_ahead_escalates_to_the_next_and_keeps_the_rest() {
        let change = at_deadline(&due(Some("finance"), Some(PLAN)), &Seal::default(), 1000);
        assert_eq!(change.key, Key::Run("run-1".into()));
        assert_eq!(change.guard, Guard::Version(3));
        assert_eq!(change.set.state, None, "the run stays parked");
        assert_eq!(change.set.answer, None, "no answer: nobody declined it");
        assert_eq!(
            change.set.escalate,
            Some(Escalate {
                approvers: "cfo".into(),
                expires_at: 5000,
                rest: Some(r#"[{"approvers":"ceo","at":9000,"step":2}]"#.into()),
                step: 1,
            })
        );
        let event: RunEvent = serde_json::from_str(&change.events).unwrap();
        assert_eq!(
            serde_json::to_value(&event).unwrap(),
            serde_json::json!({"event": "escalated", "at": 1000, "request": "q-1",
                "from": "finance", "to": "cfo", "deadline": 5000})
        );
    }

    #[test]
    fn the_last_steps_deadline_expires_the_request() {
        let last = r#"[{"step":2,"approvers":"ceo","at":9000}]"#;
        let change = at_deadline(&due(Some("cfo"), Some(last)), &Seal::default(), 6000);
        assert_eq!(change.set.escalate.as_ref().unwrap().rest, None);
        for plan in [None, Some("[]"), Some("not json")] {
            let change = at_deadline(&due(Some("ceo"), plan), &Seal::default(), 9000);
            assert_eq!(change.set.state, Some(RunState::Expired), "{plan:?}");
            assert_eq!(change.guard, Guard::Parked);
            assert!(change.set.escalate.is_none());
        }
    }

    #[test]
    fn an_escalation_applies_once_and_moves_the_deadline_and_group() {
        let mut row = crate::store::lifecycle::tests::parked();
        row.expires_at = Some(1000);
        row.approvers = Some("finance".into());
        row.escalate = Some(PLAN.into());
        let version = row.version;
        let change = at_deadline(
            &Due {
                run_id: &row.run_id.clone(),
                request_id: &row.request_id.clone(),
                version,
                approvers: Some("finance"),
                escalate: Some(PLAN),
            },
            &Seal::default(),
            1000,
        );
        assert!(change.apply(&mut row));
        assert_eq!(row.state, "parked");
        assert_eq!(row.expires_at, Some(5000));
        assert_eq!(row.approvers.as_deref(), Some("cfo"));
        assert_eq!(
            row.escalate.as_deref(),
            Some(r#"[{"approvers":"ceo","at":9000,"step":2}]"#)
        );
        assert_eq!(row.version, version + 1);
        // a second worker that read the same row changes nothing
        assert!(!change.apply(&mut row));
        assert_eq!(row.approvers.as_deref(), Some("cfo"));
    }
}
