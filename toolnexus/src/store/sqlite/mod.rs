//! [`SqliteStore`]: a run store in one SQLite file (rusqlite, SQLite compiled in).
//!
//! The SQLite driver of the store engine (one short method per step it asks for) beside the
//! row reading it shares; the answer paths, the connection, conversations and the schema have
//! their own files.

mod answers;
mod connection;
mod outbox;
mod schema;
mod side;
mod together;

use std::fmt;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use rusqlite::{Connection, ErrorCode, OptionalExtension, params, params_from_iter};

use crate::request::Answer;
use crate::util::BoxFuture;
use answers::{answer_blocking, apply, apply_returning, take_over_blocking};
use connection::{Connections, Immediate};

use super::engine::{Answered, Driver};
use super::lifecycle::{self, Answering, Change};
use super::{Claim, DEFAULT_LEASE, RawRow, RunInfo, StoreError, StoreResult, now_ms, token_i64};
use crate::store::sql::{COLUMNS, Dialect, INFO_COLUMNS, RunSql, backend, insert_params, raw_row};

/// The run statements in SQLite.
fn runs() -> &'static RunSql {
    Dialect::Sqlite.runs()
}

/// A [`RunStore`](crate::store::RunStore) in one SQLite file: the embedded default for durable runs.
///
/// The file is opened in WAL mode with a busy timeout, so several processes on one machine can
/// share it; every change is one `IMMEDIATE` transaction (a claim is one conditional `UPDATE`
/// in it), so of any number of claimants, in any number of processes, exactly one wins. The
/// schema is created and migrated on [`open`](SqliteStore::open) (versions in a
/// `schema_version` table).
///
/// A call runs its statements in place when it can do so without waiting: on the store's
/// first connection, if no other call holds it, and only as long as no other process holds the
/// file's write lock (that connection never waits for a lock and never syncs the file). A call
/// that would wait (another call has the connection, another process has the lock) goes to
/// the store's own thread, whose connection waits up to 10 s for the lock; that thread also
/// checkpoints the write-ahead log, and runs [`expire`](crate::store::RunStore::expire), whose work has no
/// bound. So a call never blocks the async runtime on a lock, a sync or an unbounded batch,
/// and the usual call costs its statements rather than two thread wake-ups. The store's
/// clones share both connections; the thread ends when the last clone is dropped.
///
/// ```
/// use toolnexus::store::{PendingQuery, RunStore, SqliteStore};
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let dir = std::env::temp_dir().join(format!("toolnexus-doc-{}", std::process::id()));
/// std::fs::create_dir_all(&dir).unwrap();
/// let store = SqliteStore::open(dir.join("runs.db")).await.unwrap();
/// assert!(store.list_pending(&PendingQuery::new()).await.unwrap().runs.is_empty());
/// # std::fs::remove_dir_all(&dir).unwrap();
/// # });
/// ```
#[derive(Clone)]
pub struct SqliteStore {
    shared: Arc<Connections>,
    lease: Duration,
    seal: crate::store::Seal,
    /// outbox: the notifier names a park writes notifications for (`outbox.rs`)
    outbox: Arc<crate::store::outbox::OutboxState>,
}

impl fmt::Debug for SqliteStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SqliteStore")
            .field("path", &self.shared.path)
            .field("lease", &self.lease)
            .field("seal_keys", &self.seal)
            .finish_non_exhaustive()
    }
}

fn is_constraint(e: &rusqlite::Error) -> bool {
    e.sqlite_error_code() == Some(ErrorCode::ConstraintViolation)
}

impl SqliteStore {
    /// Opens (or creates) the store in the file at `path`, migrating its schema.
    ///
    /// # Errors
    ///
    /// [`StoreError::Backend`] when the file cannot be opened, is not a SQLite database, or
    /// holds a schema newer than this release's.
    pub async fn open(path: impl AsRef<Path>) -> StoreResult<Self> {
        let path = path.as_ref().to_path_buf();
        Ok(Self {
            shared: Arc::new(
                tokio::task::spawn_blocking(move || Connections::open(path))
                    .await
                    .map_err(backend)??,
            ),
            lease: DEFAULT_LEASE,
            seal: crate::store::Seal::default(),
            outbox: Arc::default(),
        })
    }

    crate::store::sql::seal_and_lease!("that opens the file", "the file");

    /// The database file.
    pub fn path(&self) -> &Path {
        &self.shared.path
    }

    /// [`answer_blocking`] on the connection; a submit wakes the workers.
    async fn answer_now(
        &self,
        answer: &Answer,
        how: Answering,
        plain: bool,
    ) -> StoreResult<Option<Answered>> {
        let (seal, answer) = (self.seal.clone(), answer.clone());
        let submit = matches!(how, Answering::Submit { .. });
        let answered = self
            .call(move |conn| answer_blocking(conn, &seal, &answer, &how, plain))
            .await?;
        if submit && answered.is_some() {
            self.shared.work.notify();
        }
        Ok(answered)
    }

    /// Runs `f` in place when that needs no wait, else on the connection thread (see
    /// [`Connections::call`]).
    async fn call<T, F>(&self, f: F) -> StoreResult<T>
    where
        T: Send + 'static,
        F: FnMut(&mut Connection) -> StoreResult<T> + Send + 'static,
    {
        Connections::call(&self.shared, f).await
    }
}

/// A row read with [`COLUMNS`]: the info columns, then the blobs.
fn raw(r: &rusqlite::Row<'_>) -> RawRow {
    raw_row(r, crate::store::cell::ALL_CELLS)
}

/// A row read with [`INFO_COLUMNS`]: its blobs are left empty.
fn raw_info(r: &rusqlite::Row<'_>) -> RawRow {
    raw_row(r, crate::store::cell::INFO_CELLS)
}

/// The row `sql` (one of [`runs`]) reads of `key`, decoded by `read`.
fn row_where(
    conn: &Connection,
    sql: &str,
    key: &str,
    read: fn(&rusqlite::Row<'_>) -> RawRow,
) -> StoreResult<Option<RawRow>> {
    conn.prepare_cached(sql)
        .and_then(|mut stmt| stmt.query_row([key], |r| Ok(read(r))).optional())
        .map_err(backend)
}

/// The rows `sql` reads with `params`, each decoded by `read`.
fn rows(
    conn: &Connection,
    sql: &str,
    params: impl rusqlite::Params,
    read: fn(&rusqlite::Row<'_>) -> RawRow,
) -> StoreResult<Vec<RawRow>> {
    let mut stmt = conn.prepare_cached(sql).map_err(backend)?;
    let rows = stmt.query_map(params, |r| Ok(read(r))).map_err(backend)?;
    rows.collect::<rusqlite::Result<_>>().map_err(backend)
}

fn conflict(conn: &Connection, run_id: &str, request_id: &str) -> StoreError {
    let exists = conn
        .query_row(&runs().exists, [run_id], |_| Ok(()))
        .optional()
        .is_ok_and(|r| r.is_some());
    lifecycle::park_conflict(run_id, request_id, exists)
}

/// Applies `change` (a finish of the claim `token` of `run_id`): a run that is done in its
/// one statement; a run that parks again in one `IMMEDIATE` transaction, keeping the request
/// it leaves (a later answer to it was answered already) and its notifications.
fn finish_blocking(
    conn: &mut Connection,
    run_id: String,
    token: i64,
    change: &Change,
    outbox: &crate::store::outbox::OutboxState,
) -> StoreResult<RunInfo> {
    if change.set.request.is_none() {
        let row = apply_returning(conn, change, INFO_COLUMNS, raw_info).map_err(backend)?;
        return row.ok_or(StoreError::LeaseLost { run_id })?.info();
    }
    let tx = Immediate::begin(conn)?;
    if let Some(cols) = &change.set.request {
        tx.prepare_cached(&runs().keep_past_request)
            .and_then(|mut stmt| stmt.execute(params![run_id, token, cols.request_id]))
            .map_err(backend)?;
    }
    let row = apply_returning(&tx, change, INFO_COLUMNS, raw_info).map_err(|e| {
        match (&change.set.request, is_constraint(&e)) {
            (Some(cols), true) => conflict(&tx, run_id.as_str(), &cols.request_id),
            _ => backend(e),
        }
    })?;
    let info = row.ok_or(StoreError::LeaseLost { run_id })?.info()?;
    if let Some(cols) = &change.set.request {
        // outbox: same transaction as the park
        outbox::outbox_park(&tx, outbox, &info.run_id, &cols.request_id, change.at)?;
    }
    tx.commit()?;
    Ok(info)
}

impl Driver for SqliteStore {
    fn outbox(&self) -> Option<&dyn crate::store::Outbox> {
        crate::store::outbox::outbox_of(self)
    }

    crate::store::sql::driver_basics!(Dialect::Sqlite);

    fn insert(&self, insert: lifecycle::Insert) -> BoxFuture<'_, StoreResult<RunInfo>> {
        let outbox = self.outbox.clone();
        Box::pin(async move {
            let info = self
                .call(move |conn| {
                    let row = &insert.row;
                    // each side row in this same transaction (none yet)
                    if let Some(side) = insert.side.first() {
                        match *side {}
                    }
                    // outbox: a transaction when the park writes notifications beside its run
                    let mut tx = None;
                    let conn: &Connection = if outbox.names.is_empty() {
                        conn
                    } else {
                        tx.insert(Immediate::begin(conn)?)
                    };
                    conn.prepare_cached(&runs().insert)
                        .and_then(|mut stmt| stmt.execute(params_from_iter(insert_params(row))))
                        .map_err(|e| {
                            if is_constraint(&e) {
                                conflict(conn, &row.run_id, &row.request_id)
                            } else {
                                backend(e)
                            }
                        })?;
                    // outbox: same transaction as the park
                    outbox::outbox_park(
                        conn,
                        &outbox,
                        &row.run_id,
                        &row.request_id,
                        row.created_at,
                    )?;
                    if let Some(tx) = tx {
                        tx.commit()?;
                    }
                    Ok(insert.info())
                })
                .await?;
            self.outbox.parked();
            Ok(info)
        })
    }

    fn answer<'a>(
        &'a self,
        answer: &'a Answer,
        how: &'a Answering,
        plain: bool,
    ) -> BoxFuture<'a, StoreResult<Option<Answered>>> {
        Box::pin(self.answer_now(answer, how.clone(), plain))
    }

    fn apply_vote(&self, change: Change) -> BoxFuture<'_, StoreResult<Option<RawRow>>> {
        Box::pin(self.call(move |conn| {
            answers::apply_returning(conn, &change, COLUMNS, raw).map_err(backend)
        }))
    }

    fn pick<'a>(
        &'a self,
        owner: &'a str,
        answered_too: bool,
    ) -> BoxFuture<'a, StoreResult<Option<Claim>>> {
        let (owner, lease, seal) = (owner.to_owned(), self.lease, self.seal.clone());
        Box::pin(
            self.call(move |conn| take_over_blocking(conn, &seal, &owner, lease, answered_too)),
        )
    }

    fn apply<'a>(
        &'a self,
        claim: &'a Claim,
        change: Change,
    ) -> BoxFuture<'a, StoreResult<Option<RunInfo>>> {
        let (run_id, token) = (claim.run_id.clone(), token_i64(claim));
        let outbox = self.outbox.clone();
        let parks = change.set.request.is_some();
        Box::pin(async move {
            let info = self
                .call(move |conn| {
                    if change.set.request.is_some() || change.set.result.is_some() {
                        return finish_blocking(conn, run_id.clone(), token, &change, &outbox)
                            .map(Some);
                    }
                    if apply(conn, &change)? {
                        Ok(None)
                    } else {
                        Err(StoreError::LeaseLost {
                            run_id: run_id.clone(),
                        })
                    }
                })
                .await?;
            if parks {
                self.outbox.parked();
            }
            Ok(info)
        })
    }

    fn wake_workers(&self) -> BoxFuture<'_, StoreResult<()>> {
        self.shared.work.notify();
        Box::pin(async { Ok(()) })
    }

    fn wait_for_work(&self, timeout: Duration) -> BoxFuture<'_, ()> {
        Box::pin(self.shared.work.wait(timeout))
    }

    fn expire(&self) -> BoxFuture<'_, StoreResult<Vec<String>>> {
        let seal = self.seal.clone();
        let outbox = self.outbox.clone();
        let expired = Connections::on_thread(&self.shared, move |conn| {
            let tx = Immediate::begin(conn)?;
            let due = {
                let mut stmt = tx.prepare_cached(&runs().due).map_err(backend)?;
                let mut due = stmt
                    .query_map([now_ms()], |r| {
                        Ok((
                            r.get::<_, String>(0)?,
                            r.get::<_, String>(1)?,
                            r.get::<_, i64>(2)?,
                            r.get::<_, Option<String>>(3)?,
                            r.get::<_, Option<String>>(4)?,
                        ))
                    })
                    .map_err(backend)?
                    .collect::<rusqlite::Result<Vec<_>>>()
                    .map_err(backend)?;
                due.sort_unstable();
                due
            };
            let now = now_ms();
            let mut expired = Vec::with_capacity(due.len());
            for (run_id, request_id, version, approvers, escalate) in &due {
                let due = lifecycle::Due {
                    run_id,
                    request_id,
                    version: *version,
                    approvers: approvers.as_deref(),
                    escalate: escalate.as_deref(),
                };
                let change = lifecycle::at_deadline(&due, &seal, now);
                if !apply(&tx, &change)? {
                    continue;
                }
                match &change.set.escalate {
                    Some(step) => {
                        outbox::outbox_escalate(&tx, &outbox, run_id, request_id, step.step, now)?;
                    }
                    None => expired.push(run_id.clone()),
                }
            }
            tx.commit()?;
            Ok((expired, due.len()))
        });
        Box::pin(async move {
            let (ids, changed) = expired.await?;
            if !ids.is_empty() {
                self.shared.work.notify();
            }
            if changed > ids.len() {
                // escalated: their notifications are due
                self.outbox.parked();
            }
            Ok(ids)
        })
    }

    fn delete<'a>(&'a self, run_id: &'a str) -> BoxFuture<'a, StoreResult<bool>> {
        let run_id = run_id.to_owned();
        Box::pin(self.call(move |conn| {
            let tx = Immediate::begin(conn)?;
            let n = tx.execute(&runs().delete, [&run_id]).map_err(backend)?;
            tx.execute(&runs().delete_past, [&run_id])
                .map_err(backend)?;
            tx.execute(crate::store::together::sql::DELETE, [&run_id])
                .map_err(backend)?;
            tx.commit()?;
            Ok(n == 1)
        }))
    }
}
