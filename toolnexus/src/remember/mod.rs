//! Remembered decisions: an answer to an approval that also says "and the same from now on",
//! kept as a [`Rule`] in the store beside the runs and checked before a later call asks.
//!
//! # On the wire
//!
//! An approval's answer carries the choice in its `data` (this port's extension; other ports
//! ignore the key):
//!
//! ```text
//! "remember": {"scope": "args" | "tool", "within": "conversation" | "principal", "until"?: RFC 3339}
//! ```
//!
//! - `scope`: `args` covers calls of this tool with exactly these arguments (bound by their
//!   canonical fingerprint, [`call_fingerprint`]: key order, spacing and the spelling of a
//!   number (`5`, `5.0`, `5e0`, `50e-1`) do not matter, any other value does);
//!   `tool` covers every call of this tool.
//! - `within`: `conversation` covers the calls of runs in the conversation the answered run
//!   belongs to ([`Client::ask`](crate::Client::ask)); `principal` covers the runs started
//!   for the answered run's principal ([`Client::for_principal`](crate::Client::for_principal)).
//! - `until` (optional): the rule ends then; an expired rule never matches.
//! - `for` (written by the store): whose runs the rule covers, the run's principal. A store
//!   writes it when it records an answer whose answerer may make the rule; an answer that
//!   names anyone else is refused.
//!
//! # Whose rule it is, and who may make it
//!
//! **A remembered decision covers the runs of the answered run's principal, and only that
//! principal answering their own run, or an answerer the host allows to grant for that
//! principal, may make it; the rule records who really answered (`answeredBy`).** A run
//! started for nobody has no principal's rules (its conversation's rules may be made by
//! whoever may answer it). An answer asking for a rule its answerer may not make is refused
//! with [`StoreError::NotAllowed`](crate::store::StoreError::NotAllowed) by
//! [`RunStore::submit`](crate::store::RunStore::submit) and nothing is recorded, neither the
//! answer nor a rule; a host that lets an operator or a delegate grant for someone checks
//! that itself and records with
//! [`RunStore::submit_granting`](crate::store::RunStore::submit_granting) (the inbox: its
//! `InboxBuilder::grants` check). An answer handed straight to a
//! client ([`Client::resume`](crate::Client::resume)) is the host's own: its rule names no
//! answerer.
//!
//! An accepting answer makes an **allow** rule, a declining one (reason `declined`) a **deny**
//! rule. [`Answer::remember`](crate::Answer::remember) writes the key:
//!
//! ```
//! use toolnexus::{Answer, Remember};
//! use toolnexus::remember::{Scope, Within};
//!
//! let answer = Answer::ok("sus-1").remember(Remember::new(Scope::Tool, Within::Conversation));
//! assert_eq!(
//!     serde_json::to_string(&answer).unwrap(),
//!     r#"{"id":"sus-1","ok":true,"data":{"remember":{"scope":"tool","within":"conversation"}}}"#
//! );
//! ```
//!
//! # What is remembered, and what never is
//!
//! - Only answers to `approval` requests. An `input`, `question`, `authorization` or any other
//!   request is asked every time: its answer is data for one call, not a yes or a no.
//! - A declined answer makes a deny rule; an expired or cancelled one makes none (nobody
//!   decided).
//! - **An edited approval** ([`Request::approve_with`](crate::Request::approve_with)) is
//!   remembered for the arguments the person wrote only: with scope `args` the rule binds the
//!   edited arguments (what the person approved and what ran); with scope `tool` no rule is made, since
//!   correcting a call says that this tool's calls are not right as the model makes them, so
//!   approving all of them would widen what the person chose.
//! - A remember the loop cannot honour (an unknown `scope` or `within`, an unreadable
//!   `until`, `within: conversation` for a run outside any conversation, `within: principal`
//!   for a run started for nobody, an answerer who may not make it, a store that keeps no
//!   rules) makes no rule; the
//!   answer itself still counts, and the reason is logged (`tracing`, target `toolnexus`).
//!
//! # Checked before asking
//!
//! When a call would suspend on an `approval` request, the loop asks the store's
//! [`RuleStore`] first ([`RuleStore::decide`]): a matching deny rule declines the call (the
//! model reads `declined/expired: <prompt>`), else a matching allow rule approves it (the tool
//! runs as if a person had approved it, with the arguments shown). Deny wins over allow. A
//! rule never widens beyond what the person chose: an `args` rule never matches other
//! arguments, a conversation's rule never another conversation, a principal's rule only runs
//! started for that principal, and an expired rule nothing. An allow rule never approves a
//! [governed approval](crate::Request::with_approvals) (one that needs several approvers or
//! refuses its requester): one person's rule does not stand in for the people it needs, so
//! they are asked (a deny rule still declines it). Which rule decided is an
//! [`Event::Decided`](crate::Event::Decided) and, for a run kept in the store, a
//! [`decided`](crate::store::RunEventKind::Decided) event of its
//! [history](crate::store::RunInfo::history) (with the rule's id).

use std::time::SystemTime;

use serde_json::{Map, Value};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use crate::request::{Answer, DeclineReason, KIND_APPROVAL, Request, format_rfc3339};

mod owner;
mod rule;
mod store;
#[cfg(test)]
mod tests;

pub use owner::REMEMBER_FOR;
pub(crate) use owner::answer_to_record;
pub use rule::{Effect, Rule, RuleQuery, call_fingerprint, decide};
pub(crate) use store::decode_rule_cursor;
pub use store::{DamagedRule, RulePage, RuleStore};

/// The key of an answer's `data` that holds the remember choice.
pub const DATA_REMEMBER: &str = "remember";

/// Which calls of the tool a rule covers (`scope` on the wire).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Scope {
    /// Calls with exactly these arguments (`args`): bound by their canonical fingerprint.
    Args,
    /// Every call of the tool (`tool`).
    Tool,
}

crate::util::names! {
    Scope { Args => "args", Tool => "tool" }
    /// The wire name: `args` or `tool`.
    pub fn as_str;
    pub(crate) fn parse;
}

/// Where a rule holds (`within` on the wire).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Within {
    /// The runs of the answered run's conversation (`conversation`).
    Conversation,
    /// The runs started for the answered run's principal (`principal`).
    Principal,
}

crate::util::names! {
    Within { Conversation => "conversation", Principal => "principal" }
    /// The wire name: `conversation` or `principal`.
    pub fn as_str;
    pub(crate) fn parse;
}

/// A person's "and the same from now on", carried by an approval's answer
/// ([`Answer::remember`]). See the [module docs](self) for the wire form and what is
/// remembered.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Remember {
    /// Which calls it covers.
    pub scope: Scope,
    /// Where it holds.
    pub within: Within,
    /// When it ends (`None`: until revoked).
    pub until: Option<SystemTime>,
}

impl Remember {
    /// Remember with this scope, within this reach, until revoked.
    pub fn new(scope: Scope, within: Within) -> Self {
        Self {
            scope,
            within,
            until: None,
        }
    }

    /// Ends the rule at `at` (kept to the millisecond).
    #[must_use]
    pub fn until(mut self, at: SystemTime) -> Self {
        self.until = Some(at);
        self
    }

    /// The wire form: `{"scope","until"?,"within"}` (`data` objects keep their keys sorted).
    pub fn to_value(&self) -> Value {
        let mut map = Map::new();
        map.insert("scope".to_owned(), Value::from(self.scope.as_str()));
        map.insert("within".to_owned(), Value::from(self.within.as_str()));
        if let Some(until) = self.until {
            map.insert("until".to_owned(), Value::from(format_rfc3339(until)));
        }
        Value::Object(map)
    }

    /// The remember choice an answer carries (`data.remember`): `None` without one, an error
    /// naming what is wrong for one that cannot be read.
    ///
    /// ```
    /// use toolnexus::{Answer, Remember};
    /// use toolnexus::remember::{Scope, Within};
    ///
    /// let answer = Answer::accept("r1", serde_json::json!({"remember": {"scope": "args", "within": "principal"}}));
    /// assert_eq!(Remember::of_answer(&answer), Some(Ok(Remember::new(Scope::Args, Within::Principal))));
    /// let wrong = Answer::accept("r1", serde_json::json!({"remember": {"scope": "everything", "within": "principal"}}));
    /// assert_eq!(
    ///     Remember::of_answer(&wrong),
    ///     Some(Err("`remember.scope` must be \"args\" or \"tool\", not \"everything\"".to_owned()))
    /// );
    /// ```
    pub fn of_answer(answer: &Answer) -> Option<Result<Self, String>> {
        let value = answer.data.as_ref()?.as_object()?.get(DATA_REMEMBER)?;
        Some(Self::from_value(value))
    }

    fn from_value(value: &Value) -> Result<Self, String> {
        let Some(map) = value.as_object() else {
            return Err("`remember` must be an object".to_owned());
        };
        if let Some(key) = map.keys().find(|k| {
            !matches!(
                k.as_str(),
                "scope" | "within" | "until" | owner::REMEMBER_FOR
            )
        }) {
            return Err(format!(
                "`remember` has an unknown key `{}`",
                crate::limits::excerpt(key)
            ));
        }
        let text = |key: &str| map.get(key).map(|v| v.as_str().ok_or(v));
        let scope = required_choice(map, "scope", r#""args" or "tool""#, Scope::parse)?;
        let within = required_choice(
            map,
            "within",
            r#""conversation" or "principal""#,
            Within::parse,
        )?;
        let until = match text("until") {
            Some(Ok(s)) => Some(
                OffsetDateTime::parse(s, &Rfc3339)
                    .map(SystemTime::from)
                    .map_err(|_| {
                        format!(
                            "`remember.until` must be an RFC 3339 time, not \"{}\"",
                            crate::limits::excerpt(s)
                        )
                    })?,
            ),
            Some(Err(_)) => return Err("`remember.until` must be a string".to_owned()),
            None => None,
        };
        if let Some(Err(_)) = text(owner::REMEMBER_FOR) {
            return Err("`remember.for` must be a string".to_owned());
        }
        Ok(Self {
            scope,
            within,
            until,
        })
    }
}

/// The required string `remember.<key>` of `map`, read by `parse`; `choices` says what it may
/// be.
fn required_choice<T>(
    map: &Map<String, Value>,
    key: &str,
    choices: &str,
    parse: impl FnOnce(&str) -> Option<T>,
) -> Result<T, String> {
    match map.get(key).map(Value::as_str) {
        Some(Some(s)) => parse(s).ok_or_else(|| {
            format!(
                "`remember.{key}` must be {choices}, not \"{}\"",
                crate::limits::excerpt(s)
            )
        }),
        Some(None) => Err(format!("`remember.{key}` must be a string")),
        None => Err(format!("`remember` has no `{key}`")),
    }
}

impl Answer {
    /// This answer, saying "and the same from now on": `data.remember` (see
    /// [`remember`](crate::remember)). On an accepting answer to an approval it makes an allow
    /// rule, on a declining one a deny rule. Other keys of an object `data` (such as an
    /// edit's `args`) are kept; a `data` that is not an object (nothing an approval reads) is
    /// replaced.
    ///
    /// ```
    /// use std::time::{Duration, UNIX_EPOCH};
    /// use toolnexus::{Answer, DeclineReason, Remember};
    /// use toolnexus::remember::{Scope, Within};
    ///
    /// let never = Remember::new(Scope::Args, Within::Principal)
    ///     .until(UNIX_EPOCH + Duration::from_secs(1_790_000_000));
    /// let answer = Answer::decline("sus-1", DeclineReason::Declined).remember(never);
    /// assert_eq!(
    ///     serde_json::to_string(&answer).unwrap(),
    ///     r#"{"id":"sus-1","ok":false,"data":{"remember":{"scope":"args","until":"2026-09-21T14:13:20Z","within":"principal"}},"reason":"declined"}"#
    /// );
    /// ```
    #[must_use]
    pub fn remember(mut self, remember: Remember) -> Self {
        let mut data = match self.data.take() {
            Some(Value::Object(map)) => map,
            _ => Map::new(),
        };
        data.insert(DATA_REMEMBER.to_owned(), remember.to_value());
        self.data = Some(Value::Object(data));
        self
    }
}

/// The rule an answer to `request` asks to remember, for the call of `tool` with `args` (the
/// arguments the person approved: an edit's when the answer edits) in run `run_id`, in
/// `conversation`, started for `principal`, answered by `answered_by` (`None`: the host's own
/// answer, given straight to the client): `Ok(None)` when the answer remembers nothing, an
/// error saying why when it asks for something that cannot be remembered (see the
/// [module docs](self)).
///
/// ```
/// use toolnexus::{Answer, Remember, Request};
/// use toolnexus::remember::{Scope, Within, rule_of_answer};
///
/// let request = Request::approval("Pay 999 to mallory?");
/// let answer = Answer::ok(&request.id).remember(Remember::new(Scope::Tool, Within::Principal));
/// let args = serde_json::json!({"amount": 999});
/// // alice answering her own run: a rule for alice's runs, made by alice
/// let rule = rule_of_answer(&request, &answer, "pay", &args, "run-1", None, Some("alice"), Some("alice"))
///     .unwrap()
///     .unwrap();
/// assert_eq!((rule.holder.as_str(), rule.answered_by.as_deref()), ("alice", Some("alice")));
/// // bob answering alice's run (not granted by the store): no rule
/// assert!(rule_of_answer(&request, &answer, "pay", &args, "run-1", None, Some("alice"), Some("bob")).is_err());
/// ```
///
/// # Errors
///
/// A remember on a request that is not an approval, an unreadable remember, an edit
/// remembered for the whole tool, a conversation rule outside a conversation, a principal
/// rule of a run for nobody, a rule covering the runs of a principal `answered_by` is not
/// (unless the store recorded the host's grant: `data.remember.for` names that principal).
#[allow(clippy::too_many_arguments)]
pub fn rule_of_answer(
    request: &Request,
    answer: &Answer,
    tool: &str,
    args: &Value,
    run_id: &str,
    conversation: Option<&str>,
    principal: Option<&str>,
    answered_by: Option<&str>,
) -> Result<Option<Rule>, String> {
    let Some(remember) = Remember::of_answer(answer) else {
        return Ok(None);
    };
    if request.kind != KIND_APPROVAL {
        return Err(format!(
            "only approvals are remembered, not a `{}` request",
            crate::limits::excerpt(&request.kind)
        ));
    }
    let remember = remember?;
    let effect = match (answer.ok, &answer.reason) {
        (true, _) => Effect::Allow,
        (false, None | Some(DeclineReason::Declined)) => Effect::Deny,
        (false, Some(reason)) => {
            return Err(format!(
                "a `{reason}` answer decides nothing, so it is not remembered"
            ));
        }
    };
    let edited = answer.ok
        && answer
            .data
            .as_ref()
            .and_then(Value::as_object)
            .is_some_and(|d| d.contains_key(crate::request::DATA_ARGS));
    if edited && remember.scope == Scope::Tool {
        return Err(
            "an edited approval is remembered for its own arguments only (scope `args`), never for the whole tool"
                .to_owned(),
        );
    }
    let owner = owner::covers(remember.within, principal)?;
    let stated = owner::stated_for(answer);
    match owner {
        Some(owner) => {
            if let Some(named) = stated.filter(|named| *named != owner) {
                return Err(format!(
                    "`remember.for` names `{}`, but the run is `{}`'s",
                    crate::limits::excerpt(named),
                    crate::limits::excerpt(owner)
                ));
            }
            // the store wrote `for` once it checked the answerer (or the host's grant)
            if let Some(by) = answered_by.filter(|by| *by != owner && stated != Some(owner)) {
                return Err(owner::not_allowed(by, owner));
            }
        }
        None if stated.is_some() => {
            return Err(
                "`remember.for` names someone, but the run was started for nobody".to_owned(),
            );
        }
        None => {}
    }
    let holder = match remember.within {
        Within::Conversation => conversation.ok_or(
            "`within: conversation` for a run outside any conversation (run it with `Client::ask`)",
        )?,
        // `covers` refused a principal rule of a run for nobody
        Within::Principal => owner.ok_or("`within: principal` for a run started for nobody")?,
    };
    let (args, fingerprint) = match remember.scope {
        Scope::Args => (Some(args.clone()), Some(call_fingerprint(tool, args))),
        Scope::Tool => (None, None),
    };
    Ok(Some(Rule {
        // one rule per request: a resume that answers the request again (taken over after a
        // crash inside the call) makes the same rule, which the store keeps once
        id: format!("rule-{}", request.id),
        effect,
        tool: tool.to_owned(),
        scope: remember.scope,
        args,
        fingerprint,
        within: remember.within,
        holder: holder.to_owned(),
        until: remember.until.map(ms),
        created_at: ms(SystemTime::now()),
        answered_by: answered_by.map(str::to_owned),
        request_id: request.id.clone(),
        run_id: run_id.to_owned(),
    }))
}

/// `at`, to the millisecond (as every store keeps times).
fn ms(at: SystemTime) -> SystemTime {
    crate::ledger::from_millis(crate::ledger::millis(at))
}

/// The history event of `rule`'s decision on `request` (see
/// [`RunEventKind::Decided`](crate::store::RunEventKind::Decided)), now.
pub(crate) fn decided_event(request: &str, rule: &Rule) -> crate::ledger::RunEvent {
    use crate::ledger::{RunEvent, RunEventKind, now_ms};
    let outcome = match rule.effect {
        Effect::Allow => "allowed",
        Effect::Deny => "denied",
    };
    let mut event = RunEvent::new(RunEventKind::Decided, now_ms())
        .request(request)
        .outcome(outcome);
    event.rule = Some(rule.id.clone());
    event
}
