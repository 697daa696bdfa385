//! The memory store's turn rows ([`TurnDriver`]): kept beside its runs, under the same lock.

use super::MemoryStore;
use crate::store::lifecycle::Change;
use crate::store::together::{TurnDriver, TurnRow};
use crate::store::{StoreError, StoreResult};
use crate::util::BoxFuture;

impl TurnDriver for MemoryStore {
    fn turn_link<'a>(
        &'a self,
        run_id: &'a str,
        request_ids: Vec<String>,
    ) -> BoxFuture<'a, StoreResult<()>> {
        Box::pin(async move {
            let mut rows = self.rows();
            if let Some(taken) = request_ids
                .iter()
                .find(|id| rows.turn.get(*id).is_some_and(|(run, _)| run != run_id))
            {
                return Err(StoreError::Conflict(format!(
                    "request `{taken}` is already the request of another run: request ids name one run"
                )));
            }
            for (position, request_id) in request_ids.into_iter().enumerate() {
                let row = TurnRow {
                    request_id: request_id.clone(),
                    position: i64::try_from(position).unwrap_or(i64::MAX),
                    answer: None,
                    answered_by: None,
                    answered_at: None,
                };
                rows.turn
                    .entry(request_id)
                    .or_insert_with(|| (run_id.to_owned(), row));
            }
            Ok(())
        })
    }

    fn turn_run<'a>(&'a self, request_id: &'a str) -> BoxFuture<'a, StoreResult<Option<String>>> {
        Box::pin(async move { Ok(self.rows().turn.get(request_id).map(|(run, _)| run.clone())) })
    }

    fn turn_rows<'a>(&'a self, run_id: &'a str) -> BoxFuture<'a, StoreResult<Vec<TurnRow>>> {
        Box::pin(async move {
            let rows = self.rows();
            let mut turn: Vec<TurnRow> = rows
                .turn
                .values()
                .filter(|(run, _)| run == run_id)
                .map(|(_, row)| row.clone())
                .collect();
            turn.sort_by(|a, b| (a.position, &a.request_id).cmp(&(b.position, &b.request_id)));
            Ok(turn)
        })
    }

    fn turn_answer<'a>(
        &'a self,
        run_id: &'a str,
        change: Change,
        row: TurnRow,
    ) -> BoxFuture<'a, StoreResult<bool>> {
        Box::pin(async move {
            let mut rows = self.rows();
            let free = rows
                .turn
                .get(&row.request_id)
                .is_some_and(|(run, kept)| run == run_id && kept.answer.is_none());
            if !free || rows.apply(&change).is_none() {
                return Ok(false);
            }
            if let Some((_, kept)) = rows.turn.get_mut(&row.request_id) {
                *kept = row;
            }
            drop(rows);
            self.changed();
            if change.set.state.is_some() {
                self.work();
            }
            Ok(true)
        })
    }
}
