//! The memory store's history listing: the runs people answered, newest request first.

use super::MemoryStore;
use crate::store::history::answered_once;
use crate::store::{HistoryQuery, Page, StoreResult};

impl MemoryStore {
    /// One page of [`list_history`](crate::store::RunStore::list_history): every row scanned
    /// (the store keeps no index of answered runs), the page's rows copied.
    pub(super) fn history_now(&self, query: &HistoryQuery) -> StoreResult<Page> {
        let size = query.page_size();
        let cursor = query.cursor()?;
        let rows = self.rows();
        let mut keys: Vec<(i64, &str)> = rows
            .by_id
            .values()
            .filter(|row| answered_once(&row.state, row.claims))
            .filter(|row| query.kind_filter().is_none_or(|k| k == row.kind))
            .filter(|row| {
                cursor.as_ref().is_none_or(|(ms, id)| {
                    (row.created_at, row.run_id.as_str()) < (*ms, id.as_str())
                })
            })
            .map(|row| (row.created_at, row.run_id.as_str()))
            .collect();
        let take = size.saturating_add(1).min(keys.len());
        if take < keys.len() {
            keys.select_nth_unstable_by(take, |a, b| b.cmp(a));
            keys.truncate(take);
        }
        keys.sort_unstable_by(|a, b| b.cmp(a));
        let page: Vec<_> = keys
            .iter()
            .filter_map(|(_, id)| rows.by_id.get(*id).cloned())
            .collect();
        drop(rows);
        Ok(Page::of_rows(page, size))
    }
}
