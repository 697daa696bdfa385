//! What the loop does with a client's [`RunStore`]: a run that halts parks itself
//! ([`ClientBuilder::store`](super::ClientBuilder::store)), a claimed run sends its checkpoints
//! to the store as it goes ([`Client::resume_claim`]), and a conversation turn that waited on a
//! run is completed once the run ends ([`Client::ask`]). The client's entry points through a
//! store are here too: [`Client::answer`], [`Client::resume_claim`] and [`Client::ask`].

use std::sync::Arc;

use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

use super::remember::Remembering;
use super::run::Resume;
use super::state::State;
use super::{Client, PendingRun, RunResult};
use crate::error::{Error, Result};
use crate::request::Answer;
use crate::store::{
    Claim, Conversation, ConversationStore, RunState, RunStore, StoreError, StoreResult, Waiting,
};
use crate::toolkit::Toolkit;

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

/// The entry points through a store: answer a parked run, resume a claim, ask in a
/// conversation.
impl Client {
    /// Resumes the run whose pending request `answer` echoes, in this process: claims it in
    /// the client's [store](super::ClientBuilder::store) (so of any number of hosts answering the same
    /// request, exactly one resumes it), resumes it with the answer, and records the outcome
    /// (finished, or parked again on its next request). For a single process; where answers
    /// arrive in a web tier and workers resume, record the answer with
    /// [`RunStore::submit`] and run a [`Worker`](crate::worker::Worker).
    ///
    /// The claim (and the answer, in the run's history) is `pid-<process id>`'s. When the
    /// resume itself fails (the model or provider failed), the run stays claimed until its
    /// lease runs out; then a worker takes it over and resumes it again.
    ///
    /// # Errors
    ///
    /// [`Error::Config`] when the client has no store; [`Error::Store`] with
    /// [`StoreError::NotFound`], [`StoreError::AlreadyAnswered`] or [`StoreError::Expired`] when
    /// the answer cannot claim the run (nothing is resumed), or [`StoreError::Conflict`] when
    /// it answers one request of a run parked with every request of its turn
    /// ([`ClientBuilder::questions_together`](super::ClientBuilder::questions_together)) and
    /// others still wait (the answer is recorded; the last one resumes the run); then as
    /// [`Client::resume`].
    pub async fn answer(&self, answer: Answer, toolkit: &Toolkit) -> Result<RunResult> {
        let Some(store) = self.inner.store.clone() else {
            return Err(Error::Config(
                "`Client::answer` resumes runs through the client's store: build the client with `ClientBuilder::store`".to_owned(),
            ));
        };
        let owner = format!("pid-{}", std::process::id());
        let claim = store.claim(&answer, &owner).await?;
        self.resume_claim(store.as_ref(), &claim, toolkit).await
    }

    /// Resumes a claimed run (from [`RunStore::claim`] or [`RunStore::take_over`]) and records
    /// the outcome in `store`.
    ///
    /// A claim without a checkpoint resumes its parked record with its answer
    /// ([`Client::resume`]). While the run goes on, each time the tool results of a turn are
    /// all in, the run's state is saved as the claim's [checkpoint](RunStore::checkpoint)
    /// (which also renews the lease) before the next model call. A claim that took a run over
    /// with a checkpoint goes on from it ([`Client::resume_checkpoint`]): the tools whose
    /// results it holds do not run again. So a worker that dies re-runs, in the worker that
    /// takes over, at most the tools of the turn it died in (the crash window).
    ///
    /// The claim's answer counts when the store recorded it ([`Claim::answered_at`]): the
    /// store refuses an answer that comes after the request's `expiresAt`
    /// ([`StoreError::Expired`]), so an answer it recorded in time runs however late a worker
    /// resumes it (a backlog, a crashed worker, a worker started after the deadline). Only a
    /// claim whose store knows no time for its answer judges the deadline on resume, as
    /// [`Client::resume`] does.
    ///
    /// ```
    /// use std::sync::Arc;
    /// use std::time::Duration;
    /// use toolnexus::store::{MemoryStore, RunStore};
    /// use toolnexus::{Client, FnTool, Reply, Request, ScriptedModel, ToolResult, Toolkit};
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let ask = FnTool::builder("ask").description("Asks.")
    ///     .handler(|_, ctx| async move {
    ///         match ctx.answer_data::<String>() {
    ///             Ok(Some(name)) => ToolResult::success(format!("hello {name}")),
    ///             _ => ToolResult::suspended(Request::input("Your name?")),
    ///         }
    ///     })
    ///     .build().unwrap();
    /// let toolkit = Toolkit::builder().tool(ask).build().unwrap();
    /// let store = Arc::new(MemoryStore::new().with_lease(Duration::from_millis(50)));
    /// let script = [Reply::tool_call("ask", serde_json::json!({}))];
    /// let client = Client::builder(ScriptedModel::new(script)).model_name("m")
    ///     .store(store.clone()).build().unwrap();
    /// let request = client.run("greet me", &toolkit).await.unwrap().pending.unwrap();
    ///
    /// // worker 1 claims the run; its model fails after the tool result was checkpointed
    /// let claim = store.claim(&request.accept("Ada"), "worker-1").await.unwrap();
    /// assert!(client.resume_claim(store.as_ref(), &claim, &toolkit).await.is_err());
    ///
    /// // its lease runs out: worker 2 goes on from the checkpoint, with the next model call
    /// tokio::time::sleep(Duration::from_millis(80)).await;
    /// let taken = store.take_over("worker-2").await.unwrap().unwrap();
    /// assert!(taken.checkpoint.is_some());
    /// let healthy = Client::builder(ScriptedModel::new([Reply::text("hi Ada")]))
    ///     .model_name("m").build().unwrap();
    /// let done = healthy.resume_claim(store.as_ref(), &taken, &toolkit).await.unwrap();
    /// assert_eq!(done.text, "hi Ada");
    /// assert_eq!(done.tool_calls[0].output, "hello Ada");
    /// # });
    /// ```
    ///
    /// # Errors
    ///
    /// As [`Client::resume`] (or [`Client::resume_checkpoint`]); [`Error::Persist`] for a
    /// checkpoint this client cannot go on from (nothing runs); [`Error::Store`] with
    /// [`StoreError::LeaseLost`] (after a tool result, inside [`Error::Interrupted`]) when
    /// another worker took the run over meanwhile: its outcome is that worker's to record.
    pub async fn resume_claim(
        &self,
        store: &dyn RunStore,
        claim: &Claim,
        toolkit: &Toolkit,
    ) -> Result<RunResult> {
        let from = claim
            .checkpoint
            .as_ref()
            .map(|checkpoint| crate::run::checkpoint_of_claim(&claim.run_id, checkpoint))
            .transpose()?;
        // a checkpoint with its last turn in flight: the claim's answer is already in it
        let (checkpoints, mut saved) = mpsc::channel(1);
        let mut config = (*self.inner).clone();
        config.checkpoints = Some(checkpoints);
        // a run taken over from its checkpoint keeps the agent and conversation its record
        // names (none stays none)
        config.agent_name = claim.record.agent().map(str::to_owned);
        config.conversation = claim.record.conversation().map(str::to_owned);
        config.principal = claim.record.principal().map(str::to_owned);
        let client = Self {
            inner: Arc::new(config),
        };
        // the run, and beside it the writer of its checkpoints, which ends when the run (and
        // with it the only sender) is done
        let mut remembering = Remembering {
            store: Some(store),
            stored: true,
            ..Remembering::default()
        };
        let remembers = std::iter::once(&claim.answer)
            .chain(&claim.other_answers)
            .any(|answer| crate::remember::Remember::of_answer(answer).is_some());
        if store.rules().is_some() && remembers {
            // who answered, as the store recorded a submit (a claim that answered itself
            // records its own worker: nobody a rule could be for)
            remembering.answered_by = store
                .info(&claim.run_id)
                .await
                .ok()
                .flatten()
                .and_then(|info| info.answered_by().map(str::to_owned))
                .filter(|by| *by != claim.lease.owner);
            // a together turn: each of its other requests was answered by its own person
            remembering.answered_by_request = claim
                .record
                .requests()
                .iter()
                .zip(&claim.turn)
                .skip(1)
                .filter_map(|(request, recorded)| {
                    let by = recorded
                        .by
                        .as_ref()
                        .filter(|by| **by != claim.lease.owner)?;
                    Some((request.id.clone(), by.clone()))
                })
                .collect();
        }
        let run = async move {
            match from {
                Some((run, Some(in_flight))) => {
                    let mut state = State::from_run(run, toolkit);
                    state.agent.clone_from(&client.inner.agent_name);
                    state.conversation.clone_from(&client.inner.conversation);
                    state.principal.clone_from(&client.inner.principal);
                    // a together turn in flight: its other requests' answers, each resolving
                    // its call when the turn reaches it
                    state.answers = arrivals(claim.other_answers.iter().cloned(), Some(claim));
                    let resume = Box::new(Resume::InFlight(in_flight));
                    client
                        .drive(state, toolkit, None, false, Some(resume), remembering)
                        .await
                }
                Some((run, None)) => {
                    client
                        .resume_checkpoint_inner(run, toolkit, None, remembering)
                        .await
                }
                None => {
                    client
                        .resume_inner(
                            claim.record.clone(),
                            (claim.answer.clone(), claim.other_answers.clone()),
                            // the answer counts when the store recorded it (it refuses one
                            // that comes after the request's expiresAt): a worker that gets
                            // to it later still honours it; the record was checked when the
                            // store read it
                            Some(claim),
                            toolkit,
                            None,
                            Some(remembering),
                        )
                        .await
                }
            }
        };
        let writer = async {
            while let Some((state, ack)) = saved.recv().await {
                let _ = ack.send(store.checkpoint(claim, state).await);
            }
        };
        let (result, ()) = tokio::join!(run, writer);
        let result = result?;
        store.finish(claim, result.clone()).await?;
        // a conversation whose turn waited on this run takes its outcome
        Self::settle_conversation(store, &claim.run_id).await?;
        Ok(result)
    }

    /// Runs one turn of the conversation `conversation_id`, kept in the client's
    /// [store](super::ClientBuilder::store): loads its transcript (a new conversation starts
    /// empty), runs `prompt` as the next user turn, and saves the transcript the run ends with.
    ///
    /// A run that halts is parked as usual and the conversation is left [waiting](crate::store::Waiting) on
    /// it, its transcript as before the turn (never half a turn); [`Client::answer`] completes
    /// the turn when the run ends. A run that fails saves nothing: the conversation stays as it
    /// was. See [`ConversationStore`] for an example.
    ///
    /// # Errors
    ///
    /// [`Error::Store`] with [`StoreError::Invalid`] when the client has no store, or one that
    /// keeps no conversations, or for a `conversation_id` longer than
    /// [`MAX_CONVERSATION_ID_BYTES`](crate::limits::MAX_CONVERSATION_ID_BYTES) (nothing is
    /// loaded, nothing runs); with [`StoreError::Conflict`] while the conversation waits on an
    /// answer (nothing runs), or when another turn of it was saved meanwhile (this turn's
    /// result is not saved); then as [`Client::run_with_history`].
    pub async fn ask(
        &self,
        conversation_id: &str,
        prompt: impl Into<String>,
        toolkit: &Toolkit,
    ) -> Result<RunResult> {
        crate::limits::check_len(
            "the conversation id",
            conversation_id,
            crate::limits::MAX_CONVERSATION_ID_BYTES,
            "MAX_CONVERSATION_ID_BYTES",
        )
        .map_err(|why| Error::Store(StoreError::Invalid(why)))?;
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
            .run_in(
                Some(conversation_id),
                conversation.messages.clone(),
                prompt.into(),
                toolkit,
            )
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
}

/// A together turn's answers to its later requests (`others`, in call order), each arriving
/// when the store recorded it (`claim`), not when the turn completed; now without a claim.
pub(super) fn arrivals(
    others: impl IntoIterator<Item = Answer>,
    claim: Option<&Claim>,
) -> Vec<super::run::Arrived> {
    others
        .into_iter()
        .enumerate()
        .map(|(k, answer)| super::run::Arrived {
            answer,
            at: claim
                .and_then(|claim| claim.answered_at_of(k + 1))
                .unwrap_or_else(std::time::SystemTime::now),
        })
        .collect()
}
