//! Who may answer a request and where it goes when its deadline passes (CONTRACT section 2,
//! "Governed approvals"): `data.approvers`, the group the host defines that may answer it, and
//! `data.escalate`, the steps it is handed on through (`{"approvers", "expiresAt"}`, or an
//! array of such steps) before its last deadline declines it.

use std::time::{Duration, SystemTime};

use serde_json::{Map, Value, json};

use super::{Request, format_rfc3339};

/// The key of the group that may answer a request, in its `data`.
pub(crate) const DATA_APPROVERS: &str = "approvers";
/// The key of a request's escalation steps, in its `data`.
pub(crate) const DATA_ESCALATE: &str = "escalate";

/// One step of a request's escalation ([`Request::escalation`]): when the deadline before it
/// passes, the request goes to `approvers` and accepts answers until `expires_at`.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Escalation {
    /// The group that may answer the request from this step on.
    pub approvers: String,
    /// When this step's deadline passes (the next step's start, or, for the last one, when the
    /// request declines as expired).
    pub expires_at: SystemTime,
}

impl Escalation {
    /// A step: to `approvers`, until `expires_at`.
    pub fn new(approvers: impl Into<String>, expires_at: SystemTime) -> Self {
        Self {
            approvers: approvers.into(),
            expires_at,
        }
    }

    fn of(value: &Value) -> Option<Self> {
        let step = value.as_object()?;
        let approvers = step.get("approvers")?.as_str()?;
        let at = Request::new("", "").with_expires_at_raw(step.get("expiresAt")?.as_str()?);
        (!approvers.trim().is_empty()).then_some(())?;
        Some(Self::new(approvers, at.expires_at_time()?))
    }

    fn to_json(&self) -> Value {
        json!({"approvers": self.approvers, "expiresAt": format_rfc3339(self.expires_at)})
    }
}

impl Request {
    fn with_expires_at_raw(mut self, raw: &str) -> Self {
        self.expires_at = Some(raw.to_owned());
        self
    }

    /// Names the group that may answer this request (`data.approvers`): a string the host
    /// defines (the answer page asks the host's `InboxBuilder::groups_of`, feature `inbox`,
    /// which groups a person is in; a run store refuses a
    /// [`submit`](crate::store::RunStore::submit) from outside it).
    ///
    /// ```
    /// let req = toolnexus::Request::approval("Pay invoice 7?").with_approvers("finance");
    /// assert_eq!(req.approvers(), Some("finance"));
    /// ```
    #[must_use]
    pub fn with_approvers(self, group: impl Into<String>) -> Self {
        self.with_data_entry(DATA_APPROVERS, Value::String(group.into()))
    }

    /// The group that may answer this request, as it was made (`data.approvers`; `None`: anyone
    /// the host lets answer). A run store keeps the *current* group, which an
    /// [escalation](Self::escalate_to) changes: [`RunInfo::approvers`](crate::store::RunInfo::approvers).
    pub fn approvers(&self) -> Option<&str> {
        self.data_entry(DATA_APPROVERS)
            .and_then(Value::as_str)
            .filter(|g| !g.trim().is_empty())
    }

    /// Adds an escalation step: when the request's current last deadline passes (its
    /// `expiresAt`, or the previous step's), it goes to `group` for `ttl` more instead of
    /// expiring; only the last step's deadline declines it. Without an `expiresAt`, the first
    /// step's deadline counts from now. Written as `data.escalate`: one step as an object
    /// (`{"approvers", "expiresAt"}`, the contract's shape), several as an array of them.
    ///
    /// ```
    /// use std::time::Duration;
    /// use toolnexus::Request;
    ///
    /// let hour = Duration::from_secs(3600);
    /// let req = Request::approval("Pay invoice 7?")
    ///     .with_approvers("finance")
    ///     .expires_in(hour)
    ///     .escalate_to("cfo", hour);
    /// let steps = req.escalation();
    /// assert_eq!(steps.len(), 1);
    /// assert_eq!(steps[0].approvers, "cfo");
    /// assert_eq!(steps[0].expires_at, req.expires_at_time().unwrap() + hour);
    /// ```
    #[must_use]
    pub fn escalate_to(self, group: impl Into<String>, ttl: Duration) -> Self {
        let mut steps = self.escalation();
        let from = steps
            .last()
            .map(|s| s.expires_at)
            .or_else(|| self.expires_at_time())
            .unwrap_or_else(SystemTime::now);
        steps.push(Escalation::new(group, from + ttl));
        self.with_escalation(&steps)
    }

    /// Sets the escalation steps (`data.escalate`), replacing any: one step as an object, several
    /// as an array, none removes the key.
    #[must_use]
    pub fn with_escalation(mut self, steps: &[Escalation]) -> Self {
        let value = match steps {
            [] => {
                if let Some(data) = self.data.as_deref_mut() {
                    data.remove(DATA_ESCALATE);
                }
                return self;
            }
            [one] => one.to_json(),
            many => Value::Array(many.iter().map(Escalation::to_json).collect()),
        };
        self.with_data_entry(DATA_ESCALATE, value)
    }

    /// The request's escalation steps, in order (`data.escalate`: one object or an array). A
    /// step that cannot be read (no group, an empty one, an `expiresAt` that is not RFC 3339)
    /// ends the list there: the deadline before it declines the request, as without
    /// escalation.
    pub fn escalation(&self) -> Vec<Escalation> {
        match self.data_entry(DATA_ESCALATE) {
            Some(Value::Array(steps)) => steps.iter().map_while(Escalation::of).collect(),
            Some(step) => Escalation::of(step).into_iter().collect(),
            None => Vec::new(),
        }
    }

    /// This request as it stands at its run's current step: the group `approvers` and the
    /// deadline `deadline` the store keeps for it now (an escalation moves both; the record
    /// keeps the request as it was made). A deadline is only ever moved later.
    pub(crate) fn standing_now(
        mut self,
        approvers: Option<&str>,
        deadline: Option<SystemTime>,
    ) -> Self {
        if let Some(at) = deadline
            && self.expires_at_time().is_some_and(|made| at > made)
        {
            self = self.with_expires_at(at);
        }
        match approvers {
            Some(group) if self.approvers() != Some(group) => self.with_approvers(group),
            _ => self,
        }
    }
}

/// The plan a run store keeps of `request`'s escalation: a JSON array of
/// `{"step", "approvers", "at"}` (step from 1, `at` in ms), `None` without steps.
pub(crate) fn escalation_plan(request: &Request) -> Option<String> {
    let steps = request.escalation();
    if steps.is_empty() {
        return None;
    }
    let plan: Vec<Value> = steps
        .iter()
        .enumerate()
        .map(|(i, s)| {
            let mut step = Map::new();
            step.insert("step".to_owned(), json!(i + 1));
            step.insert("approvers".to_owned(), json!(s.approvers));
            step.insert("at".to_owned(), json!(crate::ledger::millis(s.expires_at)));
            Value::Object(step)
        })
        .collect();
    Some(Value::Array(plan).to_string())
}

#[cfg(test)]
mod tests {
    use std::time::{Duration, UNIX_EPOCH};

    use serde_json::json;

    use super::{Escalation, escalation_plan};
    use crate::Request;

    #[test]
    fn several_steps_are_written_as_an_array_and_read_back_in_order() {
        let at = UNIX_EPOCH + Duration::from_secs(1_767_225_600);
        let hour = Duration::from_secs(3600);
        let req = Request::approval("Pay?")
            .with_id("r1")
            .with_expires_at(at)
            .escalate_to("cfo", hour)
            .escalate_to("ceo", hour);
        assert_eq!(
            req.data_entry("escalate"),
            Some(&json!([
                {"approvers": "cfo", "expiresAt": "2026-01-01T01:00:00Z"},
                {"approvers": "ceo", "expiresAt": "2026-01-01T02:00:00Z"}
            ]))
        );
        assert_eq!(
            req.escalation(),
            vec![
                Escalation::new("cfo", at + hour),
                Escalation::new("ceo", at + 2 * hour)
            ]
        );
        assert_eq!(
            escalation_plan(&req).as_deref(),
            Some(
                r#"[{"approvers":"cfo","at":1767229200000,"step":1},{"approvers":"ceo","at":1767232800000,"step":2}]"#
            )
        );
    }

    #[test]
    fn one_step_is_the_contract_object_and_an_unreadable_step_ends_the_list() {
        let req = Request::approval("Pay?").with_data_entry(
            "escalate",
            json!({"approvers": "cfo", "expiresAt": "2026-01-01T00:00:00Z"}),
        );
        assert_eq!(req.escalation().len(), 1);
        let bad = Request::approval("Pay?").with_data_entry(
            "escalate",
            json!([
                {"approvers": "cfo", "expiresAt": "2026-01-01T00:00:00Z"},
                {"approvers": "", "expiresAt": "2026-01-01T01:00:00Z"},
                {"approvers": "ceo", "expiresAt": "2026-01-01T02:00:00Z"}
            ]),
        );
        assert_eq!(bad.escalation().len(), 1);
        let no_time = Request::approval("Pay?")
            .with_data_entry("escalate", json!({"approvers": "cfo", "expiresAt": "soon"}));
        assert!(no_time.escalation().is_empty());
        assert_eq!(escalation_plan(&no_time), None);
        assert_eq!(
            Request::approval("Pay?").with_approvers(" ").approvers(),
            None
        );
    }
}
