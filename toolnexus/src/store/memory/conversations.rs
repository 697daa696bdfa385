//! The conversations a [`MemoryStore`] keeps beside its runs:
//! [`ConversationStore`](crate::store::ConversationStore) written once
//! ([`conversation_store!`]) over a map by id.

use std::ops::Bound;

use super::MemoryStore;
use crate::store::conversation::ConversationRow;
use crate::store::conversation_rows::{By, ConversationRows, conversation_store};
use crate::store::{Conversation, ConversationInfo, StoreResult};
use crate::util::BoxFuture;

impl ConversationRows for MemoryStore {
    fn conversation_by<'a>(
        &'a self,
        by: By,
        key: &'a str,
    ) -> BoxFuture<'a, StoreResult<Option<Conversation>>> {
        Box::pin(async move {
            let rows = self.conversation_rows();
            let row = match by {
                By::Id => rows.get(key),
                By::WaitingRun => rows
                    .values()
                    .find(|row| row.waiting_run.as_deref() == Some(key)),
            };
            row.map(ConversationRow::decode).transpose()
        })
    }

    fn save_conversation(
        &self,
        row: ConversationRow,
    ) -> BoxFuture<'_, StoreResult<Result<(), ConversationRow>>> {
        Box::pin(async move {
            let mut rows = self.conversation_rows();
            if rows.get(&row.id).map_or(0, |r| r.version) != row.expected() {
                return Ok(Err(row));
            }
            rows.insert(row.id.clone(), row);
            Ok(Ok(()))
        })
    }

    fn conversations_after<'a>(
        &'a self,
        after: Option<&'a str>,
        take: usize,
    ) -> BoxFuture<'a, StoreResult<Vec<ConversationInfo>>> {
        Box::pin(async move {
            let start = after.map_or(Bound::Unbounded, |id| Bound::Excluded(id.to_owned()));
            Ok(self
                .conversation_rows()
                .range((start, Bound::Unbounded))
                .take(take)
                .map(|(_, row)| row.info())
                .collect())
        })
    }

    fn delete_conversation_row<'a>(&'a self, id: &'a str) -> BoxFuture<'a, StoreResult<bool>> {
        Box::pin(async move { Ok(self.conversation_rows().remove(id).is_some()) })
    }
}

conversation_store!(MemoryStore);
