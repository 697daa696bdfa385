//! The memory store's turn rows ([`TurnDriver`]): kept beside its runs, under the same lock,
//! each step the [decisions](crate::store::lifecycle::together) applied to them as they are.

use super::MemoryStore;
use crate::store::lifecycle::Change;
use crate::store::lifecycle::together::{check_link, takes_answer, turn_order};
use crate::store::together::{Step, TurnDriver, TurnRow};

impl TurnDriver for MemoryStore {
    fn turn_link<'a>(&'a self, run_id: &'a str, rows: Vec<TurnRow>) -> Step<'a, ()> {
        Box::pin(async move {
            let mut kept = self.rows();
            check_link(run_id, &rows, |id| {
                kept.turn.get(id).map(|(run, _)| run.as_str())
            })?;
            for row in rows {
                kept.turn
                    .entry(row.request_id.clone())
                    .or_insert_with(|| (run_id.to_owned(), row));
            }
            Ok(())
        })
    }

    fn turn_run<'a>(&'a self, request_id: &'a str) -> Step<'a, Option<String>> {
        Box::pin(async move { Ok(self.rows().turn.get(request_id).map(|(run, _)| run.clone())) })
    }

    fn turn_rows<'a>(&'a self, run_id: &'a str) -> Step<'a, Vec<TurnRow>> {
        Box::pin(async move {
            let mut turn: Vec<TurnRow> = (self.rows().turn.values())
                .filter(|(run, _)| run == run_id)
                .map(|(_, row)| row.clone())
                .collect();
            turn.sort_by(turn_order);
            Ok(turn)
        })
    }

    fn turn_answer<'a>(&'a self, run_id: &'a str, change: Change, row: TurnRow) -> Step<'a, bool> {
        Box::pin(async move {
            let mut rows = self.rows();
            let open = (rows.turn.get(&row.request_id))
                .is_some_and(|(holder, kept)| takes_answer(holder, kept, run_id));
            if !open || rows.apply(&change).is_none() {
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
