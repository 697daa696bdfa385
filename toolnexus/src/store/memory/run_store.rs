//! `impl Driver for MemoryStore`: each step the [engine](crate::store::engine) asks for, on
//! the rows `mod.rs` keeps.

use std::time::{Duration, SystemTime};

use super::{MemoryStore, Rows, check_request_free};
use crate::request::Answer;
use crate::store::engine::{Answered, Driver};
use crate::store::lifecycle::{Answering, Change, Insert, Key};
use crate::store::{
    Claim, DamagedRun, HistoryQuery, Page, PendingQuery, RawRow, RunInfo, Seal, StoreResult,
    WorkerSeen, now_ms,
};
use crate::util::BoxFuture;

impl Driver for MemoryStore {
    fn outbox(&self) -> Option<&dyn crate::store::Outbox> {
        crate::store::outbox::outbox_of(self)
    }

    fn seal(&self) -> &Seal {
        &self.seal
    }

    fn lease(&self) -> Duration {
        MemoryStore::lease(self)
    }

    fn insert(&self, insert: Insert) -> BoxFuture<'_, StoreResult<RunInfo>> {
        Box::pin(async move { self.insert_now(insert) })
    }

    fn answer<'a>(
        &'a self,
        answer: &'a Answer,
        how: &'a Answering,
        plain: bool,
    ) -> BoxFuture<'a, StoreResult<Option<Answered>>> {
        // in memory the long way costs no round trips: never the plain way
        Box::pin(async move { (!plain).then(|| self.answer_now(answer, how)).transpose() })
    }

    fn apply_vote(&self, change: Change) -> BoxFuture<'_, StoreResult<Option<RawRow>>> {
        Box::pin(async move {
            let row = self.rows().apply(&change);
            if row.is_some() {
                self.changed();
            }
            Ok(row)
        })
    }

    fn pick<'a>(
        &'a self,
        owner: &'a str,
        answered_too: bool,
    ) -> BoxFuture<'a, StoreResult<Option<Claim>>> {
        Box::pin(async move {
            let claim = self.claim_first(Rows::oldest_to_take_over, owner);
            Ok(if answered_too {
                claim.or_else(|| self.claim_first(Rows::oldest_answered, owner))
            } else {
                claim
            })
        })
    }

    fn apply<'a>(
        &'a self,
        claim: &'a Claim,
        change: Change,
    ) -> BoxFuture<'a, StoreResult<Option<RunInfo>>> {
        Box::pin(async move {
            let finish = change.set.request.is_some() || change.set.result.is_some();
            let parks = change.set.request.is_some();
            let row = self.apply_claim(claim, &change, |rows, row| match &change.set.request {
                Some(cols) => {
                    check_request_free(rows, &cols.request_id, Some(&row.run_id))?;
                    // outbox: same transaction as the park
                    self.outbox_park(&row.run_id, &cols.request_id, change.at);
                    Ok(())
                }
                None => Ok(()),
            })?;
            if parks {
                self.outbox.parked();
            }
            // only a finish reads the row back (a checkpoint's cost stays its change)
            finish.then(|| row.info()).transpose()
        })
    }

    fn row(&self, key: Key) -> BoxFuture<'_, StoreResult<Option<RawRow>>> {
        Box::pin(async move {
            let rows = self.rows();
            let id = match &key {
                Key::Run(id) => Some(id),
                Key::Request(id) => rows
                    .by_request
                    .get(id)
                    .or_else(|| rows.past_requests.get(id)),
            };
            Ok(id.and_then(|id| rows.by_id.get(id)).cloned())
        })
    }

    fn info<'a>(&'a self, run_id: &'a str) -> BoxFuture<'a, StoreResult<Option<RunInfo>>> {
        Box::pin(async move { self.rows().by_id.get(run_id).map(RawRow::info).transpose() })
    }

    fn list_pending<'a>(&'a self, query: &'a PendingQuery) -> BoxFuture<'a, StoreResult<Page>> {
        Box::pin(async move { self.list_now(query) })
    }

    fn list_history<'a>(&'a self, query: &'a HistoryQuery) -> BoxFuture<'a, StoreResult<Page>> {
        Box::pin(async move { self.history_now(query) })
    }

    fn list_damaged(&self, limit: usize) -> BoxFuture<'_, StoreResult<Vec<DamagedRun>>> {
        Box::pin(async move { Ok(self.list_damaged_now(limit)) })
    }

    fn expire(&self) -> BoxFuture<'_, StoreResult<Vec<String>>> {
        Box::pin(async move { Ok(self.expire_now()) })
    }

    fn delete<'a>(&'a self, run_id: &'a str) -> BoxFuture<'a, StoreResult<bool>> {
        Box::pin(async move { Ok(self.delete_now(run_id)) })
    }

    fn next_due(&self) -> BoxFuture<'_, StoreResult<Option<SystemTime>>> {
        Box::pin(async move { Ok(self.next_due_now()) })
    }

    fn waiting(&self) -> BoxFuture<'_, StoreResult<u64>> {
        Box::pin(async move {
            let n = self.rows().waiting(now_ms());
            Ok(u64::try_from(n).unwrap_or(u64::MAX))
        })
    }

    fn heartbeat<'a>(&'a self, worker: &'a str, at: SystemTime) -> BoxFuture<'a, StoreResult<()>> {
        Box::pin(async move {
            let mut workers = self.worker_rows();
            let seen = workers.entry(worker.to_owned()).or_insert(at);
            *seen = (*seen).max(at);
            Ok(())
        })
    }

    fn last_worker_seen(&self) -> BoxFuture<'_, StoreResult<Option<WorkerSeen>>> {
        Box::pin(async move {
            Ok(self
                .worker_rows()
                .iter()
                .max_by(|a, b| (a.1, a.0).cmp(&(b.1, b.0)))
                .map(|(name, at)| WorkerSeen::new(name.clone(), *at)))
        })
    }

    fn wake_workers(&self) -> BoxFuture<'_, StoreResult<()>> {
        self.work();
        Box::pin(async { Ok(()) })
    }

    fn wait_for_work(&self, timeout: Duration) -> BoxFuture<'_, ()> {
        Box::pin(self.shared.work.wait(timeout))
    }

    fn told(&self) -> Option<&tokio::sync::Notify> {
        Some(&self.shared.changed)
    }
}
