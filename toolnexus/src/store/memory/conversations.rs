//! The conversations a [`MemoryStore`] keeps beside its runs: the conversations'
//! [driver](ConversationRows) over a map by id;
//! [`ConversationStore`](crate::store::ConversationStore) itself is written once
//! ([`conversation_store!`]).

use std::ops::Bound;

use super::MemoryStore;
use crate::store::StoreResult;
use crate::store::conversation_rows::ConversationRow;
use crate::store::conversation_rows::{
    ConversationChange, ConversationRead, ConversationRows, conversation_store,
};
use crate::util::BoxFuture;

impl ConversationRows for MemoryStore {
    fn read_conversations<'a>(
        &'a self,
        read: ConversationRead<'a>,
    ) -> BoxFuture<'a, StoreResult<Vec<ConversationRow>>> {
        Box::pin(async move {
            let rows = self.conversation_rows();
            Ok(match read {
                ConversationRead::Id(id) => rows.get(id).cloned().into_iter().collect(),
                ConversationRead::WaitingRun(run) => rows
                    .values()
                    .find(|row| row.waiting_run.as_deref() == Some(run))
                    .cloned()
                    .into_iter()
                    .collect(),
                ConversationRead::After { after, take } => {
                    let start = after.map_or(Bound::Unbounded, |id| Bound::Excluded(id.to_owned()));
                    rows.range((start, Bound::Unbounded))
                        .take(take)
                        .map(|(_, row)| row.clone())
                        .collect()
                }
            })
        })
    }

    fn change_conversations<'a>(
        &'a self,
        change: ConversationChange<'a>,
    ) -> BoxFuture<'a, StoreResult<bool>> {
        Box::pin(async move {
            let mut rows = self.conversation_rows();
            Ok(match change {
                ConversationChange::Save(row) => {
                    let applies = rows.get(&row.id).map_or(0, |r| r.version) == row.expected();
                    if applies {
                        rows.insert(row.id.clone(), row.clone());
                    }
                    applies
                }
                ConversationChange::Delete(id) => rows.remove(id).is_some(),
            })
        })
    }
}

conversation_store!(MemoryStore);
