//! The tables beside the runs (the rules and the conversations) for [`SqliteStore`]: SQLite
//! running the statements both SQL stores share ([`SideSql`]); what the rules and the
//! conversations mean is written once ([`rule_store!`], [`conversation_store!`]).

use std::borrow::Cow;
use std::sync::LazyLock;

use rusqlite::params_from_iter;
use rusqlite::types::{Value, ValueRef};

use super::{SqliteStore, is_constraint};
use crate::store::conversation_rows::conversation_store;
use crate::store::rules::rule_store;
use crate::store::sql::{SideSql, SqlCols, SqlParam, SqlSide, backend, sql_getters};
use crate::store::{Cell, StoreResult};
use crate::util::BoxFuture;

/// The statements in SQLite's dialect (no casts).
pub(super) static SQL: LazyLock<SideSql> = LazyLock::new(|| {
    let p = |n| format!("?{n}");
    SideSql::new(p, p, p)
});

impl SqlCols for rusqlite::Row<'_> {
    sql_getters!(get);

    fn shown(&self, k: usize) -> String {
        self.get::<_, Value>(k)
            .map(|v| match v {
                Value::Text(t) => t,
                other => format!("{other:?}"),
            })
            .unwrap_or_default()
    }

    /// A column holding what the schema does not allow (SQLite keeps any value in any
    /// column) damages that row only.
    fn cell(&self, k: usize) -> Cell {
        match self.get_ref(k) {
            Ok(ValueRef::Null) | Err(_) => Cell::Null,
            Ok(ValueRef::Integer(i)) => Cell::Int(i),
            Ok(ValueRef::Real(f)) => Cell::Real(f),
            Ok(ValueRef::Text(t)) => match std::str::from_utf8(t) {
                Ok(t) => Cell::Text(t.to_owned()),
                Err(_) => Cell::Blob(t.to_vec()),
            },
            Ok(ValueRef::Blob(b)) => Cell::Blob(b.to_vec()),
        }
    }
}

impl SqlSide for SqliteStore {
    fn side_sql(&self) -> &'static SideSql {
        &SQL
    }

    fn select<T: Send + 'static>(
        &self,
        sql: impl Into<Cow<'static, str>>,
        params: Vec<SqlParam>,
        read: fn(&dyn SqlCols) -> T,
    ) -> BoxFuture<'_, StoreResult<Vec<T>>> {
        let sql = sql.into();
        Box::pin(self.call(move |conn| {
            conn.prepare_cached(&sql)
                .and_then(|mut stmt| {
                    stmt.query_map(params_from_iter(params.iter()), |r| Ok(read(r)))?
                        .collect()
                })
                .map_err(backend)
        }))
    }

    fn execute(
        &self,
        sql: impl Into<Cow<'static, str>>,
        params: Vec<SqlParam>,
    ) -> BoxFuture<'_, StoreResult<Option<u64>>> {
        let sql = sql.into();
        Box::pin(self.call(move |conn| {
            match conn
                .prepare_cached(&sql)
                .and_then(|mut stmt| stmt.execute(params_from_iter(params.iter())))
            {
                Ok(n) => Ok(Some(u64::try_from(n).unwrap_or(u64::MAX))),
                Err(e) if is_constraint(&e) => Ok(None),
                Err(e) => Err(backend(e)),
            }
        }))
    }
}

rule_store!(SqliteStore);
conversation_store!(SqliteStore);
