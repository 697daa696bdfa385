//! [`PostgresStore`]: a run store in PostgreSQL (tokio-postgres + deadpool-postgres), shared by
//! many machines.
//!
//! The PostgreSQL driver of the store engine (one short method per step it asks for) beside
//! the pool and statement setup; the answer paths, rows, LISTEN/NOTIFY, conversations and the
//! schema have their own files.

mod answers;
mod listen;
mod outbox;
mod rows;
mod schema;
mod side;
mod together;

use std::fmt;
use std::sync::Arc;
use std::time::Duration;

use deadpool_postgres::{Manager, ManagerConfig, Pool, RecyclingMethod};
use tokio::sync::OnceCell;
use tokio_postgres::error::SqlState;
use tokio_postgres::types::ToSql;
use tokio_postgres::{NoTls, Row};

use crate::request::Answer;
use crate::util::BoxFuture;

use answers::{pg_params, placeholder};
use listen::Listener;
use rows::raw_info;

use super::RawRow;
use super::engine::{Answered, Driver};
use super::lifecycle::{self, Change};
use super::{Claim, DEFAULT_LEASE, RunInfo, StoreError, StoreResult, Wake};
use crate::store::sql::{Dialect, INFO_COLUMNS, RunSql, backend, change_sql, insert_params};

/// The run statements in PostgreSQL.
fn runs() -> &'static RunSql {
    Dialect::Postgres.runs()
}

/// A [`RunStore`](crate::store::RunStore) in PostgreSQL, for runs resumed by many machines.
///
/// A claim is one conditional `UPDATE` (concurrent claimants queue on the row lock and all but
/// one find it no longer parked); [`take_over`](crate::store::RunStore::take_over) picks runs with
/// `FOR UPDATE SKIP LOCKED`, so workers never wait on each other; request ids are indexed.
/// A change of a run that a host waits on sends a `NOTIFY`, so
/// [`wait_change`](crate::store::RunStore::wait_change) and [`wait_finished`](crate::store::RunStore::wait_finished) wake
/// when an answer arrives instead of polling (a waiter registers in a `run_waiters` table, so
/// changes nobody waits for send nothing).
/// The schema is created and migrated on connect (versions in a `schema_version` table, under
/// an advisory lock so concurrent connects migrate once).
///
/// ```no_run
/// use toolnexus::store::{PendingQuery, PostgresStore, RunStore};
///
/// # async fn demo() -> Result<(), toolnexus::store::StoreError> {
/// let store = PostgresStore::connect("postgres://toolnexus@127.0.0.1:5432/toolnexus").await?;
/// let page = store.list_pending(&PendingQuery::new().kind("approval")).await?;
/// println!("{} approvals waiting", page.runs.len());
/// # Ok(()) }
/// ```
#[derive(Clone)]
pub struct PostgresStore {
    pool: Pool,
    config: Arc<tokio_postgres::Config>,
    schema: Arc<str>,
    channel: Arc<str>,
    /// The channel told when a run may need a worker (answered, released, parked with a
    /// deadline, expired): workers of every process LISTEN to it.
    work_channel: Arc<str>,
    /// Wakes this process's workers (told by the listener, and directly by this process's
    /// own changes).
    work: Arc<Wake>,
    listener: Arc<OnceCell<Listener>>,
    lease: Duration,
    seal: crate::store::Seal,
    /// outbox: the notifier names a park writes notifications for (`outbox.rs`)
    outbox: Arc<crate::store::outbox::OutboxState>,
    /// The `RETURNING` lists of the run changes, made once (`Returning`).
    returning: Arc<Returning>,
}

/// What a change of a run reads back, with the notification of its waiters: made once per
/// store (the channel is the store's), not for every statement.
#[derive(Debug)]
struct Returning {
    /// [`COLUMNS`](crate::store::sql::COLUMNS) and the notification.
    row: String,
    /// [`INFO_COLUMNS`] and the notification.
    info: String,
}

impl fmt::Debug for PostgresStore {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("PostgresStore")
            .field("schema", &self.schema)
            .field("lease", &self.lease)
            .finish_non_exhaustive()
    }
}

fn pg(e: &tokio_postgres::Error) -> StoreError {
    match e.as_db_error() {
        Some(db) => StoreError::Backend(format!("{}: {}", db.code().code(), db.message())),
        None => StoreError::Backend(e.to_string()),
    }
}

impl PostgresStore {
    /// Connects to the database at `url` (`postgres://user:password@host:port/db`) and
    /// migrates its schema, keeping the runs in the `public` schema.
    ///
    /// # Errors
    ///
    /// [`StoreError::Backend`] when the URL is malformed, the server cannot be reached, or the
    /// database holds a schema newer than this release's.
    pub async fn connect(url: &str) -> StoreResult<Self> {
        Self::connect_in_schema(url, "public").await
    }

    /// As [`connect`](Self::connect), keeping the runs in the named schema (created when
    /// absent): one database can hold several independent stores.
    ///
    /// # Errors
    ///
    /// As [`connect`](Self::connect); [`StoreError::Invalid`] when `schema` is not made of
    /// ASCII letters, digits and `_` (at most 40 characters).
    pub async fn connect_in_schema(url: &str, schema: &str) -> StoreResult<Self> {
        if schema.is_empty()
            || schema.len() > 40
            || !schema
                .chars()
                .all(|c| c.is_ascii_alphanumeric() || c == '_')
        {
            return Err(StoreError::Invalid(format!(
                "`{schema}` is not a schema name this store accepts: use 1 to 40 ASCII letters, digits or `_`"
            )));
        }
        let mut config: tokio_postgres::Config = url
            .parse()
            .map_err(|e| StoreError::Backend(format!("invalid PostgreSQL URL: {e}")))?;
        config.options(format!("-c search_path={schema}"));
        let manager = Manager::from_config(
            config.clone(),
            NoTls,
            ManagerConfig {
                recycling_method: RecyclingMethod::Fast,
            },
        );
        // LIFO: one caller at a time keeps using the connection it just returned (the
        // same server process, warm), instead of cycling through every idle one
        let pool = Pool::builder(manager)
            .max_size(8)
            .queue_mode(deadpool_postgres::QueueMode::Lifo)
            .runtime(deadpool_postgres::Runtime::Tokio1)
            .wait_timeout(Some(Duration::from_secs(30)))
            .create_timeout(Some(Duration::from_secs(10)))
            .build()
            .map_err(backend)?;
        let mut store = Self {
            pool,
            config: Arc::new(config),
            schema: schema.into(),
            channel: format!("toolnexus_runs_{schema}").into(),
            work_channel: format!("toolnexus_work_{schema}").into(),
            work: Arc::new(Wake::default()),
            listener: Arc::new(OnceCell::new()),
            lease: DEFAULT_LEASE,
            seal: crate::store::Seal::default(),
            outbox: Arc::default(),
            returning: Arc::new(Returning {
                row: String::new(),
                info: String::new(),
            }),
        };
        let notify = store.notify_expr("runs.run_id");
        store.returning = Arc::new(Returning {
            row: format!("{}, {notify}", crate::store::sql::COLUMNS),
            info: format!("{INFO_COLUMNS}, {notify}"),
        });
        store.migrate().await?;
        Ok(store)
    }

    crate::store::sql::seal_and_lease!("on the database", "the database");

    /// The schema the runs are kept in.
    pub fn schema(&self) -> &str {
        &self.schema
    }

    async fn client(&self) -> StoreResult<deadpool_postgres::Object> {
        // a free connection is taken at once, without arming the wait's timer; else the wait
        let now = deadpool_postgres::Timeouts {
            wait: Some(Duration::ZERO),
            ..self.pool.timeouts()
        };
        match self.pool.timeout_get(&now).await {
            Err(deadpool_postgres::PoolError::Timeout(deadpool_postgres::TimeoutType::Wait)) => {
                self.pool.get().await.map_err(backend)
            }
            got => got.map_err(backend),
        }
    }

    /// The run's info; [`StoreError::NotFound`] when no run has this id.
    async fn info(&self, run_id: &str) -> StoreResult<RunInfo> {
        Driver::info(self, run_id)
            .await?
            .ok_or_else(|| StoreError::NotFound {
                key: run_id.to_owned(),
            })
    }

    /// A `NOTIFY` of the run `run_id` (an SQL expression), sent only when a host waits on that
    /// run (`run_waiters`): a change nobody waits for costs no notification.
    fn notify_expr(&self, run_id: &str) -> String {
        format!(
            "CASE WHEN EXISTS (SELECT 1 FROM run_waiters w WHERE w.run_id = {run_id})
                  THEN pg_notify('{}', {run_id}) END",
            self.channel
        )
    }

    fn notify_sql(&self) -> String {
        format!("SELECT {}", self.notify_expr("$1"))
    }

    /// Applies a change of `claim` (guarded by the claim still holding its run) and
    /// notifies waiters: one statement, one round trip (the notification in its `RETURNING`),
    /// with `before` (`name AS (statement), `: a common table expression over the row as it
    /// was, naming the run `$1`, the claim's token `$2` and a new request id `$3`) in the same
    /// statement.
    /// Applies `change` to the claimed run in one statement, after the common table
    /// expressions `before`, which may name `extra` as the parameters after the change's own
    /// (`extra_from` is the first of their numbers).
    async fn apply_claim(
        &self,
        claim: &Claim,
        change: &Change,
        before: impl FnOnce(usize) -> String,
        extra: &[&(dyn ToSql + Sync)],
    ) -> StoreResult<Row> {
        let client = self.client().await?;
        let sql = change_sql(change, placeholder);
        let before = before(sql.params.len() + 1);
        let update = sql.update(&self.returning.info);
        let text = match before.trim_end().trim_end_matches(',') {
            "" => update,
            ctes => format!("WITH {ctes} {update}"),
        };
        let stmt = client.prepare_cached(&text).await.map_err(|e| pg(&e))?;
        let mut params = pg_params(&sql.params);
        params.extend_from_slice(extra);
        let row = client
            .query_opt(&stmt, &params)
            .await
            .map_err(|e| {
                if e.code() == Some(&SqlState::UNIQUE_VIOLATION) {
                    StoreError::Conflict(format!(
                        "the new request of run `{}` is already the request of another run: request ids name one run",
                        claim.run_id
                    ))
                } else {
                    pg(&e)
                }
            })?;
        row.ok_or_else(|| StoreError::LeaseLost {
            run_id: claim.run_id.clone(),
        })
    }
}

impl Driver for PostgresStore {
    fn outbox(&self) -> Option<&dyn crate::store::Outbox> {
        crate::store::outbox::outbox_of(self)
    }

    crate::store::sql::driver_basics!(Dialect::Postgres);

    fn wake_workers(&self) -> BoxFuture<'_, StoreResult<()>> {
        Box::pin(async move { self.tell_workers(&self.client().await?).await })
    }

    fn answer<'a>(
        &'a self,
        answer: &'a Answer,
        how: &'a lifecycle::Answering,
        plain: bool,
    ) -> BoxFuture<'a, StoreResult<Option<Answered>>> {
        Box::pin(self.answer_now(answer, how, plain))
    }

    fn apply_vote(&self, change: lifecycle::Change) -> BoxFuture<'_, StoreResult<Option<RawRow>>> {
        Box::pin(self.apply_vote_now(change))
    }

    fn pick<'a>(
        &'a self,
        owner: &'a str,
        answered_too: bool,
    ) -> BoxFuture<'a, StoreResult<Option<Claim>>> {
        let pick = if answered_too {
            answers::CLAIM_NEXT
        } else {
            answers::TAKE_OVER
        };
        Box::pin(self.claim_picked(owner, pick))
    }

    fn apply<'a>(
        &'a self,
        claim: &'a Claim,
        change: Change,
    ) -> BoxFuture<'a, StoreResult<Option<RunInfo>>> {
        Box::pin(async move {
            // outbox: same transaction as the park (a CTE of the finish's statement)
            let notifications = change
                .set
                .request
                .as_ref()
                .and_then(|cols| outbox::park_arrays(&self.outbox, &cols.request_id));
            // a finish that parks the run again keeps the request it leaves
            let keep = || format!("k AS ({}), ", runs().keep_past_request);
            let before = |first: usize| match (&change.set.request, &notifications) {
                (None, _) => String::new(),
                (Some(_), None) => keep(),
                (Some(_), Some(_)) => format!("{}{}", keep(), outbox::finish_cte(first)),
            };
            let mut extra: Vec<&(dyn ToSql + Sync)> = Vec::new();
            if let Some([ids, names]) = &notifications {
                extra.extend([ids as &(dyn ToSql + Sync), names, &change.at]);
            }
            let row = self.apply_claim(claim, &change, before, &extra).await?;
            if notifications.is_some() {
                self.outbox.parked();
            }
            if change.set.request.is_some() || change.set.result.is_some() {
                raw_info(&row).info().map(Some)
            } else {
                Ok(None)
            }
        })
    }

    fn insert(&self, insert: lifecycle::Insert) -> BoxFuture<'_, StoreResult<RunInfo>> {
        Box::pin(async move {
            let row = &insert.row;
            // each side row in this same transaction (none yet)
            if let Some(side) = insert.side.first() {
                match *side {}
            }
            let client = self.client().await?;
            // a plain insert (a speculative `ON CONFLICT` one costs more on every park); a
            // conflict is told apart by the unique index it hit
            let sql = runs().insert.as_str();
            // outbox: same transaction as the park (the insert's own statement)
            let notifications = outbox::park_arrays(&self.outbox, &row.request_id);
            let sql = match &notifications {
                Some(_) => std::borrow::Cow::Owned(outbox::park_sql(sql)),
                None => std::borrow::Cow::Borrowed(sql),
            };
            let stmt = client.prepare_cached(&sql).await.map_err(|e| pg(&e))?;
            let values = insert_params(row);
            let mut params = pg_params(&values);
            if let Some([ids, names]) = &notifications {
                params.extend([ids as &(dyn ToSql + Sync), names]);
            }
            let inserted = client.execute(&stmt, &params).await;
            if let Err(e) = inserted {
                if e.code() != Some(&SqlState::UNIQUE_VIOLATION) {
                    return Err(pg(&e));
                }
                let exists = match e.as_db_error().and_then(|db| db.constraint()) {
                    Some("runs_pkey") => true,
                    Some("runs_by_request") => false,
                    _ => client
                        .query_opt(&runs().exists, &[&row.run_id])
                        .await
                        .map_err(|e| pg(&e))?
                        .is_some(),
                };
                return Err(lifecycle::park_conflict(
                    &row.run_id,
                    &row.request_id,
                    exists,
                ));
            }
            self.outbox.parked();
            Ok(insert.info())
        })
    }

    fn wait_for_work(&self, timeout: Duration) -> BoxFuture<'_, ()> {
        Box::pin(self.wait_for_work_now(timeout))
    }

    fn expire(&self) -> BoxFuture<'_, StoreResult<Vec<String>>> {
        Box::pin(self.expire_now())
    }

    fn delete<'a>(&'a self, run_id: &'a str) -> BoxFuture<'a, StoreResult<bool>> {
        Box::pin(async move {
            let mut client = self.client().await?;
            let tx = client.transaction().await.map_err(|e| pg(&e))?;
            let n = tx
                .execute(&runs().delete, &[&run_id])
                .await
                .map_err(|e| pg(&e))?;
            tx.execute(&self.notify_sql(), &[&run_id])
                .await
                .map_err(|e| pg(&e))?;
            tx.execute("DELETE FROM run_waiters WHERE run_id = $1", &[&run_id])
                .await
                .map_err(|e| pg(&e))?;
            tx.execute(&runs().delete_past, &[&run_id])
                .await
                .map_err(|e| pg(&e))?;
            tx.execute(
                &crate::store::sql::numbered(crate::store::together::sql::DELETE, placeholder),
                &[&run_id],
            )
            .await
            .map_err(|e| pg(&e))?;
            tx.commit().await.map_err(|e| pg(&e))?;
            Ok(n == 1)
        })
    }

    fn wait_change<'a>(
        &'a self,
        run_id: &'a str,
        version: u64,
        timeout: Duration,
    ) -> BoxFuture<'a, StoreResult<Option<RunInfo>>> {
        Box::pin(self.wait_change_now(run_id, version, timeout))
    }
}
