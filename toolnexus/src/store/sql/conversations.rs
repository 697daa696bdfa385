//! The statements of `ConversationStore` both SQL stores run: the dialects differ only in how a
//! parameter is named (and PostgreSQL's cast of the version it compares), so the SQL text is
//! written once here and each store binds a `ConversationRow`'s values.

use super::CONVERSATION_COLUMNS;
use crate::store::conversation::ConversationRow;
use crate::store::conversation_rows::By;

/// A `ConversationRow` read from row `$r` by its getter `$get` (then `?` where the getter
/// returns a `Result`), in [`CONVERSATION_COLUMNS`] order.
macro_rules! read_conversation_row {
    ($r:expr, $get:ident $($try:tt)?) => {
        $crate::store::conversation::ConversationRow {
            id: $r.$get(0)$($try)?,
            messages: $r.$get(1)$($try)?,
            turns: $r.$get(2)$($try)?,
            message_count: $r.$get(3)$($try)?,
            waiting_run: $r.$get(4)$($try)?,
            waiting_request: $r.$get(5)$($try)?,
            updated_at: $r.$get(6)$($try)?,
            version: $r.$get(7)$($try)?,
        }
    };
}
pub(crate) use read_conversation_row;

/// The statements of `ConversationStore` in one SQL dialect.
pub(crate) struct ConversationSql {
    /// The conversation of id 1.
    pub(crate) get: String,
    /// The conversation waiting on run 1.
    pub(crate) of_run: String,
    /// Inserts a new conversation (its 8 values, `ConversationRow::params`), nothing when its id is taken.
    pub(crate) insert: String,
    /// Saves a conversation over the version before its own (its 8 values, `ConversationRow::params`).
    pub(crate) update: String,
    /// The conversations after id 1, at most 2.
    pub(crate) list: String,
    /// Deletes the conversation of id 1.
    pub(crate) delete: String,
}

impl ConversationSql {
    /// The statement reading a conversation `by` a column.
    pub(crate) fn by(&self, by: By) -> &str {
        match by {
            By::Id => &self.get,
            By::WaitingRun => &self.of_run,
        }
    }

    /// The statement saving `row`: an insert for a new conversation, else an update.
    pub(crate) fn save(&self, row: &ConversationRow) -> &str {
        if row.expected() == 0 {
            &self.insert
        } else {
            &self.update
        }
    }

    /// The statements with `placeholder(n)` naming the n-th parameter (from 1) and `int` the
    /// n-th parameter as an integer (PostgreSQL casts the version it computes with).
    pub(crate) fn new(placeholder: fn(usize) -> String, int: fn(usize) -> String) -> Self {
        let p = placeholder;
        let select = |column: &str| {
            format!(
                "SELECT {CONVERSATION_COLUMNS} FROM conversations WHERE {column} = {}",
                p(1)
            )
        };
        let values: Vec<String> = (1..=8).map(p).collect();
        Self {
            get: select("id"),
            of_run: select("waiting_run"),
            insert: format!(
                "INSERT INTO conversations ({CONVERSATION_COLUMNS})
                 VALUES ({}) ON CONFLICT (id) DO NOTHING",
                values.join(", ")
            ),
            update: format!(
                "UPDATE conversations SET messages = {}, turns = {}, message_count = {},
                     waiting_run = {}, waiting_request = {}, updated_at = {}, version = {v}
                 WHERE id = {} AND version = {v} - 1",
                p(2),
                p(3),
                p(4),
                p(5),
                p(6),
                p(7),
                p(1),
                v = int(8),
            ),
            list: format!(
                "SELECT {CONVERSATION_COLUMNS} FROM conversations WHERE id > {}
                 ORDER BY id LIMIT {}",
                p(1),
                p(2)
            ),
            delete: format!("DELETE FROM conversations WHERE id = {}", p(1)),
        }
    }
}
