//! [`ConversationStore`](super::ConversationStore) written once for every store, over the small
//! surface a store gives the conversations ([`ConversationRows`]: read rows, apply a save over
//! the version before its own or a delete); each store takes it with [`conversation_store!`].

use super::conversation::check_balanced;
use super::{
    Conversation, ConversationInfo, ConversationPage, StoreError, StoreResult, Waiting,
    from_millis, now_ms,
};
use crate::util::BoxFuture;

/// A conversation as a store keeps it: columns plus the transcript as JSON.
#[derive(Clone, Debug)]
pub(crate) struct ConversationRow {
    pub(crate) id: String,
    pub(crate) messages: String,
    pub(crate) turns: i64,
    pub(crate) message_count: i64,
    pub(crate) waiting_run: Option<String>,
    pub(crate) waiting_request: Option<String>,
    pub(crate) updated_at: i64,
    pub(crate) version: i64,
}

impl ConversationRow {
    /// The row's values, in `CONVERSATION_COLUMNS` order: the parameters of the SQL stores'
    /// insert and update.
    #[cfg(any(feature = "sqlite", feature = "postgres"))]
    pub(crate) fn params(&self) -> Vec<crate::store::sql::SqlParam> {
        use crate::store::sql::SqlParam;
        vec![
            SqlParam::Text(self.id.clone()),
            SqlParam::Text(self.messages.clone()),
            SqlParam::Int(self.turns),
            SqlParam::Int(self.message_count),
            SqlParam::MaybeText(self.waiting_run.clone()),
            SqlParam::MaybeText(self.waiting_request.clone()),
            SqlParam::Int(self.updated_at),
            SqlParam::Int(self.version),
        ]
    }

    /// The row `conversation` is saved as (version bumped), after checking its transcript.
    pub(crate) fn of(conversation: &Conversation) -> StoreResult<Self> {
        check_balanced(&conversation.id, &conversation.messages)?;
        let messages = serde_json::to_string(&conversation.messages)
            .map_err(|e| StoreError::Invalid(format!("conversation `{}`: {e}", conversation.id)))?;
        let count = |n: usize| i64::try_from(n).unwrap_or(i64::MAX);
        Ok(Self {
            id: conversation.id.clone(),
            messages,
            turns: count(conversation.turns()),
            message_count: count(conversation.messages.len()),
            waiting_run: conversation.waiting.as_ref().map(|w| w.run_id.clone()),
            waiting_request: conversation.waiting.as_ref().map(|w| w.request_id.clone()),
            updated_at: now_ms(),
            version: i64::try_from(conversation.version)
                .unwrap_or(i64::MAX)
                .saturating_add(1),
        })
    }

    /// The version the stored row must still have for this save to apply.
    pub(crate) fn expected(&self) -> i64 {
        self.version - 1
    }

    fn waiting(&self) -> Option<Waiting> {
        match (&self.waiting_run, &self.waiting_request) {
            (Some(run_id), Some(request_id)) => Some(Waiting {
                run_id: run_id.clone(),
                request_id: request_id.clone(),
            }),
            _ => None,
        }
    }

    pub(crate) fn info(&self) -> ConversationInfo {
        let count = |n: i64| usize::try_from(n).unwrap_or(0);
        ConversationInfo {
            id: self.id.clone(),
            turns: count(self.turns),
            messages: count(self.message_count),
            waiting: self.waiting(),
            updated_at: from_millis(self.updated_at),
            version: u64::try_from(self.version).unwrap_or(0),
        }
    }

    pub(crate) fn decode(&self) -> StoreResult<Conversation> {
        let messages =
            serde_json::from_str(&self.messages).map_err(|e| StoreError::CorruptConversation {
                id: self.id.clone(),
                message: e.to_string(),
            })?;
        Ok(Conversation {
            id: self.id.clone(),
            messages,
            waiting: self.waiting(),
            updated_at: from_millis(self.updated_at),
            version: u64::try_from(self.version).unwrap_or(0),
        })
    }
}

/// The refusal of a save whose expected version is not the stored one.
pub(crate) fn changed(row: &ConversationRow) -> StoreError {
    if row.expected() == 0 {
        StoreError::Conflict(format!(
            "conversation `{}` is already stored: load it and save from its version",
            row.id
        ))
    } else {
        StoreError::Conflict(format!(
            "conversation `{}` changed since version {} was read: another turn was saved first",
            row.id,
            row.expected()
        ))
    }
}

/// Which conversations a driver reads.
#[derive(Clone, Copy, Debug)]
pub(crate) enum ConversationRead<'a> {
    /// The conversation with this id.
    Id(&'a str),
    /// The conversation whose current turn waits on this run.
    WaitingRun(&'a str),
    /// At most `take` conversations by id, after `after` (from the first when `None`).
    After {
        /// The last id of the page before.
        after: Option<&'a str>,
        /// How many.
        take: usize,
    },
}

/// A change of the conversations, as a driver applies it in one step.
#[derive(Clone, Copy, Debug)]
pub(crate) enum ConversationChange<'a> {
    /// Saves the row over the version before its own ([`ConversationRow::expected`]; a new
    /// conversation when that is 0): nothing is applied when the stored version is another.
    Save(&'a ConversationRow),
    /// Deletes the conversation with this id: nothing is applied when none is kept.
    Delete(&'a str),
}

/// What a store gives the conversations.
pub(crate) trait ConversationRows: Sync {
    /// The rows `read` selects.
    fn read_conversations<'a>(
        &'a self,
        read: ConversationRead<'a>,
    ) -> BoxFuture<'a, StoreResult<Vec<ConversationRow>>>;

    /// Applies `change` in one step, its guard with it; whether it applied.
    fn change_conversations<'a>(
        &'a self,
        change: ConversationChange<'a>,
    ) -> BoxFuture<'a, StoreResult<bool>>;
}

/// [`ConversationStore::get_conversation`](super::ConversationStore::get_conversation) and
/// [`conversation_of_run`](super::ConversationStore::conversation_of_run).
pub(crate) async fn get<D: ConversationRows>(
    d: &D,
    read: ConversationRead<'_>,
) -> StoreResult<Option<Conversation>> {
    let rows = d.read_conversations(read).await?;
    rows.first().map(ConversationRow::decode).transpose()
}

/// [`ConversationStore::put_conversation`](super::ConversationStore::put_conversation).
pub(crate) async fn put<D: ConversationRows>(
    d: &D,
    conversation: &Conversation,
) -> StoreResult<ConversationInfo> {
    let row = ConversationRow::of(conversation)?;
    if d.change_conversations(ConversationChange::Save(&row))
        .await?
    {
        Ok(row.info())
    } else {
        Err(changed(&row))
    }
}

/// [`ConversationStore::list_conversations`](super::ConversationStore::list_conversations).
pub(crate) async fn list<D: ConversationRows>(
    d: &D,
    after: Option<&str>,
    limit: usize,
) -> StoreResult<ConversationPage> {
    let limit = limit.max(1);
    let read = ConversationRead::After {
        after,
        take: limit.saturating_add(1),
    };
    let page = d.read_conversations(read).await?;
    Ok(ConversationPage::new(
        page.iter().map(ConversationRow::info).collect(),
        limit,
    ))
}

/// [`ConversationStore::delete_conversation`](super::ConversationStore::delete_conversation).
pub(crate) async fn delete<D: ConversationRows>(d: &D, id: &str) -> StoreResult<bool> {
    d.change_conversations(ConversationChange::Delete(id)).await
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
                use $crate::store::conversation_rows::{ConversationRead, get};
                Box::pin(get(self, ConversationRead::Id(id)))
            }

            fn conversation_of_run<'a>(
                &'a self,
                run_id: &'a str,
            ) -> $crate::util::BoxFuture<
                'a,
                $crate::store::StoreResult<Option<$crate::store::Conversation>>,
            > {
                use $crate::store::conversation_rows::{ConversationRead, get};
                Box::pin(get(self, ConversationRead::WaitingRun(run_id)))
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
                Box::pin($crate::store::conversation_rows::delete(self, id))
            }
        }
    };
}
pub(crate) use conversation_store;
