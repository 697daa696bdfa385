//! The routes: HTML pages and the JSON API over one [`Shared`].
//!
//! One file per concept: [`load`] finds a request, decides whether it can be answered now
//! (for both flavours) and records an answer, [`html`] serves the list and form pages, [`form`]
//! takes a posted form, [`api`] is the JSON API, [`status`] shows a run's progress after its
//! answer, [`history`] lists the answered requests (page and JSON), [`who`] reads who is asking
//! from a run's record, [`rules`] the remembered decisions (the form's choices, the rules
//! page), [`seen`] what is new since the caller last looked, [`notified`] a request's
//! notifications. This file holds the router and the request and response plumbing
//! they share.

mod api;
mod form;
mod history;
mod html;
mod load;
mod notified;
pub(crate) mod rules;
mod seen;
mod status;
mod together;
mod who;

pub(crate) use who::Asker;

use std::sync::Arc;

use axum::Router;
use axum::extract::{OriginalUri, State};
use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};

use super::pages;
use super::{Access, MAX_LISTED, Shared, path_segment};
use crate::store::{PendingQuery, RunInfo, StoreError};

const COOKIE: &str = "toolnexus_inbox";
const BODY_LIMIT: usize = 64 * 1024;

type Inbox = State<Arc<Shared>>;

pub(crate) fn router(shared: Arc<Shared>) -> Router {
    Router::new()
        .route("/", get(html::list))
        .route("/r/{id}", get(html::request).post(form::answer))
        .route("/r/{id}/status", get(status::page))
        .route("/history", get(history::page))
        .route("/api/history", get(history::json))
        .route("/rules", get(rules::page))
        .route("/rules/{id}/revoke", post(rules::revoke))
        .route("/api/rules", get(rules::json))
        .route("/api/requests", get(api::list))
        .route("/api/requests/{id}", get(api::get))
        .route("/api/requests/{id}/answer", post(api::answer))
        .route("/api/requests/{id}/status", get(status::json))
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

/// The path segment after `/r/` or `/api/requests/`, decoded.
fn request_id(parts: &Parts) -> String {
    let path = parts.uri.path();
    let path = path
        .strip_suffix("/answer")
        .or_else(|| path.strip_suffix("/status"))
        .unwrap_or(path);
    last_segment(path)
}

/// The last segment of `path`, percent-decoded.
fn last_segment(path: &str) -> String {
    let seg = path.rsplit('/').next().unwrap_or("");
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

/// The page for a caller without access (`access` says why).
fn denied(access: Access) -> Response {
    msg(
        StatusCode::FORBIDDEN,
        "Not allowed",
        "error",
        denied_text(access),
        None,
    )
}

/// The page for a form body over [`BODY_LIMIT`]; `back` leads to the page it came from.
fn too_large(back: &str) -> Response {
    msg(
        StatusCode::PAYLOAD_TOO_LARGE,
        "Too large",
        "error",
        "The form is too large.",
        Some(back),
    )
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

/// Every pending run the caller of `parts` may answer (by its group), newest first (at most
/// [`MAX_LISTED`]).
async fn newest_first(shared: &Shared, parts: &Parts) -> Result<Vec<RunInfo>, StoreError> {
    let mut all = Vec::new();
    let groups = shared.groups(parts);
    let mut q = PendingQuery::new().limit(500).groups(groups.clone());
    loop {
        let page = shared.store.list_pending(&q).await?;
        all.extend(page.runs);
        match page.next {
            Some(next) if all.len() < MAX_LISTED => {
                q = PendingQuery::new()
                    .limit(500)
                    .groups(groups.clone())
                    .after(next);
            }
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

/// The status page of run `run_id` after the answer to request `id` (`/r/{id}/status` or, for
/// the API, `/api/requests/{id}/status`), with the request's signed query when links are
/// signed.
fn status_href(shared: &Shared, prefix: &str, id: &str, run_id: &str, api: bool) -> String {
    let base = if api {
        format!("{prefix}/api/requests/{}/status", path_segment(id))
    } else {
        format!("{prefix}/r/{}/status", path_segment(id))
    };
    let mut q = form_urlencoded::Serializer::new(String::new());
    q.append_pair("run", run_id);
    let q = q.finish();
    match shared.link_query(id) {
        Some(signed) => format!("{base}?{q}&{signed}"),
        None => format!("{base}?{q}"),
    }
}

fn request_href(shared: &Shared, prefix: &str, id: &str) -> String {
    let base = format!("{prefix}/r/{}", path_segment(id));
    match shared.link_query(id) {
        Some(q) => format!("{base}?{q}"),
        None => base,
    }
}
