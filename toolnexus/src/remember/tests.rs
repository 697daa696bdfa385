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
        bad(json!({"scope": "tool", "within": "principal", "for": 7})),
        Err("`remember.for` must be a string".to_owned())
    );
    assert_eq!(
        bad(json!({"scope": "tool", "within": "principal", "by": "all"})),
        Err("`remember` has an unknown key `by`".to_owned())
    );
}

#[test]
fn what_an_answer_remembers() {
    let approval = Request::approval("Pay?");
    let args = json!({"to": "Ada"});
    let make = |request: &Request, answer: &Answer, conv: Option<&str>, by: Option<&str>| {
        rule_of_answer(
            request,
            answer,
            "pay",
            &args,
            "run-1",
            conv,
            Some("ada"),
            by,
        )
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
        rule_of_answer(
            &approval,
            &mine,
            "pay",
            &args,
            "run-1",
            Some("c"),
            None,
            Some("ada")
        )
        .unwrap_err()
        .starts_with("`within: principal` for a run started for nobody")
    );
    // the host's own answer (straight to the client): the principal's rule, no answerer named
    let rule = make(&approval, &mine, None, None).unwrap().unwrap();
    assert_eq!((rule.holder.as_str(), rule.answered_by), ("ada", None));
}

/// The attack: bob, allowed to answer one of ada's requests, asks to remember "for me"; the
/// rule would cover ada's runs. Refused (in both reaches) unless the store recorded the
/// host's grant (`remember.for`); a granted rule names bob as who made it.
#[test]
fn an_answerer_cannot_make_a_rule_for_another_principals_runs() {
    let approval = Request::approval("Pay 999 to mallory?");
    let args = json!({"amount": 999, "to": "mallory"});
    let make = |answer: &Answer, by: Option<&str>| {
        rule_of_answer(
            &approval,
            answer,
            "pay",
            &args,
            "run-1",
            Some("c"),
            Some("ada"),
            by,
        )
    };
    for within in [Within::Principal, Within::Conversation] {
        let asked = remembering(Answer::ok(&approval.id), Scope::Tool, within);
        assert_eq!(
            make(&asked, Some("bob")),
            Err("`bob` may not make a rule covering the runs of `ada`: a remembered decision is made by the run's principal answering their own run, or by an answerer the host allows to grant for them".to_owned())
        );
        // a `for` naming someone else is refused, whoever answers
        let mut forged = asked.clone();
        forged.data.as_mut().unwrap()["remember"]["for"] = json!("bob");
        assert_eq!(
            make(&forged, Some("bob")),
            Err("`remember.for` names `bob`, but the run is `ada`'s".to_owned())
        );
        // granted (the store wrote `for: ada` after the host's check): ada's rule, by bob
        let mut granted = asked.clone();
        granted.data.as_mut().unwrap()["remember"]["for"] = json!("ada");
        let rule = make(&granted, Some("bob")).unwrap().unwrap();
        assert_eq!(rule.answered_by.as_deref(), Some("bob"));
        let holder = if within == Within::Principal {
            "ada"
        } else {
            "c"
        };
        assert_eq!(rule.holder, holder);
    }
}

/// What a store records for a submit: the remember with whose runs it covers, or a refusal.
#[test]
fn a_submit_records_whose_runs_a_rule_covers_or_nothing() {
    use crate::ledger::StoreError;
    let approval = Request::approval("Pay?");
    let asked = remembering(Answer::ok(&approval.id), Scope::Tool, Within::Principal);
    let recorded = super::owner::answer_to_record(&asked, Some("ada"), "ada", false).unwrap();
    assert_eq!(
        recorded.data.as_ref().unwrap()["remember"]["for"],
        json!("ada")
    );
    assert!(matches!(
        super::owner::answer_to_record(&asked, Some("ada"), "bob", false),
        Err(StoreError::NotAllowed(m)) if m.starts_with("the answer to `") && m.contains("nothing was recorded: `bob` may not make")
    ));
    let granted = super::owner::answer_to_record(&asked, Some("ada"), "bob", true).unwrap();
    assert_eq!(
        granted.data.as_ref().unwrap()["remember"]["for"],
        json!("ada")
    );
    assert!(matches!(
        super::owner::answer_to_record(&asked, None, "bob", true),
        Err(StoreError::NotAllowed(m)) if m.contains("`within: principal` for a run started for nobody")
    ));
    // a conversation's rule of a run for nobody: anyone who may answer it
    let in_conv = remembering(Answer::ok(&approval.id), Scope::Tool, Within::Conversation);
    assert_eq!(
        super::owner::answer_to_record(&in_conv, None, "bob", false)
            .unwrap()
            .as_ref(),
        &in_conv
    );
    // no remember: recorded as it is
    let plain = Answer::ok(&approval.id);
    assert_eq!(
        super::owner::answer_to_record(&plain, Some("ada"), "bob", false)
            .unwrap()
            .as_ref(),
        &plain
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
        rule_of_answer(&approval, &for_tool, "pay", &edited, "run-1", None, Some("ada"), Some("ada")),
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
        Some("ada"),
    )
    .unwrap()
    .unwrap();
    assert_eq!(rule.args, Some(edited));
}

/// The attack: a remembered exact-call rule (`Scope::Args`, keyed on the double the
/// arguments hold) dodged by the model spelling its number another way. An in-process model's
/// arguments string is read exactly, so every spelling is one call and one rule key. Runs in
/// `cargo test -p toolnexus`, where nothing turns serde_json's `float_roundtrip` on.
#[test]
fn a_remembered_call_is_not_dodged_by_respelling_its_number() {
    let key = super::call_fingerprint("pay", &json!({"amount": 3e25, "to": "Bob"}));
    for spelling in crate::json_text::SPELLINGS_OF_3E25 {
        let text = format!(r#"{{"amount":{spelling},"to":"Bob"}}"#);
        let args = crate::Reply::tool_call("pay", text)
            .into_turn()
            .tool_calls
            .remove(0)
            .arguments;
        assert_eq!(
            args["amount"].as_f64().map(f64::to_bits),
            Some(3e25_f64.to_bits()),
            "{spelling} read as {args}"
        );
        assert_eq!(super::call_fingerprint("pay", &args), key, "{spelling}");
    }
}
