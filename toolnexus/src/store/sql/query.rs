//! The `list_pending` statement the SQL stores share.

use super::COLUMNS;
use crate::store::{PendingQuery, StoreResult};

/// A parameter of a SQL statement built at run time.
#[derive(Clone, Debug)]
pub(crate) enum SqlParam {
    Text(String),
    Int(i64),
    /// Text or `NULL`.
    MaybeText(Option<String>),
    /// An integer or `NULL`.
    MaybeInt(Option<i64>),
}

/// The `list_pending` statement for `query` (one row more than a page, to know whether another
/// follows), with `placeholder(n)` naming the n-th parameter (from 1), and `also` (SQL, or
/// empty) a further condition every row listed meets.
pub(crate) fn pending_sql(
    query: &PendingQuery,
    placeholder: fn(usize) -> String,
    also: &str,
) -> StoreResult<(String, Vec<SqlParam>)> {
    let mut sql = format!("SELECT {COLUMNS} FROM runs WHERE state = 'parked'");
    if !also.is_empty() {
        sql.push_str(" AND ");
        sql.push_str(also);
    }
    let mut params = Vec::new();
    let mut push = |sql: &mut String, clause: &str, values: Vec<SqlParam>| {
        sql.push_str(" AND ");
        let mut values = values.into_iter();
        for (i, piece) in clause.split('?').enumerate() {
            if i > 0 {
                if let Some(v) = values.next() {
                    params.push(v);
                }
                sql.push_str(&placeholder(params.len()));
            }
            sql.push_str(piece);
        }
    };
    if let Some(kind) = query.kind_filter() {
        push(&mut sql, "kind = ?", vec![SqlParam::Text(kind.to_owned())]);
    }
    if let Some(groups) = query.groups_filter() {
        let mut clause = "(approvers IS NULL".to_owned();
        if !groups.is_empty() {
            clause.push_str(" OR approvers IN (");
            clause.push_str(&vec!["?"; groups.len()].join(", "));
            clause.push(')');
        }
        clause.push(')');
        let values = groups.iter().cloned().map(SqlParam::Text).collect();
        push(&mut sql, &clause, values);
    }
    if let Some(at) = query.created_before_ms() {
        push(&mut sql, "created_at < ?", vec![SqlParam::Int(at)]);
    }
    if let Some(at) = query.expiring_before_ms() {
        push(&mut sql, "expires_at < ?", vec![SqlParam::Int(at)]);
    }
    if let Some((ms, id)) = query.cursor()? {
        push(
            &mut sql,
            "(created_at, run_id) > (?, ?)",
            vec![SqlParam::Int(ms), SqlParam::Text(id)],
        );
    }
    let limit = i64::try_from(query.page_size().saturating_add(1)).unwrap_or(i64::MAX);
    sql.push_str(" ORDER BY created_at, run_id LIMIT ");
    sql.push_str(&limit.to_string());
    Ok((sql, params))
}
