//! The run store's steps both SQL stores take alike, one statement each through their
//! [`SqlSide`]: the reads of a run's row (by run or request, its columns alone, the damaged
//! rows, a page of the history) through the one decoding of a run row ([`raw_row`]), a
//! worker's heartbeat and the worker seen last (the `workers` table, schema version 4), how
//! many runs wait for a worker, and when the next deadline falls due; and the parameters of a
//! park's insert.

use std::borrow::Cow;
use std::sync::LazyLock;
use std::time::SystemTime;

use super::{COLUMNS, Dialect, SqlCols, SqlParam, SqlSide, history_sql, pending_sql};
use crate::store::cell::{ALL_CELLS, INFO_CELLS};
use crate::store::lifecycle::Key;
use crate::store::{
    DamagedRun, HistoryQuery, Page, PendingQuery, RawRow, RunInfo, StoreError, StoreResult,
    WorkerSeen, from_millis, millis, now_ms,
};

/// The workers' statements in one dialect.
pub(crate) struct WorkerSql {
    /// Records worker 1 seen at 2 (ms): its row keeps the latest of its heartbeats.
    pub(crate) beat: String,
    /// The worker seen last: its name and when (ms).
    pub(crate) last_seen: String,
}

impl WorkerSql {
    /// The statements with `placeholder(n)` naming the n-th parameter (from 1).
    pub(crate) fn new(placeholder: fn(usize) -> String) -> Self {
        Self {
            beat: format!(
                "INSERT INTO workers (name, seen_at) VALUES ({}, {})
                 ON CONFLICT (name) DO UPDATE SET seen_at = CASE
                     WHEN excluded.seen_at > workers.seen_at THEN excluded.seen_at
                     ELSE workers.seen_at END",
                placeholder(1),
                placeholder(2)
            ),
            last_seen: "SELECT name, seen_at FROM workers ORDER BY seen_at DESC, name DESC LIMIT 1"
                .to_owned(),
        }
    }
}

/// The run row of the first `n` columns of `r` ([`COLUMNS`](super::COLUMNS) order), through
/// the one decoding ([`RawRow::from_cells`]): a column holding what the schema does not allow
/// damages that row only.
pub(crate) fn raw_row(r: &dyn SqlCols, n: usize) -> RawRow {
    RawRow::from_cells((0..n).map(|k| r.cell(k)).collect())
}

/// A row read with [`COLUMNS`](super::COLUMNS).
fn full_row(r: &dyn SqlCols) -> RawRow {
    raw_row(r, ALL_CELLS)
}

/// A row read with [`INFO_COLUMNS`](super::INFO_COLUMNS): its blobs are left empty.
fn info_row(r: &dyn SqlCols) -> RawRow {
    raw_row(r, INFO_CELLS)
}

/// [`Driver::row`](crate::store::engine::Driver::row), in `dialect`.
pub(crate) async fn row<D: SqlSide>(
    d: &D,
    dialect: Dialect,
    key: Key,
) -> StoreResult<Option<RawRow>> {
    let (sql, id) = match key {
        Key::Run(id) => (&dialect.runs().by_run, id),
        Key::Request(id) => (&dialect.runs().by_request, id),
    };
    let rows = d
        .select(sql.as_str(), vec![SqlParam::Text(id)], full_row)
        .await?;
    Ok(rows.into_iter().next())
}

/// [`Driver::info`](crate::store::engine::Driver::info), in `dialect`.
pub(crate) async fn info<D: SqlSide>(
    d: &D,
    dialect: Dialect,
    run_id: &str,
) -> StoreResult<Option<RunInfo>> {
    let sql = dialect.runs().info.as_str();
    let rows = d
        .select(sql, vec![SqlParam::Text(run_id.to_owned())], info_row)
        .await?;
    rows.first().map(RawRow::info).transpose()
}

/// [`RunStore::list_damaged`](crate::store::RunStore::list_damaged), in `dialect` (whose
/// [`mistyped`](Dialect) rows count too).
pub(crate) async fn list_damaged<D: SqlSide>(
    d: &D,
    dialect: Dialect,
    limit: usize,
) -> StoreResult<Vec<DamagedRun>> {
    let limit = SqlParam::Int(i64::try_from(limit).unwrap_or(i64::MAX));
    let rows = d
        .select(dialect.runs().damaged.as_str(), vec![limit], full_row)
        .await?;
    Ok(rows.iter().filter_map(RawRow::as_damaged).collect())
}

/// One page of [`RunStore::list_pending`](crate::store::RunStore::list_pending), in
/// `dialect`: in SQLite, which keeps any value in any column, the pages walk the rows whose
/// `created_at` is an integer (the cursor's order), and the first page reports the others as
/// damaged ([`UNORDERED`]).
pub(crate) async fn list_pending<D: SqlSide>(
    d: &D,
    dialect: Dialect,
    query: &PendingQuery,
) -> StoreResult<Page> {
    let size = query.page_size();
    let (sql, params) = pending_sql(query, d.side_sql().placeholder, dialect.ordered())?;
    let mut page = Page::of_rows(d.select(sql, params, full_row).await?, size);
    if dialect == Dialect::Sqlite && query.cursor()?.is_none() {
        let limit = SqlParam::Int(i64::try_from(size).unwrap_or(i64::MAX));
        let unordered = d.select(UNORDERED.as_str(), vec![limit], full_row).await?;
        page.damaged
            .extend(unordered.iter().filter_map(RawRow::as_damaged));
    }
    Ok(page)
}

/// SQLite's parked rows whose `created_at` is not an integer, by run id, at most `?1`.
static UNORDERED: LazyLock<String> = LazyLock::new(|| {
    format!(
        "SELECT {COLUMNS} FROM runs WHERE state = 'parked' AND typeof(created_at) <> 'integer'
         ORDER BY run_id LIMIT ?1"
    )
});

/// One page of [`RunStore::list_history`](crate::store::RunStore::list_history), in
/// `dialect`: in SQLite, which keeps any value in any column, the pages walk the rows whose
/// `created_at` is an integer (the cursor's order), and `list_damaged` reports the others.
pub(crate) async fn list_history<D: SqlSide>(
    d: &D,
    dialect: Dialect,
    query: &HistoryQuery,
) -> StoreResult<Page> {
    let (sql, params) = history_sql(query, d.side_sql().placeholder, dialect.ordered())?;
    let rows = d.select(sql, params, info_row).await?;
    Ok(Page::of_rows(rows, query.page_size()))
}

/// [`RunStore::heartbeat`](crate::store::RunStore::heartbeat).
pub(crate) async fn heartbeat<D: SqlSide>(d: &D, worker: &str, at: SystemTime) -> StoreResult<()> {
    let params = vec![SqlParam::Text(worker.to_owned()), SqlParam::Int(millis(at))];
    d.execute(d.side_sql().workers.beat.as_str(), params)
        .await
        .map(drop)
}

/// [`RunStore::last_worker_seen`](crate::store::RunStore::last_worker_seen).
pub(crate) async fn last_worker_seen<D: SqlSide>(d: &D) -> StoreResult<Option<WorkerSeen>> {
    first(
        d,
        d.side_sql().workers.last_seen.as_str(),
        Vec::new(),
        |r| Ok(WorkerSeen::new(r.text(0)?, from_millis(r.int(1)?))),
    )
    .await
}

/// [`RunStore::waiting`](crate::store::RunStore::waiting), in `dialect`.
pub(crate) async fn waiting<D: SqlSide>(d: &D, dialect: Dialect) -> StoreResult<u64> {
    let sql = dialect.runs().waiting.as_str();
    let n = first(d, sql, vec![SqlParam::Int(now_ms())], |r| r.int(0)).await?;
    Ok(n.map_or(0, |n| u64::try_from(n).unwrap_or(0)))
}

/// [`RunStore::next_due`](crate::store::RunStore::next_due), in `dialect`.
pub(crate) async fn next_due<D: SqlSide>(
    d: &D,
    dialect: Dialect,
) -> StoreResult<Option<SystemTime>> {
    let at = first(d, dialect.runs().next_due.as_str(), Vec::new(), |r| {
        r.maybe_int(0)
    })
    .await?;
    Ok(at.flatten().map(from_millis))
}

/// The parameters of a park's insert ([`RunSql::insert`](super::RunSql::insert)): `row`'s
/// values `$1`..`$10`.
pub(crate) fn insert_params(row: &RawRow) -> Vec<SqlParam> {
    vec![
        SqlParam::Text(row.run_id.clone()),
        SqlParam::Text(row.request_id.clone()),
        SqlParam::Text(row.kind.clone()),
        SqlParam::Text(row.prompt.clone()),
        SqlParam::Int(row.created_at),
        SqlParam::MaybeInt(row.expires_at),
        SqlParam::Text(row.record.clone()),
        SqlParam::Text(row.history.clone()),
        SqlParam::MaybeText(row.approvers.clone()),
        SqlParam::MaybeText(row.escalate.clone()),
    ]
}

/// The first row `sql` selects with `params`, read by `read`; a column that does not read
/// is [`StoreError::Backend`].
pub(crate) async fn first<D: SqlSide, T: Send + 'static>(
    d: &D,
    sql: impl Into<Cow<'static, str>>,
    params: Vec<SqlParam>,
    read: fn(&dyn SqlCols) -> Result<T, String>,
) -> StoreResult<Option<T>> {
    let rows = d.select(sql, params, read).await?;
    rows.into_iter()
        .next()
        .transpose()
        .map_err(StoreError::Backend)
}
