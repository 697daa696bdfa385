//! A [`Client`] with a [`RunStore`]: halts park themselves, answers resume exactly once, and a
//! claimed run saves a checkpoint each time a turn's tool results are all in, so a worker that
//! takes it over goes on from there.

use std::sync::Arc;

use serde_json::Value;
use tokio::sync::{mpsc, oneshot};

use super::run::{Run, State};
use super::{Client, ClientBuilder, PendingRun, RunResult};
use crate::error::{Error, Result};
use crate::request::Answer;
use crate::store::{Claim, RunStore, StoreError, StoreResult};
use crate::toolkit::Toolkit;

/// Where a resumed run sends its checkpoints: the state, and where the store's verdict goes
/// (the run waits for it, so a checkpoint is stored before any later tool runs).
pub(super) type Checkpoints = mpsc::Sender<(Value, oneshot::Sender<StoreResult<()>>)>;

impl Run<'_> {
    /// Saves the run's state as the claim's checkpoint, when the run is a claimed one
    /// ([`Client::resume_claim`]); waits until the store has it.
    pub(super) async fn save_checkpoint(&self, st: &mut State) -> Result<()> {
        let Some(checkpoints) = &self.client.checkpoints else {
            return Ok(());
        };
        let (ack, stored) = oneshot::channel();
        let gone = || {
            Error::Store(StoreError::Backend(
                "the checkpoint writer stopped".to_owned(),
            ))
        };
        checkpoints
            .send((st.checkpoint(), ack))
            .await
            .map_err(|_| gone())?;
        stored.await.map_err(|_| gone())??;
        Ok(())
    }
}

impl ClientBuilder {
    /// Parks every run that halts in a [`RunStore`]: [`Client::run`],
    /// [`Client::run_with_history`] and [`Client::stream`] park a pending result (and the run
    /// an [`Error::WaitFor`] carries) before returning it, so the host only shows
    /// `result.pending` to a human and later hands the answer to [`Client::answer`].
    ///
    /// ```
    /// use std::sync::Arc;
    /// use toolnexus::store::{MemoryStore, RunState, RunStore};
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
    /// let store = Arc::new(MemoryStore::new());
    /// let script = [Reply::tool_call("ask", serde_json::json!({})), Reply::text("done")];
    /// let client = Client::builder(ScriptedModel::new(script))
    ///     .model_name("m")
    ///     .store(store.clone())
    ///     .build()
    ///     .unwrap();
    ///
    /// let halted = client.run("greet me", &toolkit).await.unwrap();
    /// let request = halted.pending.unwrap();
    /// let parked = store.get_by_request(&request.id).await.unwrap().unwrap();
    /// assert_eq!(parked.info.state, RunState::Parked);
    ///
    /// // the human answers, maybe in another process: one call claims, resumes and records
    /// let done = client.answer(store.as_ref(), request.accept("Ada"), &toolkit).await.unwrap();
    /// assert_eq!(done.text, "done");
    /// let stored = store.get(&parked.info.run_id).await.unwrap().unwrap();
    /// assert_eq!(stored.info.state, RunState::Finished);
    ///
    /// // the same answer twice resumes nothing
    /// let again = client.answer(store.as_ref(), request.accept("Ada"), &toolkit).await;
    /// assert!(matches!(again, Err(toolnexus::Error::Store(_))));
    /// # });
    /// ```
    pub fn store(mut self, store: Arc<dyn RunStore>) -> Self {
        self.config.store = Some(store);
        self
    }
}

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
        run
    }

    /// Resumes the run whose pending request `answer` echoes: claims it in `store` (so of any
    /// number of hosts answering the same request, exactly one resumes it), resumes it with the
    /// answer, and records the outcome (finished, or parked again on its next request).
    ///
    /// The worker that claims is named `pid-<process id>`. When the resume itself fails (the
    /// model or provider failed), the run stays claimed until its lease runs out; then any
    /// worker's [`RunStore::take_over`] and [`Client::resume_claim`] resume it again.
    ///
    /// # Errors
    ///
    /// [`Error::Store`] with [`StoreError::NotFound`], [`StoreError::AlreadyClaimed`] or
    /// [`StoreError::Expired`] when the answer cannot claim the run (nothing is resumed); then
    /// as [`Client::resume`].
    pub async fn answer(
        &self,
        store: &dyn RunStore,
        answer: Answer,
        toolkit: &Toolkit,
    ) -> Result<RunResult> {
        let owner = format!("pid-{}", std::process::id());
        let claim = store.claim(&answer, &owner).await?;
        self.resume_claim(store, &claim, toolkit).await
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
        let (checkpoints, mut saved) = mpsc::channel(1);
        let mut config = (*self.inner).clone();
        config.checkpoints = Some(checkpoints);
        let client = Self {
            inner: Arc::new(config),
        };
        // the run, and beside it the writer of its checkpoints, which ends when the run (and
        // with it the only sender) is done
        let run = async move {
            match from {
                Some(run) => client.resume_checkpoint(run, toolkit).await,
                None => {
                    client
                        .resume(claim.record.clone(), claim.answer.clone(), toolkit)
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
}
