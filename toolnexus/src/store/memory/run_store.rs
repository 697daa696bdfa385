//! `impl RunStore for MemoryStore`: each method the trait asks for, on the rows `mod.rs` keeps.

use std::time::{Duration, SystemTime};

use serde_json::Value;

use super::{MemoryStore, check_request_free};
use crate::request::Answer;
use crate::run::{PendingRun, RunResult};
use crate::store::{
    Claim, ConversationStore, DamagedRun, HistoryQuery, Outcome, Page, PendingQuery, RawRow,
    RunEvent, RunEventKind, RunInfo, RunState, RunStore, StoreError, StoreResult, StoredRun,
    check_answer, check_submit, now_ms,
};
use crate::util::BoxFuture;

impl RunStore for MemoryStore {
    fn conversations(&self) -> Option<&dyn ConversationStore> {
        Some(self)
    }

    fn heartbeat<'a>(
        &'a self,
        worker: &'a str,
        at: std::time::SystemTime,
    ) -> BoxFuture<'a, StoreResult<()>> {
        Box::pin(async move {
            let mut workers = self.worker_rows();
            let seen = workers.entry(worker.to_owned()).or_insert(at);
            *seen = (*seen).max(at);
            Ok(())
        })
    }

    fn last_worker_seen(&self) -> BoxFuture<'_, StoreResult<Option<crate::store::WorkerSeen>>> {
        Box::pin(async move {
            Ok(self
                .worker_rows()
                .iter()
                .max_by(|a, b| (a.1, a.0).cmp(&(b.1, b.0)))
                .map(|(name, at)| crate::store::WorkerSeen::new(name.clone(), *at)))
        })
    }

    fn rules(&self) -> Option<&dyn crate::remember::RuleStore> {
        Some(self)
    }

    fn outbox(&self) -> Option<&dyn crate::store::Outbox> {
        (!self.outbox.names.is_empty()).then_some(self as _)
    }

    fn park(&self, record: PendingRun) -> BoxFuture<'_, StoreResult<RunInfo>> {
        Box::pin(async move { self.park_now(&record) })
    }

    fn info<'a>(&'a self, run_id: &'a str) -> BoxFuture<'a, StoreResult<Option<RunInfo>>> {
        Box::pin(async move { self.rows().by_id.get(run_id).map(RawRow::info).transpose() })
    }

    fn get<'a>(&'a self, run_id: &'a str) -> BoxFuture<'a, StoreResult<Option<StoredRun>>> {
        Box::pin(async move { self.decoded(Some(run_id), None) })
    }

    fn get_by_request<'a>(
        &'a self,
        request_id: &'a str,
    ) -> BoxFuture<'a, StoreResult<Option<StoredRun>>> {
        Box::pin(async move { self.decoded(None, Some(request_id)) })
    }

    fn claim<'a>(
        &'a self,
        answer: &'a Answer,
        owner: &'a str,
    ) -> BoxFuture<'a, StoreResult<Claim>> {
        Box::pin(async move {
            check_answer(answer)?;
            self.claim_now(answer, owner)
        })
    }

    fn take_over<'a>(&'a self, owner: &'a str) -> BoxFuture<'a, StoreResult<Option<Claim>>> {
        Box::pin(async move { Ok(self.take_over_now(owner)) })
    }

    fn submit<'a>(
        &'a self,
        answer: &'a Answer,
        answered_by: &'a str,
    ) -> BoxFuture<'a, StoreResult<RunInfo>> {
        Box::pin(async move {
            check_submit(answer, answered_by)?;
            let answer = crate::remember::checked_answer(self, answer, answered_by, false).await?;
            self.submit_now(&answer, answered_by)
        })
    }

    fn submit_granting<'a>(
        &'a self,
        answer: &'a Answer,
        answered_by: &'a str,
    ) -> BoxFuture<'a, StoreResult<RunInfo>> {
        Box::pin(async move {
            check_submit(answer, answered_by)?;
            let answer = crate::remember::checked_answer(self, answer, answered_by, true).await?;
            self.submit_now(&answer, answered_by)
        })
    }

    fn claim_next<'a>(&'a self, owner: &'a str) -> BoxFuture<'a, StoreResult<Option<Claim>>> {
        Box::pin(async move {
            Ok(self
                .take_over_now(owner)
                .or_else(|| self.claim_answered(owner)))
        })
    }

    fn release<'a>(&'a self, claim: &'a Claim) -> BoxFuture<'a, StoreResult<()>> {
        Box::pin(async move {
            self.with_claim(claim, |rows, mut row| {
                crate::store::released_state(claim)
                    .as_str()
                    .clone_into(&mut row.state);
                row.append(
                    &RunEvent::new(RunEventKind::Released, now_ms())
                        .by(&claim.lease.owner)
                        .json(),
                );
                row.lease_owner = None;
                row.lease_until = None;
                row.version += 1;
                rows.insert(row);
                Ok(())
            })?;
            self.work();
            Ok(())
        })
    }

    fn fail<'a>(
        &'a self,
        claim: &'a Claim,
        error: &'a str,
        retry_at: Option<SystemTime>,
    ) -> BoxFuture<'a, StoreResult<()>> {
        Box::pin(async move {
            let (event, state) = crate::store::failed_event(claim, error, retry_at.is_some());
            self.with_claim(claim, |rows, mut row| {
                row.append(&event);
                if let Some(at) = retry_at {
                    row.lease_until = Some(crate::store::row::millis(at));
                } else {
                    state.as_str().clone_into(&mut row.state);
                    row.lease_owner = None;
                    row.lease_until = None;
                }
                row.version += 1;
                rows.insert(row);
                Ok(())
            })
        })
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

    fn wait_for_work(&self, timeout: Duration) -> BoxFuture<'_, ()> {
        Box::pin(self.shared.work.wait(timeout))
    }

    fn renew<'a>(&'a self, claim: &'a mut Claim) -> BoxFuture<'a, StoreResult<()>> {
        Box::pin(async move {
            let until = self.touch(claim, None)?;
            claim.lease.until = crate::store::from_millis(until);
            Ok(())
        })
    }

    fn checkpoint<'a>(&'a self, claim: &'a Claim, state: Value) -> BoxFuture<'a, StoreResult<()>> {
        Box::pin(async move {
            self.touch(claim, Some(self.seal.checkpoint(&claim.run_id, &state)))
                .map(drop)
        })
    }

    fn finish<'a>(
        &'a self,
        claim: &'a Claim,
        result: RunResult,
    ) -> BoxFuture<'a, StoreResult<RunInfo>> {
        Box::pin(async move {
            let outcome = Outcome::of(&claim.run_id, result, &self.seal)?;
            let parks = matches!(outcome, Outcome::Parked(_));
            let info = self.with_claim(claim, |rows, mut row| {
                let now = now_ms();
                row.append(&outcome.event(now).json());
                match outcome {
                    Outcome::Parked(cols) => {
                        check_request_free(rows, &cols.request_id, Some(&row.run_id))?;
                        // outbox: same transaction as the park
                        self.outbox_park(&row.run_id, &cols.request_id, now);
                        row.request_id = cols.request_id;
                        row.kind = cols.kind;
                        row.prompt = cols.prompt;
                        row.expires_at = cols.expires_at;
                        row.record = cols.record;
                        row.created_at = now;
                        RunState::Parked.as_str().clone_into(&mut row.state);
                        row.answer = None;
                        row.checkpoint = None;
                    }
                    Outcome::Finished(json, _) => {
                        RunState::Finished.as_str().clone_into(&mut row.state);
                        row.result = Some(json);
                    }
                }
                row.lease_owner = None;
                row.lease_until = None;
                row.version += 1;
                let info = row.info()?;
                rows.insert(row);
                Ok(info)
            })?;
            if parks {
                self.outbox.parked();
            }
            if parks && info.expires_at.is_some() {
                self.work();
            }
            Ok(info)
        })
    }

    fn list_pending<'a>(&'a self, query: &'a PendingQuery) -> BoxFuture<'a, StoreResult<Page>> {
        Box::pin(async move { self.list_now(query) })
    }

    fn list_history<'a>(&'a self, query: &'a HistoryQuery) -> BoxFuture<'a, StoreResult<Page>> {
        Box::pin(async move { self.history_now(query) })
    }

    fn expire(&self) -> BoxFuture<'_, StoreResult<Vec<String>>> {
        Box::pin(async move { Ok(self.expire_now()) })
    }

    fn list_damaged(&self, limit: usize) -> BoxFuture<'_, StoreResult<Vec<DamagedRun>>> {
        Box::pin(async move { Ok(self.list_damaged_now(limit)) })
    }

    fn delete<'a>(&'a self, run_id: &'a str) -> BoxFuture<'a, StoreResult<bool>> {
        Box::pin(async move { Ok(self.delete_now(run_id)) })
    }

    fn wait_change<'a>(
        &'a self,
        run_id: &'a str,
        version: u64,
        timeout: Duration,
    ) -> BoxFuture<'a, StoreResult<Option<RunInfo>>> {
        Box::pin(async move {
            let deadline = tokio::time::Instant::now() + timeout;
            loop {
                let notified = self.shared.changed.notified();
                tokio::pin!(notified);
                notified.as_mut().enable();
                let info = {
                    let rows = self.rows();
                    match rows.by_id.get(run_id) {
                        Some(row) => row.info()?,
                        None => {
                            return Err(StoreError::NotFound {
                                key: run_id.to_owned(),
                            });
                        }
                    }
                };
                if info.version > version {
                    return Ok(Some(info));
                }
                if tokio::time::timeout_at(deadline, notified).await.is_err() {
                    return Ok(None);
                }
            }
        })
    }
}
