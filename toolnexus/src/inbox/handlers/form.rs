//! A posted HTML form: the CSRF check, the answer it makes, the outcome page.

use axum::body::{Body, to_bytes};
use axum::extract::{Request as HttpRequest, State};
use axum::http::StatusCode;
use axum::response::Response;
use serde_json::Value;

use super::html::{render_form, session};
use super::load::{Flavor, Loaded, load, resume};
use super::{BODY_LIMIT, Inbox, html, msg, prefix, request_href, root};
use crate::inbox::fields::{self, Invalid, Shape};
use crate::inbox::pages;
use crate::request::{Answer, DeclineReason, Request};
use crate::run::RunStatus;

/// The answer a submitted HTML form makes, or the wrong value.
fn answer_from_form(
    request: &Request,
    shape: &Shape,
    pairs: &fields::Pairs,
) -> Result<Answer, Invalid> {
    let decline = pairs.iter().any(|(k, v)| k == "action" && v == "decline");
    if decline {
        return Ok(request.decline(DeclineReason::Declined));
    }
    match shape {
        Shape::Fields(f) => Ok(request.accept(Value::Object(fields::from_form(f, pairs)?))),
        Shape::FreeText => {
            let text = pairs
                .iter()
                .find(|(k, _)| k == "answer")
                .map_or("", |(_, v)| v.as_str());
            if text.trim().is_empty() {
                return Err(Invalid {
                    field: "answer".to_owned(),
                    message: "An answer is required.".to_owned(),
                });
            }
            Ok(request.accept(text))
        }
        Shape::Approval | Shape::Authorization(_) | Shape::AcceptDecline => {
            Ok(Answer::ok(&request.id))
        }
    }
}

pub(super) async fn answer(State(shared): Inbox, req: HttpRequest) -> Response {
    let (parts, body) = req.into_parts();
    let back = root(&parts);
    let (run, request, shape) = match load(&shared, &parts, Flavor::Html).await {
        Loaded::Closed(r) => return r,
        Loaded::Open(run, request, shape) => (run, request, shape),
    };
    let Ok(bytes) = to_bytes(Body::new(body), BODY_LIMIT).await else {
        return msg(
            StatusCode::PAYLOAD_TOO_LARGE,
            "Too large",
            "error",
            "The form is too large.",
            Some(&back),
        );
    };
    let pairs: Vec<(String, String)> = form_urlencoded::parse(&bytes).into_owned().collect();
    let token = pairs
        .iter()
        .find(|(k, _)| k == "csrf")
        .map_or("", |(_, v)| v.as_str());
    let csrf_ok = session(&parts).is_some_and(|s| shared.csrf_ok(&s, &request.id, token));
    if !csrf_ok {
        return msg(
            StatusCode::FORBIDDEN,
            "Not allowed",
            "error",
            "This form is stale or was not sent from this page (its CSRF token does not match). Open the request again.",
            Some(&back),
        );
    }
    let answer = match answer_from_form(&request, &shape, &pairs) {
        Ok(a) => a,
        Err(invalid) => {
            return render_form(
                &shared,
                &parts,
                &request,
                &shape,
                Some(&invalid),
                Some(&pairs),
            );
        }
    };
    let _ = run;
    match resume(&shared, answer).await {
        Err((status, text)) => msg(
            status,
            "Not answered",
            if status == StatusCode::BAD_GATEWAY {
                "error"
            } else {
                "notice"
            },
            &text,
            Some(&back),
        ),
        Ok(result) => {
            let prefix = prefix(&parts);
            let next = result
                .pending
                .as_ref()
                .filter(|_| result.status == RunStatus::Pending)
                .map(|next| (request_href(&shared, &prefix, &next.id), &**next));
            html(
                StatusCode::OK,
                pages::outcome(
                    result.status.as_str(),
                    &result.text,
                    next.as_ref().map(|(h, r)| (h.as_str(), *r)),
                    &back,
                ),
            )
        }
    }
}
