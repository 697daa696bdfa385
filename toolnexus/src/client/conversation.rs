//! [`Client::ask`]: one turn of a stored conversation ([`ConversationStore`]), and how a turn
//! that halted is completed once its run ends.

use crate::error::{Error, Result};
use crate::store::{Conversation, ConversationStore, RunState, RunStore, StoreError, Waiting};
use crate::toolkit::Toolkit;

use super::{Client, RunResult};

impl Client {
    /// Runs one turn of the conversation `conversation_id`, kept in the client's
    /// [store](super::ClientBuilder::store): loads its transcript (a new conversation starts
    /// empty), runs `prompt` as the next user turn, and saves the transcript the run ends with.
    ///
    /// A run that halts is parked as usual and the conversation is left [waiting](Waiting) on
    /// it, its transcript as before the turn (never half a turn); [`Client::answer`] completes
    /// the turn when the run ends. A run that fails saves nothing: the conversation stays as it
    /// was. See [`ConversationStore`] for an example.
    ///
    /// # Errors
    ///
    /// [`Error::Store`] with [`StoreError::Invalid`] when the client has no store, or one that
    /// keeps no conversations; with [`StoreError::Conflict`] while the conversation waits on an
    /// answer (nothing runs), or when another turn of it was saved meanwhile (this turn's
    /// result is not saved); then as [`Client::run_with_history`].
    pub async fn ask(
        &self,
        conversation_id: &str,
        prompt: impl Into<String>,
        toolkit: &Toolkit,
    ) -> Result<RunResult> {
        let Some(runs) = self.inner.store.as_deref() else {
            return Err(no_conversations());
        };
        let conversations = runs.conversations().ok_or_else(no_conversations)?;
        let mut conversation = match conversations.get_conversation(conversation_id).await? {
            Some(stored) => settle(runs, conversations, stored).await?,
            None => Conversation::new(conversation_id),
        };
        if let Some(waiting) = &conversation.waiting {
            return Err(Error::Store(StoreError::Conflict(format!(
                "conversation `{conversation_id}` waits on request `{}`: answer it (`Client::answer`) before the next turn",
                waiting.request_id
            ))));
        }
        let run = self
            .run_with_history(conversation.messages.clone(), prompt, toolkit)
            .await;
        let ended = match &run {
            Ok(result) => result,
            // a `wait_for` that failed: the run is parked on its request like any halt
            Err(e) => match e.halted_run() {
                Some(halted) if halted.is_pending() => halted,
                _ => return run,
            },
        };
        apply(&mut conversation, ended);
        conversations.put_conversation(&conversation).await?;
        run
    }

    /// Completes the turn of the conversation waiting on `run_id`, once that run ended or
    /// parked again (after [`Client::resume_claim`] recorded its outcome).
    pub(super) async fn settle_conversation(runs: &dyn RunStore, run_id: &str) -> Result<()> {
        let Some(conversations) = runs.conversations() else {
            return Ok(());
        };
        // a concurrent reader may settle it first: read again, it then waits on nothing
        for _ in 0..3 {
            let Some(waiting) = conversations.conversation_of_run(run_id).await? else {
                return Ok(());
            };
            match settle(runs, conversations, waiting).await {
                Err(Error::Store(StoreError::Conflict(_))) => {}
                other => return other.map(drop),
            }
        }
        Ok(())
    }
}

fn no_conversations() -> Error {
    Error::Store(StoreError::Invalid(
        "`Client::ask` needs a client built with a store that keeps conversations (`ClientBuilder::store`)".to_owned(),
    ))
}

/// The conversation after `ended`: the run's transcript when it ended, or waiting on its
/// request when it halted.
fn apply(conversation: &mut Conversation, ended: &RunResult) {
    if let Some(request) = &ended.pending {
        conversation.waiting = Some(Waiting {
            run_id: ended.run_id.clone(),
            request_id: request.id.clone(),
        });
    } else {
        conversation.messages.clone_from(&ended.messages);
        conversation.waiting = None;
    }
}

/// Brings a waiting conversation up to date with its run: a finished run's transcript enters
/// it, a run parked again moves the wait to its new request, a deleted run drops the turn.
/// Saved when it changed (so a worker that died between finishing the run and saving the
/// conversation is repaired by the next read).
async fn settle(
    runs: &dyn RunStore,
    conversations: &dyn ConversationStore,
    mut conversation: Conversation,
) -> Result<Conversation> {
    let Some(waiting) = conversation.waiting.clone() else {
        return Ok(conversation);
    };
    match runs.get(&waiting.run_id).await? {
        None => conversation.waiting = None,
        Some(run) => match (run.info.state, run.result) {
            (RunState::Finished, Some(result)) => apply(&mut conversation, &result),
            (RunState::Parked, _) if run.info.request_id != waiting.request_id => {
                conversation.waiting = Some(Waiting {
                    run_id: waiting.run_id.clone(),
                    request_id: run.info.request_id,
                });
            }
            _ => return Ok(conversation),
        },
    }
    let info = conversations.put_conversation(&conversation).await?;
    conversation.version = info.version;
    conversation.updated_at = info.updated_at;
    Ok(conversation)
}
