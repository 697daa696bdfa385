//! Remembered decisions ([`toolnexus::remember`]): the rules a store keeps and how they match
//! (never wider than chosen); the loop that checks them is in `rules_loop`.

use std::time::{Duration, SystemTime};

use serde_json::{Value, json};
use toolnexus::remember::{
    Effect, Rule, RuleQuery, RuleStore, Scope, Within, call_fingerprint, rule_of_answer,
};
use toolnexus::store::{RunStore, StoreError};
use toolnexus::{Answer, DeclineReason, Remember, Request};

use super::{LEASE, Make, make_subject};

/// The rules of `store`.
pub(super) fn rules_of(store: &dyn RunStore) -> &dyn RuleStore {
    store.rules().expect("the store keeps rules")
}

/// A rule as the answer `answer` to an approval of `pay` with `args` in run `run-1` makes it.
pub(super) fn rule(
    answer: impl FnOnce(&str) -> Answer,
    args: &Value,
    conversation: Option<&str>,
    by: Option<&str>,
) -> Rule {
    let request = Request::approval("Pay?");
    let answer = answer(&request.id);
    rule_of_answer(
        &request,
        &answer,
        "pay",
        args,
        "run-1",
        conversation,
        by,
        by,
    )
    .expect("the answer can be remembered")
    .expect("the answer asks to be remembered")
}

/// The query of a call of `pay` with `args`, now, in `conversation`, for `principal`.
fn decide_on<'a>(
    fingerprint: &'a str,
    conversation: Option<&'a str>,
    principal: Option<&'a str>,
) -> RuleQuery<'a> {
    RuleQuery::new("pay", fingerprint, SystemTime::now())
        .in_conversation(conversation)
        .for_principal(principal)
}

/// Rules are kept, read back from another handle as they were written, matched only where
/// the person chose (these exact arguments, this conversation, this principal, not expired),
/// deny before allow, listed oldest first, revoked and purged.
pub async fn rules_keep_match_and_revoke(make: Make) {
    let s = subject!(make);
    let (one, other) = (
        rules_of(s.store()),
        rules_of(s.handles.last().unwrap().as_ref()),
    );
    let args = json!({"to": "Ada", "amount": 40});
    let allow = rule(
        |id| Answer::ok(id).remember(Remember::new(Scope::Args, Within::Conversation)),
        &args,
        Some("c1"),
        Some("ada"),
    );
    one.put_rule(&allow).await.unwrap();
    assert_eq!(
        other.get_rule(&allow.id).await.unwrap(),
        Some(allow.clone())
    );
    assert!(matches!(
        one.put_rule(&allow).await.unwrap_err(),
        StoreError::Conflict(m) if m == format!("rule `{}` is already kept", allow.id)
    ));

    // the same arguments in another key order match; other arguments, another conversation,
    // a principal without the conversation do not
    let same: Value = serde_json::from_str(r#"{"amount": 40, "to": "Ada"}"#).unwrap();
    let fp = call_fingerprint("pay", &same);
    let decided = |q| async move { other.decide(&q).await.unwrap().map(|r| r.id) };
    assert_eq!(
        decided(decide_on(&fp, Some("c1"), None)).await,
        Some(allow.id.clone())
    );
    let fp41 = call_fingerprint("pay", &json!({"to": "Ada", "amount": 41}));
    assert_eq!(decided(decide_on(&fp41, Some("c1"), None)).await, None);
    assert_eq!(decided(decide_on(&fp, Some("c2"), None)).await, None);
    assert_eq!(decided(decide_on(&fp, None, Some("c1"))).await, None);
    assert_eq!(decided(decide_on(&fp, None, Some("ada"))).await, None);
    let other_tool = RuleQuery::new("refund", &fp, SystemTime::now()).in_conversation(Some("c1"));
    assert_eq!(other.decide(&other_tool).await.unwrap(), None);

    // a deny rule for ada's runs, on the whole tool: it wins over the older allow rule
    tokio::time::sleep(Duration::from_millis(5)).await;
    let deny = rule(
        |id| {
            Answer::decline(id, DeclineReason::Declined)
                .remember(Remember::new(Scope::Tool, Within::Principal))
        },
        &args,
        None,
        Some("ada"),
    );
    assert_eq!(
        (deny.effect, deny.scope, deny.args.clone()),
        (Effect::Deny, Scope::Tool, None)
    );
    other.put_rule(&deny).await.unwrap();
    assert_eq!(
        decided(decide_on(&fp, Some("c1"), Some("ada"))).await,
        Some(deny.id.clone())
    );
    assert_eq!(
        decided(decide_on(&fp41, None, Some("ada"))).await,
        Some(deny.id.clone())
    );
    assert_eq!(
        decided(decide_on(&fp, Some("c1"), Some("bob"))).await,
        Some(allow.id.clone())
    );

    ended_listed_and_revoked(one, other, &args, &allow, &deny).await;
}

/// The rest of [`rules_keep_match_and_revoke`]: an ended rule, the listing, revoking.
async fn ended_listed_and_revoked(
    one: &dyn RuleStore,
    other: &dyn RuleStore,
    args: &Value,
    allow: &Rule,
    deny: &Rule,
) {
    let fp = call_fingerprint("pay", args);
    let decided = |q| async move { other.decide(&q).await.unwrap().map(|r| r.id) };
    // a rule that ended never matches; one that has not ended does
    tokio::time::sleep(Duration::from_millis(5)).await;
    let ended = rule(
        |id| {
            Answer::ok(id).remember(
                Remember::new(Scope::Tool, Within::Principal)
                    .until(SystemTime::now() - Duration::from_secs(1)),
            )
        },
        args,
        None,
        Some("cy"),
    );
    one.put_rule(&ended).await.unwrap();
    assert_eq!(decided(decide_on(&fp, None, Some("cy"))).await, None);
    let later = SystemTime::now() - Duration::from_secs(2);
    let before_it_ended = RuleQuery::new("pay", &fp, later).for_principal(Some("cy"));
    assert_eq!(
        other.decide(&before_it_ended).await.unwrap().map(|r| r.id),
        Some(ended.id.clone())
    );

    let listed: Vec<String> = one
        .list_rules(10)
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.id)
        .collect();
    assert_eq!(
        listed,
        [allow.id.clone(), deny.id.clone(), ended.id.clone()]
    );
    assert_eq!(one.list_rules(1).await.unwrap().len(), 1);
    assert_eq!(
        other.purge_expired_rules(SystemTime::now()).await.unwrap(),
        1
    );
    assert_eq!(one.get_rule(&ended.id).await.unwrap(), None);

    assert!(one.revoke_rule(&deny.id).await.unwrap());
    assert!(!other.revoke_rule(&deny.id).await.unwrap());
    assert_eq!(
        decided(decide_on(&fp, Some("c1"), Some("ada"))).await,
        Some(allow.id.clone())
    );
    assert!(other.revoke_rule(&allow.id).await.unwrap());
    assert_eq!(decided(decide_on(&fp, Some("c1"), Some("ada"))).await, None);
    assert!(one.list_rules(10).await.unwrap().is_empty());
}

/// The attack: an `args` rule stripped of its call's fingerprint (it could match no call,
/// and a SQL store could not read it back). Every store refuses it before keeping anything:
/// no row, no listing entry, no damaged page entry.
pub async fn an_args_rule_without_its_fingerprint_is_refused_and_nothing_kept(make: Make) {
    let s = subject!(make);
    let rules = rules_of(s.store());
    let mut stripped = rule(
        |id| Answer::ok(id).remember(Remember::new(Scope::Args, Within::Principal)),
        &json!({"to": "Ada", "amount": 40}),
        None,
        Some("ada"),
    );
    stripped.fingerprint = None;
    let refused = rules.put_rule(&stripped).await.unwrap_err();
    assert_eq!(
        refused,
        StoreError::Invalid(format!(
            "rule `{}`: an `args` rule without its fingerprint matches no call",
            stripped.id
        ))
    );
    assert_eq!(rules.get_rule(&stripped.id).await.unwrap(), None);
    let page = rules.list_rules_page(None, 10).await.unwrap();
    assert!(page.rules.is_empty() && page.damaged.is_empty(), "{page:?}");
}
