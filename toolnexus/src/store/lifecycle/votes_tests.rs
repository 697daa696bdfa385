//! The vote transition without a database: a row parked on an approval that needs two
//! approvers and refuses its requester, each ballot decided and applied.

use serde_json::json;

use super::{Ballot, vote};
use crate::request::{Answer, DeclineReason};
use crate::run::PendingRun;
use crate::store::lifecycle::{Answering, Guard, park};
use crate::store::{RawRow, RunEventKind, Seal, StoreError};
use crate::{Client, FnTool, Reply, Request, ScriptedModel, ToolResult, Toolkit};

const NOW: i64 = 1_000_000;

/// A run for `alice`, parked on an approval of `pay` (`{"amount": 40}` proposed, editable)
/// that needs `approvals` approvers, not alice.
fn record(approvals: u32) -> PendingRun {
    let pay = FnTool::builder("pay")
        .description("Pays.")
        .handler(move |args, _| async move {
            let request = Request::editable_approval(
                "Pay?",
                serde_json::Value::Object(args),
                json!({"type": "object"}),
            )
            .with_approvals(approvals)
            .with_not_by_requester();
            ToolResult::suspended(request)
        })
        .build()
        .unwrap();
    let toolkit = Toolkit::builder().tool(pay).build().unwrap();
    let script = [Reply::tool_call("pay", json!({"amount": 40}))];
    let client = Client::builder(ScriptedModel::new(script))
        .model_name("m")
        .build()
        .unwrap()
        .for_principal("alice");
    crate::store::lifecycle::tests::halt(&client, &toolkit)
}

fn parked(approvals: u32) -> RawRow {
    park(&record(approvals), &Seal::default(), NOW).row
}

fn submit(by: &str) -> Answering {
    Answering::Submit { by: by.to_owned() }
}

/// Applies the ballot's change (a wait or the reaching vote) to `row`.
fn cast(row: &mut RawRow, answer: &Answer, by: &str) -> Ballot {
    let ballot = vote(row, answer, &submit(by), by, &Seal::default(), NOW).unwrap();
    match &ballot {
        Ballot::Wait { change, .. } | Ballot::Reached(change) => assert!(change.apply(row)),
        Ballot::Answer | Ballot::Again { .. } => {}
    }
    ballot
}

use crate::store::lifecycle::tests::events as kinds;

#[test]
fn a_vote_below_the_count_keeps_the_run_parked_and_appends_the_vote() {
    let mut row = parked(2);
    let accept = Answer::accept(&row.request_id, json!({}));
    let ballot = cast(&mut row, &accept, "bob");
    let Ballot::Wait {
        change,
        given,
        required,
    } = ballot
    else {
        panic!("expected a wait, got {ballot:?}");
    };
    assert_eq!((given, required), (1, 2));
    assert_eq!(
        change.guard,
        Guard::Votable {
            version: 1,
            now: NOW
        }
    );
    assert_eq!(change.set.state, None);
    assert_eq!(row.state, "parked");
    assert_eq!(row.answer, None);
    assert_eq!(kinds(&row), [RunEventKind::Requested, RunEventKind::Voted]);
    let votes = row.votes(&Seal::default()).unwrap();
    assert_eq!(votes.len(), 1);
    assert_eq!(
        (votes[0].by.as_str(), votes[0].args.as_str()),
        ("bob", "shown")
    );
}

#[test]
fn the_vote_that_reaches_the_count_answers_the_run_by_its_giver() {
    let mut row = parked(2);
    let accept = Answer::accept(&row.request_id, json!({}));
    cast(&mut row, &accept, "bob");
    let ballot = cast(&mut row, &accept, "carol");
    assert!(matches!(ballot, Ballot::Reached(_)), "{ballot:?}");
    let info = row.info().unwrap();
    assert_eq!(info.state, crate::store::RunState::Answered);
    assert_eq!(info.answered_by(), Some("carol"));
    assert_eq!(
        kinds(&row),
        [
            RunEventKind::Requested,
            RunEventKind::Voted,
            RunEventKind::Voted,
            RunEventKind::Answered
        ]
    );
    assert_eq!(row.answer(&Seal::default()).unwrap(), Some(accept));
    assert_eq!(row.votes(&Seal::default()).unwrap().len(), 2);
}

#[test]
fn the_same_person_twice_changes_nothing() {
    let mut row = parked(2);
    let accept = Answer::accept(&row.request_id, json!({}));
    cast(&mut row, &accept, "bob");
    let before = row.version;
    let ballot = cast(&mut row, &accept, "bob");
    assert!(
        matches!(
            ballot,
            Ballot::Again {
                given: 1,
                required: 2
            }
        ),
        "{ballot:?}"
    );
    assert_eq!(row.version, before);
}

#[test]
fn an_edit_is_counted_apart_from_the_arguments_shown() {
    let mut row = parked(2);
    let shown = Answer::accept(&row.request_id, json!({}));
    let same = Answer::accept(&row.request_id, json!({"args": {"amount": 40}}));
    let edited = Answer::accept(&row.request_id, json!({"args": {"amount": 30}}));
    cast(&mut row, &shown, "bob");
    let ballot = cast(&mut row, &edited, "carol");
    assert!(
        matches!(ballot, Ballot::Wait { given: 1, .. }),
        "{ballot:?}"
    );
    // the proposed arguments sent back as they were are the arguments shown
    let ballot = cast(&mut row, &same, "dave");
    assert!(matches!(ballot, Ballot::Reached(_)), "{ballot:?}");
    assert_eq!(row.answer(&Seal::default()).unwrap(), Some(same));
}

#[test]
fn a_decline_or_a_single_approval_is_the_ordinary_answer() {
    let row = parked(2);
    let decline = Answer::decline(&row.request_id, DeclineReason::Declined);
    let ballot = vote(&row, &decline, &submit("bob"), "bob", &Seal::default(), NOW).unwrap();
    assert!(matches!(ballot, Ballot::Answer), "{ballot:?}");
    let row = parked(1);
    let accept = Answer::accept(&row.request_id, json!({}));
    let ballot = vote(&row, &accept, &submit("bob"), "bob", &Seal::default(), NOW).unwrap();
    assert!(matches!(ballot, Ballot::Answer), "{ballot:?}");
}

#[test]
fn the_requester_is_refused_before_anything_is_decided() {
    // with one approval too: the rule is the request's, not the count's
    for approvals in [1, 2] {
        let row = parked(approvals);
        for answer in [
            Answer::accept(&row.request_id, json!({})),
            Answer::decline(&row.request_id, DeclineReason::Declined),
        ] {
            match vote(
                &row,
                &answer,
                &submit("alice"),
                "alice",
                &Seal::default(),
                NOW,
            ) {
                Err(StoreError::NotAllowed(why)) => {
                    assert!(why.contains("notByRequester"), "{why}");
                    assert!(why.contains("nothing was recorded"), "{why}");
                }
                other => panic!("expected NotAllowed, got {other:?}"),
            }
        }
    }
}

#[test]
fn a_vote_read_before_another_landed_is_not_applied() {
    let row = parked(3);
    let accept = Answer::accept(&row.request_id, json!({}));
    let seal = Seal::default();
    let Ok(Ballot::Wait { change: bob, .. }) =
        vote(&row, &accept, &submit("bob"), "bob", &seal, NOW)
    else {
        panic!("bob waits");
    };
    let Ok(Ballot::Wait { change: carol, .. }) =
        vote(&row, &accept, &submit("carol"), "carol", &seal, NOW)
    else {
        panic!("carol waits");
    };
    let mut stored = row.clone();
    assert!(bob.apply(&mut stored));
    // carol's change was decided from the row before bob's vote: its guard fails, and the
    // vote decided again from the row as it is now keeps both
    assert!(!carol.apply(&mut stored));
    let Ok(Ballot::Wait { change, given, .. }) =
        vote(&stored, &accept, &submit("carol"), "carol", &seal, NOW)
    else {
        panic!("carol waits again");
    };
    assert_eq!(given, 2);
    assert!(change.apply(&mut stored));
    assert_eq!(stored.votes(&seal).unwrap().len(), 2);
}

#[test]
fn an_expired_request_takes_no_vote() {
    let mut row = parked(2);
    row.expires_at = Some(NOW - 1);
    let accept = Answer::accept(&row.request_id, json!({}));
    let ballot = vote(&row, &accept, &submit("bob"), "bob", &Seal::default(), NOW).unwrap();
    // the ordinary answer refuses it and expires the run
    assert!(matches!(ballot, Ballot::Answer), "{ballot:?}");
}

#[test]
fn a_vote_sealed_under_a_key_since_retired_still_counts_after_rotation() {
    use crate::run::SealKey;
    let old = || SealKey::new("k-old", [1u8; 32]).unwrap();
    let new = || SealKey::new("k-new", [2u8; 32]).unwrap();
    let before = Seal::new(old(), []);
    let rotated = Seal::new(new(), [old()]);
    let mut row = park(&record(2), &before, NOW).row;
    let accept = Answer::accept(&row.request_id, json!({}));
    let ballot = vote(&row, &accept, &submit("bob"), "bob", &before, NOW).unwrap();
    let Ballot::Wait { change, .. } = ballot else {
        panic!("bob's vote waits: {ballot:?}")
    };
    assert!(change.apply(&mut row));
    // the keys rotate: carol's vote, read under the new key with the old one retired,
    // counts bob's and reaches the count
    let ballot = vote(&row, &accept, &submit("carol"), "carol", &rotated, NOW + 1).unwrap();
    let Ballot::Reached(change) = ballot else {
        panic!("carol's vote reaches the count: {ballot:?}")
    };
    assert!(change.apply(&mut row));
    let voters: Vec<String> = row
        .votes(&Seal::new(new(), []))
        .expect("the votes are sealed again under the current key")
        .into_iter()
        .map(|v| v.by)
        .collect();
    assert_eq!(voters, ["bob", "carol"]);
    assert_eq!(row.answer(&rotated).unwrap(), Some(accept));
}
