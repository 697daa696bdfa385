//! The run statements both SQL stores run, written once: each text names its parameters
//! `$n`, and a [`Dialect`] says the little that differs (how a parameter is named, whether a
//! pick locks its rows, whether a column can hold a value of another type). A store keeps
//! only its connections and the execution of these statements.

use std::sync::LazyLock;

use super::{COLUMNS, GOOD_STATES, INFO_COLUMNS};

/// The SQL a store speaks, where the two differ.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Dialect {
    /// PostgreSQL: parameters `$n`, typed columns, row locks (`FOR UPDATE SKIP LOCKED`), so
    /// concurrent workers pick different rows.
    #[cfg_attr(not(feature = "postgres"), allow(dead_code))]
    Postgres,
    /// SQLite: parameters `?n`, any value in any column, one writer at a time (its
    /// `IMMEDIATE` transaction is the lock a pick holds).
    #[cfg_attr(not(feature = "sqlite"), allow(dead_code))]
    Sqlite,
}

impl Dialect {
    /// Parameter `n` (from 1).
    pub(crate) fn placeholder(self, n: usize) -> String {
        match self {
            Self::Postgres => format!("${n}"),
            Self::Sqlite => format!("?{n}"),
        }
    }

    /// `sql`, whose parameters are named `$n`, in this dialect.
    pub(crate) fn text(self, sql: &str) -> String {
        match self {
            Self::Postgres => sql.to_owned(),
            Self::Sqlite => {
                let mut out = String::with_capacity(sql.len());
                let mut chars = sql.chars().peekable();
                while let Some(c) = chars.next() {
                    let param = c == '$' && chars.peek().is_some_and(char::is_ascii_digit);
                    out.push(if param { '?' } else { c });
                }
                out
            }
        }
    }

    /// What a read of rows a worker is about to change appends, so other workers skip them
    /// until its transaction ends (nothing in SQLite: the transaction holds the one lock).
    fn skip_locked(self) -> &'static str {
        match self {
            Self::Postgres => " FOR UPDATE SKIP LOCKED",
            Self::Sqlite => "",
        }
    }

    /// What a read of the row a refusal may change appends (it waits for a change under way).
    fn lock(self) -> &'static str {
        match self {
            Self::Postgres => " FOR UPDATE",
            Self::Sqlite => "",
        }
    }

    /// The condition a listing adds so its pages walk rows in the cursor's order: SQLite keeps
    /// any value in any column, so only the rows whose `created_at` is an integer (the
    /// others are reported as damaged).
    pub(crate) fn ordered(self) -> &'static str {
        match self {
            Self::Postgres => "",
            Self::Sqlite => "typeof(created_at) = 'integer'",
        }
    }

    /// The rows whose columns hold what the schema does not allow, beside those in an unknown
    /// state (none in PostgreSQL, whose columns are typed).
    fn mistyped(self) -> &'static str {
        match self {
            Self::Postgres => "",
            Self::Sqlite => {
                " OR typeof(created_at) <> 'integer' OR typeof(version) <> 'integer'
                  OR typeof(claims) <> 'integer'
                  OR typeof(expires_at) NOT IN ('integer', 'null')
                  OR typeof(lease_until) NOT IN ('integer', 'null')"
            }
        }
    }

    /// How many takeover candidates a pick reads at most: few in PostgreSQL (each one it
    /// reads is locked until the pick ends), more in SQLite (whose pick locks the file
    /// anyway), so a run of unreadable rows is marked damaged in one pick.
    fn candidates(self) -> usize {
        match self {
            Self::Postgres => 16,
            Self::Sqlite => 64,
        }
    }

    /// The run statements in this dialect, made once.
    pub(crate) fn runs(self) -> &'static RunSql {
        static POSTGRES: LazyLock<RunSql> = LazyLock::new(|| RunSql::new(Dialect::Postgres));
        static SQLITE: LazyLock<RunSql> = LazyLock::new(|| RunSql::new(Dialect::Sqlite));
        match self {
            Self::Postgres => &POSTGRES,
            Self::Sqlite => &SQLITE,
        }
    }
}

/// The run statements of one dialect (see [`Dialect::runs`]).
#[derive(Debug)]
pub(crate) struct RunSql {
    /// A park: the new row (`$1`..`$10`: run id, request id, kind, prompt, created at,
    /// expires at, record, history, approvers, escalation plan).
    pub(crate) insert: String,
    /// `1` when run `$1` is stored.
    pub(crate) exists: String,
    /// The row of run `$1` ([`COLUMNS`]).
    pub(crate) by_run: String,
    /// The row waiting on request `$1`, else the run that waited on it before its current
    /// request ([`COLUMNS`]).
    pub(crate) by_request: String,
    /// The run `$1`'s columns without its blobs ([`INFO_COLUMNS`]).
    pub(crate) info: String,
    /// The run waiting on request `$1` ([`INFO_COLUMNS`]), locked: why an answer was refused.
    pub(crate) refused: String,
    /// The run that waited on request `$1` before its current one ([`INFO_COLUMNS`]).
    pub(crate) past: String,
    /// Keeps the request run `$1` (claimed under token `$2`) leaves for its new request `$3`
    /// (a later answer to it was answered already).
    pub(crate) keep_past_request: String,
    /// How many runs wait for a worker at `$1` (answered, expired, lease lapsed).
    pub(crate) waiting: String,
    /// When the next deadline or lease falls due, if any.
    pub(crate) next_due: String,
    /// What an expiry reads of each parked run past its deadline at `$1`.
    pub(crate) due: String,
    /// The rows [`RunStore::list_damaged`](crate::store::RunStore::list_damaged) reads, `$1`
    /// at most.
    pub(crate) damaged: String,
    /// The takeover candidates at `$1` (expired, or claimed with a lapsed lease), oldest
    /// first (PostgreSQL's claim picks them in its one statement).
    #[cfg_attr(not(feature = "sqlite"), allow(dead_code))]
    pub(crate) take_over: String,
    /// The answered runs, oldest first: a worker's claim when nothing is to be taken over
    /// (PostgreSQL's claim picks them in its one statement).
    #[cfg_attr(not(feature = "sqlite"), allow(dead_code))]
    pub(crate) answered: String,
    /// Deletes run `$1`.
    pub(crate) delete: String,
    /// Deletes the requests run `$1` waited on before.
    pub(crate) delete_past: String,
}

impl RunSql {
    fn new(d: Dialect) -> Self {
        let t = |sql: &str| d.text(sql);
        Self {
            insert: t(
                "INSERT INTO runs (run_id, request_id, kind, prompt, created_at,
                     expires_at, state, version, claims, record, history, approvers, escalate)
                 VALUES ($1, $2, $3, $4, $5, $6, 'parked', 1, 0, $7, $8, $9, $10)",
            ),
            exists: t("SELECT 1 FROM runs WHERE run_id = $1"),
            by_run: t(&format!("SELECT {COLUMNS} FROM runs WHERE run_id = $1")),
            by_request: t(&format!(
                "SELECT {COLUMNS} FROM runs WHERE request_id = $1
                     OR (run_id = (SELECT run_id FROM past_requests WHERE request_id = $1)
                         AND NOT EXISTS (SELECT 1 FROM runs r WHERE r.request_id = $1))"
            )),
            info: t(&format!(
                "SELECT {INFO_COLUMNS} FROM runs WHERE run_id = $1"
            )),
            refused: t(&format!(
                "SELECT {INFO_COLUMNS} FROM runs WHERE request_id = $1{}",
                d.lock()
            )),
            past: t(&format!(
                "SELECT {INFO_COLUMNS} FROM runs
                 WHERE run_id = (SELECT run_id FROM past_requests WHERE request_id = $1)"
            )),
            keep_past_request: t("INSERT INTO past_requests (request_id, run_id)
                 SELECT request_id, run_id FROM runs
                 WHERE run_id = $1 AND state = 'claimed' AND claims = $2 AND request_id <> $3
                 ON CONFLICT (request_id) DO NOTHING"),
            // three searches of three partial indexes
            waiting: t("SELECT (SELECT count(*) FROM runs WHERE state = 'answered')
                      + (SELECT count(*) FROM runs WHERE state = 'expired')
                      + (SELECT count(*) FROM runs WHERE state = 'claimed' AND lease_until <= $1)"),
            // two searches of two partial indexes
            next_due: t("SELECT min(at) FROM (
                     SELECT min(expires_at) AS at FROM runs
                         WHERE state = 'parked' AND expires_at IS NOT NULL
                     UNION ALL
                     SELECT min(lease_until) AS at FROM runs WHERE state = 'claimed'
                 ) AS due"),
            // sorted by the caller: an ORDER BY would have SQLite walk the table in run id
            // order rather than the expiry index
            due: t(&format!(
                "SELECT run_id, request_id, version, approvers, escalate FROM runs
                 WHERE state = 'parked' AND expires_at <= $1{}",
                d.skip_locked()
            )),
            damaged: t(&format!(
                "SELECT {COLUMNS} FROM runs WHERE state NOT IN {GOOD_STATES}{}
                 ORDER BY run_id LIMIT $1",
                d.mistyped()
            )),
            // two searches of the two partial indexes (an OR of them would scan the table);
            // the outer condition re-checks a row another worker changed meanwhile
            take_over: t(&format!(
                "SELECT {COLUMNS} FROM runs
                 WHERE run_id IN (
                     SELECT run_id FROM runs WHERE state = 'expired'
                     UNION ALL
                     SELECT run_id FROM runs WHERE state = 'claimed' AND lease_until <= $1)
                   AND (state = 'expired' OR (state = 'claimed' AND lease_until <= $1))
                 ORDER BY created_at, run_id LIMIT {}{}",
                d.candidates(),
                d.skip_locked()
            )),
            answered: t(&format!(
                "SELECT {COLUMNS} FROM runs WHERE state = 'answered'
                 ORDER BY created_at, run_id LIMIT 16{}",
                d.skip_locked()
            )),
            delete: t("DELETE FROM runs WHERE run_id = $1"),
            delete_past: t("DELETE FROM past_requests WHERE run_id = $1"),
        }
    }
}

/// The condition a plain answer's change adds ([`Driver::answer`](crate::store::engine::Driver::answer)):
/// its request is neither an approval (whose votes the engine counts from the row as read)
/// nor a request of a turn parked together (answered on its own turn row).
pub(crate) const PLAIN_ANSWER: &str = "kind <> 'approval'
    AND NOT EXISTS (SELECT 1 FROM turn_requests t WHERE t.request_id = runs.request_id)";

#[cfg(test)]
mod tests {
    use super::Dialect;

    #[test]
    fn sqlite_names_each_parameter_with_a_question_mark_and_keeps_other_dollars() {
        assert_eq!(
            Dialect::Sqlite.text("a = $1 AND b = $12 AND c = '$x'"),
            "a = ?1 AND b = ?12 AND c = '$x'"
        );
        assert_eq!(Dialect::Postgres.text("a = $1"), "a = $1");
    }

    #[test]
    fn only_postgres_locks_what_a_pick_reads() {
        assert!(
            Dialect::Postgres
                .runs()
                .due
                .ends_with("FOR UPDATE SKIP LOCKED")
        );
        assert!(!Dialect::Sqlite.runs().due.contains("FOR UPDATE"));
        assert!(
            Dialect::Sqlite
                .runs()
                .take_over
                .contains("lease_until <= ?1")
        );
    }
}
