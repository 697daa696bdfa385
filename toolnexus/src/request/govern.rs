//! Governed approvals (CONTRACT section 2, this port's extension): an `approval` that needs
//! several distinct approvers (`data.approvals`) or refuses the run's own principal
//! (`data.notByRequester`). Each acceptance is a vote the store keeps with who gave it
//! ([`Vote`](crate::store::Vote)); the run goes on once the count is reached.

use serde_json::Value;

use super::{KIND_APPROVAL, Request};

/// The key of the number of distinct approvals a request needs, in its `data`.
pub(crate) const DATA_APPROVALS: &str = "approvals";
/// The key of "the run's own principal may not answer", in its `data`.
pub(crate) const DATA_NOT_BY_REQUESTER: &str = "notByRequester";

impl Request {
    /// This approval needs `approvals` distinct people to accept it (`data.approvals`); `0`
    /// and `1` mean one person (the key is then left out). Each acceptance is recorded as a
    /// vote; one decline declines; an acceptance with other arguments (`data.args`) is a
    /// vote for those arguments only.
    ///
    /// ```
    /// use toolnexus::Request;
    ///
    /// let r = Request::approval("Pay 4,000 EUR to ACME?").with_approvals(2).with_id("r1");
    /// assert_eq!(r.required_approvals(), 2);
    /// assert_eq!(
    ///     serde_json::to_string(&r).unwrap(),
    ///     r#"{"id":"r1","kind":"approval","prompt":"Pay 4,000 EUR to ACME?","data":{"approvals":2}}"#
    /// );
    /// assert_eq!(Request::approval("Go?").required_approvals(), 1);
    /// ```
    #[must_use]
    pub fn with_approvals(mut self, approvals: u32) -> Self {
        if approvals <= 1 {
            if let Some(data) = self.data.as_mut() {
                data.remove(DATA_APPROVALS);
            }
            return self;
        }
        self.with_data_entry(DATA_APPROVALS, Value::from(approvals))
    }

    /// How many distinct people must accept this request: `data.approvals` of an `approval`
    /// (at least 1), else 1.
    pub fn required_approvals(&self) -> u32 {
        if self.kind != KIND_APPROVAL {
            return 1;
        }
        self.data_entry(DATA_APPROVALS)
            .and_then(Value::as_u64)
            .map_or(1, |n| u32::try_from(n).unwrap_or(u32::MAX).max(1))
    }

    /// The run's own principal may not answer this approval (`data.notByRequester: true`):
    /// a store refuses such an answer with
    /// [`StoreError::NotAllowed`](crate::store::StoreError::NotAllowed), recording nothing.
    ///
    /// ```
    /// use toolnexus::Request;
    ///
    /// let r = Request::approval("Deploy?").with_not_by_requester();
    /// assert!(r.not_by_requester());
    /// assert!(!Request::approval("Deploy?").not_by_requester());
    /// ```
    #[must_use]
    pub fn with_not_by_requester(self) -> Self {
        self.with_data_entry(DATA_NOT_BY_REQUESTER, Value::Bool(true))
    }

    /// Whether the run's own principal may not answer this approval.
    pub fn not_by_requester(&self) -> bool {
        self.kind == KIND_APPROVAL
            && self.data_entry(DATA_NOT_BY_REQUESTER) == Some(&Value::Bool(true))
    }

    /// Whether an answer to this request goes through the store's vote rules (several
    /// approvals, or not by the requester).
    pub(crate) fn is_governed(&self) -> bool {
        self.required_approvals() > 1 || self.not_by_requester()
    }

    /// Whether this request is never parked together with others of its turn: it is
    /// governed, names a group, or escalates (a store checks these for the request a run
    /// waits on).
    pub(crate) fn asked_alone(&self) -> bool {
        self.is_governed() || self.approvers().is_some() || !self.escalation().is_empty()
    }
}
