//! One request, loaded for a page or the API: whether it can be answered now, and recording
//! an answer to it.

use std::time::SystemTime;

use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::response::Response;

use super::{denied_text, json_err, msg, query, request_id, root, store_failed};
use crate::inbox::fields::{Refusal, Shape};
use crate::inbox::{Access, Shared, Target};
use crate::request::{Answer, Request};
use crate::store::{RunEventKind, RunInfo, RunState, StoreError, StoredRun};

/// Why a request cannot be answered now, or its request and form.
pub(super) enum Loaded {
    Open(Box<StoredRun>, Request, Shape),
    Closed(Response),
}

#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Flavor {
    Html,
    Json,
}

pub(super) async fn load(shared: &Shared, parts: &Parts, flavor: Flavor) -> Loaded {
    let id = request_id(parts);
    let q = query(parts);
    let back = root(parts);
    let fail = |status: StatusCode, title: &str, class: &str, text: &str| {
        Loaded::Closed(match flavor {
            Flavor::Html => msg(status, title, class, text, Some(&back)),
            Flavor::Json => json_err(status, text),
        })
    };
    // the capability first: without it, say nothing about whether the request exists
    let access = shared.access(parts, Target::Request(&id), &q);
    if access != Access::Granted {
        return fail(
            StatusCode::FORBIDDEN,
            "Not allowed",
            "error",
            denied_text(access),
        );
    }
    let run = match shared.store.get_by_request(&id).await {
        Ok(Some(run)) => run,
        Ok(None) => {
            return fail(
                StatusCode::NOT_FOUND,
                "Not found",
                "error",
                "No request was made under this id (or its run was deleted).",
            );
        }
        Err(e) => {
            let (s, m) = store_failed(&e);
            return fail(s, "Error", "error", &m);
        }
    };
    // the pending request, or another question of its together turn still waiting
    let Some(request) = super::together::request_of(&run, &id) else {
        // the run has moved on to a later request: this one was answered
        return fail(
            StatusCode::CONFLICT,
            "Already answered",
            "notice",
            "This request was already answered.",
        );
    };
    let expired_here = run
        .info
        .history
        .iter()
        .any(|e| e.event == RunEventKind::Expired && e.request.as_deref() == Some(id.as_str()));
    match run.info.state {
        RunState::Parked => {}
        // expired, and maybe resumed with `declined/expired` by a worker since
        _ if expired_here || run.info.state == RunState::Expired => {
            return fail(
                StatusCode::GONE,
                "Expired",
                "notice",
                "This request has expired; it can no longer be answered.",
            );
        }
        _ => {
            return fail(
                StatusCode::CONFLICT,
                "Already answered",
                "notice",
                "This request was already answered.",
            );
        }
    }
    if let Some((status, title, class, text)) = closed_now(shared, parts, &run.info) {
        return fail(status, title, class, &text);
    }
    // shown as it stands now: an escalation's group and deadline
    let request = current(request, &run.info);
    match Shape::of(&request) {
        Ok(shape) => Loaded::Open(Box::new(run), request, shape),
        Err(Refusal::Credential(why)) => fail(
            StatusCode::UNPROCESSABLE_ENTITY,
            "Refused",
            "error",
            &format!(
                "This request cannot be answered here: {why}. Secrets must go through an authorization link, never a form."
            ),
        ),
        Err(Refusal::Unsupported(why)) => fail(
            StatusCode::UNPROCESSABLE_ENTITY,
            "Cannot show this request",
            "error",
            &format!("This request cannot be shown as a form: {why}."),
        ),
    }
}

/// Why the parked run `info` cannot be answered by the caller of `parts` now: past its current
/// deadline (an escalation moves it past the request's `expiresAt`), or its group is not theirs.
fn closed_now(
    shared: &Shared,
    parts: &Parts,
    info: &RunInfo,
) -> Option<(StatusCode, &'static str, &'static str, String)> {
    if info.expires_at.is_some_and(|at| SystemTime::now() > at) {
        return Some((
            StatusCode::GONE,
            "Expired",
            "notice",
            "This request has expired; it can no longer be answered.".to_owned(),
        ));
    }
    let group = info.approvers.as_deref()?;
    let answerer = shared.answerer_of(parts, &info.request_id, false);
    (!answerer.may_answer(Some(group))).then(|| {
        (
            StatusCode::FORBIDDEN,
            "Not your group",
            "error",
            crate::inbox::groups::not_your_group(group),
        )
    })
}

/// `request` with the group and deadline of its run's current step (`info`), which an
/// escalation moved (the record keeps the request as it was made).
fn current(request: Request, info: &RunInfo) -> Request {
    request.standing_now(info.approvers.as_deref(), info.expires_at)
}

/// Records the answer (by whom `parts` says; `granted`: the host's `grants` check lets them
/// make rules for the run's principal); the run's columns, or why not.
pub(super) async fn record(
    shared: &Shared,
    parts: &Parts,
    answer: Answer,
    granted: bool,
) -> Result<RunInfo, (StatusCode, String)> {
    let answerer = shared.answerer_of(parts, &answer.id, granted);
    let recorded = shared.store.submit_as(&answer, &answerer).await;
    recorded.map_err(|e| match e {
        StoreError::NotAllowed(why) => (StatusCode::FORBIDDEN, why),
        StoreError::AlreadyAnswered { .. } => (
            StatusCode::CONFLICT,
            "This request was already answered.".to_owned(),
        ),
        StoreError::Expired { .. } => (
            StatusCode::GONE,
            "This request has expired; it can no longer be answered.".to_owned(),
        ),
        StoreError::NotFound { .. } => (
            StatusCode::NOT_FOUND,
            "No request was made under this id (or its run was deleted).".to_owned(),
        ),
        // refused at the door (an answer too large, an `answered_by` over
        // `MAX_NAME_BYTES`): nothing was recorded
        StoreError::Invalid(why) => (
            StatusCode::UNPROCESSABLE_ENTITY,
            format!("The answer was not recorded: {why}."),
        ),
        other => store_failed(&other),
    })
}
