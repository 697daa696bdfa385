//! [`RuleStore`](crate::remember::RuleStore) written once for every store, over the small
//! surface a driver gives the rules ([`RuleDriver`]: read rules, apply a
//! [`RuleChange`]); what a rule's create, revoke, match, listing and expiry mean is decided
//! here and in [`lifecycle::rules`](super::lifecycle::rules), never by a driver. Each store
//! takes the implementation with [`rule_store!`].

use std::time::SystemTime;

use super::lifecycle::rules::{self as lifecycle, RuleChange};
use crate::ledger::{RunEvent, StoreError, StoreResult};
use crate::remember::{Rule, RulePage, RuleQuery, decode_rule_cursor};
use crate::util::BoxFuture;

/// One kept rule as a driver reads it: `(created_at ms, id, the rule or why its row cannot
/// be read)`.
pub(crate) type ListedRow = (i64, String, Result<Rule, String>);

/// Which rules a driver reads.
#[derive(Clone, Debug)]
pub(crate) enum RuleRead<'a> {
    /// The rules kept under the call's keys: its tool, with its conversation or principal as
    /// holder, each a `tool` rule or an `args` rule of its fingerprint. A driver may leave out
    /// the expired ones, and may return more; the engine checks both again.
    Candidates(&'a RuleQuery<'a>),
    /// The rule with this id.
    Get(&'a str),
    /// The oldest rules (by `created_at`, then id), at most this many.
    Oldest(usize),
    /// The newest rules (by `created_at`, then id, both descending) older than the cursor
    /// `after` (`(created_at ms, id)`), at most `take`.
    Newest {
        /// The cursor: the last rule of the page before.
        after: Option<(i64, String)>,
        /// How many.
        take: usize,
    },
}

/// What a store gives the rules.
pub(crate) trait RuleDriver: Sync {
    /// The rules `read` selects, each read or reported.
    fn read_rules<'a>(&'a self, read: RuleRead<'a>) -> BoxFuture<'a, StoreResult<Vec<ListedRow>>>;

    /// Applies `change` in one step, its guard with it; how many rules (or runs) it changed.
    fn change_rules<'a>(&'a self, change: RuleChange<'a>) -> BoxFuture<'a, StoreResult<u64>>;
}

/// The rules of `rows`; a damaged one is [`StoreError::CorruptRule`].
fn intact(rows: Vec<ListedRow>) -> StoreResult<Vec<Rule>> {
    rows.into_iter()
        .map(|(_, id, rule)| rule.map_err(|message| StoreError::CorruptRule { id, message }))
        .collect()
}

/// The rules of `rows`, a damaged one left out (and logged).
fn readable(rows: Vec<ListedRow>) -> Vec<Rule> {
    rows.into_iter()
        .filter_map(|(_, id, rule)| {
            rule.map_err(|why| {
                tracing::warn!(target: "toolnexus", rule = %id, why = %why, "a kept rule cannot be read: left out of the listing");
            })
            .ok()
        })
        .collect()
}

/// [`RuleStore::put_rule`](crate::remember::RuleStore::put_rule).
pub(crate) async fn put<D: RuleDriver>(d: &D, rule: &Rule) -> StoreResult<()> {
    let applied = d.change_rules(lifecycle::create(rule)?).await?;
    lifecycle::created(rule, applied)
}

/// [`RuleStore::candidate_rules`](crate::remember::RuleStore::candidate_rules): the kept
/// rules under the call's keys that have not ended at its time.
pub(crate) async fn candidates<D: RuleDriver>(
    d: &D,
    call: &RuleQuery<'_>,
) -> StoreResult<Vec<Rule>> {
    let mut rules = intact(d.read_rules(RuleRead::Candidates(call)).await?)?;
    rules.retain(|r| !r.is_expired_at(call.at));
    Ok(rules)
}

/// [`RuleStore::get_rule`](crate::remember::RuleStore::get_rule).
pub(crate) async fn get<D: RuleDriver>(d: &D, id: &str) -> StoreResult<Option<Rule>> {
    Ok(intact(d.read_rules(RuleRead::Get(id)).await?)?
        .into_iter()
        .next())
}

/// [`RuleStore::list_rules`](crate::remember::RuleStore::list_rules).
pub(crate) async fn list<D: RuleDriver>(d: &D, limit: usize) -> StoreResult<Vec<Rule>> {
    Ok(readable(d.read_rules(RuleRead::Oldest(limit)).await?))
}

/// [`RuleStore::list_rules_page`](crate::remember::RuleStore::list_rules_page).
pub(crate) async fn page<D: RuleDriver>(
    d: &D,
    after: Option<&str>,
    limit: usize,
) -> StoreResult<RulePage> {
    let size = limit.max(1);
    let after = decode_rule_cursor(after)?;
    let read = RuleRead::Newest {
        after,
        take: size.saturating_add(1),
    };
    Ok(RulePage::of(d.read_rules(read).await?.into_iter(), size))
}

/// [`RuleStore::revoke_rule`](crate::remember::RuleStore::revoke_rule).
pub(crate) async fn revoke<D: RuleDriver>(d: &D, id: &str) -> StoreResult<bool> {
    Ok(lifecycle::revoked(
        d.change_rules(lifecycle::revoke(id)).await?,
    ))
}

/// [`RuleStore::purge_expired_rules`](crate::remember::RuleStore::purge_expired_rules).
pub(crate) async fn purge<D: RuleDriver>(d: &D, now: SystemTime) -> StoreResult<u64> {
    d.change_rules(lifecycle::expire(now)).await
}

/// [`RuleStore::note_decision`](crate::remember::RuleStore::note_decision).
pub(crate) async fn note<D: RuleDriver>(
    d: &D,
    run_id: &str,
    event: &RunEvent,
) -> StoreResult<bool> {
    Ok(d.change_rules(lifecycle::note(run_id, event)).await? > 0)
}

/// `RuleStore` for the store `$store` (a [`RuleDriver`]), written once.
macro_rules! rule_store {
    ($store:ty) => {
        impl $crate::remember::RuleStore for $store {
            fn put_rule<'a>(
                &'a self,
                rule: &'a $crate::remember::Rule,
            ) -> $crate::util::BoxFuture<'a, $crate::store::StoreResult<()>> {
                Box::pin($crate::store::rules::put(self, rule))
            }

            fn candidate_rules<'a>(
                &'a self,
                call: &'a $crate::remember::RuleQuery<'a>,
            ) -> $crate::util::BoxFuture<'a, $crate::store::StoreResult<Vec<$crate::remember::Rule>>>
            {
                Box::pin($crate::store::rules::candidates(self, call))
            }

            fn get_rule<'a>(
                &'a self,
                id: &'a str,
            ) -> $crate::util::BoxFuture<
                'a,
                $crate::store::StoreResult<Option<$crate::remember::Rule>>,
            > {
                Box::pin($crate::store::rules::get(self, id))
            }

            fn list_rules(
                &self,
                limit: usize,
            ) -> $crate::util::BoxFuture<'_, $crate::store::StoreResult<Vec<$crate::remember::Rule>>>
            {
                Box::pin($crate::store::rules::list(self, limit))
            }

            fn list_rules_page<'a>(
                &'a self,
                after: Option<&'a str>,
                limit: usize,
            ) -> $crate::util::BoxFuture<'a, $crate::store::StoreResult<$crate::remember::RulePage>>
            {
                Box::pin($crate::store::rules::page(self, after, limit))
            }

            fn revoke_rule<'a>(
                &'a self,
                id: &'a str,
            ) -> $crate::util::BoxFuture<'a, $crate::store::StoreResult<bool>> {
                Box::pin($crate::store::rules::revoke(self, id))
            }

            fn purge_expired_rules(
                &self,
                now: std::time::SystemTime,
            ) -> $crate::util::BoxFuture<'_, $crate::store::StoreResult<u64>> {
                Box::pin($crate::store::rules::purge(self, now))
            }

            fn note_decision<'a>(
                &'a self,
                run_id: &'a str,
                event: &'a $crate::store::RunEvent,
            ) -> $crate::util::BoxFuture<'a, $crate::store::StoreResult<bool>> {
                Box::pin($crate::store::rules::note(self, run_id, event))
            }
        }
    };
}
pub(crate) use rule_store;
