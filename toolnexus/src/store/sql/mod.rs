//! What the two SQL stores (`SqliteStore`, `PostgresStore`) share, gated once here: the
//! columns every statement reads and how a change appends to a run's history (`row`), the
//! `list_pending` statement (`query`), the rules' row and statements (`rules`), and the one initial schema with the migration machinery
//! that will carry later versions (`schema`).
//!
//! Nothing in this room depends on which SQL store is built: the stores' own rooms
//! (`sqlite/`, `postgres/`) hold what only one of them needs.

mod basics;
mod change;
mod conversations;
mod history;
mod numbered;
mod query;
mod row;
mod rule_store;
mod rules;
mod runs;
mod schema;
mod side;

#[cfg(feature = "sqlite")]
pub(crate) use basics::raw_row;
pub(crate) use basics::{
    WorkerSql, first, heartbeat, info, insert_params, last_worker_seen, list_damaged, list_history,
    list_pending, next_due, row, waiting,
};
#[cfg(feature = "postgres")]
pub(crate) use change::ChangeSql;
pub(crate) use change::change_sql;
pub(crate) use conversations::ConversationSql;
pub(crate) use history::{HISTORY_INDEX, history_sql};
pub(crate) use numbered::numbered;
pub(crate) use query::{SqlParam, pending_sql};
pub(crate) use row::{
    COLUMNS, CONVERSATION_COLUMNS, GOOD_STATES, INFO_COLUMNS, append_history, backend,
};
pub(crate) use rules::{RuleRow, RuleSql};
pub(crate) use runs::{Dialect, PLAIN_ANSWER, RunSql};
#[cfg(feature = "sqlite")]
pub(crate) use schema::GOVERNED_COLUMNS;
#[cfg(feature = "sqlite")]
pub(crate) use schema::VOTES_COLUMN;
#[cfg(feature = "postgres")]
pub(crate) use schema::VOTES_SCHEMA;
pub(crate) use schema::{
    RULES_INDEX, due_migrations, initial_schema, rules_schema, workers_schema,
};
pub(crate) use side::{SideSql, SqlCols, SqlSide, sql_getters};

/// The builder methods both SQL stores share: the seal keys and the lease; `$who` says which
/// processes share the store, `$what` what they write.
macro_rules! seal_and_lease {
    ($who:literal, $what:literal) => {
        #[doc = concat!(
            "Seals every record, checkpoint and answer this handle writes with `current`, and \
             refuses any row that does not open under `current` or one of `retired` (keys being \
             rotated out), as [`StoreError::Corrupt`](crate::store::StoreError::Corrupt) for that \
             run only. Every process ", $who, " needs the same keys. Without keys the store \
             trusts whoever can write ", $what, ": a record is checked against itself, which \
             catches damage but not a consistent forgery."
        )]
        #[must_use]
        pub fn with_seal_keys(
            mut self,
            current: crate::run::SealKey,
            retired: impl IntoIterator<Item = crate::run::SealKey>,
        ) -> Self {
            self.seal = crate::store::Seal::new(current, retired);
            self
        }

        /// Sets how long a claim holds a run unless renewed.
        #[must_use]
        pub fn with_lease(mut self, lease: std::time::Duration) -> Self {
            self.lease = lease;
            self
        }
    };
}
pub(crate) use seal_and_lease;

/// The [`Driver`](crate::store::engine::Driver) methods both SQL stores answer alike from their
/// `seal` and `lease` fields and (in `$dialect`) one statement each through their [`SqlSide`]
/// ([`basics`]).
macro_rules! driver_basics {
    ($dialect:expr) => {
        fn seal(&self) -> &crate::store::Seal {
            &self.seal
        }

        fn lease(&self) -> std::time::Duration {
            self.lease
        }

        fn heartbeat<'a>(
            &'a self,
            worker: &'a str,
            at: std::time::SystemTime,
        ) -> crate::util::BoxFuture<'a, crate::store::StoreResult<()>> {
            Box::pin(crate::store::sql::heartbeat(self, worker, at))
        }

        fn last_worker_seen(
            &self,
        ) -> crate::util::BoxFuture<'_, crate::store::StoreResult<Option<crate::store::WorkerSeen>>>
        {
            Box::pin(crate::store::sql::last_worker_seen(self))
        }

        fn row(
            &self,
            key: crate::store::lifecycle::Key,
        ) -> crate::util::BoxFuture<'_, crate::store::StoreResult<Option<crate::store::RawRow>>> {
            Box::pin(crate::store::sql::row(self, $dialect, key))
        }

        fn info<'a>(
            &'a self,
            run_id: &'a str,
        ) -> crate::util::BoxFuture<'a, crate::store::StoreResult<Option<crate::store::RunInfo>>> {
            Box::pin(crate::store::sql::info(self, $dialect, run_id))
        }

        fn list_damaged(
            &self,
            limit: usize,
        ) -> crate::util::BoxFuture<'_, crate::store::StoreResult<Vec<crate::store::DamagedRun>>> {
            Box::pin(crate::store::sql::list_damaged(self, $dialect, limit))
        }

        fn list_pending<'a>(
            &'a self,
            query: &'a crate::store::PendingQuery,
        ) -> crate::util::BoxFuture<'a, crate::store::StoreResult<crate::store::Page>> {
            Box::pin(crate::store::sql::list_pending(self, $dialect, query))
        }

        fn list_history<'a>(
            &'a self,
            query: &'a crate::store::HistoryQuery,
        ) -> crate::util::BoxFuture<'a, crate::store::StoreResult<crate::store::Page>> {
            Box::pin(crate::store::sql::list_history(self, $dialect, query))
        }

        fn waiting(&self) -> crate::util::BoxFuture<'_, crate::store::StoreResult<u64>> {
            Box::pin(crate::store::sql::waiting(self, $dialect))
        }

        fn next_due(
            &self,
        ) -> crate::util::BoxFuture<'_, crate::store::StoreResult<Option<std::time::SystemTime>>> {
            Box::pin(crate::store::sql::next_due(self, $dialect))
        }
    };
}
pub(crate) use driver_basics;
