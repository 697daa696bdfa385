//! What the loop does with a client's [`RunStore`]: a run that halts parks itself
//! ([`ClientBuilder::store`](super::ClientBuilder::store)), a claimed run sends its checkpoints
//! to the store as it goes ([`Client::resume_claim`]), and a conversation turn that waited on a
//! run is completed once the run ends ([`Client::ask`]).

use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

use super::{Client, PendingRun, RunResult};
use crate::error::{Error, Result};
use crate::store::{
    Conversation, ConversationStore, RunState, RunStore, StoreError, StoreResult, Waiting,
};

/// Where a resumed run sends its checkpoints: the state, and where the store's verdict goes
/// (the run waits for it, so a checkpoint is stored before any later tool runs).
pub(super) type Checkpoints = mpsc::Sender<(Value, oneshot::Sender<StoreResult<()>>)>;

impl Client {
    /// Parks a halted run in the client's store, when it has one; passes everything through.
    pub(super) async fn park_halted(&self, run: Result<RunResult>) -> Result<RunResult> {
        let Some(store) = &self.inner.store else {
            return run;
        };
        let halted = match &run {
            Ok(result) if result.is_pending() => result,
            Err(e) => match e.halted_run() {
                Some(result) => result,
                None => return run,
            },
            Ok(_) => return run,
        };
        store.park(PendingRun::try_from(halted)?).await?;
        // the decisions remembered rules made before the run parked enter its history now
        if let Some(rules) = store.rules() {
            for event in &halted.decided {
                if let Err(e) = rules.note_decision(&halted.run_id, event).await {
                    tracing::warn!(target: "toolnexus", error = %e, run = %halted.run_id, "a rule's decision could not be noted in the run's history");
                }
            }
        }
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

pub(super) fn no_conversations() -> Error {
    Error::Store(StoreError::Invalid(
        "`Client::ask` needs a client built with a store that keeps conversations (`ClientBuilder::store`)".to_owned(),
    ))
}

/// The conversation after `ended`: the run's transcript when it ended, or waiting on its
/// request when it halted.
pub(super) fn apply(conversation: &mut Conversation, ended: &RunResult) {
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
pub(super) async fn settle(
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
