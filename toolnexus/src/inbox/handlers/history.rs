//! The history of answered requests: the page and its JSON, over
//! [`RunStore::list_history`](crate::store::RunStore::list_history).

use axum::extract::{Request as HttpRequest, State};
use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::response::Response;
use serde_json::{Value, json};

use super::api::{history as events, rfc3339};
use super::who::{Asker, stored_runs};
use super::{
    Inbox, denied, html, json_err, json_out, msg, query, request_href, root, store_failed,
};
use crate::inbox::history::{self, Answered, Entry};
use crate::inbox::{Access, Shared, Target};
use crate::store::{HistoryQuery, Page, RunState, StoreError};

/// One page of the history (`?after=<cursor>`) with each run's stored row, or why not.
async fn entries(shared: &Shared, parts: &Parts) -> Result<(Vec<Entry>, Page), StoreError> {
    let q = query(parts);
    let mut hq = HistoryQuery::new().limit(shared.page_size);
    if let Some((_, after)) = q.iter().find(|(k, _)| k == "after") {
        hq = hq.after(after.clone());
    }
    let page = shared.store.list_history(&hq).await?;
    let stored = stored_runs(shared, page.runs.iter().map(|r| r.run_id.as_str())).await;
    let prefix = super::prefix(parts);
    let entries = page
        .runs
        .iter()
        .zip(stored)
        .map(|(info, run)| Entry {
            asker: run
                .as_ref()
                .map(|r| Asker::of(&r.record))
                .unwrap_or_default(),
            answer: Answered::of(info, run.as_ref().and_then(|r| r.answer.as_ref())),
            again: (info.state == RunState::Parked)
                .then(|| request_href(shared, &prefix, &info.request_id)),
            info: info.clone(),
        })
        .collect();
    Ok((entries, page))
}

/// The caller's own query (it may carry what `authorize` checks) without the cursor, as a
/// suffix `&k=v..`.
fn kept_query(parts: &Parts) -> String {
    let mut keep = form_urlencoded::Serializer::new(String::new());
    for (k, v) in query(parts).iter().filter(|(k, _)| k != "after") {
        keep.append_pair(k, v);
    }
    keep.finish()
}

pub(super) async fn page(State(shared): Inbox, req: HttpRequest) -> Response {
    let (parts, _) = req.into_parts();
    let access = shared.access(&parts, Target::History, &query(&parts));
    if access != Access::Granted {
        return denied(access);
    }
    let (entries, page) = match entries(&shared, &parts).await {
        Ok(e) => e,
        Err(e) => {
            let (s, m) = store_failed(&e);
            return msg(s, "Error", "error", &m, None);
        }
    };
    let root = root(&parts);
    let here = format!("{}/history", super::prefix(&parts));
    let keep = kept_query(&parts);
    let with = |extra: Option<&str>| {
        let mut q = form_urlencoded::Serializer::new(String::new());
        if let Some(after) = extra {
            q.append_pair("after", after);
        }
        let q = q.finish();
        let q = [q.as_str(), keep.as_str()]
            .into_iter()
            .filter(|s| !s.is_empty())
            .collect::<Vec<_>>()
            .join("&");
        if q.is_empty() {
            here.clone()
        } else {
            format!("{here}?{q}")
        }
    };
    let (back, rules) = if keep.is_empty() {
        (root, format!("{}/rules", super::prefix(&parts)))
    } else {
        (
            format!("{root}?{keep}"),
            format!("{}/rules?{keep}", super::prefix(&parts)),
        )
    };
    let paged = query(&parts).iter().any(|(k, _)| k == "after");
    let newest = paged.then(|| with(None));
    let older = page.next.as_deref().map(|n| with(Some(n)));
    html(
        StatusCode::OK,
        history::page(
            "History",
            (&entries, page.damaged.len()),
            (&back, &rules),
            newest.as_deref(),
            older.as_deref(),
        ),
    )
}

pub(super) async fn json(State(shared): Inbox, req: HttpRequest) -> Response {
    let (parts, _) = req.into_parts();
    if shared.access(&parts, Target::History, &query(&parts)) != Access::Granted {
        return json_err(StatusCode::FORBIDDEN, "not allowed");
    }
    let (entries, page) = match entries(&shared, &parts).await {
        Ok(e) => e,
        Err(StoreError::Invalid(m)) => return json_err(StatusCode::BAD_REQUEST, &m),
        Err(e) => return json_err(StatusCode::INTERNAL_SERVER_ERROR, &store_failed(&e).1),
    };
    let runs: Vec<Value> = entries
        .iter()
        .map(|e| {
            json!({
                "runId": e.info.run_id,
                "requestId": e.info.request_id,
                "kind": e.info.kind,
                "prompt": e.info.prompt,
                "state": e.info.state.as_str(),
                "agent": e.asker.agent,
                "conversationId": e.asker.conversation,
                "answeredBy": e.answer.by,
                "answeredAt": e.answer.at.map(rfc3339),
                "decision": e.answer.decision.map(history::Decision::as_str),
                "outcome": e.info.outcome(),
                "history": events(&e.info.history),
            })
        })
        .collect();
    let damaged: Vec<Value> = page
        .damaged
        .iter()
        .map(|d| json!({ "runId": d.run_id, "reason": d.reason }))
        .collect();
    json_out(
        StatusCode::OK,
        &json!({ "runs": runs, "damaged": damaged, "next": page.next }),
    )
}
