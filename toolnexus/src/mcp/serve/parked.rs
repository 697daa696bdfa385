//! A call served with a run store ([`McpService::with_store`]): a one-call run of the agent
//! loop that parks in the store when it suspends; the `requestState` (sealed, bound to the
//! principal, the call and an expiry) names the parked run, and the retry claims it once and
//! resumes it, in this process or any other serving the same store.

use std::sync::Arc;
use std::time::{SystemTime, UNIX_EPOCH};

use rmcp::model::{CallToolResponse, CallToolResult, DEFAULT_MRTR_MAX_ROUNDS, InputResponses};
use rmcp::service::{RequestContext, RoleServer};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::tasks::wants_tasks;
use super::{
    McpService, answer_in, cancelled_result, elicitation_for_client, fallback,
    input_required_result, speaks_mrtr, tool_result,
};
use crate::client::{Client, FnModel, Reply};
use crate::model::{ModelRequest, Role};
use crate::request::{Answer, Request};
use crate::result::ToolResult;
use crate::run::RunResult;
use crate::store::{Claim, RunStore, StoreError};
use crate::toolkit::Toolkit;

/// What a parked call's `requestState` names (sealed): the run in the store, the request it
/// waits on, who may answer, which call it was, until when.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct ParkedState {
    run: String,
    request: String,
    principal: Option<String>,
    call: String,
    until: u64,
}

impl McpService {
    /// A first call with a run store: a one-call run that parks in the store if it suspends.
    pub(super) async fn call_parked(
        &self,
        name: &str,
        args: &Value,
        rc: &RequestContext<RoleServer>,
        store: &Arc<dyn RunStore>,
        notify: &super::NoticeFn,
    ) -> CallToolResponse {
        let client = match one_call_client(store, Some((name, args)), Some(notify)) {
            // the run is the session's principal's: a request that refuses its requester
            // refuses them, and their remembered rules hold
            Ok(client) => match self.principal_of(rc) {
                Some(principal) => client.for_principal(principal),
                None => client,
            },
            Err(e) => return tool_result(&ToolResult::error(e)).into(),
        };
        let ran = tokio::select! {
            biased;
            () = rc.ct.cancelled() => return cancelled_result(name).into(),
            ran = client.run(format!("tools/call {name}"), &self.inner.toolkit) => ran,
        };
        match ran {
            Ok(run) => self.parked_outcome(name, args, rc, store, run).await,
            Err(e) => tool_result(&ToolResult::error(format!(
                "{name} could not be run durably: {e}"
            )))
            .into(),
        }
    }

    /// What a one-call run gives the client: its tool result, or (parked on a request) the
    /// question, as `input_required` naming the parked run, as a live elicitation, or as the
    /// text fallback.
    async fn parked_outcome(
        &self,
        name: &str,
        args: &Value,
        rc: &RequestContext<RoleServer>,
        store: &Arc<dyn RunStore>,
        mut run: RunResult,
    ) -> CallToolResponse {
        // a live elicitation may be answered in this call; bounded like the loop's rounds
        for _ in 0..DEFAULT_MRTR_MAX_ROUNDS {
            let Some(request) = run.pending.as_deref().cloned() else {
                return tool_result(&last_call(&run)).into();
            };
            let suspended = ToolResult::suspended(request.clone());
            let elicitation = match elicitation_for_client(&request, rc) {
                Err(refused) => return refused.into(),
                Ok(Some(elicitation)) => elicitation,
                Ok(None) => return fallback(&suspended).into(),
            };
            if wants_tasks(rc)
                && let Some(task) = self.task_of(&run.run_id, rc)
            {
                return task;
            }
            if speaks_mrtr(rc) {
                let state = ParkedState {
                    run: run.run_id.clone(),
                    request: request.id.clone(),
                    principal: self.principal_of(rc),
                    call: call_fingerprint(name, args),
                    until: self.park_deadline(&request),
                };
                return match self.inner.codec.seal_json(&state) {
                    Ok(sealed) => input_required_result(elicitation, sealed),
                    Err(_) => fallback(&suspended).into(),
                };
            }
            let answer = match self.ask_live(&request, elicitation, rc).await {
                Ok(answer) => answer,
                Err(result) => return result.into(),
            };
            let by = self.principal_of(rc);
            run = match resume_parked(store, &self.inner.toolkit, &answer, by.as_deref()).await {
                Ok(next) => next,
                Err(result) => return result.into(),
            };
        }
        tool_result(&ToolResult::error(format!(
            "{name} asked again after {DEFAULT_MRTR_MAX_ROUNDS} answers"
        )))
        .into()
    }

    /// The retry of a parked call: the sealed state checked against this session and call,
    /// the run claimed in the store (once) and resumed with the answer.
    pub(super) async fn parked_round(
        &self,
        name: &str,
        args: &Value,
        rc: &RequestContext<RoleServer>,
        state: ParkedState,
        responses: Option<&InputResponses>,
    ) -> CallToolResponse {
        let refuse = |why: &str| {
            tool_result(&ToolResult::error(format!("invalid requestState: {why}"))).into()
        };
        let Some(store) = &self.inner.store else {
            return refuse("it names a parked run, and this server has no run store");
        };
        if state.call != call_fingerprint(name, args) {
            return refuse("it belongs to another tool call");
        }
        if state.principal != self.principal_of(rc) {
            return refuse("it belongs to another client");
        }
        if unix_now() > state.until {
            return tool_result(&ToolResult::error(format!(
                "declined/expired: the request of {name} expired before the answer arrived"
            )))
            .into();
        }
        let stored = match store.get_by_request(&state.request).await {
            Ok(Some(stored)) if stored.info.run_id == state.run => stored,
            Ok(_) => return refuse("no parked run waits on its request"),
            Err(e) => return tool_result(&ToolResult::error(e.to_string())).into(),
        };
        // the run went on to another request (a replay of an answered round): its answer is
        // never taken for the new request, which the client has not been shown
        if stored.info.request_id != state.request {
            return refuse("its request was answered and the call has moved on to another");
        }
        let request = stored.record.pending().clone();
        let answer = answer_in(responses, &request);
        let by = self.principal_of(rc);
        match resume_parked(store, &self.inner.toolkit, &answer, by.as_deref()).await {
            Ok(run) => self.parked_outcome(name, args, rc, store, run).await,
            Err(result) => result.into(),
        }
    }

    pub(super) fn principal_of(&self, rc: &RequestContext<RoleServer>) -> Option<String> {
        self.inner.principal.as_ref().and_then(|p| p(rc))
    }

    /// Until when (unix seconds) a parked request accepts its answer.
    fn park_deadline(&self, request: &Request) -> u64 {
        let at = request
            .expires_at_time()
            .unwrap_or_else(|| SystemTime::now() + self.inner.park_ttl);
        at.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
    }
}

/// The one-call run's model: it calls the tool (`call`) first, and once the transcript holds
/// the tool's result it ends the run. On resume only the second step happens, so any
/// process can resume the run without knowing the call.
fn one_call_client(
    store: &Arc<dyn RunStore>,
    call: Option<(&str, &Value)>,
    notify: Option<&super::NoticeFn>,
) -> Result<Client, String> {
    let call = call.map(|(name, args)| (name.to_owned(), args.clone()));
    let model = FnModel::new(move |request: ModelRequest| {
        let answered = request.messages.iter().any(|m| m.role == Role::Tool);
        let reply = match (&call, answered) {
            (Some((name, args)), false) => Reply::tool_call(name.clone(), args.clone()),
            _ => Reply::text(""),
        };
        async move { reply }
    });
    let mut builder = Client::builder(model)
        .model_name("mcp")
        .store(Arc::clone(store));
    if let Some(notify) = notify {
        // what the tool says while it runs, to the client (the loop makes events of it)
        let notify = Arc::clone(notify);
        builder = builder.on_event(move |event| {
            if let Some(notice) = super::notices::notice_of(event) {
                notify(notice);
            }
        });
    }
    builder
        .build()
        .map_err(|e| format!("the durable call could not be set up: {e}"))
}

/// Claims the parked run whose request `answer` echoes, and resumes it: the next run result,
/// or (claimed already, expired, gone) the call's result saying so.
async fn resume_parked(
    store: &Arc<dyn RunStore>,
    toolkit: &Toolkit,
    answer: &Answer,
    by: Option<&str>,
) -> Result<RunResult, CallToolResult> {
    let claim = claim_parked(store, answer, by).await?;
    resume_claimed(store, toolkit, &claim).await
}

/// Claims the parked run whose request `answer` echoes (once, whoever comes first): the
/// claim, or the call's result saying why not (claimed already, expired, gone, or, for a
/// request that needs several approvals, the client's approval recorded and how many more
/// the call waits for). The client is one person: the session's principal (`by`), or
/// without one this server's process.
pub(super) async fn claim_parked(
    store: &Arc<dyn RunStore>,
    answer: &Answer,
    by: Option<&str>,
) -> Result<Claim, CallToolResult> {
    let owner = owner();
    match store
        .claim_answered_by(answer, &owner, by.unwrap_or(&owner))
        .await
    {
        Ok(claim) => Ok(claim),
        Err(StoreError::Voted {
            given, required, ..
        }) => Err(tool_result(&ToolResult::error(votes_waiting(
            given, required,
        )))),
        Err(StoreError::NotAllowed(why)) => Err(tool_result(&ToolResult::error(why))),
        Err(StoreError::Expired { .. }) => Err(tool_result(&ToolResult::error(
            "declined/expired: the request expired before the answer arrived",
        ))),
        Err(e @ StoreError::AlreadyAnswered { .. }) => Err(tool_result(&ToolResult::error(
            format!("this answer was not used: {e}"),
        ))),
        Err(e) => Err(tool_result(&ToolResult::error(e.to_string()))),
    }
}

/// Who claims a parked run in this process (and, for a session without a principal, whose
/// answer it is).
fn owner() -> String {
    format!("mcp-{}", std::process::id())
}

/// Whether the run `stored` (parked) waits on others than the session of `by` (its principal,
/// `None` without one): its request names a group (an MCP client's groups are unknown), or
/// refuses its requester and the session is the requester, or the session's vote is in and
/// the request needs more. The session's answer cannot move it.
pub(super) fn waits_on_others(stored: &crate::store::StoredRun, by: Option<&str>) -> bool {
    let request = stored.record.pending();
    let owner = owner();
    let by = by.unwrap_or(&owner);
    stored.info.approvers.is_some()
        || (request.not_by_requester() && stored.record.principal() == Some(by))
        || stored.votes.iter().any(|v| v.by == by)
}

/// What the client reads when its approval was one vote of several: how many more the call
/// waits for (it runs once they are in, answered through any other door).
pub(super) fn votes_waiting(given: u32, required: u32) -> String {
    let missing = required.saturating_sub(given);
    let more = if missing == 1 {
        "1 more approval".to_owned()
    } else {
        format!("{missing} more approvals")
    };
    format!(
        "approval recorded ({given} of {required}): the call waits for {more} from other people before it runs"
    )
}

/// Resumes a claimed one-call run: the next run result, or the call's result saying why it
/// failed.
pub(super) async fn resume_claimed(
    store: &Arc<dyn RunStore>,
    toolkit: &Toolkit,
    claim: &Claim,
) -> Result<RunResult, CallToolResult> {
    let client =
        one_call_client(store, None, None).map_err(|e| tool_result(&ToolResult::error(e)))?;
    client
        .resume_claim(store.as_ref(), claim, toolkit)
        .await
        .map_err(|e| tool_result(&ToolResult::error(format!("the parked call failed: {e}"))))
}

/// The result of a one-call run's call.
pub(super) fn last_call(run: &RunResult) -> ToolResult {
    match run.tool_calls.last() {
        Some(call) => {
            let mut result = if call.is_error {
                ToolResult::error(call.output.clone())
            } else {
                ToolResult::success(call.output.clone())
            };
            result.metadata.clone_from(&call.metadata);
            result.parts.clone_from(&call.parts);
            result
        }
        None => ToolResult::error(run.text.clone()),
    }
}

/// A fingerprint of a call: SHA-256 of its tool name and arguments (compact JSON), hex.
fn call_fingerprint(name: &str, args: &Value) -> String {
    use sha2::{Digest, Sha256};
    let digest = Sha256::digest(serde_json::json!([name, args]).to_string().as_bytes());
    crate::util::hex(&digest)
}

fn unix_now() -> u64 {
    SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_secs())
}
