//! [`RuleStore`](crate::remember::RuleStore) written once for both SQL stores, over the small
//! surface a SQL store gives the rules ([`RuleRows`]: its statements, and running one); each
//! store takes the implementation with [`sql_rule_store!`].

use std::time::SystemTime;

use super::{ListedRow, RuleRow, RuleSql, SqlParam, readable};
use crate::remember::{Rule, RulePage, RuleQuery};
use crate::store::{RunEvent, StoreError, StoreResult, millis};
use crate::util::BoxFuture;

/// What a SQL store gives the rules.
pub(crate) trait RuleRows: Sync {
    /// The rules' statements in the store's dialect.
    fn rule_sql(&self) -> &'static RuleSql;

    /// The rows `sql` selects for `params`, each read or reported.
    fn rule_rows<'a>(
        &'a self,
        sql: &'static str,
        params: Vec<SqlParam>,
    ) -> BoxFuture<'a, StoreResult<Vec<ListedRow>>>;

    /// How many rows `sql` changed with `params`; `None` when it broke a unique constraint.
    fn rule_change<'a>(
        &'a self,
        sql: &'static str,
        params: Vec<SqlParam>,
    ) -> BoxFuture<'a, StoreResult<Option<u64>>>;
}

/// The rules of `rows`; a damaged one is [`StoreError::CorruptRule`].
fn intact(rows: Vec<ListedRow>) -> StoreResult<Vec<Rule>> {
    rows.into_iter()
        .map(|(_, id, rule)| rule.map_err(|message| StoreError::CorruptRule { id, message }))
        .collect()
}

/// `n` as a SQL integer.
fn count(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

pub(crate) async fn put<D: RuleRows>(d: &D, rule: &Rule) -> StoreResult<()> {
    let row = RuleRow::of(rule);
    let id = row.id.clone();
    match d.rule_change(&d.rule_sql().insert, row.params()).await? {
        Some(_) => Ok(()),
        None => Err(StoreError::Conflict(format!("rule `{id}` is already kept"))),
    }
}

pub(crate) async fn candidates<D: RuleRows>(d: &D, call: &RuleQuery<'_>) -> StoreResult<Vec<Rule>> {
    let params = vec![
        SqlParam::Text(call.tool.to_owned()),
        SqlParam::MaybeText(call.conversation.map(str::to_owned)),
        SqlParam::MaybeText(call.principal.map(str::to_owned)),
        SqlParam::Int(millis(call.at)),
        SqlParam::Text(call.fingerprint.to_owned()),
    ];
    intact(d.rule_rows(&d.rule_sql().candidates, params).await?)
}

pub(crate) async fn get<D: RuleRows>(d: &D, id: &str) -> StoreResult<Option<Rule>> {
    let rows = d
        .rule_rows(&d.rule_sql().get, vec![SqlParam::Text(id.to_owned())])
        .await?;
    Ok(intact(rows)?.into_iter().next())
}

pub(crate) async fn list<D: RuleRows>(d: &D, limit: usize) -> StoreResult<Vec<Rule>> {
    let rows = d
        .rule_rows(&d.rule_sql().list, vec![SqlParam::Int(count(limit))])
        .await?;
    Ok(readable(rows.into_iter()))
}

pub(crate) async fn page<D: RuleRows>(
    d: &D,
    after: Option<&str>,
    limit: usize,
) -> StoreResult<RulePage> {
    let size = limit.max(1);
    let take = count(size + 1);
    let after = crate::remember::decode_rule_cursor(after)?;
    let sql = d.rule_sql();
    let rows = match after {
        None => d.rule_rows(&sql.newest, vec![SqlParam::Int(take)]).await?,
        Some((ms, id)) => {
            let params = vec![SqlParam::Int(ms), SqlParam::Text(id), SqlParam::Int(take)];
            d.rule_rows(&sql.older, params).await?
        }
    };
    Ok(RulePage::of(rows.into_iter(), size))
}

pub(crate) async fn revoke<D: RuleRows>(d: &D, id: &str) -> StoreResult<bool> {
    let params = vec![SqlParam::Text(id.to_owned())];
    Ok(d.rule_change(&d.rule_sql().revoke, params)
        .await?
        .unwrap_or(0)
        > 0)
}

pub(crate) async fn purge<D: RuleRows>(d: &D, now: SystemTime) -> StoreResult<u64> {
    let params = vec![SqlParam::Int(millis(now))];
    Ok(d.rule_change(&d.rule_sql().purge, params)
        .await?
        .unwrap_or(0))
}

pub(crate) async fn note<D: RuleRows>(d: &D, run_id: &str, event: &RunEvent) -> StoreResult<bool> {
    let params = vec![
        SqlParam::Text(run_id.to_owned()),
        SqlParam::Text(event.json()),
    ];
    Ok(d.rule_change(&d.rule_sql().note, params)
        .await?
        .unwrap_or(0)
        > 0)
}

/// `RuleStore` for the SQL store `$store` (a [`RuleRows`]), written once.
macro_rules! sql_rule_store {
    ($store:ty) => {
        impl $crate::remember::RuleStore for $store {
            fn put_rule<'a>(
                &'a self,
                rule: &'a $crate::remember::Rule,
            ) -> $crate::util::BoxFuture<'a, $crate::store::StoreResult<()>> {
                Box::pin($crate::store::sql::rule_store::put(self, rule))
            }

            fn candidate_rules<'a>(
                &'a self,
                call: &'a $crate::remember::RuleQuery<'a>,
            ) -> $crate::util::BoxFuture<'a, $crate::store::StoreResult<Vec<$crate::remember::Rule>>>
            {
                Box::pin($crate::store::sql::rule_store::candidates(self, call))
            }

            fn get_rule<'a>(
                &'a self,
                id: &'a str,
            ) -> $crate::util::BoxFuture<
                'a,
                $crate::store::StoreResult<Option<$crate::remember::Rule>>,
            > {
                Box::pin($crate::store::sql::rule_store::get(self, id))
            }

            fn list_rules(
                &self,
                limit: usize,
            ) -> $crate::util::BoxFuture<'_, $crate::store::StoreResult<Vec<$crate::remember::Rule>>>
            {
                Box::pin($crate::store::sql::rule_store::list(self, limit))
            }

            fn list_rules_page<'a>(
                &'a self,
                after: Option<&'a str>,
                limit: usize,
            ) -> $crate::util::BoxFuture<'a, $crate::store::StoreResult<$crate::remember::RulePage>>
            {
                Box::pin($crate::store::sql::rule_store::page(self, after, limit))
            }

            fn revoke_rule<'a>(
                &'a self,
                id: &'a str,
            ) -> $crate::util::BoxFuture<'a, $crate::store::StoreResult<bool>> {
                Box::pin($crate::store::sql::rule_store::revoke(self, id))
            }

            fn purge_expired_rules(
                &self,
                now: std::time::SystemTime,
            ) -> $crate::util::BoxFuture<'_, $crate::store::StoreResult<u64>> {
                Box::pin($crate::store::sql::rule_store::purge(self, now))
            }

            fn note_decision<'a>(
                &'a self,
                run_id: &'a str,
                event: &'a $crate::store::RunEvent,
            ) -> $crate::util::BoxFuture<'a, $crate::store::StoreResult<bool>> {
                Box::pin($crate::store::sql::rule_store::note(self, run_id, event))
            }
        }
    };
}
pub(crate) use sql_rule_store;
