//! What the two SQL stores (`SqliteStore`, `PostgresStore`) share, gated once here: the
//! columns every statement reads and how a change appends to a run's history (`row`), the
//! `list_pending` statement (`query`), the rules' row and statements (`rules`), and the one initial schema with the migration machinery
//! that will carry later versions (`schema`).
//!
//! Nothing in this room depends on which SQL store is built: the stores' own rooms
//! (`sqlite/`, `postgres/`) hold what only one of them needs.

mod change;
mod conversations;
mod history;
mod query;
mod row;
pub(crate) mod rule_store;
mod rules;
mod schema;

pub(crate) use change::change_sql;
pub(crate) use conversations::{ConversationSql, read_conversation_row};
pub(crate) use history::{HISTORY_INDEX, history_sql};
pub(crate) use query::{SqlParam, pending_sql};
pub(crate) use row::{
    COLUMNS, CONVERSATION_COLUMNS, GOOD_STATES, INFO_COLUMNS, append_history, backend,
};
pub(crate) use rule_store::{RuleRows, sql_rule_store};
pub(crate) use rules::{ListedRow, RuleRow, RuleSql, listed, read_rule_row, readable};
pub(crate) use schema::{
    RULES_INDEX, due_migrations, initial_schema, rules_schema, workers_schema,
};
