//! Listing pending runs: [`PendingQuery`] and its [`Page`]s (the SQL stores' statement is
//! `sql::pending_sql`).

use std::time::{Duration, SystemTime, UNIX_EPOCH};

use super::millis;
use super::{DamagedRun, RawRow, RunInfo, StoreError, StoreResult};

/// The filter by kind (documented by `$kind`) and the paging methods of a runs query with
/// `kind`, `limit` and `cursor` fields ([`PendingQuery`],
/// [`HistoryQuery`](super::HistoryQuery)), written once.
macro_rules! paging {
    ($kind:literal) => {
        #[doc = $kind]
        #[must_use]
        pub fn kind(mut self, kind: impl Into<String>) -> Self {
            self.kind = Some(kind.into());
            self
        }

        /// At most this many runs per page (at least one).
        #[must_use]
        pub fn limit(mut self, n: usize) -> Self {
            self.limit = Some(n.max(1));
            self
        }

        /// Continue after the page that returned this cursor
        /// ([`Page::next`](crate::store::Page::next)).
        #[must_use]
        pub fn after(mut self, cursor: impl Into<String>) -> Self {
            self.cursor = Some(cursor.into());
            self
        }

        /// The page size.
        pub fn page_size(&self) -> usize {
            self.limit.unwrap_or(crate::store::DEFAULT_PAGE_SIZE)
        }
    };
}
pub(super) use paging;

/// Which pending runs [`RunStore::list_pending`](super::RunStore::list_pending) returns, oldest first.
///
/// ```
/// use std::time::{Duration, SystemTime};
/// use toolnexus::store::PendingQuery;
///
/// let q = PendingQuery::new()
///     .kind("approval")
///     .older_than(Duration::from_secs(3600))
///     .expiring_before(SystemTime::now() + Duration::from_secs(600))
///     .limit(50);
/// assert_eq!(q.page_size(), 50);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PendingQuery {
    kind: Option<String>,
    created_before: Option<SystemTime>,
    expiring_before: Option<SystemTime>,
    limit: Option<usize>,
    cursor: Option<String>,
    groups: Option<Vec<String>>,
}

/// The default page size of [`PendingQuery`]: 100 runs.
pub const DEFAULT_PAGE_SIZE: usize = 100;

impl PendingQuery {
    /// Every pending run, [`DEFAULT_PAGE_SIZE`] at a time.
    pub fn new() -> Self {
        Self::default()
    }

    paging!("Only runs waiting on requests of this kind.");

    /// Only runs parked before this instant.
    #[must_use]
    pub fn created_before(mut self, at: SystemTime) -> Self {
        self.created_before = Some(at);
        self
    }

    /// Only runs parked at least `age` ago.
    #[must_use]
    pub fn older_than(self, age: Duration) -> Self {
        let at = SystemTime::now().checked_sub(age).unwrap_or(UNIX_EPOCH);
        self.created_before(at)
    }

    /// Only runs whose request expires before this instant (runs without `expiresAt` are left
    /// out).
    #[must_use]
    pub fn expiring_before(mut self, at: SystemTime) -> Self {
        self.expiring_before = Some(at);
        self
    }

    /// Only runs a person in `groups` may answer: those whose request names no group
    /// ([`RunInfo::approvers`](crate::store::RunInfo::approvers) `None`), and those whose
    /// current group is one of `groups` (an [escalated](crate::Request::escalate_to) request by
    /// the group it went to). No groups: only the requests that name none.
    ///
    /// ```
    /// use toolnexus::store::PendingQuery;
    ///
    /// let q = PendingQuery::new().groups(["finance", "ops"]);
    /// assert!(q.may_answer(None));
    /// assert!(q.may_answer(Some("finance")));
    /// assert!(!q.may_answer(Some("cfo")));
    /// // without the filter, every run is listed
    /// assert!(PendingQuery::new().may_answer(Some("cfo")));
    /// ```
    #[must_use]
    pub fn groups(mut self, groups: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.groups = Some(groups.into_iter().map(Into::into).collect());
        self
    }

    /// Whether a run whose current group is `approvers` passes the [groups](Self::groups)
    /// filter.
    pub fn may_answer(&self, approvers: Option<&str>) -> bool {
        match (&self.groups, approvers) {
            (None, _) | (Some(_), None) => true,
            (Some(groups), Some(group)) => groups.iter().any(|g| g == group),
        }
    }

    /// The groups a listing is limited to, for an SQL store's `WHERE`.
    #[cfg(any(feature = "sqlite", feature = "postgres"))]
    pub(crate) fn groups_filter(&self) -> Option<&[String]> {
        self.groups.as_deref()
    }

    pub(crate) fn kind_filter(&self) -> Option<&str> {
        self.kind.as_deref()
    }

    pub(crate) fn created_before_ms(&self) -> Option<i64> {
        self.created_before.map(millis)
    }

    pub(crate) fn expiring_before_ms(&self) -> Option<i64> {
        self.expiring_before.map(millis)
    }

    /// The decoded cursor: the last run's `(created_at ms, run id)`.
    pub(crate) fn cursor(&self) -> StoreResult<Option<(i64, String)>> {
        decode_cursor(self.cursor.as_deref(), "a page")
    }
}

/// A page's cursor (`<created_at ms>:<run id>`, as [`Page::of_rows`] writes it) decoded;
/// `pages` says which listing returns such cursors, for the error.
pub(crate) fn decode_cursor(raw: Option<&str>, pages: &str) -> StoreResult<Option<(i64, String)>> {
    let Some(raw) = raw else {
        return Ok(None);
    };
    let bad = || StoreError::Invalid(format!("`{raw}` is not a cursor {pages} returned"));
    let (ms, id) = raw.split_once(':').ok_or_else(bad)?;
    let ms = ms.parse::<i64>().map_err(|_| bad())?;
    Ok(Some((ms, id.to_owned())))
}

/// One page of [`RunStore::list_pending`](super::RunStore::list_pending).
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Page {
    /// The runs, oldest first (by `created_at`, then run id).
    pub runs: Vec<RunInfo>,
    /// The cursor of the next page ([`PendingQuery::after`]); `None` on the last page.
    pub next: Option<String>,
    /// The parked runs of this page whose rows cannot be read (a damaged column), left out of
    /// `runs` so one bad row never fails a page: each with its run id and why.
    pub damaged: Vec<DamagedRun>,
}

impl Page {
    /// The page of `rows` (one more than `size` when another page follows), in order: each
    /// row listed, or reported damaged when it cannot be read.
    pub(crate) fn of_rows(mut rows: Vec<RawRow>, size: usize) -> Self {
        let next = if rows.len() > size {
            rows.truncate(size);
            rows.last()
                .map(|r| format!("{}:{}", r.created_at, r.run_id))
        } else {
            None
        };
        let mut runs = Vec::with_capacity(rows.len());
        let mut damaged = Vec::new();
        for row in &rows {
            match row.info() {
                Ok(info) => runs.push(info),
                Err(e) => damaged.push(row.damaged_run(&e)),
            }
        }
        Self {
            runs,
            next,
            damaged,
        }
    }
}
