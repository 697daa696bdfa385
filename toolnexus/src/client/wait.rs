//! In-process answers: what a `wait_for` function may return, and waiting for it under the
//! run's timeout and cancellation without losing the request.

use std::fmt;
use std::panic::AssertUnwindSafe;
use std::sync::atomic::Ordering;

use futures_util::FutureExt;
use serde_json::Value;

use super::WaitForFn;
use super::run::Run;
use crate::error::Result;
use crate::model::ToolCall;
use crate::request::{Answer, Request};
use crate::result::ToolResult;
use crate::util::panic_message;

/// What a `wait_for` function may return: an [`Answer`], or a `Result` of one whose error is
/// the host's failure (the run then ends with [`Error::WaitFor`](crate::error::Error::WaitFor), the request still pending).
pub trait IntoAnswer {
    /// The answer, or the failure's text.
    ///
    /// # Errors
    ///
    /// The host's failure, as text.
    fn into_answer(self) -> Result<Answer, String>;
}

impl IntoAnswer for Answer {
    fn into_answer(self) -> Result<Answer, String> {
        Ok(self)
    }
}

impl<E: fmt::Display> IntoAnswer for Result<Answer, E> {
    fn into_answer(self) -> Result<Answer, String> {
        self.map_err(|e| e.to_string())
    }
}

impl Run<'_> {
    /// The host's answer to a suspended call, resolved into the call's result; or why there
    /// is none (the caller then halts the run on the request, which stays pending).
    pub(super) async fn answer(
        &self,
        wait_for: &WaitForFn,
        call: &ToolCall,
        args: &Value,
        request: &Request,
    ) -> Result<ToolResult, String> {
        match self.wait(wait_for, request).await {
            Ok(answer) if answer.id == request.id => {
                Ok(Box::pin(self.resolve(call, args, request, answer)).await)
            }
            Ok(answer) => Err(format!(
                "it answered request `{}`; an answer must echo the pending request's id",
                answer.id
            )),
            Err(message) => Err(message),
        }
    }

    /// The host's answer to `request`, or why there is none: `wait_for` failed or panicked,
    /// or the run's timeout or cancellation interrupted it (the request stays pending either
    /// way: the caller returns the halted run with the failure).
    async fn wait(&self, wait_for: &WaitForFn, request: &Request) -> Result<Answer, String> {
        let waiting = AssertUnwindSafe(async { wait_for(request.clone()).await })
            .catch_unwind()
            .map(|outcome| {
                outcome.unwrap_or_else(|panic| {
                    Err(format!(
                        "wait_for panicked: {}",
                        panic_message(panic.as_ref())
                    ))
                })
            });
        let timeout = async {
            match self.deadline {
                Some((at, limit)) => {
                    tokio::time::sleep_until(at).await;
                    limit
                }
                None => std::future::pending().await,
            }
        };
        self.waiting.store(true, Ordering::SeqCst);
        let outcome = tokio::select! {
            biased;
            answer = waiting => answer,
            () = self.cancel.cancelled() => {
                Err("the run was cancelled while waiting for the answer".to_owned())
            }
            limit = timeout => Err(format!(
                "the run timed out after {limit:?} while waiting for the answer"
            )),
        };
        self.waiting.store(false, Ordering::SeqCst);
        outcome
    }
}
