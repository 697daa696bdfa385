use std::time::{Duration, UNIX_EPOCH};

use serde_json::json;

use super::{Effect, Remember, Scope, Within, rule_of_answer};
use crate::request::{Answer, DeclineReason, Request};

fn remembering(answer: Answer, scope: Scope, within: Within) -> Answer {
    answer.remember(Remember::new(scope, within))
}

#[test]
fn the_wire_form_reads_back() {
    let at = UNIX_EPOCH + Duration::from_millis(1_790_000_000_250);
    let r = Remember::new(Scope::Tool, Within::Conversation).until(at);
    let answer = Answer::accept("r1", json!({"args": {"a": 1}})).remember(r);
    assert_eq!(
        answer.data,
        Some(
            json!({"args": {"a": 1}, "remember": {"scope": "tool", "within": "conversation", "until": "2026-09-21T14:13:20.250Z"}})
        )
    );
    assert_eq!(Remember::of_answer(&answer), Some(Ok(r)));
    assert_eq!(Remember::of_answer(&Answer::ok("r1")), None);
    let bad = |v| Remember::of_answer(&Answer::accept("r1", json!({"remember": v}))).unwrap();
    assert_eq!(
        bad(json!("tool")),
        Err("`remember` must be an object".to_owned())
    );
    assert_eq!(
        bad(json!({"scope": "tool"})),
        Err("`remember` has no `within`".to_owned())
    );
    assert_eq!(
        bad(json!({"scope": "tool", "within": "team"})),
        Err("`remember.within` must be \"conversation\" or \"principal\", not \"team\"".to_owned())
    );
    assert_eq!(
        bad(json!({"scope": "tool", "within": "principal", "until": "tomorrow"})),
        Err("`remember.until` must be an RFC 3339 time, not \"tomorrow\"".to_owned())
    );
    assert_eq!(
        bad(json!({"scope": "tool", "within": "principal", "for": "all"})),
        Err("`remember` has an unknown key `for`".to_owned())
    );
}

#[test]
fn what_an_answer_remembers() {
    let approval = Request::approval("Pay?");
    let args = json!({"to": "Ada"});
    let make = |request: &Request, answer: &Answer, conv: Option<&str>, by: Option<&str>| {
        rule_of_answer(request, answer, "pay", &args, "run-1", conv, by)
    };
    // nothing asked, nothing made
    assert_eq!(
        make(&approval, &Answer::ok(&approval.id), Some("c"), None),
        Ok(None)
    );
    // allow, for these arguments, in the conversation
    let ok = remembering(Answer::ok(&approval.id), Scope::Args, Within::Conversation);
    let rule = make(&approval, &ok, Some("c"), Some("ada"))
        .unwrap()
        .unwrap();
    assert_eq!(
        (rule.effect, rule.scope, rule.within),
        (Effect::Allow, Scope::Args, Within::Conversation)
    );
    assert_eq!(
        (rule.holder.as_str(), rule.args.as_ref()),
        ("c", Some(&args))
    );
    assert_eq!(
        rule.fingerprint.as_deref(),
        Some(super::call_fingerprint("pay", &args).as_str())
    );
    // deny, for the principal
    let no = remembering(
        Answer::decline(&approval.id, DeclineReason::Declined),
        Scope::Tool,
        Within::Principal,
    );
    let rule = make(&approval, &no, None, Some("ada")).unwrap().unwrap();
    assert_eq!(
        (rule.effect, rule.holder.as_str(), rule.args),
        (Effect::Deny, "ada", None)
    );
    // cancelled or expired: nobody decided
    let cancelled = remembering(
        Answer::decline(&approval.id, DeclineReason::Cancelled),
        Scope::Tool,
        Within::Principal,
    );
    assert_eq!(
        make(&approval, &cancelled, None, Some("ada")),
        Err("a `cancelled` answer decides nothing, so it is not remembered".to_owned())
    );
    // only approvals
    let input = Request::input("Name?");
    let named = remembering(Answer::ok(&input.id), Scope::Tool, Within::Principal);
    assert_eq!(
        make(&input, &named, None, Some("ada")),
        Err("only approvals are remembered, not a `input` request".to_owned())
    );
    // no conversation, nobody known
    assert!(
        make(&approval, &ok, None, Some("ada"))
            .unwrap_err()
            .starts_with("`within: conversation` for a run outside any conversation")
    );
    let mine = remembering(Answer::ok(&approval.id), Scope::Tool, Within::Principal);
    assert!(
        make(&approval, &mine, Some("c"), None)
            .unwrap_err()
            .starts_with("`within: principal` with nobody known to have answered")
    );
}

/// An edit is remembered for the edited arguments only, never for the whole tool.
#[test]
fn an_edit_is_remembered_for_its_own_arguments_only() {
    let approval =
        Request::editable_approval("Pay?", json!({"to": "Ada"}), json!({"type": "object"}));
    let edited = json!({"to": "Bob"});
    let for_tool = approval
        .approve_with(edited.clone())
        .remember(Remember::new(Scope::Tool, Within::Principal));
    assert_eq!(
        rule_of_answer(&approval, &for_tool, "pay", &edited, "run-1", None, Some("ada")),
        Err("an edited approval is remembered for its own arguments only (scope `args`), never for the whole tool".to_owned())
    );
    let for_args = approval
        .approve_with(edited.clone())
        .remember(Remember::new(Scope::Args, Within::Principal));
    let rule = rule_of_answer(
        &approval,
        &for_args,
        "pay",
        &edited,
        "run-1",
        None,
        Some("ada"),
    )
    .unwrap()
    .unwrap();
    assert_eq!(rule.args, Some(edited));
}
