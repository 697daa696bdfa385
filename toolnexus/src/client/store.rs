//! A [`Client`] with a [`RunStore`]: halts park themselves, answers resume exactly once.

use std::sync::Arc;

use crate::error::{Error, Result};
use crate::request::Answer;
use crate::store::{Claim, RunStore, StoreError};
use crate::toolkit::Toolkit;

use super::{Client, ClientBuilder, PendingRun, RunResult};

impl From<StoreError> for Error {
    fn from(e: StoreError) -> Self {
        Self::Store(e)
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

    /// Resumes a claimed run (from [`RunStore::claim`] or [`RunStore::take_over`]) with its
    /// answer and records the outcome in `store`.
    ///
    /// # Errors
    ///
    /// As [`Client::resume`]; [`Error::Store`] with [`StoreError::LeaseLost`] when another
    /// worker took the run over meanwhile (its outcome is that worker's to record).
    pub async fn resume_claim(
        &self,
        store: &dyn RunStore,
        claim: &Claim,
        toolkit: &Toolkit,
    ) -> Result<RunResult> {
        let result = self
            .resume(claim.record.clone(), claim.answer.clone(), toolkit)
            .await?;
        store.finish(claim, result.clone()).await?;
        Ok(result)
    }
}
