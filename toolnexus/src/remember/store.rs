//! [`RuleStore`]: where remembered decisions are kept, beside the runs.

use std::fmt;
use std::time::SystemTime;

use super::{Rule, RuleQuery, decide};
use crate::store::{RunEvent, StoreResult};
use crate::util::BoxFuture;

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
///     &request, &answer, "send_report", &serde_json::json!({}), "run-1", None, Some("ada"), Some("ada"),
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
