//! The PostgreSQL store's history listing: the runs people answered, newest request first.

use tokio_postgres::types::ToSql;

use super::{PostgresStore, pg, raw_info};
use crate::store::sql::{SqlParam, history_sql};
use crate::store::{HistoryQuery, Page, StoreResult};

impl PostgresStore {
    /// One page of [`list_history`](crate::store::RunStore::list_history).
    pub(super) async fn history(&self, query: &HistoryQuery) -> StoreResult<Page> {
        let size = query.page_size();
        let (sql, params) = history_sql(query, |n| format!("${n}"), "")?;
        let params: Vec<Box<dyn ToSql + Sync + Send>> = params
            .into_iter()
            .map(|p| -> Box<dyn ToSql + Sync + Send> {
                match p {
                    SqlParam::Text(s) => Box::new(s),
                    SqlParam::Int(i) => Box::new(i),
                }
            })
            .collect();
        let refs: Vec<&(dyn ToSql + Sync)> = params
            .iter()
            .map(|p| p.as_ref() as &(dyn ToSql + Sync))
            .collect();
        let client = self.client().await?;
        let stmt = client.prepare_cached(&sql).await.map_err(|e| pg(&e))?;
        let rows = client.query(&stmt, &refs).await.map_err(|e| pg(&e))?;
        Ok(Page::of_rows(rows.iter().map(raw_info).collect(), size))
    }
}
