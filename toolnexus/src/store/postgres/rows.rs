//! PostgreSQL rows as the [`RawRow`]s of the shared row codec: each column handed to the
//! one decoding the SQL stores share ([`RawRow::from_cells`]) as the [`Cell`] its type gives.

use tokio_postgres::Row;

use crate::store::cell::{ALL_CELLS, INFO_CELLS, is_int};
use crate::store::{Cell, RawRow};

/// A row read with [`INFO_COLUMNS`](crate::store::sql::INFO_COLUMNS): its blobs are left empty.
pub(super) fn raw_info(r: &Row) -> RawRow {
    cells(r, 0, INFO_CELLS)
}

/// A row read with [`COLUMNS`](crate::store::sql::COLUMNS): the info columns, then the blobs.
pub(super) fn raw(r: &Row) -> RawRow {
    raw_at(r, 0)
}

/// [`raw`] of the columns from `at` on.
pub(super) fn raw_at(r: &Row, at: usize) -> RawRow {
    cells(r, at, ALL_CELLS)
}

/// The row of the `n` columns of `r` from `at` on, through the shared decoding.
fn cells(r: &Row, at: usize, n: usize) -> RawRow {
    let cells = (0..n)
        .map(|k| {
            if is_int(k) {
                r.get::<_, Option<i64>>(at + k)
                    .map_or(Cell::Null, Cell::Int)
            } else {
                r.get::<_, Option<String>>(at + k)
                    .map_or(Cell::Null, Cell::Text)
            }
        })
        .collect();
    RawRow::from_cells(cells)
}
