//! Where a [`SqliteStore`](super::SqliteStore)'s statements run: in place on its first
//! connection when that needs no wait, else on the store's own thread and its connection,
//! which also checkpoints the write-ahead log (the rule is in the type's documentation).

use std::cell::Cell;
use std::collections::HashMap;
use std::panic::AssertUnwindSafe;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex, PoisonError, Weak};
use std::time::Duration;

use rusqlite::Connection;

use super::schema;
use crate::store::sql::backend;
use crate::store::{StoreError, StoreResult, Wake};

/// How long a statement on the connection thread waits for another process's write lock
/// before it fails.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// Every this many calls run in place, the connection thread checkpoints the write-ahead log
/// (the in-place connection never does: a checkpoint syncs the file).
const CHECKPOINT_EVERY: u32 = 256;

/// The store's two connections, shared by its clones.
pub(super) struct Connections {
    /// The connection calls run on in place (busy handler: fail at once, no auto-checkpoint).
    here: Mutex<Connection>,
    /// The connection thread's queue.
    jobs: mpsc::Sender<Job>,
    /// Calls run in place, counted to checkpoint every [`CHECKPOINT_EVERY`].
    in_place: AtomicU32,
    pub(super) path: PathBuf,
    /// Wakes this process's workers on the same file.
    pub(super) work: Arc<crate::store::Wake>,
}

/// A call's statements, run on the connection thread.
type Job = Box<dyn FnOnce(&mut Connection) + Send>;

thread_local! {
    /// Set by the in-place connection's busy handler: the call met another process's lock and
    /// goes to the connection thread (SQLite undid the statement that met it).
    static MET_A_LOCK: Cell<bool> = const { Cell::new(false) };
}

/// The in-place connection's busy handler: note the lock, and do not wait for it.
fn met_a_lock(_attempts: i32) -> bool {
    MET_A_LOCK.with(|met| met.set(true));
    false
}

/// Starts the thread that owns `conn` and runs the jobs sent to it, in order, until every
/// sender is gone.
fn connection_thread(mut conn: Connection) -> StoreResult<mpsc::Sender<Job>> {
    let (jobs, queue) = mpsc::channel::<Job>();
    std::thread::Builder::new()
        .name("toolnexus-sqlite".to_owned())
        .spawn(move || {
            while let Ok(job) = queue.recv() {
                job(&mut conn);
            }
        })
        .map_err(|e| StoreError::Backend(format!("cannot start the connection thread: {e}")))?;
    Ok(jobs)
}

/// A panic inside a call's statements as the call's error (its transaction was rolled back:
/// the connection is fine).
fn panicked(panic: &(dyn std::any::Any + Send)) -> StoreError {
    StoreError::Backend(format!(
        "a store call panicked: {}",
        crate::util::panic_message(panic)
    ))
}

impl Connections {
    /// Opens both connections onto `path` (blocking: the caller runs it off the runtime)
    /// and starts the connection thread.
    pub(super) fn open(path: PathBuf) -> StoreResult<Self> {
        // the thread's connection migrates (it may wait for another process's migration)
        let thread = open_blocking(&path)?;
        let here = Connection::open(&path).map_err(backend)?;
        here.busy_handler(Some(met_a_lock)).map_err(backend)?;
        here.pragma_update(None, "synchronous", "NORMAL")
            .map_err(backend)?;
        here.pragma_update(None, "wal_autocheckpoint", 0)
            .map_err(backend)?;
        Ok(Self {
            here: Mutex::new(here),
            jobs: connection_thread(thread)?,
            in_place: AtomicU32::new(0),
            work: wake_for_file(&path),
            path,
        })
    }

    /// Runs `f` in place when that needs no wait, else on the connection thread (see the
    /// module's documentation). `f` may run twice: once in place up to the statement that met
    /// another process's lock (which SQLite undid), then again on the thread.
    pub(super) async fn call<T, F>(this: &Arc<Self>, mut f: F) -> StoreResult<T>
    where
        T: Send + 'static,
        F: FnMut(&mut Connection) -> StoreResult<T> + Send + 'static,
    {
        if let Some(done) = Self::in_place(this, &mut f) {
            return done;
        }
        Self::on_thread(this, f).await
    }

    /// Runs `f` on the connection thread: for a call whose work has no bound (`expire`
    /// changes every run that is due), which must not hold the runtime however long it takes.
    pub(super) async fn on_thread<T, F>(this: &Arc<Self>, mut f: F) -> StoreResult<T>
    where
        T: Send + 'static,
        F: FnMut(&mut Connection) -> StoreResult<T> + Send + 'static,
    {
        let (done, outcome) = tokio::sync::oneshot::channel();
        let job: Job = Box::new(move |conn| {
            let _ = done.send(std::panic::catch_unwind(AssertUnwindSafe(|| f(conn))));
        });
        let stopped = || StoreError::Backend("the store's connection thread has stopped".into());
        this.jobs.send(job).map_err(|_| stopped())?;
        outcome
            .await
            .map_err(|_| stopped())?
            .unwrap_or_else(|panic| Err(panicked(&*panic)))
    }

    /// `f` on the in-place connection, unless another call holds it or `f` met another
    /// process's lock (`None`: run it on the thread).
    fn in_place<T>(
        this: &Arc<Self>,
        f: &mut impl FnMut(&mut Connection) -> StoreResult<T>,
    ) -> Option<StoreResult<T>> {
        // held by another call (or poisoned, which cannot happen: a panic is caught below,
        // before it could unwind through the lock)
        let Ok(mut conn) = this.here.try_lock() else {
            return None;
        };
        MET_A_LOCK.with(|met| met.set(false));
        let done = std::panic::catch_unwind(AssertUnwindSafe(|| f(&mut conn)));
        drop(conn);
        if MET_A_LOCK.with(Cell::get) {
            return None;
        }
        if this.in_place.fetch_add(1, Ordering::Relaxed) % CHECKPOINT_EVERY == CHECKPOINT_EVERY - 1
        {
            // on the in-place connection, held: no write of this process lands during the
            // checkpoint, so it can reach the log's end and the next write starts the log
            // over. Best effort: one that cannot finish (another process reads) goes on at
            // the next.
            let shared = Arc::clone(this);
            let _ = this.jobs.send(Box::new(move |_: &mut Connection| {
                let here = shared.here.lock().unwrap_or_else(PoisonError::into_inner);
                let _ = here.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |_| Ok(()));
            }));
        }
        Some(done.unwrap_or_else(|panic| Err(panicked(&*panic))))
    }
}

fn open_blocking(path: &Path) -> StoreResult<Connection> {
    let mut conn = Connection::open(path)
        .map_err(|e| StoreError::Backend(format!("cannot open {}: {e}", path.display())))?;
    conn.busy_timeout(BUSY_TIMEOUT).map_err(backend)?;
    conn.pragma_update(None, "journal_mode", "WAL")
        .map_err(backend)?;
    conn.pragma_update(None, "synchronous", "NORMAL")
        .map_err(backend)?;
    schema::migrate(&mut conn)?;
    Ok(conn)
}

/// The wake-up shared by every store of this process opened on the database file at `path`
/// (so two `SqliteStore::open`s of one file wake each other's workers).
fn wake_for_file(path: &Path) -> Arc<Wake> {
    static FILES: Mutex<Option<HashMap<PathBuf, Weak<Wake>>>> = Mutex::new(None);
    let key = std::fs::canonicalize(path).unwrap_or_else(|_| path.to_path_buf());
    let mut files = FILES.lock().unwrap_or_else(PoisonError::into_inner);
    let files = files.get_or_insert_with(HashMap::new);
    files.retain(|_, wake| wake.strong_count() > 0);
    if let Some(wake) = files.get(&key).and_then(Weak::upgrade) {
        return wake;
    }
    let wake = Arc::new(Wake::default());
    files.insert(key, Arc::downgrade(&wake));
    wake
}

/// An `IMMEDIATE` transaction begun and ended by cached statements (rusqlite's `Transaction`
/// parses its `BEGIN` and `COMMIT` anew each time: a claim's cost); rolled back when dropped
/// uncommitted: how the store's changes of several statements begin.
pub(super) struct Immediate<'c> {
    conn: &'c Connection,
    open: bool,
}

impl<'c> Immediate<'c> {
    fn run(conn: &Connection, sql: &str) -> StoreResult<()> {
        conn.prepare_cached(sql)
            .and_then(|mut stmt| stmt.execute([]))
            .map(drop)
            .map_err(backend)
    }

    pub(super) fn begin(conn: &'c Connection) -> StoreResult<Self> {
        Self::run(conn, "BEGIN IMMEDIATE")?;
        Ok(Self { conn, open: true })
    }

    pub(super) fn commit(mut self) -> StoreResult<()> {
        Self::run(self.conn, "COMMIT")?;
        self.open = false;
        Ok(())
    }
}

impl std::ops::Deref for Immediate<'_> {
    type Target = Connection;

    fn deref(&self) -> &Connection {
        self.conn
    }
}

impl Drop for Immediate<'_> {
    fn drop(&mut self) {
        if self.open {
            let _ = Self::run(self.conn, "ROLLBACK");
        }
    }
}
