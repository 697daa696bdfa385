//! The remembered decisions' own lifecycle, written once: a rule's create, revoke and expiry.
//! Each takes the input and the time and returns a refusal ([`StoreError`]) or a
//! [`RuleChange`] a driver applies in one step (the memory store under its lock, the SQL
//! stores in one statement whose unique key or `WHERE` is the guard); what the driver
//! applied comes back through [`created`] and [`revoked`], which say what it means.
//!
//! A rule's create and revoke append no run history: the rule is its own record (who
//! answered, which request of which run made it, when). A decision a rule makes is recorded
//! in the history of the run it decides ([`RuleChange::Note`]).

use std::time::SystemTime;

use crate::ledger::{RunEvent, StoreError, StoreResult, millis};
use crate::remember::{Rule, Scope};

/// A change of the rules (or, for a decision, of a run's history), as a driver applies it in
/// one step; the driver answers how many rules or runs it changed.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum RuleChange<'a> {
    /// Keeps `rule`, guarded by no rule being kept under its id: nothing is applied (0) when
    /// one is.
    Insert(&'a Rule),
    /// Deletes the rule with this id, guarded by it being kept: nothing is applied (0) when
    /// none is.
    Delete(&'a str),
    /// Deletes every rule that ended at or before this time (ms): each that
    /// [is expired](Rule::is_expired_at) then.
    Purge(i64),
    /// Appends `event` (JSON) to the history of run `run_id`: nothing is applied (0) when no
    /// run has that id.
    Note {
        /// The run.
        run_id: &'a str,
        /// The event, as JSON.
        event: String,
    },
}

/// Keeps `rule`: the insert, guarded by its id being free.
///
/// # Errors
///
/// [`StoreError::Invalid`] for an `args` rule without its call's fingerprint: it could never
/// match a call, and a SQL store could not read it back.
pub(crate) fn create(rule: &Rule) -> StoreResult<RuleChange<'_>> {
    if rule.scope == Scope::Args && rule.fingerprint.is_none() {
        return Err(StoreError::Invalid(format!(
            "rule `{}`: an `args` rule without its fingerprint matches no call",
            crate::limits::excerpt(&rule.id)
        )));
    }
    Ok(RuleChange::Insert(rule))
}

/// What a create the driver applied `applied` times (1, or 0 when its guard failed) means.
///
/// # Errors
///
/// [`StoreError::Conflict`] when a rule with its id is kept already.
pub(crate) fn created(rule: &Rule, applied: u64) -> StoreResult<()> {
    if applied == 0 {
        return Err(StoreError::Conflict(format!(
            "rule `{}` is already kept",
            rule.id
        )));
    }
    Ok(())
}

/// Revokes the rule with this id: the delete, guarded by the rule being kept.
pub(crate) fn revoke(id: &str) -> RuleChange<'_> {
    RuleChange::Delete(id)
}

/// What a revoke the driver applied `applied` times means: whether there was a rule to
/// revoke (none is no refusal: the rule is gone either way).
pub(crate) fn revoked(applied: u64) -> bool {
    applied > 0
}

/// Deletes the rules that ended at `now`.
pub(crate) fn expire(now: SystemTime) -> RuleChange<'static> {
    RuleChange::Purge(millis(now))
}

/// Records `event` (a rule's decision) in the history of run `run_id`.
pub(crate) fn note<'a>(run_id: &'a str, event: &RunEvent) -> RuleChange<'a> {
    RuleChange::Note {
        run_id,
        event: event.json(),
    }
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, UNIX_EPOCH};

    use super::*;
    use crate::remember::{Remember, Within, rule_of_answer};
    use crate::request::{Answer, Request};

    fn rule(scope: Scope) -> Rule {
        let request = Request::approval("Pay?");
        let answer = Answer::ok(&request.id).remember(Remember::new(scope, Within::Principal));
        let args = serde_json::json!({"amount": 3});
        rule_of_answer(
            &request,
            &answer,
            "pay",
            &args,
            "run-1",
            None,
            Some("ada"),
            Some("ada"),
        )
        .unwrap()
        .unwrap()
    }

    #[test]
    fn a_create_inserts_the_rule_itself_guarded_by_its_id() {
        for scope in [Scope::Tool, Scope::Args] {
            let rule = rule(scope);
            assert_eq!(create(&rule).unwrap(), RuleChange::Insert(&rule));
            assert_eq!(created(&rule, 1), Ok(()));
        }
    }

    #[test]
    fn a_create_whose_id_is_kept_already_is_refused_as_a_conflict() {
        let rule = rule(Scope::Tool);
        assert_eq!(
            created(&rule, 0),
            Err(StoreError::Conflict(format!(
                "rule `{}` is already kept",
                rule.id
            )))
        );
    }

    #[test]
    fn an_args_rule_without_its_fingerprint_is_refused_before_it_is_kept() {
        let mut rule = rule(Scope::Args);
        rule.fingerprint = None;
        assert_eq!(
            create(&rule),
            Err(StoreError::Invalid(format!(
                "rule `{}`: an `args` rule without its fingerprint matches no call",
                rule.id
            )))
        );
    }

    #[test]
    fn a_revoke_deletes_by_id_and_says_whether_a_rule_was_kept() {
        assert_eq!(revoke("rule-1"), RuleChange::Delete("rule-1"));
        assert!(revoked(1));
        assert!(!revoked(0));
    }

    #[test]
    fn expiry_purges_what_ended_at_the_time_and_a_decision_is_noted_on_its_run() {
        let now = UNIX_EPOCH + Duration::from_millis(1_234);
        assert_eq!(expire(now), RuleChange::Purge(1_234));
        let event = crate::remember::decided_event("req-1", &rule(Scope::Tool));
        assert_eq!(
            note("run-1", &event),
            RuleChange::Note {
                run_id: "run-1",
                event: event.json(),
            }
        );
    }
}
