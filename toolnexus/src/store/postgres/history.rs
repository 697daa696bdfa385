//! The PostgreSQL store's history listing: the runs people answered, newest request first.

use super::answers::placeholder;
use super::{PostgresStore, raw_info};
use crate::store::sql::{Dialect, history_sql};
use crate::store::{HistoryQuery, Page, StoreResult};

impl PostgresStore {
    /// One page of [`list_history`](crate::store::RunStore::list_history).
    pub(super) async fn history(&self, query: &HistoryQuery) -> StoreResult<Page> {
        let (sql, params) = history_sql(query, placeholder, Dialect::Postgres.ordered())?;
        self.page(&sql, params, query.page_size(), raw_info).await
    }
}
