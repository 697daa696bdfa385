//! Rules at rest are kept like runs: listed newest first, one page at a time
//! ([`RuleStore::list_rules_page`]), and the approval check reads the rules that may cover
//! the call only (an indexed lookup), however many rules the principal has.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::json;
use toolnexus::remember::{
    Effect, Rule, RuleQuery, Scope, Within, call_fingerprint, rule_of_answer,
};
use toolnexus::store::StoreError;
use toolnexus::{Answer, DeclineReason, Remember, Request};

use super::rules::rules_of;
use super::{LEASE, Make, make_subject};

/// A rule of alice's for `pay` with `amount`, made `at` (`scope` args or tool; deny when
/// `deny`).
pub fn alices_rule(amount: u64, scope: Scope, deny: bool, at: SystemTime) -> Rule {
    let request = Request::approval("Pay?");
    let answer = if deny {
        Answer::decline(&request.id, DeclineReason::Declined)
    } else {
        Answer::ok(&request.id)
    }
    .remember(Remember::new(scope, Within::Principal));
    let args = json!({"amount": amount, "to": "mallory"});
    let mut rule = rule_of_answer(
        &request,
        &answer,
        "pay",
        &args,
        "run-1",
        None,
        Some("alice"),
        Some("alice"),
    )
    .unwrap()
    .unwrap();
    rule.created_at = at;
    rule
}

/// 120 rules made a millisecond apart: pages of 50 list them newest first, each once, the
/// last page without a next cursor; a cursor no page returned is refused.
pub async fn rules_are_listed_newest_first_and_paged(make: Make) {
    let s = subject!(make);
    let rules = rules_of(s.store());
    let start = UNIX_EPOCH + Duration::from_secs(1_800_000_000);
    let mut kept_ids = Vec::new();
    for n in 0..120u64 {
        let rule = alices_rule(n, Scope::Args, false, start + Duration::from_millis(n));
        rules.put_rule(&rule).await.unwrap();
        kept_ids.push(rule.id);
    }
    let mut listed = Vec::new();
    let mut sizes = Vec::new();
    let mut after: Option<String> = None;
    loop {
        let page = rules.list_rules_page(after.as_deref(), 50).await.unwrap();
        assert!(page.damaged.is_empty(), "{:?}", page.damaged);
        sizes.push(page.rules.len());
        listed.extend(page.rules.into_iter().map(|r| r.id));
        match page.next {
            Some(next) => after = Some(next),
            None => break,
        }
    }
    assert_eq!(sizes, [50, 50, 20]);
    kept_ids.reverse();
    assert_eq!(listed, kept_ids, "newest first, each once");
    // the newest is on the first page: a new "approve every call" rule can be seen and revoked
    let newest = alices_rule(7, Scope::Tool, false, start + Duration::from_secs(60));
    rules.put_rule(&newest).await.unwrap();
    let first = rules.list_rules_page(None, 50).await.unwrap();
    assert_eq!(first.rules[0].id, newest.id);
    let wrong = rules.list_rules_page(Some("not a cursor"), 50).await;
    assert!(matches!(wrong, Err(StoreError::Invalid(_))), "{wrong:?}");
}

/// 2,000 exact-call rules of alice's for `pay`: the check of one call reads the candidates
/// that may cover it only (its exact-call rule and the tool's rules), not every rule of
/// alice's; deny still wins, and a call no rule covers reads none.
pub async fn the_approval_check_reads_only_the_calls_candidates(make: Make) {
    let s = subject!(make);
    let rules = rules_of(s.store());
    let start = UNIX_EPOCH + Duration::from_secs(1_800_000_000);
    for n in 0..2_000u64 {
        let rule = alices_rule(n, Scope::Args, false, start + Duration::from_millis(n));
        rules.put_rule(&rule).await.unwrap();
    }
    let deny = alices_rule(5, Scope::Args, true, start + Duration::from_secs(10));
    rules.put_rule(&deny).await.unwrap();
    let for_tool = alices_rule(0, Scope::Tool, false, start + Duration::from_secs(11));
    rules.put_rule(&for_tool).await.unwrap();
    let fp = call_fingerprint("pay", &json!({"amount": 5.0, "to": "mallory"}));
    let now = SystemTime::now();
    let call = RuleQuery::new("pay", &fp, now).for_principal(Some("alice"));
    let mut candidates: Vec<(Effect, Scope)> = rules
        .candidate_rules(&call)
        .await
        .unwrap()
        .into_iter()
        .map(|r| (r.effect, r.scope))
        .collect();
    candidates.sort_by_key(|(e, s)| (e.as_str(), s.as_str()));
    assert_eq!(
        candidates,
        [
            (Effect::Allow, Scope::Args),
            (Effect::Allow, Scope::Tool),
            (Effect::Deny, Scope::Args)
        ]
    );
    assert_eq!(
        rules.decide(&call).await.unwrap().map(|r| r.id),
        Some(deny.id)
    );
    let unknown = call_fingerprint("pay", &json!({"amount": 999_999, "to": "mallory"}));
    let other = RuleQuery::new("pay", &unknown, now).for_principal(Some("alice"));
    assert_eq!(rules.candidate_rules(&other).await.unwrap().len(), 1);
    let bobs = RuleQuery::new("pay", &fp, now).for_principal(Some("bob"));
    assert!(rules.candidate_rules(&bobs).await.unwrap().is_empty());
}
