//! Conversations: multi-turn chats kept by id in the same stores as the runs
//! ([`ConversationStore`]), so a transcript outlives the process.
//!
//! A conversation holds a balanced transcript only: a turn enters it when its run ends. A run
//! that halts leaves the conversation [waiting](Conversation::waiting) on that run and its
//! request, with the transcript as it was before the turn; the answer
//! ([`Client::answer`](crate::Client::answer)) completes the turn. So the next turn never sends
//! a half-saved transcript. [`Client::ask`](crate::Client::ask) runs a turn.

use std::time::SystemTime;

use super::{StoreError, StoreResult};
use crate::message::{Message, Role};
use crate::util::BoxFuture;

/// The run a conversation's current turn waits on, halted on `request_id`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Waiting {
    /// The run of the turn.
    pub run_id: String,
    /// The request it halted on (answer it with [`Client::answer`](crate::Client::answer)).
    pub request_id: String,
}

/// A stored conversation.
#[derive(Clone, Debug, PartialEq)]
#[non_exhaustive]
pub struct Conversation {
    /// Its id, chosen by the host.
    pub id: String,
    /// The transcript of its ended turns (system message first when there is one), balanced:
    /// every tool call has its result.
    pub messages: Vec<Message>,
    /// The halted run of the current turn, if one is waiting for an answer.
    pub waiting: Option<Waiting>,
    /// When it was last saved.
    pub updated_at: SystemTime,
    /// Bumped by every save; `0` for a conversation not stored yet.
    pub version: u64,
}

impl Conversation {
    /// A new, empty conversation (version 0: not stored yet).
    pub fn new(id: impl Into<String>) -> Self {
        Self {
            id: id.into(),
            messages: Vec::new(),
            waiting: None,
            updated_at: SystemTime::now(),
            version: 0,
        }
    }

    /// How many user turns the transcript holds.
    pub fn turns(&self) -> usize {
        turns(&self.messages)
    }

    /// The summary a listing shows.
    pub fn info(&self) -> ConversationInfo {
        ConversationInfo {
            id: self.id.clone(),
            turns: self.turns(),
            messages: self.messages.len(),
            waiting: self.waiting.clone(),
            updated_at: self.updated_at,
            version: self.version,
        }
    }
}

/// What [`ConversationStore::list_conversations`] shows of a conversation.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ConversationInfo {
    /// Its id.
    pub id: String,
    /// How many user turns it holds.
    pub turns: usize,
    /// How many messages it holds.
    pub messages: usize,
    /// The halted run of the current turn, if any.
    pub waiting: Option<Waiting>,
    /// When it was last saved.
    pub updated_at: SystemTime,
    /// Bumped by every save.
    pub version: u64,
}

/// One page of [`ConversationStore::list_conversations`], in id order.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct ConversationPage {
    /// The conversations.
    pub conversations: Vec<ConversationInfo>,
    /// The id to pass as `after` for the next page; `None` on the last page.
    pub next: Option<String>,
}

impl ConversationPage {
    pub(crate) fn new(mut conversations: Vec<ConversationInfo>, limit: usize) -> Self {
        let next = if conversations.len() > limit {
            conversations.truncate(limit);
            conversations.last().map(|c| c.id.clone())
        } else {
            None
        };
        Self {
            conversations,
            next,
        }
    }
}

/// Where conversations are kept by id. Object-safe; [`MemoryStore`](super::MemoryStore),
/// `SqliteStore` and `PostgresStore` implement it beside [`RunStore`](super::RunStore) (their
/// [`RunStore::conversations`](super::RunStore::conversations) hands it out).
///
/// Saves are compare-and-set on [`Conversation::version`], so of two turns saved from the same
/// version, one wins and the other gets [`StoreError::Conflict`].
///
/// ```
/// use std::sync::Arc;
/// use toolnexus::store::{ConversationStore, MemoryStore, RunStore};
/// use toolnexus::{Client, FnTool, Reply, Request, ScriptedModel, ToolResult, Toolkit};
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let ask = FnTool::builder("confirm").description("Asks for a yes.")
///     .handler(|_, ctx| async move {
///         match ctx.answer() {
///             Some(_) => ToolResult::success("confirmed"),
///             None => ToolResult::suspended(Request::approval("Book it?")),
///         }
///     })
///     .build().unwrap();
/// let toolkit = Toolkit::builder().tool(ask).build().unwrap();
/// let store = Arc::new(MemoryStore::new());
/// let script = [
///     Reply::text("Hello! Where to?"),
///     Reply::tool_call("confirm", serde_json::json!({})),
///     Reply::text("Booked."),
/// ];
/// let client = Client::builder(ScriptedModel::new(script))
///     .model_name("m")
///     .store(store.clone())
///     .build()
///     .unwrap();
///
/// client.ask("chat-1", "Hi", &toolkit).await.unwrap();
/// // the second turn halts: the conversation waits on its request, its transcript unchanged
/// let halted = client.ask("chat-1", "Oslo, please", &toolkit).await.unwrap();
/// let request = halted.pending.unwrap();
/// let chat = store.get_conversation("chat-1").await.unwrap().unwrap();
/// assert_eq!(chat.waiting.as_ref().unwrap().request_id, request.id);
/// assert_eq!(chat.turns(), 1);
///
/// // the answer ends the run and completes the turn
/// client.answer(request.accept(true), &toolkit).await.unwrap();
/// let chat = store.get_conversation("chat-1").await.unwrap().unwrap();
/// assert_eq!(chat.waiting, None);
/// assert_eq!(chat.turns(), 2);
/// assert_eq!(chat.messages.last().unwrap().content.as_deref(), Some("Booked."));
///
/// // keep the last turn only; then forget the conversation
/// assert_eq!(store.trim_conversation("chat-1", 1).await.unwrap().turns, 1);
/// assert!(store.delete_conversation("chat-1").await.unwrap());
/// # });
/// ```
pub trait ConversationStore: Send + Sync + std::fmt::Debug {
    /// The conversation with this id.
    ///
    /// # Errors
    ///
    /// [`StoreError::CorruptConversation`] when its row cannot be read.
    fn get_conversation<'a>(
        &'a self,
        id: &'a str,
    ) -> BoxFuture<'a, StoreResult<Option<Conversation>>>;

    /// The conversation whose current turn waits on this run.
    ///
    /// # Errors
    ///
    /// [`StoreError::CorruptConversation`] when its row cannot be read.
    fn conversation_of_run<'a>(
        &'a self,
        run_id: &'a str,
    ) -> BoxFuture<'a, StoreResult<Option<Conversation>>>;

    /// Saves `conversation` if the stored one is still at `conversation.version` (`0`: none is
    /// stored); returns the saved columns (version bumped).
    ///
    /// # Errors
    ///
    /// [`StoreError::Conflict`] when the stored conversation changed since it was read (or
    /// exists, for version 0); [`StoreError::Invalid`] for a transcript that is not balanced.
    fn put_conversation<'a>(
        &'a self,
        conversation: &'a Conversation,
    ) -> BoxFuture<'a, StoreResult<ConversationInfo>>;

    /// Conversations in id order, `limit` at a time (at least one), after the id `after`.
    fn list_conversations<'a>(
        &'a self,
        after: Option<&'a str>,
        limit: usize,
    ) -> BoxFuture<'a, StoreResult<ConversationPage>>;

    /// Deletes the conversation (not the runs it had); `false` when there was none.
    fn delete_conversation<'a>(&'a self, id: &'a str) -> BoxFuture<'a, StoreResult<bool>>;

    /// Keeps the last `keep` user turns (and the system message): the cut falls on a user
    /// message, so an assistant turn's tool calls always keep their results.
    ///
    /// # Errors
    ///
    /// [`StoreError::NotFound`] when there is no such conversation; [`StoreError::Conflict`]
    /// while a turn waits on an answer (its run goes on from the untrimmed transcript), or when
    /// the conversation changed meanwhile.
    fn trim_conversation<'a>(
        &'a self,
        id: &'a str,
        keep: usize,
    ) -> BoxFuture<'a, StoreResult<ConversationInfo>> {
        Box::pin(async move {
            let mut conversation = self
                .get_conversation(id)
                .await?
                .ok_or_else(|| StoreError::NotFound { key: id.to_owned() })?;
            if let Some(waiting) = &conversation.waiting {
                return Err(StoreError::Conflict(format!(
                    "conversation `{id}` waits on request `{}`: trim it once the turn is answered",
                    waiting.request_id
                )));
            }
            trim(&mut conversation.messages, keep);
            self.put_conversation(&conversation).await
        })
    }
}

/// How many user turns `messages` holds.
pub(crate) fn turns(messages: &[Message]) -> usize {
    messages.iter().filter(|m| m.role == Role::User).count()
}

/// Keeps the system messages before the first user turn and the last `keep` user turns.
fn trim(messages: &mut Vec<Message>, keep: usize) {
    let starts: Vec<usize> = messages
        .iter()
        .enumerate()
        .filter(|(_, m)| m.role == Role::User)
        .map(|(i, _)| i)
        .collect();
    if starts.len() <= keep {
        return;
    }
    let head = starts[0];
    let from = if keep == 0 {
        messages.len()
    } else {
        starts[starts.len() - keep]
    };
    messages.drain(head..from);
}

/// Refuses a transcript with a tool call that has no result (or a result of no call).
pub(crate) fn check_balanced(id: &str, messages: &[Message]) -> StoreResult<()> {
    let mut open: Vec<&str> = Vec::new();
    for m in messages {
        if m.role == Role::Tool {
            let call = m.tool_call_id.as_deref().unwrap_or_default();
            let Some(k) = open.iter().position(|o| *o == call) else {
                return Err(StoreError::Invalid(format!(
                    "conversation `{id}`: the tool result for `{call}` answers no open call"
                )));
            };
            open.remove(k);
            continue;
        }
        if let Some(call) = open.first() {
            return Err(StoreError::Invalid(format!(
                "conversation `{id}`: the tool call `{call}` has no result, the transcript would be unbalanced"
            )));
        }
        if m.role == Role::Assistant {
            open = m.tool_calls.iter().map(|c| c.id.as_str()).collect();
        }
    }
    match open.first() {
        Some(call) => Err(StoreError::Invalid(format!(
            "conversation `{id}`: the tool call `{call}` has no result, the transcript would be unbalanced"
        ))),
        None => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::message::ToolCall;

    fn chat() -> Vec<Message> {
        vec![
            Message::system("s"),
            Message::user("u1"),
            Message::assistant("a1"),
            Message::user("u2"),
            Message::assistant_tool_calls(
                None,
                vec![ToolCall::new("c1", "t", serde_json::json!({}))],
            ),
            Message::tool_result("c1", "r", false),
            Message::assistant("a2"),
            Message::user("u3"),
            Message::assistant("a3"),
        ]
    }

    #[test]
    fn trim_keeps_the_system_message_and_whole_turns() {
        let mut m = chat();
        trim(&mut m, 2);
        let roles: Vec<_> = m
            .iter()
            .map(|m| m.content.clone().unwrap_or_default())
            .collect();
        assert_eq!(roles, ["s", "u2", "", "r", "a2", "u3", "a3"]);
        check_balanced("c", &m).unwrap();
        let mut m = chat();
        trim(&mut m, 0);
        assert_eq!(m, vec![Message::system("s")]);
        let mut m = chat();
        trim(&mut m, 5);
        assert_eq!(m, chat());
    }

    #[test]
    fn an_unanswered_call_is_refused() {
        let mut m = chat();
        m.remove(5);
        assert_eq!(
            check_balanced("c", &m).unwrap_err().to_string(),
            "conversation `c`: the tool call `c1` has no result, the transcript would be unbalanced"
        );
    }
}
