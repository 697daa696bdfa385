//! A call that suspends, served without a run store: on a `2026-07-28` session an
//! `input_required` result whose sealed `requestState` carries the call (the server keeps no
//! state), on older sessions a live `elicitation/create`; either way the answer goes through
//! the loop rule (CONTRACT section 8).

use rmcp::model::{
    CallToolResponse, CallToolResult, ElicitRequestParams, InputResponses,
    ProgressNotificationParam,
};
use rmcp::service::{RequestContext, RoleServer};
use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{McpService, answer_in, fallback, input_required_result, tool_result};
use crate::client::edit::{self, Edit};
use crate::context::Context;
use crate::mcp::elicit::answer_from_result;
use crate::request::{Answer, DeclineReason, Request};
use crate::result::ToolResult;

/// What travels in `requestState` between the rounds of a multi-round-trip call.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub(super) struct RoundState {
    tool: String,
    args: Value,
    request: Request,
}

impl McpService {
    /// The retry round of a multi-round-trip call: the sealed `requestState` names the call
    /// and its request, `inputResponses` carries the answer.
    pub(super) async fn round(
        &self,
        name: &str,
        args: &Value,
        ctx: &Context,
        state: RoundState,
        responses: Option<&InputResponses>,
    ) -> CallToolResult {
        if state.tool != name || &state.args != args {
            return tool_result(&ToolResult::error(
                "invalid requestState: it belongs to another tool call",
            ));
        }
        let answer = answer_in(responses, &state.request);
        tool_result(&self.resolve(name, args, ctx, &state.request, answer).await)
    }

    /// A suspended first call on a `2026-07-28` session: an `input_required` result asking
    /// for the elicitation, the call (tool, arguments, request) sealed in `requestState`.
    pub(super) fn input_required(
        &self,
        tool: String,
        args: Value,
        request: &Request,
        elicitation: ElicitRequestParams,
    ) -> CallToolResponse {
        let state = RoundState {
            tool,
            args,
            request: request.clone(),
        };
        match self.inner.codec.seal_json(&state) {
            Ok(sealed) => input_required_result(elicitation, sealed),
            Err(_) => fallback(&ToolResult::suspended(request.clone())).into(),
        }
    }

    /// A suspended first call on an older session: an `elicitation/create` request to the
    /// client, waited for at most the elicitation timeout, then the loop rule.
    pub(super) async fn elicit(
        &self,
        name: &str,
        args: &Value,
        ctx: &Context,
        request: &Request,
        elicitation: ElicitRequestParams,
        rc: &RequestContext<RoleServer>,
    ) -> CallToolResult {
        match self.ask_live(request, elicitation, rc).await {
            Ok(answer) => tool_result(&self.resolve(name, args, ctx, request, answer).await),
            Err(result) => result,
        }
    }

    /// An `elicitation/create` to the client, waited for (progress sent meanwhile) at most
    /// the elicitation timeout: the answer, or the call's result when there is none.
    pub(super) async fn ask_live(
        &self,
        request: &Request,
        elicitation: ElicitRequestParams,
        rc: &RequestContext<RoleServer>,
    ) -> Result<Answer, CallToolResult> {
        let cancelled =
            || tool_result(&ToolResult::error(format!("cancelled: {}", request.prompt)));
        let asked = rc
            .peer
            .create_elicitation_with_timeout(elicitation, Some(self.inner.timeout));
        let progress = self.progress_while_waiting(request, rc);
        tokio::select! {
            biased;
            () = rc.ct.cancelled() => Err(cancelled()),
            never = progress => match never {},
            asked = asked => match asked {
                Ok(result) => Ok(answer_from_result(request, &result)),
                Err(rmcp::ServiceError::Timeout { .. }) => {
                    Ok(Answer::decline(request.id.clone(), DeclineReason::Expired))
                }
                Err(e) => {
                    if rc.ct.is_cancelled() || rc.peer.is_transport_closed() {
                        return Err(cancelled());
                    }
                    Err(tool_result(&ToolResult::error(format!(
                        "{} (the MCP client could not be asked: {e})",
                        request.display_output()
                    ))))
                }
            },
        }
    }

    /// Progress notifications on the call's progress token, one every progress interval,
    /// for as long as it is polled (while a person is asked): the client's request timeout,
    /// when it resets on progress, never runs out while the person thinks. Without a token
    /// (or once the client is gone) it waits forever.
    async fn progress_while_waiting(
        &self,
        request: &Request,
        rc: &RequestContext<RoleServer>,
    ) -> std::convert::Infallible {
        let Some(token) = rc.meta.get_progress_token() else {
            return std::future::pending().await;
        };
        let every = self.inner.progress_interval;
        let mut ticks = tokio::time::interval_at(tokio::time::Instant::now() + every, every);
        let mut count = 0u32;
        loop {
            ticks.tick().await;
            count += 1;
            let note = ProgressNotificationParam::new(token.clone(), f64::from(count))
                .with_message(format!("waiting for the user: {}", request.prompt));
            if rc.peer.notify_progress(note).await.is_err() {
                return std::future::pending().await;
            }
        }
    }

    /// The loop rule ([`crate::suspend::resolve`], CONTRACT section 3) for one answered
    /// suspension: the retry runs the same tool with the answer in its context. An approval
    /// accepted with edited arguments runs with them once the loop's checks pass
    /// ([`edit::edited`]: the tool allows edits, the edit fits its schema and moves no
    /// credential); a refused edit runs nothing.
    async fn resolve(
        &self,
        name: &str,
        args: &Value,
        ctx: &Context,
        request: &Request,
        answer: Answer,
    ) -> ToolResult {
        if answer.ok
            && let Some(why) = governed_here(request)
        {
            return ToolResult::error(why);
        }
        let tool = self.inner.toolkit.get(name).map(AsRef::as_ref);
        let args = match edit::edited(tool, name, request, &answer) {
            Edit::Unchanged => args.clone(),
            Edit::Refused(why) => return edit::refused(&why),
            Edit::Args(edited) => Value::Object(edited),
        };
        let args = &args;
        // the answer arrives now (an elicitation's reply, a task's answer)
        let arrived = std::time::SystemTime::now();
        crate::suspend::resolve(request, answer, arrived, |answer| {
            let ctx = ctx
                .clone()
                .with_request(request.clone())
                .with_answer(answer);
            async move { self.inner.toolkit.execute(name, args.clone(), &ctx).await }
        })
        .await
    }
}

/// Why a client's acceptance of `request` cannot count when the call is served without a run
/// store: nothing here counts the votes of a request that needs several approvers, knows who
/// asked, or knows a client's groups (a store does: [`McpService::with_store`]). `None` for a
/// request a single acceptance answers.
fn governed_here(request: &Request) -> Option<String> {
    let why = if request.required_approvals() > 1 {
        format!("it needs {} approvers", request.required_approvals())
    } else if request.not_by_requester() {
        "it may not be approved by whoever asked for it".to_owned()
    } else if let Some(group) = request.approvers() {
        format!(
            "it may be answered by group `{}` only",
            crate::limits::excerpt(group)
        )
    } else {
        return None;
    };
    Some(format!(
        "the approval `{}` is refused, nothing ran: {why}, and a call served without a run store cannot tell (serve with a run store to collect it)",
        crate::limits::excerpt(&request.prompt)
    ))
}
