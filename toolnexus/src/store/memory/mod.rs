//! [`MemoryStore`]: a run store in this process's memory.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard};
use std::time::Duration;

use tokio::sync::Notify;

mod answers;
mod conversations;
mod history;
mod outbox;
mod rules;
mod run_store;
#[cfg(feature = "test-support")]
mod test_support;

use crate::run::{PendingRun, SealKey};

use super::conversation::ConversationRow;
use super::{
    Claim, Columns, DEFAULT_LEASE, Page, PendingQuery, RawRow, RunInfo, RunState, StoreError,
    StoreResult, StoredRun, damaged_event, first_history, lease_ms, lease_until, now_ms, run_id_of,
    takeover_claim, takeover_event, token_i64,
};
use answers::mark_expired;

/// A [`RunStore`](super::RunStore) in this process's memory: for tests and single-process hosts (its runs end
/// with the process). Cheap to clone; clones share the runs.
///
/// Rows are kept as the SQL stores keep them (indexed columns plus the record as JSON), so a
/// run behaves the same in every store.
///
/// ```
/// use std::time::Duration;
/// use toolnexus::store::{MemoryStore, PendingQuery, RunStore};
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let store = MemoryStore::new().with_lease(Duration::from_secs(5));
/// let page = store.list_pending(&PendingQuery::new()).await.unwrap();
/// assert!(page.runs.is_empty());
/// # });
/// ```
#[derive(Clone, Default)]
pub struct MemoryStore {
    shared: Arc<Shared>,
    lease: Option<Duration>,
    seal: super::Seal,
    /// outbox: the notifier names and notifications (`outbox.rs`)
    outbox: Arc<super::outbox::OutboxState>,
}

#[derive(Default)]
struct Shared {
    rows: Mutex<Rows>,
    changed: Notify,
    /// Told when a run may need a worker (answered, parked, released, expired).
    work: super::Wake,
    /// The conversations, by id.
    conversations: Mutex<BTreeMap<String, ConversationRow>>,
    /// The remembered decisions, by id.
    rules: Mutex<rules::RuleRows>,
    /// The workers' latest heartbeats, by name.
    workers: Mutex<HashMap<String, std::time::SystemTime>>,
}

#[derive(Default)]
struct Rows {
    by_id: HashMap<String, RawRow>,
    by_request: HashMap<String, String>,
    /// Requests runs waited on before their current one, to their run.
    past_requests: HashMap<String, String>,
    /// `(created_at, run_id)` of every parked run, for listing in order.
    parked: BTreeSet<(i64, String)>,
    /// `(created_at, run_id)` of every answered run: the claimable ones, oldest first.
    answered: BTreeSet<(i64, String)>,
    /// `(created_at, run_id)` of every run whose request expired, oldest first.
    expired: BTreeSet<(i64, String)>,
    /// `(expires_at, run_id)` of every parked run with a deadline, nearest first.
    deadlines: BTreeSet<(i64, String)>,
    /// `(lease_until, run_id)` of every claimed run, the lease that runs out first first.
    leases: BTreeSet<(i64, String)>,
}

impl fmt::Debug for MemoryStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let runs = self.rows().by_id.len();
        f.debug_struct("MemoryStore")
            .field("runs", &runs)
            .field("lease", &self.lease())
            .field("seal_keys", &self.seal)
            .finish_non_exhaustive()
    }
}

impl MemoryStore {
    /// An empty store with the [default lease](DEFAULT_LEASE).
    pub fn new() -> Self {
        Self::default()
    }

    /// Sets how long a claim holds a run unless renewed.
    #[must_use]
    pub fn with_lease(mut self, lease: Duration) -> Self {
        self.lease = Some(lease);
        self
    }

    /// Seals every record, checkpoint and answer this handle writes with `current`, and refuses any
    /// row that does not open under `current` or one of `retired` (keys being rotated out),
    /// as [`StoreError::Corrupt`] for that run only. Give every handle of one store the same
    /// keys (clones made before this call share the rows, not the keys).
    ///
    /// ```
    /// use toolnexus::run::SealKey;
    /// use toolnexus::store::MemoryStore;
    ///
    /// let current = SealKey::new("2026-02", [3u8; 32]).unwrap();
    /// let retired = SealKey::new("2026-01", [2u8; 32]).unwrap();
    /// let store = MemoryStore::new().with_seal_keys(current, [retired]);
    /// assert_eq!(
    ///     format!("{store:?}"),
    ///     r#"MemoryStore { runs: 0, lease: 30s, seal_keys: ["2026-02", "2026-01"], .. }"#
    /// );
    /// ```
    #[must_use]
    pub fn with_seal_keys(
        mut self,
        current: SealKey,
        retired: impl IntoIterator<Item = SealKey>,
    ) -> Self {
        self.seal = super::Seal::new(current, retired);
        self
    }

    fn lease(&self) -> Duration {
        self.lease.unwrap_or(DEFAULT_LEASE)
    }

    fn rows(&self) -> MutexGuard<'_, Rows> {
        // a panic while holding the lock leaves whole rows behind (every change is one
        // assignment), so the data is still consistent
        self.shared
            .rows
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn conversation_rows(&self) -> MutexGuard<'_, BTreeMap<String, ConversationRow>> {
        // every change is one insert or remove: a poisoned map is still consistent
        self.shared
            .conversations
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn worker_rows(&self) -> MutexGuard<'_, HashMap<String, std::time::SystemTime>> {
        // every change is one insert: a poisoned map is still consistent
        self.shared
            .workers
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn rule_rows(&self) -> MutexGuard<'_, rules::RuleRows> {
        // every change is one insert or remove: a poisoned map is still consistent
        self.shared
            .rules
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    fn changed(&self) {
        self.shared.changed.notify_waiters();
    }

    /// Wakes the workers waiting in this process (and leaves a permit for the next one).
    fn work(&self) {
        self.shared.work.notify();
    }

    fn park_now(&self, record: &PendingRun) -> StoreResult<RunInfo> {
        let cols = Columns::of(run_id_of(record), record, &self.seal);
        let mut rows = self.rows();
        if rows.by_id.contains_key(&cols.run_id) {
            return Err(StoreError::Conflict(format!(
                "run `{}` is already stored: a parked run is parked once",
                cols.run_id
            )));
        }
        check_request_free(&rows, &cols.request_id, None)?;
        let now = now_ms();
        let history = first_history(&cols.requested(now));
        let row = RawRow {
            run_id: cols.run_id.clone(),
            request_id: cols.request_id,
            kind: cols.kind,
            prompt: cols.prompt,
            created_at: now,
            history,
            expires_at: cols.expires_at,
            state: RunState::Parked.as_str().to_owned(),
            lease_owner: None,
            lease_until: None,
            version: 1,
            claims: 0,
            record: cols.record,
            answer: None,
            checkpoint: None,
            result: None,
            damage: None,
        };
        let info = row.info()?;
        // outbox: same transaction as the park
        self.outbox_park(&row.run_id, &row.request_id, now);
        rows.insert(row);
        drop(rows);
        self.outbox.parked();
        self.changed();
        if info.expires_at.is_some() {
            // a new deadline: a worker sleeping until a later one must know
            self.work();
        }
        Ok(info)
    }

    fn take_over_now(&self, owner: &str) -> Option<Claim> {
        let now = now_ms();
        let mut rows = self.rows();
        let until = now.saturating_add(lease_ms(self.lease()));
        let (found, damaged) = self.first_readable(
            &mut rows,
            |rows| rows.oldest_to_take_over(now),
            owner,
            until,
            now,
        );
        let Some((row, claim)) = found else {
            drop(rows);
            if damaged {
                self.changed();
            }
            return None;
        };
        let mut claimed = row;
        claimed.append(&takeover_event(&claimed.state, &claim, owner, now));
        RunState::Claimed.as_str().clone_into(&mut claimed.state);
        claimed.lease_owner = Some(owner.to_owned());
        claimed.lease_until = Some(until);
        claimed.claims += 1;
        claimed.version += 1;
        rows.insert(claimed);
        drop(rows);
        self.changed();
        Some(claim)
    }

    /// The first row `oldest` names (the oldest candidate left in an index) that a worker
    /// can read, with the claim `owner` would make of it; every unreadable row met first is
    /// marked [`damaged`](RunState::Damaged), so it leaves the index and the next is tried.
    /// Also says whether any row was marked.
    fn first_readable(
        &self,
        rows: &mut Rows,
        oldest: impl Fn(&Rows) -> Option<String>,
        owner: &str,
        until: i64,
        now: i64,
    ) -> (Option<(RawRow, Claim)>, bool) {
        let mut damaged = false;
        while let Some(id) = oldest(rows) {
            let Some(row) = rows.by_id.get(&id) else {
                // an index names only stored rows; never loop on one that would not
                break;
            };
            match takeover_claim(row, &self.seal, owner, until, false) {
                Ok(claim) => return (Some((row.clone(), claim)), damaged),
                Err(e) => {
                    let mut marked = row.clone();
                    marked.append(&damaged_event(row, &e, owner, now));
                    RunState::Damaged.as_str().clone_into(&mut marked.state);
                    marked.lease_owner = None;
                    marked.lease_until = None;
                    marked.version += 1;
                    rows.insert(marked);
                    damaged = true;
                }
            }
        }
        (None, damaged)
    }

    /// Runs `change` on the claim's row when the claim still holds it.
    fn with_claim<T>(
        &self,
        claim: &Claim,
        change: impl FnOnce(&mut Rows, RawRow) -> StoreResult<T>,
    ) -> StoreResult<T> {
        let mut rows = self.rows();
        let lost = || StoreError::LeaseLost {
            run_id: claim.run_id.clone(),
        };
        let row = rows.by_id.get(&claim.run_id).cloned().ok_or_else(lost)?;
        if row.state != RunState::Claimed.as_str() || row.claims != token_i64(claim) {
            return Err(lost());
        }
        let out = change(&mut rows, row)?;
        drop(rows);
        self.changed();
        Ok(out)
    }

    /// Renews the claim's lease, saving `checkpoint` when given; returns the new lease end.
    fn touch(&self, claim: &Claim, checkpoint: Option<String>) -> StoreResult<i64> {
        let until = lease_until(self.lease());
        self.with_claim(claim, |rows, mut row| {
            if checkpoint.is_some() {
                row.checkpoint = checkpoint;
            }
            row.lease_until = Some(until);
            row.version += 1;
            rows.insert(row);
            Ok(until)
        })
    }

    fn list_now(&self, query: &PendingQuery) -> StoreResult<Page> {
        let size = query.page_size();
        let cursor = query.cursor()?;
        let rows = self.rows();
        let mut runs = Vec::with_capacity(size.min(1024) + 1);
        let start = match &cursor {
            Some((ms, id)) => std::ops::Bound::Excluded((*ms, id.clone())),
            None => std::ops::Bound::Unbounded,
        };
        for (created, id) in rows.parked.range((start, std::ops::Bound::Unbounded)) {
            if query.created_before_ms().is_some_and(|at| *created >= at) {
                break;
            }
            let Some(row) = rows.by_id.get(id) else {
                continue;
            };
            if query.kind_filter().is_some_and(|k| k != row.kind)
                || query
                    .expiring_before_ms()
                    .is_some_and(|at| row.expires_at.is_none_or(|e| e >= at))
            {
                continue;
            }
            runs.push(row.clone());
            if runs.len() > size {
                break;
            }
        }
        Ok(Page::of_rows(runs, size))
    }

    fn list_damaged_now(&self, limit: usize) -> Vec<super::DamagedRun> {
        let rows = self.rows();
        let mut damaged: Vec<_> = rows.by_id.values().filter_map(RawRow::as_damaged).collect();
        drop(rows);
        damaged.sort_unstable_by(|a, b| a.run_id.cmp(&b.run_id));
        damaged.truncate(limit);
        damaged
    }

    fn expire_now(&self) -> Vec<String> {
        let now = now_ms();
        let mut rows = self.rows();
        let due: Vec<RawRow> = rows
            .deadlines
            .range(..(now.saturating_add(1), String::new()))
            .filter_map(|(_, id)| rows.by_id.get(id))
            .cloned()
            .collect();
        let mut ids = Vec::with_capacity(due.len());
        for mut row in due {
            mark_expired(&mut row, &self.seal, now);
            ids.push(row.run_id.clone());
            rows.insert(row);
        }
        drop(rows);
        if !ids.is_empty() {
            self.changed();
            self.work();
        }
        ids.sort();
        ids
    }

    fn delete_now(&self, run_id: &str) -> bool {
        let mut rows = self.rows();
        let Some(row) = rows.by_id.remove(run_id) else {
            return false;
        };
        rows.unindex(&row);
        if rows.by_request.get(&row.request_id) == Some(&row.run_id) {
            rows.by_request.remove(&row.request_id);
        }
        rows.past_requests.retain(|_, run| *run != row.run_id);
        drop(rows);
        self.changed();
        true
    }

    fn decoded(
        &self,
        run_id: Option<&str>,
        request_id: Option<&str>,
    ) -> StoreResult<Option<StoredRun>> {
        let rows = self.rows();
        let id = match (run_id, request_id) {
            (Some(id), _) => Some(id.to_owned()),
            (None, Some(req)) => rows
                .by_request
                .get(req)
                .or_else(|| rows.past_requests.get(req))
                .cloned(),
            (None, None) => None,
        };
        id.and_then(|id| rows.by_id.get(&id))
            .map(|row| row.decode(&self.seal))
            .transpose()
    }
}

impl Rows {
    /// Stores a row, keeping the indexes in step.
    fn insert(&mut self, row: RawRow) {
        if let Some(old) = self.by_id.remove(&row.run_id) {
            self.unindex(&old);
            if old.request_id != row.request_id
                && self.by_request.get(&old.request_id) == Some(&row.run_id)
            {
                self.by_request.remove(&old.request_id);
                self.past_requests
                    .insert(old.request_id, row.run_id.clone());
            }
        }
        self.index(&row);
        self.by_request
            .insert(row.request_id.clone(), row.run_id.clone());
        self.by_id.insert(row.run_id.clone(), row);
    }

    /// Adds `row` to the index of its state (see [`unindex`](Self::unindex)).
    fn index(&mut self, row: &RawRow) {
        let key = || (row.created_at, row.run_id.clone());
        match RunState::parse(&row.state) {
            Some(RunState::Parked) => {
                self.parked.insert(key());
                if let Some(at) = row.expires_at {
                    self.deadlines.insert((at, row.run_id.clone()));
                }
            }
            Some(RunState::Answered) => {
                self.answered.insert(key());
            }
            Some(RunState::Expired) => {
                self.expired.insert(key());
            }
            Some(RunState::Claimed) => {
                if let Some(until) = row.lease_until {
                    self.leases.insert((until, row.run_id.clone()));
                }
            }
            _ => {}
        }
    }

    /// Takes `row` (as stored) out of every index [`index`](Self::index) put it in.
    fn unindex(&mut self, row: &RawRow) {
        let key = (row.created_at, row.run_id.clone());
        self.parked.remove(&key);
        self.answered.remove(&key);
        self.expired.remove(&key);
        if let Some(at) = row.expires_at {
            self.deadlines.remove(&(at, row.run_id.clone()));
        }
        if let Some(until) = row.lease_until {
            self.leases.remove(&(until, row.run_id.clone()));
        }
    }

    /// The oldest answered run.
    fn oldest_answered(&self) -> Option<String> {
        self.answered.first().map(|(_, id)| id.clone())
    }

    /// The oldest run a worker takes over at `now`: its request expired, or its lease ran out
    /// (the oldest by creation of both).
    fn oldest_to_take_over(&self, now: i64) -> Option<String> {
        let lapsed = self
            .lapsed(now)
            .filter_map(|id| self.by_id.get(id).map(|r| (r.created_at, id)))
            .min();
        let expired = self.expired.first().map(|(at, id)| (*at, id));
        match (expired, lapsed) {
            (Some(e), Some(l)) => Some(e.min(l).1.clone()),
            (e, l) => e.or(l).map(|(_, id)| id.clone()),
        }
    }

    /// The nearest deadline: a parked run's expiry or a claimed run's lease end.
    fn next_due(&self) -> Option<i64> {
        let expiry = self.deadlines.first().map(|(at, _)| *at);
        let lease = self.leases.first().map(|(until, _)| *until);
        expiry.into_iter().chain(lease).min()
    }

    /// Runs waiting for a worker at `now`: answered, expired, or claimed with a lapsed lease.
    fn waiting(&self, now: i64) -> usize {
        self.answered.len() + self.expired.len() + self.lapsed(now).count()
    }

    /// The claimed runs whose lease ran out by `now`, the earliest lapsed first.
    fn lapsed(&self, now: i64) -> impl Iterator<Item = &String> {
        self.leases
            .iter()
            .take_while(move |(until, _)| *until <= now)
            .map(|(_, id)| id)
    }
}

/// Refuses a request id another live run already waits on.
fn check_request_free(rows: &Rows, request_id: &str, this_run: Option<&str>) -> StoreResult<()> {
    match rows.by_request.get(request_id) {
        Some(other) if Some(other.as_str()) != this_run => Err(StoreError::Conflict(format!(
            "request `{request_id}` is already the request of run `{other}`: request ids name one run"
        ))),
        _ => Ok(()),
    }
}
