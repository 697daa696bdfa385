//! A turn's questions together ([`PendingRun::is_together`](crate::PendingRun::is_together)):
//! which request of a run a page or the API shows, the turn's other questions still waiting,
//! and the turn as JSON.

use serde_json::{Value, json};

use super::request_href;
use crate::inbox::Shared;
use crate::inbox::fields::Shape;
use crate::request::Request;
use crate::store::{RunEventKind, StoredRun};

/// Whether request `id` of `run` has an answer recorded (its run's history says so).
pub(super) fn answered(run: &StoredRun, id: &str) -> bool {
    run.info
        .history
        .iter()
        .any(|e| e.event == RunEventKind::Answered && e.request.as_deref() == Some(id))
}

/// The request `id` of `run` that a page may answer now: the run's pending request, or another
/// request of its together turn; `None` when the run no longer waits on it (answered, or it
/// moved on).
pub(super) fn request_of(run: &StoredRun, id: &str) -> Option<Request> {
    let requests = run.record.requests();
    let request = requests.iter().find(|r| r.id == id)?;
    if run.record.is_together() && answered(run, id) {
        return None;
    }
    Some((*request).clone())
}

/// A turn's other question: its request, form and the call it runs.
pub(super) struct Other {
    pub(super) request: Request,
    pub(super) shape: Shape,
    pub(super) call: Option<(String, Value)>,
}

/// The other questions of `run`'s together turn still waiting besides `shown` (in call order),
/// each that can be shown as a form.
pub(super) fn others(run: &StoredRun, shown: &str) -> Vec<Other> {
    if !run.record.is_together() {
        return Vec::new();
    }
    run.record
        .requests()
        .into_iter()
        .filter(|r| r.id != shown && !answered(run, &r.id))
        .filter_map(|r| {
            let shape = Shape::of(r).ok()?;
            let call = if r.id == run.record.pending().id {
                run.record
                    .tool_calls()
                    .last()
                    .map(|c| (c.name.clone(), c.args.clone()))
            } else {
                run.record
                    .later_call(&r.id)
                    .map(|(name, args)| (name.to_owned(), args.clone()))
            };
            Some(Other {
                request: r.clone(),
                shape,
                call,
            })
        })
        .collect()
}

/// The turn of a together run as JSON, each request with whether it is answered and its link
/// (`null` for a run that waits on one request).
pub(super) fn turn_json(shared: &Shared, prefix: &str, run: &StoredRun) -> Value {
    if !run.record.is_together() {
        return Value::Null;
    }
    run.record
        .requests()
        .into_iter()
        .map(|r| {
            json!({
                "request": r,
                "answered": answered(run, &r.id),
                "link": request_href(shared, prefix, &r.id),
            })
        })
        .collect()
}
