//! [`ConversationStore`](super::ConversationStore) written once for every store, over the small
//! surface a store gives the conversations ([`ConversationRows`]: read one, save one over the
//! version before its own, list, delete); each store takes it with [`conversation_store!`].

use super::conversation::{ConversationRow, changed};
use super::{Conversation, ConversationInfo, ConversationPage, StoreResult};
use crate::util::BoxFuture;

/// Which column a conversation is read by.
#[derive(Clone, Copy, Debug)]
pub(crate) enum By {
    /// Its id.
    Id,
    /// The run it waits on.
    WaitingRun,
}

/// What a store gives the conversations.
pub(crate) trait ConversationRows: Sync {
    /// The conversation whose `by` column is `key`.
    fn conversation_by<'a>(
        &'a self,
        by: By,
        key: &'a str,
    ) -> BoxFuture<'a, StoreResult<Option<Conversation>>>;

    /// Saves `row` over the version before its own (a new conversation when that is 0); the
    /// row back when the stored version is another.
    fn save_conversation(
        &self,
        row: ConversationRow,
    ) -> BoxFuture<'_, StoreResult<Result<(), ConversationRow>>>;

    /// At most `take` conversations by id, after `after` (from the first when `None`).
    fn conversations_after<'a>(
        &'a self,
        after: Option<&'a str>,
        take: usize,
    ) -> BoxFuture<'a, StoreResult<Vec<ConversationInfo>>>;

    /// Deletes the conversation `id`; whether it was kept.
    fn delete_conversation_row<'a>(&'a self, id: &'a str) -> BoxFuture<'a, StoreResult<bool>>;
}

/// [`ConversationStore::put_conversation`](super::ConversationStore::put_conversation).
pub(crate) async fn put<D: ConversationRows>(
    d: &D,
    conversation: &Conversation,
) -> StoreResult<ConversationInfo> {
    let row = ConversationRow::of(conversation)?;
    let info = row.info();
    match d.save_conversation(row).await? {
        Ok(()) => Ok(info),
        Err(row) => Err(changed(&row)),
    }
}

/// [`ConversationStore::list_conversations`](super::ConversationStore::list_conversations).
pub(crate) async fn list<D: ConversationRows>(
    d: &D,
    after: Option<&str>,
    limit: usize,
) -> StoreResult<ConversationPage> {
    let limit = limit.max(1);
    let page = d.conversations_after(after, limit + 1).await?;
    Ok(ConversationPage::new(page, limit))
}

/// `ConversationStore` for the store `$store` (a [`ConversationRows`]), written once.
macro_rules! conversation_store {
    ($store:ty) => {
        impl $crate::store::ConversationStore for $store {
            fn get_conversation<'a>(
                &'a self,
                id: &'a str,
            ) -> $crate::util::BoxFuture<
                'a,
                $crate::store::StoreResult<Option<$crate::store::Conversation>>,
            > {
                use $crate::store::conversation_rows::{By, ConversationRows};
                self.conversation_by(By::Id, id)
            }

            fn conversation_of_run<'a>(
                &'a self,
                run_id: &'a str,
            ) -> $crate::util::BoxFuture<
                'a,
                $crate::store::StoreResult<Option<$crate::store::Conversation>>,
            > {
                use $crate::store::conversation_rows::{By, ConversationRows};
                self.conversation_by(By::WaitingRun, run_id)
            }

            fn put_conversation<'a>(
                &'a self,
                conversation: &'a $crate::store::Conversation,
            ) -> $crate::util::BoxFuture<
                'a,
                $crate::store::StoreResult<$crate::store::ConversationInfo>,
            > {
                Box::pin($crate::store::conversation_rows::put(self, conversation))
            }

            fn list_conversations<'a>(
                &'a self,
                after: Option<&'a str>,
                limit: usize,
            ) -> $crate::util::BoxFuture<
                'a,
                $crate::store::StoreResult<$crate::store::ConversationPage>,
            > {
                Box::pin($crate::store::conversation_rows::list(self, after, limit))
            }

            fn delete_conversation<'a>(
                &'a self,
                id: &'a str,
            ) -> $crate::util::BoxFuture<'a, $crate::store::StoreResult<bool>> {
                $crate::store::conversation_rows::ConversationRows::delete_conversation_row(
                    self, id,
                )
            }
        }
    };
}
pub(crate) use conversation_store;
