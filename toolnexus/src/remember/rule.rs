//! A kept rule: what it does ([`Effect`]), which calls it covers, and how a call is matched
//! against the rules ([`RuleQuery`], [`decide`]).

use std::fmt;
use std::time::SystemTime;

use serde_json::Value;

use super::{Scope, Within};

/// What a rule does to a call it covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Effect {
    /// Approve it without asking.
    Allow,
    /// Decline it without asking.
    Deny,
}

crate::util::names! {
    Effect { Allow => "allow", Deny => "deny" }
    /// `allow` or `deny`.
    pub fn as_str;
    #[cfg(any(feature = "sqlite", feature = "postgres"))]
    pub(crate) fn parse;
}

impl fmt::Display for Effect {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// A remembered decision, as the store keeps it.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Rule {
    /// Its id: `rule-<id of the request whose answer made it>` (one rule per request: a
    /// resume that answers the request again makes the same rule, kept once).
    pub id: String,
    /// Allow or deny.
    pub effect: Effect,
    /// The tool it covers.
    pub tool: String,
    /// Which of its calls.
    pub scope: Scope,
    /// For [`Scope::Args`]: the arguments, to show (the rule matches by
    /// [`fingerprint`](Self::fingerprint)).
    pub args: Option<Value>,
    /// For [`Scope::Args`]: the canonical fingerprint of the tool and its arguments
    /// ([`call_fingerprint`]).
    pub fingerprint: Option<String>,
    /// Where it holds: in one conversation, or for one principal.
    pub within: Within,
    /// The conversation's id or the principal, as [`within`](Self::within) says: whose runs
    /// it covers (the answered run's conversation or principal, never the answerer's).
    pub holder: String,
    /// When it ends (`None`: until revoked).
    pub until: Option<SystemTime>,
    /// When it was made (kept to the millisecond).
    pub created_at: SystemTime,
    /// Who made it: the answerer the store recorded (the run's principal, or an answerer the
    /// host let grant for them); `None` for an answer the host handed straight to the client.
    pub answered_by: Option<String>,
    /// The request whose answer made it.
    pub request_id: String,
    /// The run that request belonged to.
    pub run_id: String,
}

/// A call about to ask for approval, as [`RuleStore::decide`](super::RuleStore::decide) matches it.
#[derive(Clone, Copy, Debug)]
#[non_exhaustive]
pub struct RuleQuery<'a> {
    /// The tool.
    pub tool: &'a str,
    /// The canonical fingerprint of the tool and its arguments ([`call_fingerprint`]).
    pub fingerprint: &'a str,
    /// The run's conversation, if it has one.
    pub conversation: Option<&'a str>,
    /// The principal the run was started for, if any.
    pub principal: Option<&'a str>,
    /// The time to match at (an expired rule never matches).
    pub at: SystemTime,
}

impl<'a> RuleQuery<'a> {
    /// A query for a call of `tool` with `fingerprint`, at `at`, outside any conversation and
    /// for nobody (add them with [`in_conversation`](Self::in_conversation) and
    /// [`for_principal`](Self::for_principal)).
    pub fn new(tool: &'a str, fingerprint: &'a str, at: SystemTime) -> Self {
        Self {
            tool,
            fingerprint,
            conversation: None,
            principal: None,
            at,
        }
    }

    /// In this conversation.
    #[must_use]
    pub fn in_conversation(mut self, id: Option<&'a str>) -> Self {
        self.conversation = id;
        self
    }

    /// For this principal.
    #[must_use]
    pub fn for_principal(mut self, principal: Option<&'a str>) -> Self {
        self.principal = principal;
        self
    }
}

impl Rule {
    /// Whether the rule covers `call`: the same tool, the same fingerprint for an `args` rule,
    /// the same conversation or principal, and not expired at `call.at`.
    pub fn matches(&self, call: &RuleQuery<'_>) -> bool {
        let holder = match self.within {
            Within::Conversation => call.conversation,
            Within::Principal => call.principal,
        };
        self.tool == call.tool
            && (self.scope == Scope::Tool || self.fingerprint.as_deref() == Some(call.fingerprint))
            && holder == Some(self.holder.as_str())
            && self.until.is_none_or(|until| call.at < until)
    }

    /// Whether it has ended at `now`.
    pub fn is_expired_at(&self, now: SystemTime) -> bool {
        self.until.is_some_and(|until| now >= until)
    }
}

/// Of `rules`, the one that decides `call`: the oldest matching deny rule, else the oldest
/// matching allow rule.
pub fn decide<'r>(rules: &'r [Rule], call: &RuleQuery<'_>) -> Option<&'r Rule> {
    let oldest = |effect| {
        rules
            .iter()
            .filter(|r| r.effect == effect && r.matches(call))
            .min_by(|a, b| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)))
    };
    oldest(Effect::Deny).or_else(|| oldest(Effect::Allow))
}

/// The canonical fingerprint of a call of `tool` with `args`, as an `args` rule binds it:
/// SHA-256 (lowercase hex) of the canonical JSON of `{"args": <args>, "tool": <tool>}` (keys
/// sorted at every level, no whitespace), with every number written as the value it decodes
/// to, so no respelling of a number dodges a rule:
///
/// - an integer that fits `i64` or `u64` (written without fraction or exponent): its decimal
///   digits;
/// - any other number: the IEEE 754 double it reads as, in ECMAScript's
///   `Number.prototype.toString` form (RFC 8785, JCS): `5.0`, `5e0` and `50e-1` are `5`,
///   `-0.0` is `0`, `0.000001` stays so, `1e-7` and `1e+21` take an exponent.
///
/// An integer beyond 2^53 keeps every digit while a double is rounded, so
/// `9007199254740993` never shares a key with `9007199254740992` (nor with the double
/// `9007199254740993.0`, which reads as `9007199254740992`): a respelt huge integer is asked
/// again rather than matched wrongly. Rules kept before this form match integer arguments
/// as they did (an integer's form is unchanged); a rule made for arguments with a number
/// written with a fraction or exponent (`5.0`, `1e-6`) was bound to `serde_json`'s text of
/// the double and may no longer match: its call asks again (revoke it on the rules page).
/// This key is for rules only: the fingerprint of a run's record (contract section 4) keeps
/// its pinned bytes.
///
/// ```
/// use toolnexus::remember::call_fingerprint;
/// use serde_json::json;
///
/// let a = call_fingerprint("pay", &json!({"to": "Ada", "amount": 40}));
/// let b = call_fingerprint("pay", &serde_json::from_str(r#"{ "amount":40, "to":"Ada" }"#).unwrap());
/// assert_eq!(a, b);
/// assert_ne!(a, call_fingerprint("pay", &json!({"to": "Ada", "amount": 41})));
/// // one number, however it is spelt
/// for spelling in ["40.0", "4e1", "400e-1"] {
///     let text = format!(r#"{{"to":"Ada","amount":{spelling}}}"#);
///     assert_eq!(a, call_fingerprint("pay", &serde_json::from_str(&text).unwrap()));
/// }
/// ```
pub fn call_fingerprint(tool: &str, args: &Value) -> String {
    crate::run::call_fingerprint(tool, args)
}
