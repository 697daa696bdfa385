//! Whose rule it is ([`toolnexus::remember`]): a remembered decision covers the runs of the
//! answered run's principal, and only that principal, or an answerer the host lets grant
//! for them ([`RunStore::submit_granting`]), may make it; the rule names who really answered.

use std::sync::Arc;

use serde_json::json;
use toolnexus::remember::{Effect, REMEMBER_FOR, Scope, Within};
use toolnexus::store::{RunState, RunStore, StoreError};
use toolnexus::{Answer, Client, Remember, RunResult, RunStatus};

use super::rules::rules_of;
use super::rules_loop::Payments;
use super::{LEASE, Make, make_subject};

/// Resumes the next answered run of `store` with `client` (a worker's part).
async fn resume_next(store: &Arc<dyn RunStore>, client: &Client, pay: &Payments) -> RunResult {
    let claim = store
        .claim_next("worker-1")
        .await
        .unwrap()
        .expect("an answered run to resume");
    client
        .resume_claim(store.as_ref(), &claim, &pay.toolkit)
        .await
        .unwrap()
}

/// The attack: bob may answer one of alice's requests (a web tier's `submit(answer, "bob")`)
/// and asks to remember "for me". Refused with `NotAllowed`, and nothing is recorded: the
/// run stays parked with no answer in its history, and no rule is kept, whichever reach bob
/// asks for and whatever `remember.for` he writes. The same answer from alice herself is
/// recorded (the store writes whose runs it covers); bob granted by the host
/// (`submit_granting`) makes alice's rule, naming bob; bob's own runs stay his.
pub async fn an_answerer_cannot_grant_a_standing_rule_for_another_principal(make: Make) {
    let s = subject!(make);
    let store = s.handles[0].clone();
    let rules = rules_of(store.as_ref());
    let pay = Payments::new();
    let client = Payments::client(store.clone()).build().unwrap();
    let alice = client.for_principal("alice");

    let parked = alice.run("mallory", &pay.toolkit).await.unwrap();
    let request = parked.pending.clone().expect("alice's run asks");
    let run_id = toolnexus::PendingRun::try_from(&parked)
        .unwrap()
        .run_id()
        .to_owned();
    for within in [Within::Principal, Within::Conversation] {
        for stated in [None, Some("alice"), Some("bob")] {
            let mut answer = Answer::ok(&request.id).remember(Remember::new(Scope::Tool, within));
            if let Some(stated) = stated {
                answer.data.as_mut().unwrap()["remember"][REMEMBER_FOR] = json!(stated);
            }
            let refused = store.submit(&answer, "bob").await.unwrap_err();
            let StoreError::NotAllowed(why) = &refused else {
                panic!("{within:?}, for {stated:?}: {refused:?}");
            };
            assert!(
                why.contains("nothing was recorded")
                    && (why.contains("`bob` may not make a rule covering the runs of `alice`")
                        || why.contains("`remember.for` names `bob`, but the run is `alice`'s")),
                "{why}"
            );
        }
    }
    let info = store.info(&run_id).await.unwrap().unwrap();
    assert_eq!(info.state, RunState::Parked);
    assert_eq!(info.answered_by(), None);
    assert!(rules.list_rules(10).await.unwrap().is_empty());
    assert_eq!(pay.ran(), 0);

    // granted by the host: alice's rule, made by bob
    let granted = Answer::ok(&request.id).remember(Remember::new(Scope::Tool, Within::Principal));
    let info = store.submit_granting(&granted, "bob").await.unwrap();
    assert_eq!(info.answered_by(), Some("bob"));
    let done = resume_next(&store, &client, &pay).await;
    assert_eq!(done.status, RunStatus::Done, "{done:?}");
    let kept = rules.list_rules(10).await.unwrap();
    assert_eq!(kept.len(), 1, "{kept:?}");
    assert_eq!(
        (
            kept[0].effect,
            kept[0].within,
            kept[0].holder.as_str(),
            kept[0].answered_by.as_deref()
        ),
        (Effect::Allow, Within::Principal, "alice", Some("bob"))
    );
    // it covers alice's runs (both calls paid without asking), never bob's
    let ran = pay.ran();
    let again = alice.run("mallory", &pay.toolkit).await.unwrap();
    assert_eq!(again.status, RunStatus::Done, "{again:?}");
    assert_eq!(pay.ran(), ran + 2);
    let bobs = client
        .for_principal("bob")
        .run("mallory", &pay.toolkit)
        .await
        .unwrap();
    assert_eq!(bobs.status, RunStatus::Pending);
    assert!(rules.revoke_rule(&kept[0].id).await.unwrap());

    // alice answering her own run: recorded with whose runs it covers, and her rule
    let parked = alice.run("trent", &pay.toolkit).await.unwrap();
    let request = parked.pending.clone().unwrap();
    let own = Answer::decline(&request.id, toolnexus::DeclineReason::Declined)
        .remember(Remember::new(Scope::Tool, Within::Principal));
    store.submit(&own, "alice").await.unwrap();
    let stored = store.get_by_request(&request.id).await.unwrap().unwrap();
    let recorded = stored.answer.expect("the answer is recorded");
    assert_eq!(
        recorded.data.unwrap()["remember"][REMEMBER_FOR],
        json!("alice")
    );
    resume_next(&store, &client, &pay).await;
    let kept = rules.list_rules(10).await.unwrap();
    assert_eq!(
        kept.iter()
            .map(|r| (r.effect, r.holder.as_str(), r.answered_by.as_deref()))
            .collect::<Vec<_>>(),
        [(Effect::Deny, "alice", Some("alice"))]
    );
}

/// A run started for nobody has no principal's rules: `within: principal` is refused at
/// `submit` (granted or not), nothing recorded; its conversation's rule is anyone's to make.
pub async fn a_run_for_nobody_takes_no_principals_rule(make: Make) {
    let s = subject!(make);
    let store = s.handles[0].clone();
    let pay = Payments::new();
    let client = Payments::client(store.clone()).build().unwrap();
    let parked = client.run("mallory", &pay.toolkit).await.unwrap();
    let request = parked.pending.clone().unwrap();
    let answer = Answer::ok(&request.id).remember(Remember::new(Scope::Tool, Within::Principal));
    for refused in [
        store.submit(&answer, "bob").await,
        store.submit_granting(&answer, "bob").await,
    ] {
        assert!(
            matches!(&refused, Err(StoreError::NotAllowed(why)) if why.contains("`within: principal` for a run started for nobody")),
            "{refused:?}"
        );
    }
    let stored = store.get_by_request(&request.id).await.unwrap().unwrap();
    assert_eq!(stored.info.state, RunState::Parked);
    assert!(
        rules_of(store.as_ref())
            .list_rules(10)
            .await
            .unwrap()
            .is_empty()
    );
}
