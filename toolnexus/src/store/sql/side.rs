//! What a SQL store gives the tables beside its runs (the rules and the conversations): run
//! one of their statements ([`SideSql`], written once for both dialects) and read its rows
//! through [`SqlCols`]. The rules' and the conversations' drivers are written once over it
//! ([`rule_store`](super::rule_store), [`conversations`](super::conversations)).

use std::borrow::Cow;

use super::{ConversationSql, RuleSql, SqlParam, WorkerSql};
use crate::store::{Cell, StoreResult};
use crate::util::BoxFuture;

/// One row as a SQL database hands it over, read by column index: each getter says why a
/// column does not read as asked.
pub(crate) trait SqlCols {
    /// Text (not `NULL`).
    fn text(&self, k: usize) -> Result<String, String>;
    /// Text or `NULL`.
    fn maybe_text(&self, k: usize) -> Result<Option<String>, String>;
    /// An integer (not `NULL`).
    fn int(&self, k: usize) -> Result<i64, String>;
    /// An integer or `NULL`.
    fn maybe_int(&self, k: usize) -> Result<Option<i64>, String>;
    /// The column as an error shows it, whatever it holds (a damaged row's id).
    fn shown(&self, k: usize) -> String;
    /// The column as the database holds it, for a run row's one decoding
    /// ([`RawRow::from_cells`](crate::store::RawRow::from_cells)); `NULL` when it cannot be read.
    fn cell(&self, k: usize) -> Cell;
}

/// The four typed getters of [`SqlCols`] for a driver's row type whose getter `$get` (`get`
/// for SQLite, `try_get` for PostgreSQL) reads a column by index as the type asked for.
macro_rules! sql_getters {
    ($get:ident) => {
        fn text(&self, k: usize) -> Result<String, String> {
            self.$get(k).map_err(|e| e.to_string())
        }

        fn maybe_text(&self, k: usize) -> Result<Option<String>, String> {
            self.$get(k).map_err(|e| e.to_string())
        }

        fn int(&self, k: usize) -> Result<i64, String> {
            self.$get(k).map_err(|e| e.to_string())
        }

        fn maybe_int(&self, k: usize) -> Result<Option<i64>, String> {
            self.$get(k).map_err(|e| e.to_string())
        }
    };
}
pub(crate) use sql_getters;

/// The statements of the tables beside the runs, in one dialect.
pub(crate) struct SideSql {
    /// The rules'.
    pub(crate) rules: RuleSql,
    /// The conversations'.
    pub(crate) conversations: ConversationSql,
    /// The workers' heartbeats.
    pub(crate) workers: WorkerSql,
    /// Names the n-th parameter (from 1) in this dialect.
    pub(crate) placeholder: fn(usize) -> String,
}

impl SideSql {
    /// The statements with `placeholder(n)` (kept: [`placeholder`](Self::placeholder)) naming
    /// the n-th parameter (from 1), `text(n)` and
    /// `int(n)` the n-th parameter cast to text and to an integer where a statement computes
    /// with it (PostgreSQL casts; SQLite needs none).
    pub(crate) fn new(
        placeholder: fn(usize) -> String,
        text: fn(usize) -> String,
        int: fn(usize) -> String,
    ) -> Self {
        Self {
            rules: RuleSql::new(placeholder, text),
            conversations: ConversationSql::new(placeholder, int),
            workers: WorkerSql::new(placeholder),
            placeholder,
        }
    }
}

/// What a SQL store gives the tables beside its runs.
pub(crate) trait SqlSide: Sync {
    /// Their statements in the store's dialect.
    fn side_sql(&self) -> &'static SideSql;

    /// The rows `sql` (one of [`side_sql`](Self::side_sql), or made for the call) selects
    /// for `params`, each read by `read`.
    fn select<T: Send + 'static>(
        &self,
        sql: impl Into<Cow<'static, str>>,
        params: Vec<SqlParam>,
        read: fn(&dyn SqlCols) -> T,
    ) -> BoxFuture<'_, StoreResult<Vec<T>>>;

    /// How many rows `sql` changed with `params`; `None` when it broke a unique constraint.
    fn execute(
        &self,
        sql: impl Into<Cow<'static, str>>,
        params: Vec<SqlParam>,
    ) -> BoxFuture<'_, StoreResult<Option<u64>>>;
}
