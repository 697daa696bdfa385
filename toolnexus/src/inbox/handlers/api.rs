//! The JSON API: the list, one request, and an answer sent as JSON.

use std::time::SystemTime;

use axum::body::{Body, to_bytes};
use axum::extract::{Request as HttpRequest, State};
use axum::http::{StatusCode, header};
use axum::response::Response;
use serde_json::{Value, json};

use super::load::{Flavor, Loaded, load, record};
use super::who::page_with_askers;
use super::{
    BODY_LIMIT, Inbox, json_err, json_out, newest_first, page_of, prefix, query, request_href,
    status_href, store_failed,
};
use crate::inbox::fields::{self, Invalid, Shape};
use crate::inbox::{Access, Target, unix_secs};
use crate::request::{Answer, DeclineReason, Request};
use crate::store::RunEvent;

pub(super) async fn list(State(shared): Inbox, req: HttpRequest) -> Response {
    let (parts, _) = req.into_parts();
    let q = query(&parts);
    if shared.access(&parts, Target::List, &q) != Access::Granted {
        return json_err(StatusCode::FORBIDDEN, "not allowed");
    }
    let runs = match newest_first(&shared, &parts).await {
        Ok(r) => r,
        Err(e) => return json_err(StatusCode::INTERNAL_SERVER_ERROR, &store_failed(&e).1),
    };
    let prefix = prefix(&parts);
    let (seen, now) = (super::seen::last_seen(&parts), std::time::SystemTime::now());
    let page = page_of(&q);
    let (shown, more) = page_with_askers(&shared, &runs, page).await;
    let items: Vec<Value> = shown
        .into_iter()
        .map(|(r, asker)| {
            json!({
                "id": r.request_id,
                "runId": r.run_id,
                "kind": r.kind,
                "prompt": r.prompt,
                "createdAt": rfc3339(r.created_at),
                "expiresAt": r.expires_at.map(rfc3339),
                "approvers": r.approvers,
                "agent": asker.agent,
                "conversationId": asker.conversation,
                "history": history(&r.history),
                "link": request_href(&shared, &prefix, &r.request_id),
                "new": super::seen::is_new(seen, r.created_at),
            })
        })
        .collect();
    let next = more.then_some(page + 1);
    let out = json_out(
        StatusCode::OK,
        &json!({ "requests": items, "page": page, "next": next }),
    );
    super::seen::looked(out, &prefix, now)
}

pub(super) async fn get(State(shared): Inbox, req: HttpRequest) -> Response {
    let (parts, _) = req.into_parts();
    match load(&shared, &parts, Flavor::Json).await {
        Loaded::Closed(r) => r,
        Loaded::Open(run, request, _) => {
            let notifications = super::notified::notifications(
                shared.store.as_ref(),
                &run.info.run_id,
                &run.info.request_id,
            )
            .await;
            let mut out = json!({
                "request": request,
                "runId": run.info.run_id,
                "state": run.info.state.as_str(),
                "agent": run.record.agent(),
                "conversationId": run.record.conversation(),
                "history": history(&run.info.history),
                "notifications": notifications,
            });
            if let Some(approvals) = crate::inbox::votes::approvals_json(&run) {
                out["approvals"] = approvals;
            }
            // a together run: every request of its turn, with whether it is answered
            let turn = super::together::turn_json(&shared, &prefix(&parts), &run);
            if let (false, Some(out)) = (turn.is_null(), out.as_object_mut()) {
                out.insert("turn".to_owned(), turn);
            }
            json_out(StatusCode::OK, &out)
        }
    }
}

/// The answer a JSON body makes, checked against the request's form.
fn answer_from_json(request: &Request, shape: &Shape, body: &Value) -> Result<Answer, Invalid> {
    let bad = |m: &str| Invalid {
        field: "ok".to_owned(),
        message: m.to_owned(),
    };
    let ok = body
        .get("ok")
        .and_then(Value::as_bool)
        .ok_or_else(|| bad("the body needs `ok`: true or false"))?;
    if let Some(id) = body
        .get("id")
        .and_then(Value::as_str)
        .filter(|id| *id != request.id)
    {
        return Err(Invalid {
            field: "id".to_owned(),
            message: format!("the answer's id `{id}` is not this request's"),
        });
    }
    if !ok {
        let reason = match body.get("reason").and_then(Value::as_str) {
            None | Some("declined") => DeclineReason::Declined,
            Some("cancelled") => DeclineReason::Cancelled,
            Some(other) => {
                return Err(Invalid {
                    field: "reason".to_owned(),
                    message: format!("`{other}` is not a reason: use declined or cancelled"),
                });
            }
        };
        return Ok(request.decline(reason));
    }
    let data = body.get("data");
    match shape {
        Shape::Fields(f) => {
            let answer = request.accept(Value::Object(fields::from_json(f, data)?));
            fields::reconcile_checked(request, answer, "output")
        }
        Shape::FreeText => match data {
            Some(Value::String(s)) if !s.trim().is_empty() => Ok(request.accept(s)),
            Some(Value::Object(o)) if o.get("output").and_then(Value::as_str).is_some() => {
                Ok(request.accept(Value::Object(o.clone())))
            }
            _ => Err(Invalid {
                field: "data".to_owned(),
                message: "the answer's data must be the text".to_owned(),
            }),
        },
        // an editable approval takes other arguments as `data.args`
        Shape::Approval(Some(edit)) => {
            let args = data.and_then(|d| d.get(fields::ARGS)).cloned();
            edit.answer(request, args)
        }
        // a reconcile request without a form (its arguments name a credential) takes its
        // action as `data`, checked as the loop checks it
        Shape::AcceptDecline if request.kind == crate::reconcile::KIND_RECONCILE => {
            let answer = data.map_or_else(|| Answer::ok(&request.id), |d| request.accept(d));
            fields::reconcile_checked(request, answer, "data")
        }
        Shape::Approval(None) | Shape::Authorization(_) | Shape::AcceptDecline => {
            Ok(Answer::ok(&request.id))
        }
    }
}

pub(super) async fn answer(State(shared): Inbox, req: HttpRequest) -> Response {
    let (parts, body) = req.into_parts();
    let is_json = parts
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| {
            v.split(';')
                .next()
                .is_some_and(|t| t.trim().eq_ignore_ascii_case("application/json"))
        });
    let (run, request, shape) = match load(&shared, &parts, Flavor::Json).await {
        Loaded::Closed(r) => return r,
        Loaded::Open(run, request, shape) => (run, request, shape),
    };
    if !is_json {
        return json_err(
            StatusCode::UNSUPPORTED_MEDIA_TYPE,
            "the answer must be sent as application/json",
        );
    }
    let Ok(bytes) = to_bytes(Body::new(body), BODY_LIMIT).await else {
        return json_err(StatusCode::PAYLOAD_TOO_LARGE, "the answer is too large");
    };
    let body: Value = match crate::json_text::from_peer_slice(&bytes) {
        Ok(v) => v,
        Err(e) => {
            return json_err(
                StatusCode::BAD_REQUEST,
                &format!("the answer is not JSON: {e}"),
            );
        }
    };
    let choices = super::rules::Choices::of(
        &shared,
        &parts,
        run.record.conversation(),
        run.record.principal(),
    );
    let unprocessable = |invalid| (StatusCode::UNPROCESSABLE_ENTITY, invalid);
    let answer = answer_from_json(&request, &shape, &body)
        .map_err(unprocessable)
        .and_then(|a| super::rules::with_json_remember(a, &request, &choices, &body))
        .and_then(|a| fields::boundary_checked(&request, a).map_err(unprocessable));
    let answer = match answer {
        Ok(a) => a,
        Err((status, invalid)) => {
            return json_out(
                status,
                &json!({ "error": invalid.message, "field": invalid.field }),
            );
        }
    };
    match record(&shared, &parts, answer, choices.granted).await {
        Err((status, text)) => json_err(status, &text),
        Ok(info) => {
            let pickup = super::status::pickup(&shared, info.state).await;
            let mut out = json!({
                "status": "recorded",
                "runId": info.run_id,
                "answeredBy": info.answered_by(),
                "statusLink": status_href(&shared, &prefix(&parts), &request.id, &info.run_id, true),
                "pickup": super::status::pickup_json(pickup),
            });
            if request.required_approvals() > 1 {
                // the votes as they are now: this one among them
                if let Ok(Some(run)) = shared.store.get(&info.run_id).await
                    && let Some(approvals) = crate::inbox::votes::approvals_json(&run)
                {
                    out["approvals"] = approvals;
                }
            }
            json_out(StatusCode::ACCEPTED, &out)
        }
    }
}

/// A run's history as the API shows it: `[{"event","at","request"?,"by"?,"outcome"?}]`, with
/// RFC 3339 times.
pub(super) fn history(events: &[RunEvent]) -> Value {
    events
        .iter()
        .map(|e| {
            let mut v = serde_json::to_value(e).unwrap_or(Value::Null);
            v["at"] = Value::String(rfc3339(e.at));
            v
        })
        .collect()
}

/// RFC 3339 UTC with whole seconds.
pub(super) fn rfc3339(at: SystemTime) -> String {
    let secs = i64::try_from(unix_secs(at)).unwrap_or(i64::MAX);
    time::OffsetDateTime::from_unix_timestamp(secs)
        .unwrap_or(time::OffsetDateTime::UNIX_EPOCH)
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}
