//! The SQLite store as a driver of the [lifecycle](crate::store::lifecycle): a change applied
//! in one statement whose `WHERE` is its guard ([`apply`]), the answers (`submit` and `claim`,
//! one `IMMEDIATE` transaction each), expiry, `claim_next` (takeovers first, then answered
//! runs), the claim's own changes and `next_due`.

use std::time::Duration;

use rusqlite::types::{ToSql, ToSqlOutput};
use rusqlite::{Connection, OptionalExtension, params_from_iter};

use super::connection::Immediate;
use super::{raw, raw_info, row_where, rows, runs};
use crate::request::Answer;
use crate::store::engine::Answered;
use crate::store::lifecycle::{self, Answering, Change};
use crate::store::sql::{COLUMNS, Dialect, PLAIN_ANSWER, SqlParam, backend, change_sql};
use crate::store::{Claim, RawRow, Seal, StoreResult, lease_ms, now_ms};

impl ToSql for SqlParam {
    fn to_sql(&self) -> rusqlite::Result<ToSqlOutput<'_>> {
        match self {
            Self::Text(s) => s.to_sql(),
            Self::Int(i) => i.to_sql(),
            Self::MaybeText(s) => s.to_sql(),
            Self::MaybeInt(i) => i.to_sql(),
        }
    }
}

pub(super) fn placeholder(n: usize) -> String {
    Dialect::Sqlite.placeholder(n)
}

/// Applies `change` in one statement; whether its guard still held (the row changed).
pub(super) fn apply(conn: &Connection, change: &Change) -> StoreResult<bool> {
    let sql = change_sql(change, placeholder);
    let changed = conn
        .prepare_cached(&sql.update(""))
        .and_then(|mut stmt| stmt.execute(params_from_iter(sql.params.iter())))
        .map_err(backend)?;
    Ok(changed == 1)
}

/// Applies `change` in one statement, reading back `columns` of the row as it became (`read`
/// decodes them); `None` when its guard no longer held.
pub(super) fn apply_returning(
    conn: &Connection,
    change: &Change,
    columns: &str,
    read: fn(&rusqlite::Row<'_>) -> RawRow,
) -> rusqlite::Result<Option<RawRow>> {
    let sql = change_sql(change, placeholder);
    conn.prepare_cached(&sql.update(columns))?
        .query_row(params_from_iter(sql.params.iter()), |r| Ok(read(r)))
        .optional()
}

/// The answer's effect on its run, after `claim`'s checks, in one `IMMEDIATE` transaction:
/// the run claimed (with the claim), or recorded as answered (without). `plain`: only a run
/// whose request is plain ([`PLAIN_ANSWER`]), `None` when none is answerable (nothing
/// refused); else the refusal when the row changed nothing.
pub(super) fn answer_blocking(
    conn: &mut Connection,
    seal: &Seal,
    answer: &Answer,
    how: &Answering,
    plain: bool,
) -> StoreResult<Option<Answered>> {
    let tx = Immediate::begin(conn)?;
    let now = now_ms();
    let change = lifecycle::answer(answer, how, seal, now);
    let mut sql = change_sql(&change, placeholder);
    if plain {
        sql.guard.push_str(" AND ");
        sql.guard.push_str(PLAIN_ANSWER);
    }
    let changed = tx
        .prepare_cached(&sql.update(COLUMNS))
        .and_then(|mut stmt| {
            stmt.query_row(params_from_iter(sql.params.iter()), |r| Ok(raw(r)))
                .optional()
        })
        .map_err(backend)?;
    if let Some(row) = changed {
        // read before committing: a corrupt record rolls the answer back (the run stays
        // parked)
        let claim = lifecycle::answered(&row, answer, how, seal, now)?;
        tx.commit()?;
        return Ok(Some((row, claim)));
    }
    if plain {
        return Ok(None);
    }
    let current = row_where(&tx, &runs().refused, &answer.id, raw_info)?;
    let past = match current {
        Some(_) => None,
        None => row_where(&tx, &runs().past, &answer.id, raw_info)?,
    };
    let (refused, expiry) =
        lifecycle::refuse_answer(current.as_ref(), past.as_ref(), &answer.id, seal, now);
    if let Some(expiry) = expiry {
        apply(&tx, &expiry)?;
        tx.commit()?;
    }
    Err(refused)
}

/// Claims for `owner` the oldest run to take over (expired, or its lease lapsed), else
/// (`answered_too`) the oldest answered one, in one `IMMEDIATE` transaction.
pub(super) fn take_over_blocking(
    conn: &mut Connection,
    seal: &Seal,
    owner: &str,
    lease: Duration,
    answered_too: bool,
) -> StoreResult<Option<Claim>> {
    let tx = Immediate::begin(conn)?;
    let now = now_ms();
    let mut candidates = rows(&tx, &runs().take_over, [now], raw)?;
    if candidates.is_empty() && answered_too {
        candidates = rows(&tx, &runs().answered, [], raw)?;
    }
    let until = now.saturating_add(lease_ms(lease));
    // the first readable row is claimed; each unreadable row met first is marked damaged
    let mut claim = None;
    for row in candidates {
        match lifecycle::take_over(&row, seal, owner, until, now) {
            Ok(mut change) => {
                apply(&tx, &change)?;
                claim = change.claim.take();
                break;
            }
            Err(damaged) => {
                apply(&tx, &damaged)?;
            }
        }
    }
    // keeps the rows marked damaged too
    tx.commit()?;
    Ok(claim)
}
