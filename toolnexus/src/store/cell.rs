//! The one decoding of a SQL row the stores share: the columns as the database hands them
//! over ([`Cell`]s) become a [`RawRow`], and a column that does not hold what the schema says
//! damages that row only.

use super::RawRow;

/// A cell shown in an error: its first characters.
fn shown(cell: &Cell) -> String {
    match cell {
        Cell::Null => "NULL".to_owned(),
        Cell::Int(i) => i.to_string(),
        Cell::Real(r) => r.to_string(),
        Cell::Text(t) => format!("{:?}", crate::limits::excerpt(t)),
        Cell::Blob(b) => format!("{} bytes", b.len()),
    }
}

/// One column's value as a SQL database hands it over: what the stores' row decoding reads.
#[derive(Clone, Debug, PartialEq)]
#[cfg_attr(not(feature = "test-support"), allow(unreachable_pub))]
// PostgreSQL's typed columns hand over text and integers only
#[cfg_attr(
    not(any(feature = "sqlite", feature = "test-support")),
    allow(dead_code)
)]
pub enum Cell {
    /// SQL `NULL`.
    Null,
    /// An integer.
    Int(i64),
    /// A floating-point number.
    Real(f64),
    /// Text.
    Text(String),
    /// Bytes.
    Blob(Vec<u8>),
}

impl Cell {
    fn kind(&self) -> &'static str {
        match self {
            Self::Null => "NULL",
            Self::Int(_) => "an integer",
            Self::Real(_) => "a real number",
            Self::Text(_) => "text",
            Self::Blob(_) => "bytes",
        }
    }
}

/// The columns of [`COLUMNS`](crate::store::COLUMNS), in order, with whether each is an
/// integer and whether it may be `NULL`.
const CELLS: [(&str, bool, bool); ALL_CELLS] = [
    ("run_id", false, false),
    ("request_id", false, false),
    ("kind", false, false),
    ("prompt", false, false),
    ("created_at", true, false),
    ("expires_at", true, true),
    ("state", false, false),
    ("lease_owner", false, true),
    ("lease_until", true, true),
    ("version", true, false),
    ("claims", true, false),
    ("history", false, false),
    ("approvers", false, true),
    ("escalate", false, true),
    ("record", false, false),
    ("answer", false, true),
    ("checkpoint", false, true),
    ("result", false, true),
    ("votes", false, true),
];

/// Whether column `k` of [`COLUMNS`](crate::store::COLUMNS) is an integer (else text): what a
/// driver whose columns are typed asks its row for.
#[cfg(feature = "postgres")]
pub(crate) fn is_int(k: usize) -> bool {
    CELLS.get(k).is_some_and(|(_, int, _)| *int)
}

/// How many columns `INFO_COLUMNS` reads: the row without its
/// record, answer, checkpoint and result.
pub(crate) const INFO_CELLS: usize = 14;
/// How many columns `COLUMNS` reads.
pub(crate) const ALL_CELLS: usize = 19;

/// What [`RawRow::from_cells`] reads each cell into.
enum Read {
    Text(Option<String>),
    Int(Option<i64>),
}

impl RawRow {
    /// A row from its columns as the database handed them over, in
    /// [`COLUMNS`](crate::store::COLUMNS) order (the 14 info columns, then the record, answer,
    /// checkpoint and result when read): the one decoding the SQL stores share. A column that
    /// does not hold what the schema says (text in `created_at`, a number where text belongs,
    /// `NULL` in a `NOT NULL` column, a missing column) never fails the statement that read
    /// it: the row keeps what could be read, says why in [`RawRow::damage`], and every read of
    /// it is [`StoreError::Corrupt`] for that run only.
    pub(crate) fn from_cells(cells: Vec<Cell>) -> Self {
        let mut damage: Option<String> = None;
        let mut values = Vec::with_capacity(CELLS.len());
        let mut cells = cells.into_iter();
        for (k, (name, int, nullable)) in CELLS.iter().copied().enumerate() {
            let cell = cells.next();
            let blobs = k >= INFO_CELLS;
            let read = match (cell, int) {
                (None, _) if blobs => Ok(None),
                (None, _) => Err("is missing".to_owned()),
                (Some(Cell::Null), _) if nullable => Ok(None),
                (Some(Cell::Null), _) => Err("is NULL, in a NOT NULL column".to_owned()),
                (Some(Cell::Int(i)), true) => Ok(Some(Read::Int(Some(i)))),
                (Some(Cell::Text(t)), false) => Ok(Some(Read::Text(Some(t)))),
                // SQLite keeps an integer in a text column as text, but a value may still come
                // back as a number: taken as its text
                (Some(Cell::Int(i)), false) if k < 2 => Ok(Some(Read::Text(Some(i.to_string())))),
                (Some(other), true) => Err(format!(
                    "holds {} ({}), not an integer",
                    other.kind(),
                    shown(&other)
                )),
                (Some(other), false) => Err(format!(
                    "holds {} ({}), not text",
                    other.kind(),
                    shown(&other)
                )),
            };
            match read {
                Ok(v) => values.push(v.unwrap_or(if int {
                    Read::Int(None)
                } else {
                    Read::Text(None)
                })),
                Err(why) => {
                    if damage.is_none() {
                        damage = Some(format!("column `{name}` {why}"));
                    }
                    values.push(if int {
                        Read::Int(None)
                    } else {
                        Read::Text(None)
                    });
                }
            }
        }
        let text = |v: &mut Vec<Read>, k: usize| match std::mem::replace(&mut v[k], Read::Int(None))
        {
            Read::Text(t) => t,
            Read::Int(_) => None,
        };
        let int = |v: &[Read], k: usize| match v[k] {
            Read::Int(i) => i,
            Read::Text(_) => None,
        };
        let (run_id, request_id) = (text(&mut values, 0), text(&mut values, 1));
        let (kind, prompt) = (text(&mut values, 2), text(&mut values, 3));
        let (created_at, expires_at) = (int(&values, 4), int(&values, 5));
        let (state, lease_owner) = (text(&mut values, 6), text(&mut values, 7));
        let (lease_until, version, claims) = (int(&values, 8), int(&values, 9), int(&values, 10));
        let (history, approvers) = (text(&mut values, 11), text(&mut values, 12));
        let (escalate, record) = (text(&mut values, 13), text(&mut values, 14));
        let (answer, checkpoint) = (text(&mut values, 15), text(&mut values, 16));
        let result = text(&mut values, 17);
        let votes = text(&mut values, 18);
        Self {
            run_id: run_id.unwrap_or_default(),
            request_id: request_id.unwrap_or_default(),
            kind: kind.unwrap_or_default(),
            prompt: prompt.unwrap_or_default(),
            created_at: created_at.unwrap_or_default(),
            expires_at,
            state: state.unwrap_or_default(),
            lease_owner,
            lease_until,
            version: version.unwrap_or_default(),
            claims: claims.unwrap_or_default(),
            history: history.unwrap_or_else(|| "[]".to_owned()),
            approvers,
            escalate,
            record: record.unwrap_or_default(),
            answer,
            checkpoint,
            result,
            votes,
            damage,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{Cell, RawRow};

    fn good() -> Vec<Cell> {
        let text = |t: &str| Cell::Text(t.to_owned());
        vec![
            text("run-1"),
            text("sus-1"),
            text("input"),
            text("Name?"),
            Cell::Int(5),
            Cell::Null,
            text("parked"),
            Cell::Null,
            Cell::Null,
            Cell::Int(1),
            Cell::Int(0),
            text("[]"),
            Cell::Null,
            Cell::Null,
            text("{}"),
            Cell::Null,
            Cell::Null,
            Cell::Null,
            Cell::Null,
        ]
    }

    #[test]
    fn a_row_of_the_schema_types_reads_whole() {
        let row = RawRow::from_cells(good());
        assert_eq!(row.damage, None);
        assert_eq!(
            (row.run_id.as_str(), row.created_at, row.version),
            ("run-1", 5, 1)
        );
        // the info columns alone (the blobs left out) read too
        let row = RawRow::from_cells(good().into_iter().take(14).collect());
        assert_eq!(row.damage, None);
    }

    #[test]
    fn a_column_of_the_wrong_type_damages_the_row_and_keeps_its_run_id() {
        let mut cells = good();
        cells[4] = Cell::Text("yesterday".to_owned());
        let row = RawRow::from_cells(cells);
        assert_eq!(row.run_id, "run-1");
        assert_eq!(
            row.damage.as_deref(),
            Some("column `created_at` holds text (\"yesterday\"), not an integer")
        );
        assert!(row.info().is_err());

        let mut cells = good();
        cells[6] = Cell::Null;
        cells[9] = Cell::Real(1.5);
        assert_eq!(
            RawRow::from_cells(cells).damage.as_deref(),
            Some("column `state` is NULL, in a NOT NULL column")
        );

        let mut cells = good();
        cells[14] = Cell::Blob(vec![0, 1]);
        assert_eq!(
            RawRow::from_cells(cells).damage.as_deref(),
            Some("column `record` holds bytes (2 bytes), not text")
        );
        assert_eq!(
            RawRow::from_cells(good().into_iter().take(3).collect())
                .damage
                .as_deref(),
            Some("column `prompt` is missing")
        );
    }
}
