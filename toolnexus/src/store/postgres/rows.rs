//! PostgreSQL rows as the [`RawRow`]s of the shared row codec.

use tokio_postgres::Row;

use crate::store::RawRow;

/// A row read with [`INFO_COLUMNS`](crate::store::INFO_COLUMNS): its blobs are left empty.
pub(super) fn raw_info(r: &Row) -> RawRow {
    RawRow {
        run_id: r.get(0),
        request_id: r.get(1),
        kind: r.get(2),
        prompt: r.get(3),
        created_at: r.get(4),
        expires_at: r.get(5),
        state: r.get(6),
        lease_owner: r.get(7),
        lease_until: r.get(8),
        version: r.get(9),
        claims: r.get(10),
        record: String::new(),
        answer: None,
        checkpoint: None,
        result: None,
    }
}

/// A row read with [`COLUMNS`](crate::store::COLUMNS): the info columns, then the blobs.
pub(super) fn raw(r: &Row) -> RawRow {
    RawRow {
        record: r.get(11),
        answer: r.get(12),
        checkpoint: r.get(13),
        result: r.get(14),
        ..raw_info(r)
    }
}
