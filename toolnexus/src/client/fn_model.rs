//! [`FnModel`]: the in-process model, a host function instead of an endpoint.

use std::fmt;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::sync::Arc;

use futures_util::FutureExt;

use super::reply::{IntoReply, Reply};
use crate::error::Error;
use crate::model::{DeltaSink, Model, ModelRequest, ModelTurn};
use crate::util::{BoxFuture, panic_message};

type ReplyFn = dyn Fn(ModelRequest) -> BoxFuture<'static, Result<Reply, String>> + Send + Sync;

/// A model that is a host function: it receives the [`ModelRequest`] (OpenAI-shaped messages,
/// the tools, the model name) and returns exactly one assistant [`Reply`].
///
/// No URL, no key. Its failures (an `Err`, or a panic) end the run with [`Error::Model`]; they
/// are never retried. It does not stream: [`Client::stream`](crate::Client::stream) with it
/// fails with [`Error::StreamingUnsupported`].
///
/// ```
/// use toolnexus::{Client, FnModel, Reply, Role, Toolkit};
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let model = FnModel::new(|req| async move {
///     let last = req.messages.last().and_then(|m| m.content.clone()).unwrap_or_default();
///     Reply::text(format!("you said: {last}"))
/// });
/// let client = Client::builder(model).model_name("echo").build().unwrap();
/// let result = client.run("hi", &Toolkit::new()).await.unwrap();
/// assert_eq!(result.text, "you said: hi");
/// # });
/// ```
#[derive(Clone)]
pub struct FnModel {
    f: Arc<ReplyFn>,
}

impl fmt::Debug for FnModel {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("FnModel").finish_non_exhaustive()
    }
}

impl FnModel {
    /// A model from an async function of the request.
    pub fn new<F, Fut, R>(f: F) -> Self
    where
        F: Fn(ModelRequest) -> Fut + Send + Sync + 'static,
        Fut: Future<Output = R> + Send + 'static,
        R: IntoReply,
    {
        Self {
            f: Arc::new(move |req| {
                let fut = f(req);
                Box::pin(async move { fut.await.into_reply() })
            }),
        }
    }
}

impl Model for FnModel {
    fn complete<'a>(
        &'a self,
        request: &'a ModelRequest,
        stream: Option<DeltaSink<'a>>,
    ) -> BoxFuture<'a, Result<ModelTurn, Error>> {
        Box::pin(async move {
            if stream.is_some() {
                return Err(Error::StreamingUnsupported(
                    "the in-process model".to_owned(),
                ));
            }
            let call = AssertUnwindSafe(async { (self.f)(request.clone()).await });
            match call.catch_unwind().await {
                Ok(Ok(reply)) => Ok(reply.into_turn()),
                Ok(Err(message)) => Err(Error::Model(message)),
                Err(panic) => Err(Error::Model(format!(
                    "the in-process model panicked: {}",
                    panic_message(panic.as_ref())
                ))),
            }
        })
    }
}
