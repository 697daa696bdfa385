//! The rules' [driver](RuleDriver) written once for both SQL stores: each read and change is
//! one of the statements both dialects share ([`RuleSql`]), run over the store's
//! [`SqlSide`].

use super::{RuleRow, SqlParam, SqlSide};
use crate::store::StoreResult;
use crate::store::lifecycle::rules::RuleChange;
use crate::store::millis;
use crate::store::rules::{ListedRow, RuleDriver, RuleRead};
use crate::util::BoxFuture;

/// `n` as a SQL integer.
fn count(n: usize) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

impl<D: SqlSide> RuleDriver for D {
    fn read_rules<'a>(&'a self, read: RuleRead<'a>) -> BoxFuture<'a, StoreResult<Vec<ListedRow>>> {
        let sql = &self.side_sql().rules;
        let (statement, params) = match read {
            RuleRead::Candidates(call) => (
                &sql.candidates,
                vec![
                    SqlParam::Text(call.tool.to_owned()),
                    SqlParam::MaybeText(call.conversation.map(str::to_owned)),
                    SqlParam::MaybeText(call.principal.map(str::to_owned)),
                    SqlParam::Int(millis(call.at)),
                    SqlParam::Text(call.fingerprint.to_owned()),
                ],
            ),
            RuleRead::Get(id) => (&sql.get, vec![SqlParam::Text(id.to_owned())]),
            RuleRead::Oldest(limit) => (&sql.list, vec![SqlParam::Int(count(limit))]),
            RuleRead::Newest { after: None, take } => {
                (&sql.newest, vec![SqlParam::Int(count(take))])
            }
            RuleRead::Newest {
                after: Some((ms, id)),
                take,
            } => (
                &sql.older,
                vec![
                    SqlParam::Int(ms),
                    SqlParam::Text(id),
                    SqlParam::Int(count(take)),
                ],
            ),
        };
        self.select(statement.as_str(), params, RuleRow::listed)
    }

    fn change_rules<'a>(&'a self, change: RuleChange<'a>) -> BoxFuture<'a, StoreResult<u64>> {
        let sql = &self.side_sql().rules;
        let (statement, params) = match change {
            RuleChange::Insert(rule) => (&sql.insert, RuleRow::of(rule).params()),
            RuleChange::Delete(id) => (&sql.revoke, vec![SqlParam::Text(id.to_owned())]),
            RuleChange::Purge(at) => (&sql.purge, vec![SqlParam::Int(at)]),
            RuleChange::Note { run_id, event } => (
                &sql.note,
                vec![SqlParam::Text(run_id.to_owned()), SqlParam::Text(event)],
            ),
        };
        let run = self.execute(statement.as_str(), params);
        // a broken unique key is an insert whose guard (its id being free) failed
        Box::pin(async move { Ok(run.await?.unwrap_or(0)) })
    }
}
