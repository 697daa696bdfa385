//! [`RuleStore`]: where remembered decisions are kept, beside the runs.

use std::fmt;
use std::time::SystemTime;

use super::{Rule, RuleQuery, decide};
use crate::ledger::{RunEvent, StoreError, StoreResult};
use crate::util::BoxFuture;

/// One page of [`RuleStore::list_rules_page`]: the rules, newest first.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
#[non_exhaustive]
pub struct RulePage {
    /// The rules of the page, newest first (by when they were made, then id).
    pub rules: Vec<Rule>,
    /// The rules of this page whose rows cannot be read (a damaged column, an unknown
    /// effect), left out of `rules` so one bad row never fails a page: each with its id and
    /// why. Revoke one by its id.
    pub damaged: Vec<DamagedRule>,
    /// The cursor of the next (older) page; `None` on the last page.
    pub next: Option<String>,
}

/// A kept rule whose row cannot be read ([`RulePage::damaged`]).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct DamagedRule {
    /// The rule's id.
    pub id: String,
    /// What could not be read.
    pub reason: String,
}

impl RulePage {
    /// The page of `rows` (newest first, each `(created_at ms, id, the rule or why it cannot
    /// be read)`; one more than `limit` when another page follows).
    pub(crate) fn of(
        rows: impl Iterator<Item = (i64, String, Result<Rule, String>)>,
        limit: usize,
    ) -> Self {
        let limit = limit.max(1);
        let mut page = Self::default();
        let mut last = None;
        for (n, (ms, id, rule)) in rows.enumerate() {
            if n == limit {
                page.next = last.take().map(|(ms, id)| format!("{ms}:{id}"));
                break;
            }
            last = Some((ms, id.clone()));
            match rule {
                Ok(rule) => page.rules.push(rule),
                Err(reason) => page.damaged.push(DamagedRule { id, reason }),
            }
        }
        page
    }
}

/// The `(created_at ms, id)` of a rules page's cursor.
///
/// # Errors
///
/// [`StoreError::Invalid`] for a cursor no rules page returned.
pub(crate) fn decode_rule_cursor(raw: Option<&str>) -> StoreResult<Option<(i64, String)>> {
    let Some(raw) = raw else {
        return Ok(None);
    };
    let bad = || {
        StoreError::Invalid(format!(
            "`{}` is not a cursor a rules page returned",
            crate::limits::excerpt(raw)
        ))
    };
    let (ms, id) = raw.split_once(':').ok_or_else(bad)?;
    let ms = ms.parse::<i64>().map_err(|_| bad())?;
    Ok(Some((ms, id.to_owned())))
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
    /// [purged](RuleStore::purge_expired_rules)). A rule whose row cannot be read is left
    /// out (and logged); [`list_rules_page`](RuleStore::list_rules_page) reports it.
    ///
    /// # Errors
    ///
    /// [`StoreError::Backend`](crate::store::StoreError::Backend) when the database fails.
    fn list_rules(&self, limit: usize) -> BoxFuture<'_, StoreResult<Vec<Rule>>>;

    /// One page of the kept rules, **newest first**, at most `limit` (at least 1), after the
    /// page that returned the cursor `after` ([`RulePage::next`]). A rule whose row cannot
    /// be read is reported in [`RulePage::damaged`] with its id and never fails the page.
    ///
    /// The provided method reads [`list_rules`](RuleStore::list_rules) whole; the stores of
    /// this crate read one page.
    ///
    /// ```
    /// use toolnexus::remember::RuleStore;
    /// use toolnexus::store::{MemoryStore, RunStore};
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let store = MemoryStore::new();
    /// let page = store.rules().unwrap().list_rules_page(None, 50).await.unwrap();
    /// assert!(page.rules.is_empty() && page.next.is_none());
    /// # });
    /// ```
    ///
    /// # Errors
    ///
    /// [`StoreError::Invalid`] for a cursor no rules page returned;
    /// [`StoreError::Backend`] when the database fails.
    fn list_rules_page<'a>(
        &'a self,
        after: Option<&'a str>,
        limit: usize,
    ) -> BoxFuture<'a, StoreResult<RulePage>> {
        Box::pin(async move {
            let after = decode_rule_cursor(after)?;
            let mut rules = self.list_rules(usize::MAX).await?;
            let key = |r: &Rule| (crate::ledger::millis(r.created_at), r.id.clone());
            rules.sort_by_key(|r| std::cmp::Reverse(key(r)));
            let rows = rules
                .into_iter()
                .map(|r| (key(&r), r))
                .filter(|(k, _)| after.as_ref().is_none_or(|a| k < a))
                .map(|((ms, id), r)| (ms, id, Ok(r)));
            Ok(RulePage::of(rows, limit))
        })
    }

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
