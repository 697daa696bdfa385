//! A run's progress after the answer to one of its requests: still continuing (the page
//! reloads itself), or how it moved on (its outcome, or its next request).

use axum::extract::{Request as HttpRequest, State};
use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::response::Response;
use serde_json::{Value, json};

use super::api::history;
use super::{
    Inbox, denied_text, html, json_err, json_out, msg, prefix, query, request_href, request_id,
    root, status_href, store_failed,
};
use crate::inbox::{Access, Shared, Target, pages};
use crate::request::Request;
use crate::run::RunResult;
use crate::store::{RunEventKind, RunState, StoredRun};
use pages::Pickup;

/// Where the run is, seen from the request that was answered.
enum Progress {
    /// The request waits for its answer still.
    Waiting,
    /// Answered; a worker resumes (or will resume) the run.
    Continuing,
    /// The run ended.
    Finished(RunResult),
    /// Every resume failed; the run was given up (the last error).
    Failed(String),
    /// The run asks again: its next request.
    Next(Request),
}

fn progress(run: &StoredRun, id: &str) -> Progress {
    match run.info.state {
        RunState::Parked if run.info.request_id == id => Progress::Waiting,
        RunState::Parked => Progress::Next(run.record.pending().clone()),
        RunState::Finished => run
            .result
            .clone()
            .map_or(Progress::Continuing, Progress::Finished),
        RunState::Failed => Progress::Failed(
            run.info
                .failures()
                .last()
                .map_or_else(String::new, |e| (*e).to_owned()),
        ),
        _ => Progress::Continuing,
    }
}

/// Who takes up a run in `state`: an answered run waits for a worker, and the store's
/// heartbeats say whether one is running ([`RunStore::last_worker_seen`]); any other state is
/// a worker's already, and a store that keeps no heartbeats cannot tell.
///
/// [`RunStore::last_worker_seen`]: crate::store::RunStore::last_worker_seen
pub(super) async fn pickup(shared: &Shared, state: RunState) -> Pickup {
    if state != RunState::Answered {
        return Pickup::Continuing;
    }
    match shared.store.last_worker_seen().await {
        Ok(Some(seen)) if seen.is_running_at(std::time::SystemTime::now()) => Pickup::Continuing,
        Ok(seen) => Pickup::NoWorker(seen.map(|s| s.at)),
        Err(e) => {
            tracing::debug!(error = %e, "inbox: the store cannot say whether a worker runs");
            Pickup::Continuing
        }
    }
}

/// The API's words for `pickup`: `{"workerRunning", "workerLastSeen", "message"}`.
pub(super) fn pickup_json(pickup: Pickup) -> Value {
    let (running, seen) = match pickup {
        Pickup::Continuing => (true, None),
        Pickup::NoWorker(seen) => (false, seen),
    };
    json!({
        "workerRunning": running,
        "workerLastSeen": seen.map(super::api::rfc3339),
        "message": pickup.text(),
    })
}

/// The run the status of request `id` is asked of (`?run=`, else the run waiting on `id`),
/// after the caller's access to `id`; the run must have asked `id` (its history says so).
async fn find(shared: &Shared, parts: &Parts) -> Result<(String, StoredRun), (StatusCode, String)> {
    let id = request_id(parts);
    let q = query(parts);
    let access = shared.access(parts, Target::Request(&id), &q);
    if access != Access::Granted {
        return Err((StatusCode::FORBIDDEN, denied_text(access).to_owned()));
    }
    let not_found = || {
        (
            StatusCode::NOT_FOUND,
            "No run asked this request.".to_owned(),
        )
    };
    let run = match q.iter().find(|(k, _)| k == "run") {
        Some((_, run_id)) => shared.store.get(run_id).await,
        None => shared.store.get_by_request(&id).await,
    }
    .map_err(|e| store_failed(&e))?
    .ok_or_else(not_found)?;
    let asked = run.info.request_id == id
        || run.info.history.iter().any(|e| {
            e.event == RunEventKind::Requested && e.request.as_deref() == Some(id.as_str())
        });
    if !asked {
        return Err(not_found());
    }
    Ok((id, run))
}

pub(super) async fn page(State(shared): Inbox, req: HttpRequest) -> Response {
    let (parts, _) = req.into_parts();
    let back = root(&parts);
    let (id, run) = match find(&shared, &parts).await {
        Ok(found) => found,
        Err((status, text)) => return msg(status, "Status", "error", &text, Some(&back)),
    };
    let prefix = prefix(&parts);
    let body = match progress(&run, &id) {
        Progress::Waiting => pages::message(
            "Waiting",
            "notice",
            "This request waits for its answer.",
            Some((&request_href(&shared, &prefix, &id), "Answer it")),
        ),
        Progress::Continuing => {
            let here = status_href(&shared, &prefix, &id, &run.info.run_id, false);
            let pickup = pickup(&shared, run.info.state).await;
            pages::recorded(&here, run.info.answered_by(), &back, pickup)
        }
        Progress::Finished(result) => {
            pages::outcome(result.status.as_str(), &result.text, None, &back)
        }
        Progress::Failed(error) => pages::message(
            "Failed",
            "error",
            &format!("The assistant could not go on, and gave up: {error}"),
            Some((&back, "All requests")),
        ),
        Progress::Next(next) => {
            let href = request_href(&shared, &prefix, &next.id);
            pages::outcome("pending", "", Some((&href, &next)), &back)
        }
    };
    html(StatusCode::OK, body)
}

pub(super) async fn json(State(shared): Inbox, req: HttpRequest) -> Response {
    let (parts, _) = req.into_parts();
    let (id, run) = match find(&shared, &parts).await {
        Ok(found) => found,
        Err((status, text)) => return json_err(status, &text),
    };
    let prefix = prefix(&parts);
    let answer =
        run.info.history.iter().rev().find(|e| {
            e.event == RunEventKind::Answered && e.request.as_deref() == Some(id.as_str())
        });
    let progress = progress(&run, &id);
    let waits = if matches!(progress, Progress::Continuing) {
        pickup_json(pickup(&shared, run.info.state).await)
    } else {
        Value::Null
    };
    let (outcome, next) = match progress {
        Progress::Finished(result) => (
            json!({"status": result.status.as_str(), "text": result.text}),
            Value::Null,
        ),
        Progress::Failed(error) => (json!({"status": "failed", "error": error}), Value::Null),
        Progress::Next(next) => (
            Value::Null,
            json!({
                "request": serde_json::to_value(&next).unwrap_or(Value::Null),
                "link": request_href(&shared, &prefix, &next.id),
            }),
        ),
        Progress::Waiting | Progress::Continuing => (Value::Null, Value::Null),
    };
    let notifications =
        super::notified::notifications(shared.store.as_ref(), &run.info.run_id, &id).await;
    json_out(
        StatusCode::OK,
        &json!({
            "notifications": notifications,
            "runId": run.info.run_id,
            "state": run.info.state.as_str(),
            "answeredBy": answer.and_then(|e| e.by.clone()),
            "history": history(&run.info.history),
            "outcome": outcome,
            "next": next,
            "pickup": waits,
        })
        .as_object()
        .cloned()
        .map(|mut out| {
            if run.info.request_id == id
                && let Some(approvals) = crate::inbox::votes::approvals_json(&run)
            {
                out.insert("approvals".to_owned(), approvals);
            }
            Value::Object(out)
        })
        .unwrap_or_default(),
    )
}
