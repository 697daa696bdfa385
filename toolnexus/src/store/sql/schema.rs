//! The SQL stores' schema: one initial schema (both stores' runs and conversations, with the
//! integer type as the store spells it), the remembered rules (version 2), and the migration
//! machinery.
//!
//! Each store keeps its list of migrations (entry `n` takes a database from version `n` to
//! `n + 1`; today one entry, the initial schema) and records the versions it reached in a
//! `schema_version` table. A new version appends an entry to both stores' lists and bumps
//! [`SCHEMA_VERSION`](crate::store::SCHEMA_VERSION).

use crate::store::{StoreError, StoreResult};

/// The initial schema (version 1), the same SQL in both stores but for the integer type
/// (`INTEGER` in SQLite, `BIGINT` in PostgreSQL): the runs (indexed columns, the record and
/// its answer, checkpoint, result and history), indexes that hold only the states their
/// queries read (so a change of state writes few index pages and finished runs leave them),
/// the requests runs waited on before their current one (each answered or expired, so an
/// answer to one of them is told apart from an answer to a request no run made), and the
/// conversations.
macro_rules! initial_schema {
    ($int:tt) => {
        concat!(
            "CREATE TABLE runs (
                run_id      TEXT PRIMARY KEY,
                request_id  TEXT NOT NULL,
                kind        TEXT NOT NULL,
                prompt      TEXT NOT NULL,
                created_at  ",
            stringify!($int),
            " NOT NULL,
                expires_at  ",
            stringify!($int),
            ",
                state       TEXT NOT NULL,
                lease_owner TEXT,
                lease_until ",
            stringify!($int),
            ",
                version     ",
            stringify!($int),
            " NOT NULL,
                claims      ",
            stringify!($int),
            " NOT NULL,
                history     TEXT NOT NULL DEFAULT '[]',
                record      TEXT NOT NULL,
                answer      TEXT,
                checkpoint  TEXT,
                result      TEXT
            );
            CREATE UNIQUE INDEX runs_by_request ON runs (request_id);
            CREATE INDEX runs_claimed ON runs (lease_until) WHERE state = 'claimed';
            CREATE INDEX runs_parked ON runs (created_at, run_id) WHERE state = 'parked';
            CREATE INDEX runs_parked_by_kind ON runs (kind, created_at, run_id)
                WHERE state = 'parked';
            CREATE INDEX runs_parked_expiring ON runs (expires_at)
                WHERE state = 'parked' AND expires_at IS NOT NULL;
            CREATE INDEX runs_expired ON runs (created_at, run_id) WHERE state = 'expired';
            CREATE INDEX runs_answered ON runs (created_at, run_id) WHERE state = 'answered';
            CREATE TABLE past_requests (
                request_id TEXT PRIMARY KEY,
                run_id     TEXT NOT NULL
            );
            CREATE INDEX past_requests_by_run ON past_requests (run_id);
            CREATE TABLE conversations (
                id              TEXT PRIMARY KEY,
                messages        TEXT NOT NULL,
                turns           ",
            stringify!($int),
            " NOT NULL,
                message_count   ",
            stringify!($int),
            " NOT NULL,
                waiting_run     TEXT,
                waiting_request TEXT,
                updated_at      ",
            stringify!($int),
            " NOT NULL,
                version         ",
            stringify!($int),
            " NOT NULL
            );
            CREATE INDEX conversations_by_run ON conversations (waiting_run)
                WHERE waiting_run IS NOT NULL;"
        )
    };
}
pub(crate) use initial_schema;

/// Version 2: the remembered decisions ([`remember`](crate::remember)), one row a rule, found
/// by tool and holder (the conversation or the principal it holds for), the same SQL in both
/// stores but for the integer type.
macro_rules! rules_schema {
    ($int:tt) => {
        concat!(
            "CREATE TABLE rules (
                id          TEXT PRIMARY KEY,
                effect      TEXT NOT NULL,
                tool        TEXT NOT NULL,
                scope       TEXT NOT NULL,
                args        TEXT,
                fingerprint TEXT,
                reach       TEXT NOT NULL,
                holder      TEXT NOT NULL,
                ends_at     ",
            stringify!($int),
            ",
                created_at  ",
            stringify!($int),
            " NOT NULL,
                answered_by TEXT,
                request_id  TEXT NOT NULL,
                run_id      TEXT NOT NULL
            );
            CREATE INDEX rules_by_call ON rules (tool, reach, holder);
            CREATE INDEX rules_by_age ON rules (created_at, id);"
        )
    };
}
pub(crate) use rules_schema;

/// Version 4: the approval check's indexes ([`RuleStore::decide`](crate::remember::RuleStore::decide)
/// reads only the rules that may cover the call, [`RuleSql::candidates`](super::RuleSql::candidates)): an `args` rule found
/// by its fingerprint, a `tool` rule by tool, reach and holder (a partial index of the `tool`
/// rules only, so no plan, not even PostgreSQL's generic plan of the prepared statement,
/// walks a holder's exact-call rules through it). Without them a check read every rule of
/// the principal for the tool (10,000 exact-call rules: about 100 ms).
/// `IF EXISTS` / `IF NOT EXISTS`: a database rolled back by hand to an older version keeps
/// working.
pub(crate) const RULES_INDEX: &str = "DROP INDEX IF EXISTS rules_by_call;
    CREATE INDEX IF NOT EXISTS rules_by_tool ON rules (tool, reach, holder) WHERE scope = 'tool';
    CREATE INDEX IF NOT EXISTS rules_by_fingerprint ON rules (fingerprint, reach, holder)
        WHERE fingerprint IS NOT NULL;";

/// Version 5: the workers' heartbeats ([`RunStore::heartbeat`](crate::store::RunStore::heartbeat)),
/// one row a worker name with its latest heartbeat, the same SQL in both stores but for the
/// integer type.
macro_rules! workers_schema {
    ($int:tt) => {
        concat!(
            "CREATE TABLE IF NOT EXISTS workers (
                name    TEXT PRIMARY KEY,
                seen_at ",
            stringify!($int),
            " NOT NULL
            );
            CREATE INDEX IF NOT EXISTS workers_by_seen ON workers (seen_at);"
        )
    };
}
pub(crate) use workers_schema;

/// Version 7: the votes of a request that needs several approvals
/// ([`Vote`](crate::store::Vote)), one column of the run's row (a JSON array, sealed like the
/// answer in a sealed store). PostgreSQL's `IF NOT EXISTS` keeps a schema rolled back by hand
/// working; SQLite has no such clause, so its migration skips the statement when the column
/// is there ([`VOTES_COLUMN`]).
#[cfg_attr(not(feature = "postgres"), allow(dead_code))]
pub(crate) const VOTES_SCHEMA: &str = "ALTER TABLE runs ADD COLUMN IF NOT EXISTS votes TEXT;";

/// Version 7 in SQLite: [`VOTES_SCHEMA`] without the clause SQLite lacks; run only when
/// `runs` has no `votes` column yet.
#[cfg_attr(not(feature = "sqlite"), allow(dead_code))]
pub(crate) const VOTES_COLUMN: &str = "ALTER TABLE runs ADD COLUMN votes TEXT;";
/// Version 8: who may answer a run's request and where it goes when its deadline passes
/// ([`Request::with_approvers`](crate::Request::with_approvers),
/// [`Request::escalate_to`](crate::Request::escalate_to)): the group that may answer it now
/// (`approvers`, listed by [`PendingQuery::groups`](crate::store::PendingQuery::groups)) and
/// the escalation steps still ahead (`escalate`, a JSON array), the same SQL in both stores.
/// The columns are added `NULL`: a run parked before has no group and no escalation.
#[cfg(feature = "sqlite")]
pub(crate) const GOVERNED_COLUMNS: &str = "ALTER TABLE runs ADD COLUMN approvers TEXT;
    ALTER TABLE runs ADD COLUMN escalate TEXT;";

/// The migrations a database at schema `current` still needs, as `(version reached, SQL)`;
/// `migrations` lists every version's (entry `n` reaches version `n + 1`). A database newer
/// than the last entry is refused.
pub(crate) fn due_migrations<'m>(
    current: i64,
    migrations: &'m [&'m str],
) -> StoreResult<impl Iterator<Item = (i64, &'m str)>> {
    let latest = i64::try_from(migrations.len()).unwrap_or(i64::MAX);
    if current > latest {
        return Err(StoreError::Backend(format!(
            "the database's schema is version {current}, newer than this release's {latest}: upgrade toolnexus"
        )));
    }
    Ok(migrations
        .iter()
        .enumerate()
        .skip(usize::try_from(current).unwrap_or(0))
        .map(|(from, sql)| (i64::try_from(from + 1).unwrap_or(i64::MAX), *sql)))
}

#[cfg(test)]
mod tests {
    use super::due_migrations;

    /// The machinery a later version will use: a fresh database runs every entry, a database
    /// at version 1 only the ones after it, a current one none, a newer one is refused.
    #[test]
    fn migrations_run_from_the_version_reached() {
        let steps = ["v1", "v2", "v3"];
        let due = |current| {
            due_migrations(current, &steps)
                .map(Iterator::collect::<Vec<_>>)
                .map_err(|e| e.to_string())
        };
        assert_eq!(due(0), Ok(vec![(1, "v1"), (2, "v2"), (3, "v3")]));
        assert_eq!(due(1), Ok(vec![(2, "v2"), (3, "v3")]));
        assert_eq!(due(3), Ok(vec![]));
        assert_eq!(
            due(4),
            Err(
                "run store database error: the database's schema is version 4, newer than this release's 3: upgrade toolnexus"
                    .to_owned()
            )
        );
    }
}
