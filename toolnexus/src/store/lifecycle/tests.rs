//! Each transition and each refusal, without a database: a row as a store keeps it, the
//! change a transition decides, and the row once the change is applied.

use super::{
    Answering, Guard, LeaseSet, answer, answer_claim, checkpoint, damage, expire, fail, finish,
    park, refuse_answer, release, renew, take_over,
};
use crate::request::{Answer, DeclineReason};
use crate::run::PendingRun;
use crate::store::{Claim, Outcome, RawRow, RunEventKind, RunState, Seal, StoreError};
use crate::{Client, FnTool, Reply, Request, ScriptedModel, ToolResult, Toolkit};

const NOW: i64 = 1_000_000;

/// A halted run's record, waiting on one input request (`expires`: its `expiresAt` is 1 s
/// after the epoch, before [`NOW`]).
fn record(expires: bool) -> PendingRun {
    let ask = FnTool::builder("ask")
        .description("Asks.")
        .handler(move |_, _| async move {
            let mut request = Request::input("Your name?");
            if expires {
                request.expires_at = Some("1970-01-01T00:00:01Z".to_owned());
            }
            ToolResult::suspended(request)
        })
        .build()
        .unwrap();
    let toolkit = Toolkit::builder().tool(ask).build().unwrap();
    let script = [Reply::tool_call("ask", serde_json::json!({}))];
    let client = Client::builder(ScriptedModel::new(script))
        .model_name("m")
        .build()
        .unwrap();
    halt(&client, &toolkit)
}

/// The record of `client`'s run of `toolkit`, halted (its first message `hi`).
pub(super) fn halt(client: &Client, toolkit: &Toolkit) -> PendingRun {
    let halted = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(client.run("hi", toolkit))
        .unwrap();
    PendingRun::try_from(halted).unwrap()
}

pub(super) fn parked() -> RawRow {
    park(&record(false), &Seal::default(), NOW).row
}

/// The kinds of `row`'s history events, in order.
pub(super) fn events(row: &RawRow) -> Vec<RunEventKind> {
    row.info()
        .unwrap()
        .history
        .iter()
        .map(|e| e.event)
        .collect()
}

/// `row` claimed by `owner` through an answer, with the claim handed out.
fn claimed(row: &RawRow, owner: &str) -> (RawRow, Claim) {
    let seal = Seal::default();
    let accept = Answer::accept(&row.request_id, "Ada");
    let how = Answering::Claim {
        owner: owner.to_owned(),
        until: NOW + 30_000,
    };
    let change = answer(&accept, &how, &seal, NOW);
    let mut after = row.clone();
    assert!(change.apply(&mut after));
    let claim = answer_claim(&after, &accept, &seal, owner, NOW + 30_000, NOW).unwrap();
    (after, claim)
}

#[test]
fn a_park_is_a_parked_row_at_version_one_with_its_request_in_its_history() {
    let record = record(false);
    let insert = park(&record, &Seal::default(), NOW);
    let row = insert.row;
    assert!(insert.side.is_empty());
    assert_eq!(row.run_id, record.run_id());
    assert_eq!(row.request_id, record.pending().id);
    assert_eq!(
        (row.state.as_str(), row.version, row.claims),
        ("parked", 1, 0)
    );
    assert_eq!(row.created_at, NOW);
    assert_eq!(events(&row), [RunEventKind::Requested]);
    assert!(row.record(&Seal::default()).is_ok());
}

#[test]
fn a_claiming_answer_claims_the_parked_run_and_hands_out_token_one() {
    let row = parked();
    let (after, claim) = claimed(&row, "w1");
    assert_eq!(after.state, "claimed");
    assert_eq!(
        (after.lease_owner.as_deref(), after.lease_until),
        (Some("w1"), Some(NOW + 30_000))
    );
    assert_eq!((after.claims, after.version), (1, 2));
    assert_eq!(
        events(&after),
        [
            RunEventKind::Requested,
            RunEventKind::Answered,
            RunEventKind::Claimed
        ]
    );
    assert_eq!(claim.token, 1);
    assert!(!claim.taken_over);
    assert_eq!(claim.attempt(), 1);
    assert_eq!(claim.answered_at, Some(crate::store::from_millis(NOW)));
    assert_eq!(
        after.answer(&Seal::default()).unwrap().unwrap().id,
        row.request_id
    );
}

#[test]
fn a_submit_records_the_answer_by_its_answerer_and_claims_nothing() {
    let row = parked();
    let accept = Answer::accept(&row.request_id, "Ada");
    let how = Answering::Submit {
        by: "alice".to_owned(),
    };
    let change = answer(&accept, &how, &Seal::default(), NOW);
    assert_eq!(change.guard, Guard::Answerable { now: NOW });
    assert_eq!(change.set.lease, LeaseSet::Keep);
    let mut after = row.clone();
    assert!(change.apply(&mut after));
    let info = after.info().unwrap();
    assert_eq!(info.state, RunState::Answered);
    assert_eq!(info.answered_by(), Some("alice"));
    assert_eq!(after.claims, 0);
}

#[test]
fn an_answer_does_not_apply_to_a_run_past_its_deadline_or_not_parked() {
    let row = park(&record(true), &Seal::default(), NOW).row;
    let accept = Answer::accept(&row.request_id, "Ada");
    let how = Answering::Submit { by: "a".to_owned() };
    let mut after = row.clone();
    assert!(!answer(&accept, &how, &Seal::default(), NOW).apply(&mut after));
    assert_eq!((after.state.as_str(), after.version), ("parked", 1));
    let (mut taken, _) = claimed(&parked(), "w1");
    let version = taken.version;
    assert!(!answer(&accept, &how, &Seal::default(), NOW).apply(&mut taken));
    assert_eq!(taken.version, version);
}

#[test]
fn refusals_say_not_found_already_answered_or_expired() {
    let seal = Seal::default();
    let (none, change) = refuse_answer(None, None, "req-x", &seal, NOW);
    assert!(matches!(none, StoreError::NotFound { key } if key == "req-x"));
    assert!(change.is_none());

    let (taken, _) = claimed(&parked(), "w1");
    let (again, change) = refuse_answer(Some(&taken), None, &taken.request_id, &seal, NOW);
    assert!(matches!(
        again,
        StoreError::AlreadyAnswered {
            state: RunState::Claimed,
            ..
        }
    ));
    assert!(change.is_none());
    let (past, _) = refuse_answer(None, Some(&taken), "req-old", &seal, NOW);
    assert!(
        matches!(past, StoreError::AlreadyAnswered { request_id, .. } if request_id == "req-old")
    );

    let mut expired = parked();
    assert!(expire(&expired.clone(), &seal, NOW).apply(&mut expired));
    let (late, _) = refuse_answer(Some(&expired), None, &expired.request_id, &seal, NOW);
    assert!(matches!(late, StoreError::Expired { .. }));
    let (late_past, _) = refuse_answer(None, Some(&expired), &expired.request_id, &seal, NOW);
    assert!(matches!(late_past, StoreError::Expired { .. }));
}

#[test]
fn an_answer_past_the_deadline_is_refused_and_expires_the_run() {
    let seal = Seal::default();
    let row = park(&record(true), &seal, NOW).row;
    let (error, change) = refuse_answer(Some(&row), None, &row.request_id, &seal, NOW);
    assert!(matches!(error, StoreError::Expired { run_id } if run_id == row.run_id));
    let mut after = row.clone();
    assert!(change.unwrap().apply(&mut after));
    assert_eq!(after.state, "expired");
    let answer = after.answer(&seal).unwrap().unwrap();
    assert_eq!(
        (answer.ok, answer.reason),
        (false, Some(DeclineReason::Expired))
    );
    assert_eq!(events(&after).last(), Some(&RunEventKind::Expired));
}

#[test]
fn an_answer_past_a_deadline_with_an_escalation_step_left_leaves_the_run_to_the_sweep() {
    let seal = Seal::default();
    let mut row = park(&record(true), &seal, NOW).row;
    row.escalate = Some(r#"[{"step":1,"approvers":"cfo","at":2000000}]"#.to_owned());
    let (error, change) = refuse_answer(Some(&row), None, &row.request_id, &seal, NOW);
    assert!(matches!(error, StoreError::Expired { run_id } if run_id == row.run_id));
    assert!(
        change.is_none(),
        "the sweep escalates it, with its notifications"
    );
}

#[test]
fn an_expiry_applies_to_a_parked_run_only() {
    let seal = Seal::default();
    let (mut taken, _) = claimed(&parked(), "w1");
    assert!(!expire(&taken.clone(), &seal, NOW).apply(&mut taken));
    assert_eq!(taken.state, "claimed");
}

#[test]
fn a_takeover_of_a_lapsed_claim_counts_the_attempt_and_of_an_expired_run_is_a_claim() {
    let seal = Seal::default();
    let (row, _) = claimed(&parked(), "w1");
    let change = take_over(&row, &seal, "w2", NOW + 60_000, NOW + 40_000).unwrap();
    assert_eq!(change.guard, Guard::Claims(1));
    let claim = change.claim.clone().unwrap();
    assert!(claim.taken_over);
    assert_eq!((claim.token, claim.attempt(), claim.crashes), (2, 2, 1));
    let mut after = row.clone();
    assert!(change.apply(&mut after));
    let info = after.info().unwrap();
    let last = info.history.last().unwrap();
    assert_eq!(
        (last.event, last.attempt),
        (RunEventKind::TakenOver, Some(2))
    );
    assert_eq!(info.lease.unwrap().owner, "w2");
    // the first worker's late change no longer applies
    assert!(!change.apply(&mut after));

    let mut expired = parked();
    assert!(expire(&expired.clone(), &seal, NOW).apply(&mut expired));
    let change = take_over(&expired, &seal, "w2", NOW + 1, NOW).unwrap();
    assert!(change.claim.as_ref().unwrap().taken_over);
    assert!(!change.claim.as_ref().unwrap().answer.ok);
    let mut after = expired.clone();
    assert!(change.apply(&mut after));
    assert_eq!(events(&after).last(), Some(&RunEventKind::Claimed));
}

#[test]
fn a_claim_of_an_answered_run_is_not_a_takeover() {
    let row = parked();
    let accept = Answer::accept(&row.request_id, "Ada");
    let how = Answering::Submit { by: "a".to_owned() };
    let mut answered = row.clone();
    assert!(answer(&accept, &how, &Seal::default(), NOW).apply(&mut answered));
    let change = take_over(&answered, &Seal::default(), "w1", NOW + 1, NOW).unwrap();
    let claim = change.claim.unwrap();
    assert!(!claim.taken_over);
    assert_eq!((claim.token, claim.attempt()), (1, 1));
}

#[test]
fn an_unreadable_row_is_marked_damaged_instead_of_claimed() {
    let (mut row, _) = claimed(&parked(), "w1");
    "{not a record".clone_into(&mut row.record);
    let change = take_over(&row, &Seal::default(), "w2", NOW + 1, NOW).unwrap_err();
    assert_eq!(change.guard, Guard::Version(row.version));
    let mut after = row.clone();
    assert!(change.apply(&mut after));
    assert_eq!(
        (after.state.as_str(), after.lease_owner.as_deref()),
        ("damaged", None)
    );
    let why = after.as_damaged().unwrap();
    assert!(why.reason.contains("record"), "{}", why.reason);
    // a row changed since it was read is left alone
    let stale = damage(&row, &StoreError::Invalid("x".to_owned()), "w3", NOW);
    assert!(!stale.apply(&mut after));
}

#[test]
fn renew_and_checkpoint_move_the_lease_only_while_the_claim_holds() {
    let seal = Seal::default();
    let (row, claim) = claimed(&parked(), "w1");
    let mut after = row.clone();
    assert!(renew(&claim, None, NOW + 90_000, NOW).apply(&mut after));
    assert_eq!(after.lease_until, Some(NOW + 90_000));
    assert_eq!(after.history, row.history);
    let state = serde_json::json!({"turn": 1});
    assert!(checkpoint(&claim, &state, &seal, NOW + 95_000, NOW).apply(&mut after));
    assert_eq!(after.checkpoint(&seal).unwrap(), Some(state));
    // a claim taken over since: its lease is lost
    let over = take_over(&after, &seal, "w2", NOW + 1, NOW).unwrap();
    assert!(over.apply(&mut after));
    assert!(!renew(&claim, None, NOW + 99_000, NOW).apply(&mut after));
    assert_eq!(after.lease_owner.as_deref(), Some("w2"));
}

#[test]
fn finish_keeps_the_result_or_parks_the_run_again_on_its_new_request() {
    let seal = Seal::default();
    let (row, claim) = claimed(&parked(), "w1");
    let mut done = row.clone();
    let outcome = Outcome::Finished("{\"status\":\"done\"}".to_owned(), "done");
    assert!(finish(&claim, outcome, NOW + 5).apply(&mut done));
    assert_eq!(
        (done.state.as_str(), done.lease_owner.as_deref()),
        ("finished", None)
    );
    assert_eq!(done.result.as_deref(), Some("{\"status\":\"done\"}"));
    let last = done.info().unwrap().history.last().cloned().unwrap();
    assert_eq!(
        (last.event, last.outcome.as_deref()),
        (RunEventKind::Finished, Some("done"))
    );

    let again = record(false);
    let cols = crate::store::Columns::of(row.run_id.clone(), &again, &seal);
    let mut parked_again = row.clone();
    assert!(finish(&claim, Outcome::Parked(cols), NOW + 7).apply(&mut parked_again));
    assert_eq!(parked_again.state, "parked");
    assert_eq!(parked_again.request_id, again.pending().id);
    assert_eq!(parked_again.created_at, NOW + 7);
    assert_eq!(
        (
            parked_again.answer.as_ref(),
            parked_again.checkpoint.as_ref()
        ),
        (None, None)
    );
}

#[test]
fn fail_retries_under_the_claim_or_gives_the_run_up_counting_attempts() {
    let (row, claim) = claimed(&parked(), "w1");
    let mut retried = row.clone();
    assert!(fail(&claim, "boom", Some(NOW + 10), NOW).apply(&mut retried));
    assert_eq!(
        (retried.state.as_str(), retried.lease_until),
        ("claimed", Some(NOW + 10))
    );
    let last = retried.info().unwrap().history.last().cloned().unwrap();
    assert_eq!(
        (last.event, last.attempt, last.outcome),
        (RunEventKind::Failed, Some(1), None)
    );

    let mut given_up = row.clone();
    let giving_up = Claim {
        gives_up: true,
        ..claim.clone()
    };
    assert!(fail(&giving_up, "too many", None, NOW).apply(&mut given_up));
    assert_eq!(
        (given_up.state.as_str(), given_up.lease_owner.as_deref()),
        ("failed", None)
    );
    let last = given_up.info().unwrap().history.last().cloned().unwrap();
    assert_eq!(
        (last.attempt, last.outcome.as_deref()),
        (Some(0), Some("failed"))
    );
}

#[test]
fn release_hands_the_run_back_answered_or_expired() {
    let seal = Seal::default();
    let (row, claim) = claimed(&parked(), "w1");
    let mut back = row.clone();
    assert!(release(&claim, NOW).apply(&mut back));
    assert_eq!(
        (back.state.as_str(), back.lease_owner.as_deref()),
        ("answered", None)
    );
    assert_eq!(events(&back).last(), Some(&RunEventKind::Released));

    let mut expired = parked();
    assert!(expire(&expired.clone(), &seal, NOW).apply(&mut expired));
    let over = take_over(&expired, &seal, "w2", NOW + 1, NOW).unwrap();
    let claim = over.claim.clone().unwrap();
    assert!(over.apply(&mut expired));
    assert!(release(&claim, NOW).apply(&mut expired));
    assert_eq!(expired.state, "expired");
}

#[test]
fn a_claim_carries_the_stores_check_of_its_own_record_only() {
    let (_, claim) = claimed(&parked(), "w1");
    let checked = claim.checked.clone().unwrap();
    let found = claim.record.check().unwrap();
    assert_eq!(checked.of_record(&claim.record), Some(found));
    // another record put in the claim's place is checked again
    assert_eq!(checked.of_record(&record(false)), None);
}

#[test]
fn a_parks_columns_are_the_rows_as_read_back() {
    for expires in [false, true] {
        let insert = park(&record(expires), &Seal::default(), NOW);
        let read = insert.row.info().unwrap();
        assert_eq!(format!("{:?}", insert.info()), format!("{read:?}"));
    }
}
