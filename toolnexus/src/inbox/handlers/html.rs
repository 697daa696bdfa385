//! The HTML pages: the list of pending requests and one request as a form.

use axum::extract::{OriginalUri, Request as HttpRequest, State};
use axum::http::request::Parts;
use axum::http::{HeaderValue, StatusCode, header};
use axum::response::Response;

use super::load::{Flavor, Loaded, load};
use super::who::{Asker, page_with_askers};
use super::{
    COOKIE, Inbox, denied, html, msg, newest_first, page_of, prefix, query, request_href, root,
    store_failed,
};
use crate::inbox::fields::{Invalid, Shape};
use crate::inbox::pages::{self, FormPage, Row};
use crate::inbox::{Access, Shared, Target};
use crate::request::Request;
use crate::store::StoredRun;

pub(super) async fn list(State(shared): Inbox, req: HttpRequest) -> Response {
    let (parts, _) = req.into_parts();
    let q = query(&parts);
    let access = shared.access(&parts, Target::List, &q);
    if access != Access::Granted {
        return denied(access);
    }
    let runs = match newest_first(&shared, &parts).await {
        Ok(r) => r,
        Err(e) => {
            let (s, m) = store_failed(&e);
            return msg(s, "Error", "error", &m, None);
        }
    };
    let prefix = prefix(&parts);
    let (seen, now) = (super::seen::last_seen(&parts), std::time::SystemTime::now());
    let page = page_of(&q);
    let (shown, more) = page_with_askers(&shared, &runs, page).await;
    let rows: Vec<Row> = shown
        .into_iter()
        .map(|(r, asker)| Row {
            href: request_href(&shared, &prefix, &r.request_id),
            kind: r.kind.clone(),
            prompt: r.prompt.clone(),
            created_at: r.created_at,
            expires_at: r.expires_at,
            asker,
            new: super::seen::is_new(seen, r.created_at),
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
    let next = more.then(|| at(page + 1));
    let with_query = |path: &str| match keep.strip_prefix('&') {
        Some(q) => format!("{prefix}{path}?{q}"),
        None => format!("{prefix}{path}"),
    };
    let (history, rules) = (with_query("/history"), with_query("/rules"));
    let page = html(
        StatusCode::OK,
        pages::list(&shared.title, &rows, page, (prev, next), &history, &rules),
    );
    super::seen::looked(page, &prefix, now)
}

pub(super) fn session(parts: &Parts) -> Option<String> {
    super::seen::cookies(parts, COOKIE)
        .find(|v| v.len() == 64 && v.bytes().all(|b| b.is_ascii_hexdigit()))
        .map(str::to_owned)
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

/// The caller's session, or a fresh one (`true`: its cookie is still to be set).
pub(super) fn session_or_fresh(parts: &Parts) -> (String, bool) {
    match session(parts) {
        Some(s) => (s, false),
        None => (crate::util::hex(&crate::inbox::random_bytes()), true),
    }
}

/// Sets the session cookie `sess` on `r`, for the paths where the router is mounted.
pub(super) fn set_session_cookie(r: &mut Response, parts: &Parts, sess: &str) {
    let path = root(parts);
    let cookie = format!("{COOKIE}={sess}; Path={path}; HttpOnly; SameSite=Strict");
    if let Ok(v) = HeaderValue::from_str(&cookie) {
        r.headers_mut().insert(header::SET_COOKIE, v);
    }
}

pub(super) fn render_form(
    shared: &Shared,
    parts: &Parts,
    run: &StoredRun,
    request: &Request,
    shape: &Shape,
    error: Option<&Invalid>,
    submitted: pages::Submitted<'_>,
) -> Response {
    let (sess, fresh) = session_or_fresh(parts);
    // a together turn: its other questions, each with its own form, on the same page
    let others = super::together::others(run, &request.id);
    let prefix = super::prefix(parts);
    let also = others
        .iter()
        .map(|o| FormPage {
            request: &o.request,
            shape: &o.shape,
            action: super::request_href(shared, &prefix, &o.request.id),
            csrf: shared.csrf_token(&sess, &o.request.id),
            error: None,
            submitted: None,
            back: root(parts),
            call: o.call.as_ref().map(|(name, args)| (name.as_str(), args)),
            run_id: &run.info.run_id,
            asker: Asker::of(&run.record),
            remember: super::rules::Choices::default(),
            // votes are kept for the run's first request only
            approvals: None,
            also: Vec::new(),
        })
        .collect();
    let page = FormPage {
        request,
        shape,
        action: action(parts),
        csrf: shared.csrf_token(&sess, &request.id),
        error,
        submitted,
        back: root(parts),
        // the halted call's record (checked against the transcript when the record loaded)
        call: if request.id == run.record.pending().id {
            run.record
                .tool_calls()
                .last()
                .map(|c| (c.name.as_str(), &c.args))
        } else {
            run.record.later_call(&request.id)
        },
        run_id: &run.info.run_id,
        asker: Asker::of(&run.record),
        remember: if request.kind == crate::request::KIND_APPROVAL {
            super::rules::Choices::of(
                shared,
                parts,
                run.record.conversation(),
                run.record.principal(),
            )
        } else {
            super::rules::Choices::default()
        },
        approvals: crate::inbox::votes::approvals_markup(run),
        also,
    };
    let status = if error.is_some() {
        StatusCode::UNPROCESSABLE_ENTITY
    } else {
        StatusCode::OK
    };
    let mut r = html(status, pages::form(&page));
    if fresh {
        set_session_cookie(&mut r, parts, &sess);
    }
    r
}

pub(super) async fn request(State(shared): Inbox, req: HttpRequest) -> Response {
    let (parts, _) = req.into_parts();
    match load(&shared, &parts, Flavor::Html).await {
        Loaded::Closed(r) => r,
        Loaded::Open(run, request, shape) => {
            render_form(&shared, &parts, &run, &request, &shape, None, None)
        }
    }
}
