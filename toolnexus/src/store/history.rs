//! Listing the runs people answered: [`HistoryQuery`] for
//! [`RunStore::list_history`](super::RunStore::list_history), newest first, one [`Page`](super::Page)
//! at a time (the SQL stores' statement is `sql::history_sql`).

use super::StoreResult;

/// Which answered runs [`RunStore::list_history`](super::RunStore::list_history) returns:
/// every run with at least one request answered (or expired unanswered), whatever it did
/// since (resumed, finished, failed, parked again on a later request), newest request first.
///
/// Each [`RunInfo`](super::RunInfo) listed carries the run's history: who answered each
/// request and when ([`RunEventKind::Answered`](super::RunEventKind::Answered) events, with
/// [`RunInfo::answered_by`](super::RunInfo::answered_by) for the last one), and how the run
/// ended ([`RunInfo::outcome`](super::RunInfo::outcome)).
///
/// ```
/// use toolnexus::store::HistoryQuery;
///
/// let q = HistoryQuery::new().kind("approval").limit(20);
/// assert_eq!(q.page_size(), 20);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct HistoryQuery {
    kind: Option<String>,
    limit: Option<usize>,
    cursor: Option<String>,
}

impl HistoryQuery {
    /// Every answered run, [`DEFAULT_PAGE_SIZE`](super::DEFAULT_PAGE_SIZE) at a time.
    pub fn new() -> Self {
        Self::default()
    }

    super::query::paging!("Only runs whose current (or last) request is of this kind.");

    pub(crate) fn kind_filter(&self) -> Option<&str> {
        self.kind.as_deref()
    }

    /// The decoded cursor: the last run's `(created_at ms, run id)`.
    pub(crate) fn cursor(&self) -> StoreResult<Option<(i64, String)>> {
        super::query::decode_cursor(self.cursor.as_deref(), "a history page")
    }
}

/// Whether a run in `state` claimed `claims` times belongs in the history: it was answered
/// (or its request expired) at least once. A run parked again after an answer has been
/// claimed; any other answered run has left `parked`.
pub(crate) fn answered_once(state: &str, claims: i64) -> bool {
    state != "parked" || claims > 0
}

/// The same condition in SQL, over the `runs` table's columns.
#[cfg(any(feature = "sqlite", feature = "postgres"))]
pub(crate) const ANSWERED_ONCE_SQL: &str = "(state <> 'parked' OR claims > 0)";
