//! The SQLite store's schema: versioned migrations, run on open in one `IMMEDIATE`
//! transaction (so concurrent opens migrate once).

use rusqlite::{Connection, TransactionBehavior};

use crate::store::StoreResult;
use crate::store::sql::{backend, due_migrations};

/// The schema, one entry per version: entry `n` migrates version `n` to `n + 1` (1: the
/// initial schema (`sql::initial_schema!`); 2: the remembered rules (`sql::rules_schema!`); 3:
/// the index of the answered runs' history (`sql::HISTORY_INDEX`); 4: the approval check's
/// indexes of the rules (`sql::RULES_INDEX`); 5: the workers' heartbeats (`sql::workers_schema!`); 6: the notification outbox
/// (`outbox::sql::outbox_schema!`); 7: the votes (`sql::VOTES_COLUMN`);
/// 8: the runs' group and escalation (`sql::GOVERNED_COLUMNS`);
/// 9: the requests of together runs (`together::together_schema!`)).
const MIGRATIONS: &[&str] = &[
    crate::store::sql::initial_schema!(INTEGER),
    crate::store::sql::rules_schema!(INTEGER),
    crate::store::sql::HISTORY_INDEX,
    crate::store::sql::RULES_INDEX,
    crate::store::sql::workers_schema!(INTEGER),
    crate::store::outbox::sql::outbox_schema!(INTEGER),
    crate::store::sql::VOTES_COLUMN,
    crate::store::sql::GOVERNED_COLUMNS,
    crate::store::together::together_schema!(INTEGER),
];

// the list reaches the version this release writes
#[allow(clippy::cast_possible_truncation, clippy::cast_sign_loss)]
const _: () = assert!(MIGRATIONS.len() == crate::store::SCHEMA_VERSION as usize);

pub(super) fn migrate(conn: &mut Connection) -> StoreResult<()> {
    migrate_with(conn, MIGRATIONS)
}

/// Runs the migrations of `migrations` the database has not reached, in one transaction.
fn migrate_with(conn: &mut Connection, migrations: &[&str]) -> StoreResult<()> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(backend)?;
    tx.execute_batch("CREATE TABLE IF NOT EXISTS schema_version (version INTEGER NOT NULL)")
        .map_err(backend)?;
    let current: i64 = tx
        .query_row(
            "SELECT COALESCE(MAX(version), 0) FROM schema_version",
            [],
            |r| r.get(0),
        )
        .map_err(backend)?;
    for (version, sql) in due_migrations(current, migrations)? {
        match added_columns(sql) {
            // SQLite has no `ADD COLUMN IF NOT EXISTS`: a column a database already has (one
            // whose version row was taken back by hand) is kept, not added twice
            Some(columns) => {
                for (statement, table, column) in columns {
                    let has: i64 = tx
                        .query_row(
                            "SELECT count(*) FROM pragma_table_info(?1) WHERE name = ?2",
                            [table, column],
                            |r| r.get(0),
                        )
                        .map_err(backend)?;
                    if has == 0 {
                        tx.execute_batch(statement).map_err(backend)?;
                    }
                }
            }
            None => tx.execute_batch(sql).map_err(backend)?,
        }
        tx.execute(
            "INSERT INTO schema_version (version) VALUES (?1)",
            [version],
        )
        .map_err(backend)?;
    }
    tx.commit().map_err(backend)
}

/// The statements of a migration made only of `ALTER TABLE <table> ADD COLUMN <column> ...`
/// statements, each with its table and column; `None` for any other migration.
fn added_columns(sql: &str) -> Option<Vec<(&str, &str, &str)>> {
    sql.split(';')
        .map(str::trim)
        .filter(|statement| !statement.is_empty())
        .map(|statement| {
            let words: Vec<&str> = statement.split_whitespace().take(6).collect();
            match words.as_slice() {
                [alter, kw_table, table, add, kw_column, column]
                    if alter.eq_ignore_ascii_case("ALTER")
                        && kw_table.eq_ignore_ascii_case("TABLE")
                        && add.eq_ignore_ascii_case("ADD")
                        && kw_column.eq_ignore_ascii_case("COLUMN") =>
                {
                    Some((statement, *table, *column))
                }
                _ => None,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use rusqlite::Connection;

    use super::{MIGRATIONS, migrate_with};

    /// Keeps run `r` (request `q`) in `state` at `version` after `claims` claims.
    fn keep_run(conn: &Connection, state: &str, version: i64, claims: i64) {
        conn.execute(
            "INSERT INTO runs (run_id, request_id, kind, prompt, created_at, state, version, claims, record)
             VALUES ('r', 'q', 'input', 'p', 0, ?1, ?2, ?3, '{}')",
            rusqlite::params![state, version, claims],
        )
        .unwrap();
    }

    fn versions(conn: &Connection) -> Vec<i64> {
        conn.prepare("SELECT version FROM schema_version ORDER BY version")
            .unwrap()
            .query_map([], |r| r.get(0))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap()
    }

    /// The machinery still runs for the next version: a database at this release's schema
    /// takes one more entry (and only it), keeps its rows, and opening it again runs nothing.
    #[test]
    fn a_later_version_migrates_a_current_database() {
        let mut conn = Connection::open_in_memory().unwrap();
        migrate_with(&mut conn, MIGRATIONS).unwrap();
        let current: Vec<i64> = (1..=i64::try_from(MIGRATIONS.len()).unwrap()).collect();
        assert_eq!(versions(&conn), current);
        keep_run(&conn, "parked", 1, 0);
        let mut next = MIGRATIONS.to_vec();
        next.push("ALTER TABLE runs ADD COLUMN note TEXT NOT NULL DEFAULT 'kept'");
        migrate_with(&mut conn, &next).unwrap();
        migrate_with(&mut conn, &next).unwrap();
        let mut later = current.clone();
        later.push(i64::try_from(later.len()).unwrap() + 1);
        assert_eq!(versions(&conn), later);
        let note: String = conn
            .query_row("SELECT note FROM runs WHERE run_id = 'r'", [], |r| r.get(0))
            .unwrap();
        assert_eq!(note, "kept");
        // an older release refuses the newer database
        assert_eq!(
            migrate_with(&mut conn, MIGRATIONS).unwrap_err().to_string(),
            format!(
                "run store database error: the database's schema is version {}, newer than this release's {}: upgrade toolnexus",
                MIGRATIONS.len() + 1,
                MIGRATIONS.len()
            )
        );
    }

    /// A database the previous release wrote (version 1, with a run in it) takes the rules
    /// table on open and keeps its run.
    #[test]
    fn version_1_takes_the_rules_table() {
        let mut conn = Connection::open_in_memory().unwrap();
        migrate_with(&mut conn, &MIGRATIONS[..1]).unwrap();
        keep_run(&conn, "parked", 1, 0);
        migrate_with(&mut conn, MIGRATIONS).unwrap();
        assert_eq!(versions(&conn), [1, 2, 3, 4, 5, 6, 7, 8, 9]);
        let runs: i64 = conn
            .query_row("SELECT count(*) FROM runs", [], |r| r.get(0))
            .unwrap();
        let rules: i64 = conn
            .query_row("SELECT count(*) FROM rules", [], |r| r.get(0))
            .unwrap();
        assert_eq!((runs, rules), (1, 0));
    }

    /// A database at version 2 (with an answered run in it) takes the history index on open,
    /// and the history statement walks it instead of sorting the table.
    #[test]
    fn version_2_takes_the_history_index_and_the_listing_uses_it() {
        let mut conn = Connection::open_in_memory().unwrap();
        migrate_with(&mut conn, &MIGRATIONS[..2]).unwrap();
        keep_run(&conn, "finished", 3, 1);
        migrate_with(&mut conn, MIGRATIONS).unwrap();
        assert_eq!(versions(&conn), [1, 2, 3, 4, 5, 6, 7, 8, 9]);
        let query = crate::store::HistoryQuery::new().limit(5).after("9:z");
        let (sql, params) = crate::store::sql::history_sql(
            &query,
            |n| format!("?{n}"),
            "typeof(created_at) = 'integer'",
        )
        .unwrap();
        let plan: Vec<String> = conn
            .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
            .unwrap()
            .query_map(rusqlite::params_from_iter(params.iter()), |r| r.get(3))
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert!(
            plan.iter()
                .any(|step| step.contains("USING INDEX runs_history")),
            "{plan:?}"
        );
        assert!(
            !plan.iter().any(|step| step.contains("TEMP B-TREE")),
            "{plan:?}"
        );
        let listed: String = conn
            .query_row(&sql, rusqlite::params_from_iter(params.iter()), |r| {
                r.get(0)
            })
            .unwrap();
        assert_eq!(listed, "r");
    }

    /// A database at version 3 takes the rules' lookup indexes on open, and the approval
    /// check's statement finds an `args` rule by its fingerprint and a `tool` rule by its
    /// key: four index searches, no scan of the holder's rules.
    #[test]
    fn version_3_takes_the_rules_indexes_and_the_check_uses_them() {
        let mut conn = Connection::open_in_memory().unwrap();
        migrate_with(&mut conn, &MIGRATIONS[..3]).unwrap();
        migrate_with(&mut conn, &MIGRATIONS[..4]).unwrap();
        assert_eq!(versions(&conn), [1, 2, 3, 4]);
        let sql = &crate::store::sqlite::side::SQL.rules.candidates;
        let plan: Vec<String> = conn
            .prepare(&format!("EXPLAIN QUERY PLAN {sql}"))
            .unwrap()
            .query_map(
                rusqlite::params!["pay", Option::<String>::None, "alice", 0, "f"],
                |r| r.get(3),
            )
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        let searches = |index: &str| {
            plan.iter()
                .filter(|step| step.starts_with("SEARCH") && step.contains(index))
                .count()
        };
        assert_eq!(
            (searches("rules_by_tool"), searches("rules_by_fingerprint")),
            (2, 2),
            "{plan:?}"
        );
        assert!(
            !plan.iter().any(|step| step.starts_with("SCAN")),
            "{plan:?}"
        );
    }

    /// A database whose version rows were taken back by hand (to version 6) while its tables
    /// kept what versions 7 to 9 added (the `votes`, `approvers` and `escalate` columns, the
    /// together table) opens again: the columns it has are kept with their values, not added
    /// twice (which SQLite refuses).
    #[test]
    fn a_database_taken_back_by_hand_keeps_its_added_columns() {
        let mut conn = Connection::open_in_memory().unwrap();
        migrate_with(&mut conn, MIGRATIONS).unwrap();
        keep_run(&conn, "parked", 1, 0);
        conn.execute(
            "UPDATE runs SET votes = '[]', approvers = 'finance', escalate = '[]'",
            [],
        )
        .unwrap();
        conn.execute("DELETE FROM schema_version WHERE version > 6", [])
            .unwrap();
        migrate_with(&mut conn, MIGRATIONS).unwrap();
        assert_eq!(versions(&conn), [1, 2, 3, 4, 5, 6, 7, 8, 9]);
        let kept: (String, String, String) = conn
            .query_row("SELECT votes, approvers, escalate FROM runs", [], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?))
            })
            .unwrap();
        assert_eq!(kept, ("[]".into(), "finance".into(), "[]".into()));
    }

    /// Only migrations made of `ADD COLUMN` statements are read statement by statement: any
    /// other migration runs whole, as written.
    #[test]
    fn only_add_column_migrations_are_split() {
        assert_eq!(
            super::added_columns(crate::store::sql::GOVERNED_COLUMNS),
            Some(vec![
                (
                    "ALTER TABLE runs ADD COLUMN approvers TEXT",
                    "runs",
                    "approvers"
                ),
                (
                    "ALTER TABLE runs ADD COLUMN escalate TEXT",
                    "runs",
                    "escalate"
                ),
            ])
        );
        assert_eq!(
            super::added_columns("ALTER TABLE runs ADD COLUMN a TEXT; CREATE INDEX i ON runs (a);"),
            None
        );
        assert_eq!(super::added_columns(MIGRATIONS[0]), None);
    }

    /// A database at version 4 (a heartbeat-less release) takes the workers' table on open.
    #[test]
    fn version_4_takes_the_workers_table() {
        let mut conn = Connection::open_in_memory().unwrap();
        migrate_with(&mut conn, &MIGRATIONS[..4]).unwrap();
        assert!(
            conn.execute("INSERT INTO workers (name, seen_at) VALUES ('w', 1)", [])
                .is_err()
        );
        migrate_with(&mut conn, MIGRATIONS).unwrap();
        assert_eq!(versions(&conn), [1, 2, 3, 4, 5, 6, 7, 8, 9]);
        conn.execute("INSERT INTO workers (name, seen_at) VALUES ('w', 1)", [])
            .unwrap();
    }
}
