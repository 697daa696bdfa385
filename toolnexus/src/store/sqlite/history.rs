//! The SQLite store's history listing: the runs people answered, newest request first.

use super::answers::placeholder;
use super::{SqliteStore, raw_info, rows};
use crate::store::sql::{Dialect, history_sql};
use crate::store::{HistoryQuery, Page, StoreResult};

impl SqliteStore {
    /// One page of [`list_history`](crate::store::RunStore::list_history). SQLite keeps any
    /// value in any column: the pages walk the rows whose `created_at` is an integer (the
    /// cursor's order); [`list_damaged`](crate::store::RunStore::list_damaged) reports the
    /// others.
    pub(super) async fn history(&self, query: &HistoryQuery) -> StoreResult<Page> {
        let size = query.page_size();
        let (sql, params) = history_sql(query, placeholder, Dialect::Sqlite.ordered())?;
        self.call(move |conn| {
            let rows = rows(
                conn,
                &sql,
                rusqlite::params_from_iter(params.iter()),
                raw_info,
            )?;
            Ok(Page::of_rows(rows, size))
        })
        .await
    }
}
