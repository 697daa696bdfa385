//! PostgreSQL rows as the [`RawRow`]s of the shared row codec.

use tokio_postgres::Row;

use crate::store::RawRow;

/// A row read with [`INFO_COLUMNS`](crate::store::INFO_COLUMNS): its blobs are left empty.
pub(super) fn raw_info(r: &Row) -> RawRow {
    raw_info_at(r, 0)
}

/// A row read with [`COLUMNS`](crate::store::COLUMNS): the info columns, then the blobs.
pub(super) fn raw(r: &Row) -> RawRow {
    raw_at(r, 0)
}

/// [`raw_info`] of the columns from `at` on.
fn raw_info_at(r: &Row, at: usize) -> RawRow {
    RawRow {
        run_id: r.get(at),
        request_id: r.get(at + 1),
        kind: r.get(at + 2),
        prompt: r.get(at + 3),
        created_at: r.get(at + 4),
        expires_at: r.get(at + 5),
        state: r.get(at + 6),
        lease_owner: r.get(at + 7),
        lease_until: r.get(at + 8),
        version: r.get(at + 9),
        claims: r.get(at + 10),
        history: r.get(at + 11),
        record: String::new(),
        answer: None,
        checkpoint: None,
        result: None,
        damage: None,
    }
}

/// [`raw`] of the columns from `at` on.
pub(super) fn raw_at(r: &Row, at: usize) -> RawRow {
    RawRow {
        record: r.get(at + 12),
        answer: r.get(at + 13),
        checkpoint: r.get(at + 14),
        result: r.get(at + 15),
        ..raw_info_at(r, at)
    }
}
