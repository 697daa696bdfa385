//! The Tasks extension (`io.modelcontextprotocol/tasks`, SEP-2663) over a run store: where the
//! client declares it, a call that parks is answered with a task in `input_required`, and the
//! task *is* the parked run, so it outlives the serving process.
//!
//! - The task id names the run, sealed with the `requestState` key and bound to the session's
//!   principal: only this server's key opens it, and another client's `tasks/*` call reads as
//!   an unknown task.
//! - `tasks/get` reads the run from the store: parked is `input_required` (its elicitation
//!   under the request's id), answered or resuming is `working`, finished is `completed` with
//!   the call's result, given up or damaged is `failed`. A parked run whose answer cannot
//!   come from this client (its approval is one vote in and the request needs more, it is the
//!   requester of a request that refuses its requester, or the request is a group's) is
//!   `working`: it waits on others, and this client is not asked again.
//! - `tasks/update` claims the run with the answer in it (once: an answer that was not used
//!   is ignored, as the extension says of answered keys) and resumes it in the background; a
//!   second suspension parks the run again, on a new key.
//! - `tasks/cancel` answers the waiting request as cancelled: the tool learns it (the loop
//!   rule), and the task completes with the tool's result.

use std::sync::Arc;
use std::time::SystemTime;

use rmcp::ErrorData;
use rmcp::model::{
    CallToolResponse, CancelTaskParams, CreateTaskResult, DetailedTask, ElicitRequest,
    ElicitResult, GetTaskParams, GetTaskResult, InputRequest, InputRequests, Task, TaskPayload,
    TaskStatus, UpdateTaskParams,
};
use rmcp::service::{RequestContext, RoleServer};
use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use super::parked::{claim_parked, last_call, resume_claimed, waits_on_others};
use super::{McpService, elicitation_for_client, tool_result};
use crate::mcp::elicit::answer_from_result;
use crate::request::{Answer, DeclineReason, Request, format_rfc3339};
use crate::store::{RunInfo, RunState, RunStore, StoredRun};

/// How often a client is asked to poll `tasks/get`, in milliseconds.
const POLL_INTERVAL_MS: u64 = 1_000;

/// What a task id names (sealed): the parked run, and who may see and answer it.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct TaskRef {
    task_run: String,
    principal: Option<String>,
}

/// Whether the request declared the Tasks extension.
pub(super) fn wants_tasks(rc: &RequestContext<RoleServer>) -> bool {
    rc.client_capabilities()
        .is_some_and(|caps| caps.supports_tasks())
}

fn unknown_task(task_id: &str) -> ErrorData {
    let shown: String = task_id.chars().take(24).collect();
    ErrorData::invalid_params(format!("unknown task: {shown}"), None)
}

fn store_failed(e: &impl std::fmt::Display) -> ErrorData {
    ErrorData::internal_error(format!("the run store failed: {e}"), None)
}

/// The stored run `run_id` of task `task_id`, or why not: the store failed, or the run is gone.
async fn stored_task(
    store: &Arc<dyn RunStore>,
    run_id: &str,
    task_id: &str,
) -> Result<StoredRun, ErrorData> {
    store
        .get(run_id)
        .await
        .map_err(|e| store_failed(&e))?
        .ok_or_else(|| unknown_task(task_id))
}

/// The task's metadata: its id, status, when it was created (its run's first event) and last
/// changed.
fn task(task_id: &str, status: TaskStatus, info: Option<&RunInfo>) -> Task {
    let now = SystemTime::now();
    let created = info
        .and_then(|i| i.history.first().map(|e| e.at))
        .or(info.map(|i| i.created_at))
        .unwrap_or(now);
    let updated = info
        .and_then(|i| i.history.last().map(|e| e.at))
        .unwrap_or(now);
    Task::new(
        task_id,
        status,
        format_rfc3339(created),
        format_rfc3339(updated),
    )
    .with_poll_interval_ms(POLL_INTERVAL_MS)
}

/// The `inputRequests` of a task waiting on `request`: its elicitation, keyed by the
/// request's id (unique over the task's life: each suspension has its own).
fn input_requests(
    request: &Request,
    elicitation: rmcp::model::ElicitRequestParams,
) -> InputRequests {
    let mut requests = InputRequests::new();
    requests.insert(
        request.id.clone(),
        InputRequest::Elicitation(ElicitRequest::new(elicitation)),
    );
    requests
}

impl McpService {
    /// The task a parked one-call run is, for a client that declared the extension: its id
    /// sealed, its status `input_required` (the request itself comes with `tasks/get`).
    /// `None` when the id cannot be sealed (the caller falls back).
    pub(super) fn task_of(
        &self,
        run_id: &str,
        rc: &RequestContext<RoleServer>,
    ) -> Option<CallToolResponse> {
        let sealed = self
            .inner
            .codec
            .seal_json(&TaskRef {
                task_run: run_id.to_owned(),
                principal: self.principal_of(rc),
            })
            .ok()?;
        let task = task(&sealed, TaskStatus::InputRequired, None);
        Some(CallToolResponse::Task(CreateTaskResult::new(task)))
    }

    /// The run a task id names, when this server sealed it for this session's principal.
    fn task_run(
        &self,
        task_id: &str,
        rc: &RequestContext<RoleServer>,
    ) -> Result<(String, &Arc<dyn RunStore>), ErrorData> {
        let store = self
            .inner
            .store
            .as_ref()
            .ok_or_else(|| unknown_task(task_id))?;
        let task: TaskRef = self
            .inner
            .codec
            .open_json(task_id)
            .map_err(|_| unknown_task(task_id))?;
        if task.principal != self.principal_of(rc) {
            return Err(unknown_task(task_id));
        }
        Ok((task.task_run, store))
    }

    /// `tasks/get`: the parked run's state, read from the store.
    pub(super) async fn get_parked_task(
        &self,
        params: GetTaskParams,
        rc: &RequestContext<RoleServer>,
    ) -> Result<GetTaskResult, ErrorData> {
        let task_id = params.task_id;
        let (run_id, store) = self.task_run(&task_id, rc)?;
        let info = store
            .info(&run_id)
            .await
            .map_err(|e| store_failed(&e))?
            .ok_or_else(|| unknown_task(&task_id))?;
        let payload = match info.state {
            RunState::Parked => {
                let stored = stored_task(store, &run_id, &task_id).await?;
                let request = stored.record.pending();
                match elicitation_for_client(request, rc) {
                    // its answer cannot come from this client (its vote is in, it asked a
                    // request that refuses its requester, the request is a group's): it
                    // waits, and this client is not asked again
                    Ok(Some(_)) if waits_on_others(&stored, self.principal_of(rc).as_deref()) => {
                        TaskPayload::Working
                    }
                    Ok(Some(elicitation)) => TaskPayload::InputRequired {
                        input_requests: input_requests(request, elicitation),
                    },
                    // the client can no longer be asked in the request's mode: still waiting
                    Ok(None) => TaskPayload::Working,
                    Err(refused) => TaskPayload::Completed {
                        result: as_object(&refused),
                    },
                }
            }
            RunState::Answered | RunState::Claimed | RunState::Expired => TaskPayload::Working,
            RunState::Finished => {
                let stored = stored_task(store, &run_id, &task_id).await?;
                let Some(run) = stored.result else {
                    return Err(store_failed(&"a finished run without its result"));
                };
                TaskPayload::Completed {
                    result: as_object(&tool_result(&last_call(&run))),
                }
            }
            RunState::Failed | RunState::Damaged => {
                let why = info
                    .history
                    .iter()
                    .rev()
                    .find_map(|e| e.error.clone())
                    .unwrap_or_else(|| format!("the run is {}", info.state.as_str()));
                let mut error = Map::new();
                error.insert("code".to_owned(), Value::from(-32603));
                error.insert("message".to_owned(), Value::String(why));
                TaskPayload::Failed { error }
            }
        };
        let task = task(&task_id, payload.status(), Some(&info));
        Ok(GetTaskResult::new(DetailedTask::new(task, payload)))
    }

    /// `tasks/update`: the answer under the waiting request's id claims the run (once) and
    /// resumes it in the background. Responses under any other key, and answers to a run that
    /// no longer waits, are ignored.
    pub(super) async fn update_parked_task(
        &self,
        params: UpdateTaskParams,
        rc: &RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        let Some((store, request)) = self.waiting_request(&params.task_id, rc).await? else {
            return Ok(());
        };
        let Some(reply) = params.input_responses.get(&request.id) else {
            return Ok(());
        };
        let result = serde_json::from_value::<ElicitResult>(reply.clone()).map_err(|e| {
            ErrorData::invalid_params(
                format!(
                    "the response to {} is no elicitation result: {e}",
                    request.id
                ),
                None,
            )
        })?;
        self.resume_task(store, answer_from_result(&request, &result), rc)
            .await;
        Ok(())
    }

    /// `tasks/cancel`: the waiting request is answered as cancelled, and the run resumes
    /// with that answer (the tool learns it). A run that no longer waits is left alone.
    pub(super) async fn cancel_parked_task(
        &self,
        params: CancelTaskParams,
        rc: &RequestContext<RoleServer>,
    ) -> Result<(), ErrorData> {
        if let Some((store, request)) = self.waiting_request(&params.task_id, rc).await? {
            self.resume_task(
                store,
                Answer::decline(request.id, DeclineReason::Cancelled),
                rc,
            )
            .await;
        }
        Ok(())
    }

    /// The request the run of task `task_id` waits on, with the run's store; `None` when it
    /// no longer waits.
    async fn waiting_request(
        &self,
        task_id: &str,
        rc: &RequestContext<RoleServer>,
    ) -> Result<Option<(&Arc<dyn RunStore>, Request)>, ErrorData> {
        let (run_id, store) = self.task_run(task_id, rc)?;
        let stored = stored_task(store, &run_id, task_id).await?;
        Ok((stored.info.state == RunState::Parked)
            .then(|| (store, stored.record.pending().clone())))
    }

    /// Claims the run with `answer` (before the `tasks/*` call returns, so a `tasks/get`
    /// after it never sees the request again) and resumes it on a task of its own:
    /// `tasks/get` follows the run. An answer the store refuses (claimed by a concurrent
    /// answer, expired) is dropped: the run's own state says what happened.
    async fn resume_task(
        &self,
        store: &Arc<dyn RunStore>,
        answer: Answer,
        rc: &RequestContext<RoleServer>,
    ) {
        let by = self.principal_of(rc);
        let claim = match claim_parked(store, &answer, by.as_deref()).await {
            Ok(claim) => claim,
            Err(refused) => {
                tracing::debug!(request = %answer.id, ?refused, "a task's answer was not used");
                return;
            }
        };
        let store = Arc::clone(store);
        let toolkit = self.inner.toolkit.clone();
        tokio::spawn(async move {
            if let Err(failed) = resume_claimed(&store, &toolkit, &claim).await {
                tracing::warn!(run = %claim.run_id, ?failed, "a task's run failed to resume");
            }
        });
    }
}

/// A call's result as the JSON object a `completed` task carries.
fn as_object(result: &rmcp::model::CallToolResult) -> Map<String, Value> {
    match serde_json::to_value(result) {
        Ok(Value::Object(object)) => object,
        _ => Map::new(),
    }
}
