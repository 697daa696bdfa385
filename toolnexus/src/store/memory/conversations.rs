//! The conversations a [`MemoryStore`] keeps beside its runs.

use super::MemoryStore;
use crate::store::conversation::{ConversationRow, changed};
use crate::store::{
    Conversation, ConversationInfo, ConversationPage, ConversationStore, StoreResult,
};
use crate::util::BoxFuture;

impl ConversationStore for MemoryStore {
    fn get_conversation<'a>(
        &'a self,
        id: &'a str,
    ) -> BoxFuture<'a, StoreResult<Option<Conversation>>> {
        Box::pin(async move {
            self.conversation_rows()
                .get(id)
                .map(ConversationRow::decode)
                .transpose()
        })
    }

    fn conversation_of_run<'a>(
        &'a self,
        run_id: &'a str,
    ) -> BoxFuture<'a, StoreResult<Option<Conversation>>> {
        Box::pin(async move {
            self.conversation_rows()
                .values()
                .find(|row| row.waiting_run.as_deref() == Some(run_id))
                .map(ConversationRow::decode)
                .transpose()
        })
    }

    fn put_conversation<'a>(
        &'a self,
        conversation: &'a Conversation,
    ) -> BoxFuture<'a, StoreResult<ConversationInfo>> {
        Box::pin(async move {
            let row = ConversationRow::of(conversation)?;
            let mut rows = self.conversation_rows();
            let stored = rows.get(&row.id).map_or(0, |r| r.version);
            if stored != row.expected() {
                return Err(changed(&row));
            }
            let info = row.info();
            rows.insert(row.id.clone(), row);
            Ok(info)
        })
    }

    fn list_conversations<'a>(
        &'a self,
        after: Option<&'a str>,
        limit: usize,
    ) -> BoxFuture<'a, StoreResult<ConversationPage>> {
        Box::pin(async move {
            let limit = limit.max(1);
            let rows = self.conversation_rows();
            let start = match after {
                Some(id) => std::ops::Bound::Excluded(id.to_owned()),
                None => std::ops::Bound::Unbounded,
            };
            let page = rows
                .range((start, std::ops::Bound::Unbounded))
                .take(limit + 1)
                .map(|(_, row)| row.info())
                .collect();
            Ok(ConversationPage::new(page, limit))
        })
    }

    fn delete_conversation<'a>(&'a self, id: &'a str) -> BoxFuture<'a, StoreResult<bool>> {
        Box::pin(async move { Ok(self.conversation_rows().remove(id).is_some()) })
    }
}
