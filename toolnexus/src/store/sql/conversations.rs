//! The conversations' [driver](ConversationRows) written once for both SQL stores: the
//! statements both dialects share ([`ConversationSql`]: they differ only in how a parameter is
//! named, and PostgreSQL's cast of the version it compares), each store running them over its
//! [`SqlSide`].

use super::{CONVERSATION_COLUMNS, SqlCols, SqlParam, SqlSide};
use crate::store::conversation_rows::ConversationRow;
use crate::store::conversation_rows::{ConversationChange, ConversationRead, ConversationRows};
use crate::store::{StoreError, StoreResult};
use crate::util::BoxFuture;

/// The conversation row of `r`, in [`CONVERSATION_COLUMNS`] order; a column that does not
/// read is [`StoreError::CorruptConversation`].
fn conversation_row(r: &dyn SqlCols) -> StoreResult<ConversationRow> {
    let row = || -> Result<ConversationRow, String> {
        Ok(ConversationRow {
            id: r.text(0)?,
            messages: r.text(1)?,
            turns: r.int(2)?,
            message_count: r.int(3)?,
            waiting_run: r.maybe_text(4)?,
            waiting_request: r.maybe_text(5)?,
            updated_at: r.int(6)?,
            version: r.int(7)?,
        })
    };
    row().map_err(|why| StoreError::CorruptConversation {
        id: r.shown(0),
        message: format!("a column does not read: {why}"),
    })
}

impl<D: SqlSide> ConversationRows for D {
    fn read_conversations<'a>(
        &'a self,
        read: ConversationRead<'a>,
    ) -> BoxFuture<'a, StoreResult<Vec<ConversationRow>>> {
        let sql = &self.side_sql().conversations;
        let (statement, params) = match read {
            ConversationRead::Id(id) => (&sql.get, vec![SqlParam::Text(id.to_owned())]),
            ConversationRead::WaitingRun(run) => {
                (&sql.of_run, vec![SqlParam::Text(run.to_owned())])
            }
            ConversationRead::After { after, take } => (
                &sql.list,
                vec![
                    SqlParam::Text(after.unwrap_or_default().to_owned()),
                    SqlParam::Int(i64::try_from(take).unwrap_or(i64::MAX)),
                ],
            ),
        };
        let rows = self.select(statement.as_str(), params, conversation_row);
        Box::pin(async move { rows.await?.into_iter().collect() })
    }

    fn change_conversations<'a>(
        &'a self,
        change: ConversationChange<'a>,
    ) -> BoxFuture<'a, StoreResult<bool>> {
        let sql = &self.side_sql().conversations;
        let (statement, params) = match change {
            ConversationChange::Save(row) if row.expected() == 0 => (&sql.insert, row.params()),
            ConversationChange::Save(row) => (&sql.update, row.params()),
            ConversationChange::Delete(id) => (&sql.delete, vec![SqlParam::Text(id.to_owned())]),
        };
        let run = self.execute(statement.as_str(), params);
        Box::pin(async move { Ok(run.await? == Some(1)) })
    }
}

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
