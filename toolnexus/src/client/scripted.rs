//! [`ScriptedModel`]: a model for tests that replies from a script and records what it was
//! shown.

use std::collections::VecDeque;
use std::sync::{Arc, Mutex, PoisonError};

use crate::error::Error;
use crate::model::{DeltaSink, Model, ModelRequest, ModelTurn};
use crate::tool::BoxFuture;

use super::reply::Reply;

#[derive(Debug, Default)]
struct Script {
    replies: VecDeque<Reply>,
    given: usize,
    requests: Vec<ModelRequest>,
}

/// A model for tests: it answers with the given [`Reply`]s in order and records every
/// [`ModelRequest`] it receives, so a test can assert what the model was shown (the tool
/// results, the tools, the system message).
///
/// Cloning shares the script: keep a clone to inspect [`requests`](Self::requests) after the
/// run. When a request arrives and no reply is left, the run fails with [`Error::Model`]
/// saying so. It streams: a reply's text is sent as deltas, one per word (spaces kept).
///
/// ```
/// use serde_json::json;
/// use toolnexus::{Client, FnTool, Reply, Role, ScriptedModel, Toolkit};
///
/// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
/// let add = FnTool::builder("add").description("Adds.")
///     .handler(|args, _| async move {
///         let n = |k: &str| args.get(k).and_then(|v| v.as_i64()).unwrap_or(0);
///         n("a") + n("b")
///     })
///     .build().unwrap();
/// let toolkit = Toolkit::builder().tool(add).build().unwrap();
///
/// let model = ScriptedModel::new([
///     Reply::tool_call("add", json!({"a": 2, "b": 3})),
///     Reply::text("2 + 3 = 5"),
/// ]);
/// let client = Client::builder(model.clone()).model_name("test").system("Be brief.").build().unwrap();
/// let result = client.run("what is 2 + 3?", &toolkit).await.unwrap();
///
/// assert_eq!(result.text, "2 + 3 = 5");
/// let seen = model.requests();
/// assert_eq!(seen.len(), 2);
/// assert_eq!(seen[0].messages[0].content.as_deref(), Some("Be brief."));
/// let tool_msg = seen[1].messages.last().unwrap();
/// assert_eq!((tool_msg.role, tool_msg.content.as_deref()), (Role::Tool, Some("5")));
/// # });
/// ```
#[derive(Clone, Debug, Default)]
pub struct ScriptedModel {
    script: Arc<Mutex<Script>>,
}

impl ScriptedModel {
    /// A model that will answer with `replies`, in order.
    pub fn new(replies: impl IntoIterator<Item = Reply>) -> Self {
        let replies: VecDeque<Reply> = replies.into_iter().collect();
        Self {
            script: Arc::new(Mutex::new(Script {
                given: replies.len(),
                replies,
                requests: Vec::new(),
            })),
        }
    }

    /// Adds a reply at the end of the script.
    pub fn push(&self, reply: Reply) {
        let mut script = self.lock();
        script.given += 1;
        script.replies.push_back(reply);
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<ModelRequest> {
        self.lock().requests.clone()
    }

    /// How many replies are left.
    pub fn remaining(&self) -> usize {
        self.lock().replies.len()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Script> {
        self.script.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl Model for ScriptedModel {
    fn complete<'a>(
        &'a self,
        request: &'a ModelRequest,
        stream: Option<DeltaSink<'a>>,
    ) -> BoxFuture<'a, Result<ModelTurn, Error>> {
        let next = {
            let mut script = self.lock();
            script.requests.push(request.clone());
            let n = script.requests.len();
            let given = script.given;
            script.replies.pop_front().ok_or_else(|| {
                Error::Model(format!(
                    "the scripted model has no reply left for request {n}: it was given {given} {}; add one with `ScriptedModel::push`",
                    if given == 1 { "reply" } else { "replies" }
                ))
            })
        };
        Box::pin(async move {
            let turn = next?.into_turn();
            if let (Some(sink), Some(text)) = (stream, turn.text.as_deref()) {
                for delta in text.split_inclusive(' ') {
                    sink(delta);
                }
            }
            Ok(turn)
        })
    }
}
