//! The routes: HTML pages and the JSON API over one [`Shared`].

use std::sync::Arc;
use std::time::SystemTime;

use axum::Router;
use axum::body::{Body, to_bytes};
use axum::extract::{OriginalUri, Request as HttpRequest, State};
use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::get;
use serde_json::{Value, json};

use super::fields::{self, Invalid, Refusal, Shape};
use super::pages::{self, FormPage, Row};
use super::{Access, MAX_LISTED, Shared, Target, path_segment, unix_secs};
use crate::client::RunStatus;
use crate::error::Error;
use crate::request::{Answer, DeclineReason, Request};
use crate::store::{PendingQuery, RunInfo, RunState, StoreError, StoredRun};

const COOKIE: &str = "toolnexus_inbox";
const BODY_LIMIT: usize = 64 * 1024;

type Inbox = State<Arc<Shared>>;

pub(crate) fn router(shared: Arc<Shared>) -> Router {
    Router::new()
        .route("/", get(list_html))
        .route("/r/{id}", get(request_html).post(answer_html))
        .route("/api/requests", get(list_json))
        .route("/api/requests/{id}", get(get_json))
        .route(
            "/api/requests/{id}/answer",
            axum::routing::post(answer_json),
        )
        .with_state(shared)
}

/// Where the router is mounted: the original path minus the path the router saw.
fn prefix(parts: &Parts) -> String {
    let seen = parts.uri.path();
    let Some(original) = parts.extensions.get::<OriginalUri>() else {
        return String::new();
    };
    let original = original.0.path();
    match original.strip_suffix(seen) {
        Some(p) => p.to_owned(),
        // nested at `/inbox`, the router sees `/inbox` as `/`
        None if seen == "/" => original.trim_end_matches('/').to_owned(),
        None => String::new(),
    }
}

/// The list page's path: the mount point itself, or `/`.
fn root(parts: &Parts) -> String {
    let p = prefix(parts);
    if p.is_empty() { "/".to_owned() } else { p }
}

fn query(parts: &Parts) -> Vec<(String, String)> {
    form_urlencoded::parse(parts.uri.query().unwrap_or("").as_bytes())
        .into_owned()
        .collect()
}

/// The last path segment after `/r/` or `/api/requests/`, decoded.
fn request_id(parts: &Parts) -> String {
    let path = parts.uri.path();
    let seg = path
        .strip_suffix("/answer")
        .unwrap_or(path)
        .rsplit('/')
        .next()
        .unwrap_or("");
    percent_encoding::percent_decode_str(seg)
        .decode_utf8_lossy()
        .into_owned()
}

fn html(status: StatusCode, body: String) -> Response {
    let mut r = (status, body).into_response();
    let h = r.headers_mut();
    h.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("text/html; charset=utf-8"),
    );
    h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static("default-src 'none'; style-src 'unsafe-inline'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"),
    );
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("no-referrer"),
    );
    r
}

fn msg(status: StatusCode, title: &str, class: &str, text: &str, back: Option<&str>) -> Response {
    html(
        status,
        pages::message(title, class, text, back.map(|b| (b, "← all requests"))),
    )
}

fn json_out(status: StatusCode, v: &Value) -> Response {
    let mut r = (status, v.to_string()).into_response();
    r.headers_mut().insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    r.headers_mut()
        .insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    r
}

fn json_err(status: StatusCode, message: &str) -> Response {
    json_out(status, &json!({ "error": message }))
}

fn denied_text(a: Access) -> &'static str {
    match a {
        Access::Forged => "This link is not valid: its signature does not match.",
        Access::LinkExpired => "This link has expired. Ask for a new one.",
        _ => "You need a link or permission to see this.",
    }
}

fn store_failed(e: &StoreError) -> (StatusCode, String) {
    (
        StatusCode::INTERNAL_SERVER_ERROR,
        format!("the run store failed: {e}"),
    )
}

// ---------------------------------------------------------------- list

/// Every pending run, newest first (at most [`MAX_LISTED`]).
async fn newest_first(shared: &Shared) -> Result<Vec<RunInfo>, StoreError> {
    let mut all = Vec::new();
    let mut q = PendingQuery::new().limit(500);
    loop {
        let page = shared.store.list_pending(&q).await?;
        all.extend(page.runs);
        match page.next {
            Some(next) if all.len() < MAX_LISTED => q = PendingQuery::new().limit(500).after(next),
            _ => break,
        }
    }
    all.truncate(MAX_LISTED);
    all.reverse();
    Ok(all)
}

fn page_of(q: &[(String, String)]) -> usize {
    q.iter()
        .find(|(k, _)| k == "page")
        .and_then(|(_, v)| v.parse::<usize>().ok())
        .filter(|p| *p >= 1)
        .unwrap_or(1)
}

fn request_href(shared: &Shared, prefix: &str, id: &str) -> String {
    let base = format!("{prefix}/r/{}", path_segment(id));
    match shared.link_query(id) {
        Some(q) => format!("{base}?{q}"),
        None => base,
    }
}

async fn list_html(State(shared): Inbox, req: HttpRequest) -> Response {
    let (parts, _) = req.into_parts();
    let q = query(&parts);
    let access = shared.access(&parts, Target::List, &q);
    if access != Access::Granted {
        return msg(
            StatusCode::FORBIDDEN,
            "Not allowed",
            "error",
            denied_text(access),
            None,
        );
    }
    let runs = match newest_first(&shared).await {
        Ok(r) => r,
        Err(e) => {
            let (s, m) = store_failed(&e);
            return msg(s, "Error", "error", &m, None);
        }
    };
    let prefix = prefix(&parts);
    let page = page_of(&q);
    let size = shared.page_size;
    let rows: Vec<Row> = runs
        .iter()
        .skip((page - 1) * size)
        .take(size)
        .map(|r| Row {
            href: request_href(&shared, &prefix, &r.request_id),
            kind: r.kind.clone(),
            prompt: r.prompt.clone(),
            created_at: r.created_at,
            expires_at: r.expires_at,
        })
        .collect();
    // keep the caller's own query (it may carry what `authorize` checks), but the page
    let mut keep = form_urlencoded::Serializer::new(String::new());
    for (k, v) in q.iter().filter(|(k, _)| k != "page") {
        keep.append_pair(k, v);
    }
    let keep = keep.finish();
    let keep = if keep.is_empty() {
        keep
    } else {
        format!("&{keep}")
    };
    let root = root(&parts);
    let at = |p: usize| format!("{root}?page={p}{keep}");
    let prev = (page > 1).then(|| at(page - 1));
    let next = (runs.len() > page * size).then(|| at(page + 1));
    html(
        StatusCode::OK,
        pages::list(&shared.title, &rows, page, prev, next),
    )
}

async fn list_json(State(shared): Inbox, req: HttpRequest) -> Response {
    let (parts, _) = req.into_parts();
    let q = query(&parts);
    if shared.access(&parts, Target::List, &q) != Access::Granted {
        return json_err(StatusCode::FORBIDDEN, "not allowed");
    }
    let runs = match newest_first(&shared).await {
        Ok(r) => r,
        Err(e) => return json_err(StatusCode::INTERNAL_SERVER_ERROR, &store_failed(&e).1),
    };
    let prefix = prefix(&parts);
    let page = page_of(&q);
    let size = shared.page_size;
    let items: Vec<Value> = runs
        .iter()
        .skip((page - 1) * size)
        .take(size)
        .map(|r| {
            json!({
                "id": r.request_id,
                "runId": r.run_id,
                "kind": r.kind,
                "prompt": r.prompt,
                "createdAt": rfc3339(r.created_at),
                "expiresAt": r.expires_at.map(rfc3339),
                "link": request_href(&shared, &prefix, &r.request_id),
            })
        })
        .collect();
    let next = (runs.len() > page * size).then_some(page + 1);
    json_out(
        StatusCode::OK,
        &json!({ "requests": items, "page": page, "next": next }),
    )
}

// ---------------------------------------------------------------- one request

/// Why a request cannot be answered now, or its request and form.
enum Loaded {
    Open(Box<StoredRun>, Request, Shape),
    Closed(Response),
}

#[derive(Clone, Copy, PartialEq, Eq)]
enum Flavor {
    Html,
    Json,
}

async fn load(shared: &Shared, parts: &Parts, flavor: Flavor) -> Loaded {
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
                "No request waits under this id: it was answered already, or never existed.",
            );
        }
        Err(e) => {
            let (s, m) = store_failed(&e);
            return fail(s, "Error", "error", &m);
        }
    };
    let request = run.record.pending().clone();
    if request.id != id {
        // the run has moved on to a later request: this one was answered
        return fail(
            StatusCode::CONFLICT,
            "Already answered",
            "notice",
            "This request was already answered.",
        );
    }
    match run.info.state {
        RunState::Parked => {}
        RunState::Expired => {
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
    if request.is_expired_at(SystemTime::now()) {
        return fail(
            StatusCode::GONE,
            "Expired",
            "notice",
            "This request has expired; it can no longer be answered.",
        );
    }
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

fn session(parts: &Parts) -> Option<String> {
    parts
        .headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|c| c.trim().split_once('='))
        .find(|(k, v)| *k == COOKIE && v.len() == 64 && v.bytes().all(|b| b.is_ascii_hexdigit()))
        .map(|(_, v)| v.to_owned())
}

fn action(parts: &Parts) -> String {
    let path = parts
        .extensions
        .get::<OriginalUri>()
        .map_or_else(|| parts.uri.path().to_owned(), |o| o.0.path().to_owned());
    match parts.uri.query() {
        Some(q) => format!("{path}?{q}"),
        None => path,
    }
}

fn render_form(
    shared: &Shared,
    parts: &Parts,
    request: &Request,
    shape: &Shape,
    error: Option<&Invalid>,
    submitted: pages::Submitted<'_>,
) -> Response {
    let (sess, fresh) = match session(parts) {
        Some(s) => (s, false),
        None => (super::hex(&super::random_bytes()), true),
    };
    let page = FormPage {
        request,
        shape,
        action: action(parts),
        csrf: shared.csrf_token(&sess, &request.id),
        error,
        submitted,
        back: root(parts),
    };
    let status = if error.is_some() {
        StatusCode::UNPROCESSABLE_ENTITY
    } else {
        StatusCode::OK
    };
    let mut r = html(status, pages::form(&page));
    if fresh {
        let path = prefix(parts);
        let path = if path.is_empty() {
            "/".to_owned()
        } else {
            path
        };
        let cookie = format!("{COOKIE}={sess}; Path={path}; HttpOnly; SameSite=Strict");
        if let Ok(v) = HeaderValue::from_str(&cookie) {
            r.headers_mut().insert(header::SET_COOKIE, v);
        }
    }
    r
}

async fn request_html(State(shared): Inbox, req: HttpRequest) -> Response {
    let (parts, _) = req.into_parts();
    match load(&shared, &parts, Flavor::Html).await {
        Loaded::Closed(r) => r,
        Loaded::Open(_, request, shape) => {
            render_form(&shared, &parts, &request, &shape, None, None)
        }
    }
}

async fn get_json(State(shared): Inbox, req: HttpRequest) -> Response {
    let (parts, _) = req.into_parts();
    match load(&shared, &parts, Flavor::Json).await {
        Loaded::Closed(r) => r,
        Loaded::Open(run, request, _) => json_out(
            StatusCode::OK,
            &json!({ "request": request, "runId": run.info.run_id, "state": run.info.state.as_str() }),
        ),
    }
}

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
        Shape::Fields(f) => Ok(request.accept(Value::Object(fields::from_json(f, data)?))),
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
        Shape::Approval | Shape::Authorization(_) | Shape::AcceptDecline => {
            Ok(Answer::ok(&request.id))
        }
    }
}

/// Claims and resumes the run; the outcome, or why not.
async fn resume(
    shared: &Shared,
    answer: Answer,
) -> Result<crate::client::RunResult, (StatusCode, String)> {
    shared
        .client
        .answer(shared.store.as_ref(), answer, &shared.toolkit)
        .await
        .map_err(|e| match e {
            Error::Store(StoreError::AlreadyClaimed { .. }) => (
                StatusCode::CONFLICT,
                "This request was already answered.".to_owned(),
            ),
            Error::Store(StoreError::Expired { .. }) => (
                StatusCode::GONE,
                "This request has expired; it can no longer be answered.".to_owned(),
            ),
            Error::Store(StoreError::NotFound { .. }) => (
                StatusCode::NOT_FOUND,
                "No request waits under this id: it was answered already, or never existed."
                    .to_owned(),
            ),
            other => (
                StatusCode::BAD_GATEWAY,
                format!("The answer was taken, but the run failed to go on: {other}"),
            ),
        })
}

async fn answer_html(State(shared): Inbox, req: HttpRequest) -> Response {
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
                .map(|next| (request_href(&shared, &prefix, &next.id), next));
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

async fn answer_json(State(shared): Inbox, req: HttpRequest) -> Response {
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
    let (_, request, shape) = match load(&shared, &parts, Flavor::Json).await {
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
    let body: Value = match serde_json::from_slice(&bytes) {
        Ok(v) => v,
        Err(e) => {
            return json_err(
                StatusCode::BAD_REQUEST,
                &format!("the answer is not JSON: {e}"),
            );
        }
    };
    let answer = match answer_from_json(&request, &shape, &body) {
        Ok(a) => a,
        Err(invalid) => {
            return json_out(
                StatusCode::UNPROCESSABLE_ENTITY,
                &json!({ "error": invalid.message, "field": invalid.field }),
            );
        }
    };
    match resume(&shared, answer).await {
        Err((status, text)) => json_err(status, &text),
        Ok(result) => {
            let mut out = json!({ "status": result.status.as_str(), "text": result.text });
            if let Some(next) = result
                .pending
                .as_ref()
                .filter(|_| result.status == RunStatus::Pending)
            {
                out["request"] = serde_json::to_value(next).unwrap_or(Value::Null);
                out["link"] = Value::String(request_href(&shared, &prefix(&parts), &next.id));
            }
            json_out(StatusCode::OK, &out)
        }
    }
}

/// RFC 3339 UTC with whole seconds.
fn rfc3339(at: SystemTime) -> String {
    let secs = i64::try_from(unix_secs(at)).unwrap_or(i64::MAX);
    time::OffsetDateTime::from_unix_timestamp(secs)
        .unwrap_or(time::OffsetDateTime::UNIX_EPOCH)
        .format(&time::format_description::well_known::Rfc3339)
        .unwrap_or_default()
}
