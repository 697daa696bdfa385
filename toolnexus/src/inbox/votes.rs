//! The votes of a request that needs several approvals, as the inbox shows them: on the
//! request page (who approved so far, how many more are needed) and in the JSON API
//! (`approvals`: `{"required","given","missing","votes":[{"by","at","args"}]}`), only for a
//! request that needs more than one approval.

use std::time::SystemTime;

use maud::{Markup, html};
use serde_json::{Value, json};

use crate::store::{StoredRun, Vote};

/// The `approvals` object of the JSON API, for a run whose current request needs several
/// approvals (else `None`: the key is left out).
pub(crate) fn approvals_json(run: &StoredRun) -> Option<Value> {
    (run.approvals_required() > 1).then(|| {
        let votes: Vec<Value> = run
            .votes
            .iter()
            .map(|v| {
                json!({
                    "by": v.by,
                    "at": crate::request::format_rfc3339(v.at),
                    "args": v.args,
                })
            })
            .collect();
        json!({
            "required": run.approvals_required(),
            "given": run.approvals_given(),
            "missing": run.approvals_missing(),
            "votes": votes,
        })
    })
}

/// "1 more approval needed" / "2 more approvals needed".
pub(crate) fn more_needed(missing: u32) -> String {
    if missing == 1 {
        "1 more approval needed".to_owned()
    } else {
        format!("{missing} more approvals needed")
    }
}

/// One vote in words: `alice, 5 minutes ago` (and `, for edited arguments`).
fn vote_line(v: &Vote, now: SystemTime) -> Markup {
    html! {
        li {
            strong { (v.by) } " approved " (super::pages::ago(now, v.at))
            @if v.args != "shown" { span.muted { ", for edited arguments" } }
        }
    }
}

/// The request page's section on its approvals, for a request that needs several.
pub(crate) fn approvals_markup(run: &StoredRun) -> Option<Markup> {
    let required = run.approvals_required();
    if required <= 1 {
        return None;
    }
    let now = SystemTime::now();
    let (given, missing) = (run.approvals_given(), run.approvals_missing());
    Some(html! {
        section.approvals aria-label="Approvals" id="approvals" {
            h2 { "Approvals: " (given) " of " (required) }
            @if run.votes.is_empty() {
                p.muted { "No one has approved yet." }
            } @else {
                ul { @for v in &run.votes { (vote_line(v, now)) } }
            }
            p.notice { (more_needed(missing)) "; each person approves once, and one decline declines." }
        }
    })
}
