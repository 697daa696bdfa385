//! A posted HTML form: the CSRF check, the answer it makes, the page that says it is recorded.

use axum::body::{Body, to_bytes};
use axum::extract::{Request as HttpRequest, State};
use axum::http::StatusCode;
use axum::response::Response;
use serde_json::Value;

use super::html::{render_form, session};
use super::load::{Flavor, Loaded, load, record};
use super::{BODY_LIMIT, Inbox, html, msg, prefix, root, status_href, too_large};
use crate::inbox::fields::{self, Invalid, Shape};
use crate::inbox::pages;
use crate::request::{Answer, DeclineReason, Request};

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
        Shape::Fields(f) => {
            let answer = request.accept(Value::Object(fields::from_form(f, pairs)?));
            fields::reconcile_checked(request, answer, "output")
        }
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
        // the typed fields (a posted `args` JSON text, as the page sent before, still counts)
        Shape::Approval(Some(edit))
            if edit.fields.is_some()
                && !pairs
                    .iter()
                    .any(|(k, v)| k == fields::ARGS && !v.trim().is_empty()) =>
        {
            let fields = edit.fields.as_deref().unwrap_or_default();
            // a form without the argument fields (a script's plain approve) approves the
            // call as proposed, as an empty JSON field did
            let sent = pairs
                .iter()
                .any(|(k, _)| k == fields::ARGS_FORM || fields.iter().any(|f| &f.name == k));
            if !sent {
                return edit.answer(request, None);
            }
            edit.answer(request, Some(edit.args_of_fields(fields, pairs)?))
        }
        Shape::Approval(Some(edit)) => {
            let text = pairs
                .iter()
                .find(|(k, _)| k == fields::ARGS)
                .map_or("", |(_, v)| v.as_str());
            edit.answer(request, fields::Edit::parse(text)?)
        }
        // a reconcile request without a form cannot say its action here: refused, never a
        // silent failure of the call (declining it fails the call; the JSON API takes one)
        Shape::Approval(None) | Shape::Authorization(_) | Shape::AcceptDecline => {
            fields::reconcile_checked(request, Answer::ok(&request.id), "action")
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
        return too_large(&back);
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
    let choices = super::rules::Choices::of(
        &shared,
        &parts,
        run.record.conversation(),
        run.record.principal(),
    );
    let remembered = answer_from_form(&request, &shape, &pairs).and_then(|answer| {
        if !matches!(shape, Shape::Approval(_)) {
            return Ok(answer);
        }
        let edited = answer.data.as_ref().and_then(|d| d.get("args")).is_some();
        super::rules::with_remember(answer, &choices, &pairs, edited)
    });
    // every answer passes the trust boundary's walk before it is recorded
    let remembered = remembered.and_then(|a| fields::boundary_checked(&request, a));
    let answer = match remembered {
        Ok(a) => a,
        Err(invalid) => {
            return render_form(
                &shared,
                &parts,
                &run,
                &request,
                &shape,
                Some(&invalid),
                Some(&pairs),
            );
        }
    };
    match record(&shared, &parts, answer, choices.granted).await {
        Err((status, text)) => msg(status, "Not answered", "notice", &text, Some(&back)),
        Ok(info) if info.state == crate::store::RunState::Parked => {
            // a vote of a request that needs several approvals: the run waits for the others
            let missing = match shared.store.get(&info.run_id).await {
                Ok(Some(run)) => run.approvals_missing(),
                _ => 1,
            };
            msg(
                StatusCode::OK,
                "Approval recorded",
                "notice",
                &format!(
                    "Your approval was recorded; {}. The request waits for them.",
                    crate::inbox::votes::more_needed(missing)
                ),
                Some(&back),
            )
        }
        Ok(info) => {
            let status = status_href(&shared, &prefix(&parts), &request.id, &info.run_id, false);
            let pickup = super::status::pickup(&shared, info.state).await;
            html(
                StatusCode::OK,
                pages::recorded(&status, info.answered_by(), &back, pickup),
            )
        }
    }
}
