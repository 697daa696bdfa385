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
//!   canonical fingerprint: key order and spacing do not matter, any other value does);
//!   `tool` covers every call of this tool.
//! - `within`: `conversation` covers the calls of runs in the conversation the answered run
//!   belongs to ([`Client::ask`](crate::Client::ask)); `principal` covers the runs started
//!   for whoever answered ([`Client::for_principal`](crate::Client::for_principal)).
//! - `until` (optional): the rule ends then; an expired rule never matches.
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
//!   with nobody known to have answered, a store that keeps no rules) makes no rule; the
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
//! started for that principal, and an expired rule nothing. Which rule decided is an
//! [`Event::Decided`](crate::Event::Decided) and, for a run kept in the store, a
//! [`decided`](crate::store::RunEventKind::Decided) event of its
//! [history](crate::store::RunInfo::history) (with the rule's id).

use std::fmt;
use std::time::SystemTime;

use serde_json::{Map, Value};
use time::OffsetDateTime;
use time::format_description::well_known::Rfc3339;

use crate::request::{Answer, DeclineReason, KIND_APPROVAL, Request, format_rfc3339};
use crate::store::{RunEvent, StoreResult};
use crate::util::BoxFuture;

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

impl Scope {
    /// The wire name: `args` or `tool`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Args => "args",
            Self::Tool => "tool",
        }
    }

    fn parse(s: &str) -> Option<Self> {
        match s {
            "args" => Some(Self::Args),
            "tool" => Some(Self::Tool),
            _ => None,
        }
    }
}

/// Where a rule holds (`within` on the wire).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Within {
    /// The runs of the answered run's conversation (`conversation`).
    Conversation,
    /// The runs started for whoever answered (`principal`).
    Principal,
}

impl Within {
    /// The wire name: `conversation` or `principal`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Conversation => "conversation",
            Self::Principal => "principal",
        }
    }

    fn parse(s: &str) -> Option<Self> {
        match s {
            "conversation" => Some(Self::Conversation),
            "principal" => Some(Self::Principal),
            _ => None,
        }
    }
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
        if let Some(key) = map
            .keys()
            .find(|k| !matches!(k.as_str(), "scope" | "within" | "until"))
        {
            return Err(format!(
                "`remember` has an unknown key `{}`",
                crate::limits::excerpt(key)
            ));
        }
        let text = |key: &str| map.get(key).map(|v| v.as_str().ok_or(v));
        let scope = match text("scope") {
            Some(Ok(s)) => Scope::parse(s).ok_or_else(|| {
                format!(
                    "`remember.scope` must be \"args\" or \"tool\", not \"{}\"",
                    crate::limits::excerpt(s)
                )
            })?,
            Some(Err(_)) => return Err("`remember.scope` must be a string".to_owned()),
            None => return Err("`remember` has no `scope`".to_owned()),
        };
        let within = match text("within") {
            Some(Ok(s)) => Within::parse(s).ok_or_else(|| {
                format!(
                    "`remember.within` must be \"conversation\" or \"principal\", not \"{}\"",
                    crate::limits::excerpt(s)
                )
            })?,
            Some(Err(_)) => return Err("`remember.within` must be a string".to_owned()),
            None => return Err("`remember` has no `within`".to_owned()),
        };
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
        Ok(Self {
            scope,
            within,
            until,
        })
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

/// What a rule does to a call it covers.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub enum Effect {
    /// Approve it without asking.
    Allow,
    /// Decline it without asking.
    Deny,
}

impl Effect {
    /// `allow` or `deny`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Allow => "allow",
            Self::Deny => "deny",
        }
    }

    #[cfg(any(feature = "sqlite", feature = "postgres"))]
    pub(crate) fn parse(s: &str) -> Option<Self> {
        match s {
            "allow" => Some(Self::Allow),
            "deny" => Some(Self::Deny),
            _ => None,
        }
    }
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
    /// Its id (`rule-<ms>-<counter>-<random>`).
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
    /// The conversation's id or the principal, as [`within`](Self::within) says.
    pub holder: String,
    /// When it ends (`None`: until revoked).
    pub until: Option<SystemTime>,
    /// When it was made (kept to the millisecond).
    pub created_at: SystemTime,
    /// Who answered (when known).
    pub answered_by: Option<String>,
    /// The request whose answer made it.
    pub request_id: String,
    /// The run that request belonged to.
    pub run_id: String,
}

/// A call about to ask for approval, as [`RuleStore::decide`] matches it.
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
/// sorted at every level, no whitespace).
///
/// ```
/// use toolnexus::remember::call_fingerprint;
/// use serde_json::json;
///
/// let a = call_fingerprint("pay", &json!({"to": "Ada", "amount": 40}));
/// let b = call_fingerprint("pay", &serde_json::from_str(r#"{ "amount":40, "to":"Ada" }"#).unwrap());
/// assert_eq!(a, b);
/// assert_ne!(a, call_fingerprint("pay", &json!({"to": "Ada", "amount": 41})));
/// ```
pub fn call_fingerprint(tool: &str, args: &Value) -> String {
    crate::run::call_fingerprint(tool, args)
}

/// Where remembered decisions are kept: beside the runs, in the same store
/// ([`RunStore::rules`](crate::store::RunStore::rules); [`MemoryStore`](crate::store::MemoryStore),
/// `SqliteStore` and `PostgresStore` keep them). Object-safe.
///
/// ```
/// use std::time::{Duration, SystemTime};
/// use toolnexus::remember::{RuleQuery, RuleStore, call_fingerprint};
/// use toolnexus::store::{MemoryStore, RunStore};
/// use toolnexus::{Answer, Remember, Request};
/// use toolnexus::remember::{Scope, Within};
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let store = MemoryStore::new();
/// let rules = store.rules().unwrap();
/// let request = Request::approval("Send the report?");
/// let answer = Answer::ok(&request.id).remember(Remember::new(Scope::Tool, Within::Principal));
/// let rule = toolnexus::remember::rule_of_answer(
///     &request, &answer, "send_report", &serde_json::json!({}), "run-1", None, Some("ada"),
/// ).unwrap().unwrap();
/// rules.put_rule(&rule).await.unwrap();
///
/// let fp = call_fingerprint("send_report", &serde_json::json!({"week": 3}));
/// let now = SystemTime::now();
/// let for_ada = RuleQuery::new("send_report", &fp, now).for_principal(Some("ada"));
/// assert_eq!(rules.decide(&for_ada).await.unwrap().map(|r| r.id), Some(rule.id.clone()));
/// let for_bob = RuleQuery::new("send_report", &fp, now).for_principal(Some("bob"));
/// assert_eq!(rules.decide(&for_bob).await.unwrap(), None);
///
/// assert!(rules.revoke_rule(&rule.id).await.unwrap());
/// assert_eq!(rules.decide(&for_ada).await.unwrap(), None);
/// # });
/// ```
pub trait RuleStore: Send + Sync + fmt::Debug {
    /// Keeps a rule.
    ///
    /// # Errors
    ///
    /// [`StoreError::Conflict`](crate::store::StoreError::Conflict) when a rule with its id
    /// is kept already.
    fn put_rule<'a>(&'a self, rule: &'a Rule) -> BoxFuture<'a, StoreResult<()>>;

    /// The rules that may cover `call` (its tool, its conversation or principal, not
    /// expired): a store may return more; [`decide`](RuleStore::decide) matches each again.
    ///
    /// # Errors
    ///
    /// [`StoreError::Backend`](crate::store::StoreError::Backend) when the database fails.
    fn candidate_rules<'a>(
        &'a self,
        call: &'a RuleQuery<'a>,
    ) -> BoxFuture<'a, StoreResult<Vec<Rule>>>;

    /// The rule that decides `call`, if any: a matching deny rule wins over a matching allow
    /// rule; the oldest of each decides.
    ///
    /// # Errors
    ///
    /// As [`candidate_rules`](RuleStore::candidate_rules).
    fn decide<'a>(&'a self, call: &'a RuleQuery<'a>) -> BoxFuture<'a, StoreResult<Option<Rule>>> {
        Box::pin(async move {
            let rules = self.candidate_rules(call).await?;
            Ok(decide(&rules, call).cloned())
        })
    }

    /// The rule with this id.
    ///
    /// # Errors
    ///
    /// [`StoreError::Backend`](crate::store::StoreError::Backend) when the database fails.
    fn get_rule<'a>(&'a self, id: &'a str) -> BoxFuture<'a, StoreResult<Option<Rule>>>;

    /// The kept rules, oldest first, at most `limit` (expired ones too, until revoked or
    /// [purged](RuleStore::purge_expired_rules)).
    ///
    /// # Errors
    ///
    /// [`StoreError::Backend`](crate::store::StoreError::Backend) when the database fails.
    fn list_rules(&self, limit: usize) -> BoxFuture<'_, StoreResult<Vec<Rule>>>;

    /// Revokes (deletes) the rule; `false` when there was none. A run that asks after this
    /// asks a person again.
    ///
    /// # Errors
    ///
    /// [`StoreError::Backend`](crate::store::StoreError::Backend) when the database fails.
    fn revoke_rule<'a>(&'a self, id: &'a str) -> BoxFuture<'a, StoreResult<bool>>;

    /// Deletes the rules that ended before `now`; returns how many.
    ///
    /// # Errors
    ///
    /// [`StoreError::Backend`](crate::store::StoreError::Backend) when the database fails.
    fn purge_expired_rules(&self, now: SystemTime) -> BoxFuture<'_, StoreResult<u64>>;

    /// Appends `event` (a rule's decision) to the history of run `run_id`; `false` when no run
    /// has that id (the loop then keeps the event until the run is parked).
    ///
    /// # Errors
    ///
    /// [`StoreError::Backend`](crate::store::StoreError::Backend) when the database fails.
    fn note_decision<'a>(
        &'a self,
        run_id: &'a str,
        event: &'a RunEvent,
    ) -> BoxFuture<'a, StoreResult<bool>>;
}

/// The rule an answer to `request` asks to remember, for the call of `tool` with `args` (the
/// arguments the person approved: an edit's when the answer edits) in run `run_id`, in
/// `conversation`, answered by `answered_by`: `Ok(None)` when the answer remembers nothing,
/// an error saying why when it asks for something that cannot be remembered (see the
/// [module docs](self)).
///
/// # Errors
///
/// A remember on a request that is not an approval, an unreadable remember, an edit
/// remembered for the whole tool, a conversation rule outside a conversation, a principal
/// rule with nobody known to have answered.
pub fn rule_of_answer(
    request: &Request,
    answer: &Answer,
    tool: &str,
    args: &Value,
    run_id: &str,
    conversation: Option<&str>,
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
    let holder = match remember.within {
        Within::Conversation => conversation.ok_or(
            "`within: conversation` for a run outside any conversation (run it with `Client::ask`)",
        )?,
        Within::Principal => answered_by
            .ok_or("`within: principal` with nobody known to have answered (answer through a store's `submit`, or a client made with `Client::for_principal`)")?,
    };
    let (args, fingerprint) = match remember.scope {
        Scope::Args => (Some(args.clone()), Some(call_fingerprint(tool, args))),
        Scope::Tool => (None, None),
    };
    Ok(Some(Rule {
        id: crate::id::unique("rule"),
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
    crate::store::from_millis(crate::store::millis(at))
}

/// How a rule is kept in a row of the SQL stores.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) mod row {
    use super::{Effect, Rule, Scope, Within};
    use crate::store::{StoreError, StoreResult, from_millis};

    /// The columns, in [`RuleRow`] order.
    pub(crate) const RULE_COLUMNS: &str = "id, effect, tool, scope, args, fingerprint, reach, \
         holder, ends_at, created_at, answered_by, request_id, run_id";

    /// One rule's columns.
    #[derive(Clone, Debug)]
    pub(crate) struct RuleRow {
        pub(crate) id: String,
        pub(crate) effect: String,
        pub(crate) tool: String,
        pub(crate) scope: String,
        pub(crate) args: Option<String>,
        pub(crate) fingerprint: Option<String>,
        pub(crate) within: String,
        pub(crate) holder: String,
        pub(crate) until: Option<i64>,
        pub(crate) created_at: i64,
        pub(crate) answered_by: Option<String>,
        pub(crate) request_id: String,
        pub(crate) run_id: String,
    }

    impl RuleRow {
        pub(crate) fn of(rule: &Rule) -> Self {
            let millis = crate::store::millis;
            Self {
                id: rule.id.clone(),
                effect: rule.effect.as_str().to_owned(),
                tool: rule.tool.clone(),
                scope: rule.scope.as_str().to_owned(),
                args: rule.args.as_ref().map(ToString::to_string),
                fingerprint: rule.fingerprint.clone(),
                within: rule.within.as_str().to_owned(),
                holder: rule.holder.clone(),
                until: rule.until.map(millis),
                created_at: millis(rule.created_at),
                answered_by: rule.answered_by.clone(),
                request_id: rule.request_id.clone(),
                run_id: rule.run_id.clone(),
            }
        }

        /// The rule; a row that does not read as one is [`StoreError::Corrupt`] naming it.
        pub(crate) fn decode(self) -> StoreResult<Rule> {
            let bad = |what: String| StoreError::Corrupt {
                run_id: self.run_id.clone(),
                message: format!("rule `{}`: {what}", self.id),
            };
            let effect = Effect::parse(&self.effect)
                .ok_or_else(|| bad(format!("unknown effect `{}`", self.effect)))?;
            let scope = Scope::parse(&self.scope)
                .ok_or_else(|| bad(format!("unknown scope `{}`", self.scope)))?;
            let within = Within::parse(&self.within)
                .ok_or_else(|| bad(format!("unknown within `{}`", self.within)))?;
            let args = self
                .args
                .as_deref()
                .map(serde_json::from_str)
                .transpose()
                .map_err(|e| bad(format!("arguments do not read: {e}")))?;
            if scope == Scope::Args && self.fingerprint.is_none() {
                return Err(bad("an `args` rule without its fingerprint".to_owned()));
            }
            Ok(Rule {
                id: self.id,
                effect,
                tool: self.tool,
                scope,
                args,
                fingerprint: self.fingerprint,
                within,
                holder: self.holder,
                until: self.until.map(from_millis),
                created_at: from_millis(self.created_at),
                answered_by: self.answered_by,
                request_id: self.request_id,
                run_id: self.run_id,
            })
        }
    }
}

#[cfg(test)]
mod tests {
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
            Err(
                "`remember.within` must be \"conversation\" or \"principal\", not \"team\""
                    .to_owned()
            )
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
}
