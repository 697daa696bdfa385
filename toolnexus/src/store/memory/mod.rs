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
mod together;

use crate::run::SealKey;

use super::conversation_rows::ConversationRow;
use super::{
    DEFAULT_LEASE, Page, PendingQuery, RawRow, RunInfo, RunState, StoreError, StoreResult,
    lifecycle, now_ms,
};

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
    /// The requests of together runs, by id: their run and turn row (`together.rs`).
    turn: HashMap<String, (String, crate::store::together::TurnRow)>,
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
        lock(&self.shared.rows)
    }

    fn conversation_rows(&self) -> MutexGuard<'_, BTreeMap<String, ConversationRow>> {
        lock(&self.shared.conversations)
    }

    fn worker_rows(&self) -> MutexGuard<'_, HashMap<String, std::time::SystemTime>> {
        lock(&self.shared.workers)
    }

    fn rule_rows(&self) -> MutexGuard<'_, rules::RuleRows> {
        lock(&self.shared.rules)
    }

    fn changed(&self) {
        self.shared.changed.notify_waiters();
    }

    /// Wakes the workers waiting in this process (and leaves a permit for the next one).
    fn work(&self) {
        self.shared.work.notify();
    }

    fn insert_now(&self, insert: lifecycle::Insert) -> StoreResult<RunInfo> {
        let info = insert.info();
        let mut rows = self.rows();
        let row = insert.row;
        if rows.by_id.contains_key(&row.run_id) {
            return Err(lifecycle::park_conflict(&row.run_id, &row.request_id, true));
        }
        check_request_free(&rows, &row.request_id, None)?;
        // each side row in this same step (none yet)
        if let Some(side) = insert.side.first() {
            match *side {}
        }
        // outbox: same transaction as the park
        self.outbox_park(&row.run_id, &row.request_id, row.created_at);
        rows.insert(row);
        drop(rows);
        self.outbox.parked();
        self.changed();
        Ok(info)
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
                || !query.may_answer(row.approvers.as_deref())
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
        let due: Vec<_> = rows
            .deadlines
            .range(..(now.saturating_add(1), String::new()))
            .filter_map(|(_, id)| rows.by_id.get(id))
            .map(|row| lifecycle::at_deadline(&row.due(), &self.seal, now))
            .collect();
        let mut ids = Vec::with_capacity(due.len());
        let mut escalated = false;
        for change in &due {
            if let Some(row) = rows.apply(change) {
                match &change.set.escalate {
                    Some(step) => {
                        escalated = true;
                        self.outbox_escalate(&row.run_id, &row.request_id, step.step, now);
                    }
                    None => ids.push(row.run_id),
                }
            }
        }
        drop(rows);
        if escalated {
            self.changed();
            self.outbox.parked();
        }
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
        rows.turn.retain(|_, (run, _)| *run != row.run_id);
        drop(rows);
        self.changed();
        true
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
    fn oldest_answered(&self, _now: i64) -> Option<String> {
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

/// The data behind `mutex`, even when a panic poisoned it: a panic while holding one of the
/// store's locks leaves whole rows behind (every change is one assignment, insert or remove),
/// so the data is still consistent.
fn lock<T>(mutex: &Mutex<T>) -> MutexGuard<'_, T> {
    mutex
        .lock()
        .unwrap_or_else(std::sync::PoisonError::into_inner)
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
