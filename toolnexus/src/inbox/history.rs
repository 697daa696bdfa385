//! The history page: the requests people answered, newest first, each with who asked, who
//! answered it, when, what they decided and how the run went on (maud: every string is
//! escaped).

use std::time::SystemTime;

use maud::html;

use super::handlers::Asker;
use super::pages::{ago, kind_words, layout, short, who_text};
use crate::request::{Answer, DeclineReason};
use crate::store::{RunEventKind, RunInfo, RunState};

/// What the person decided, as far as the store still keeps the answer.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Decision {
    Approved,
    ApprovedWithChanges,
    Answered,
    Declined,
    Cancelled,
    Expired,
}

impl Decision {
    /// The word the JSON API uses.
    pub(crate) fn as_str(self) -> &'static str {
        match self {
            Self::Approved => "approved",
            Self::ApprovedWithChanges => "approved-with-changes",
            Self::Answered => "answered",
            Self::Declined => "declined",
            Self::Cancelled => "cancelled",
            Self::Expired => "expired",
        }
    }

    fn words(self) -> &'static str {
        match self {
            Self::Approved => "Approved",
            Self::ApprovedWithChanges => "Approved with changes",
            Self::Answered => "Answered",
            Self::Declined => "Declined",
            Self::Cancelled => "Cancelled",
            Self::Expired => "Expired unanswered",
        }
    }
}

/// One answered request of the history.
pub(crate) struct Entry {
    pub(crate) info: RunInfo,
    pub(crate) asker: Asker,
    pub(crate) answer: Answered,
    /// A signed link to the run's current request, when it asks again.
    pub(crate) again: Option<String>,
}

/// The last answer of a run: who gave it, when, and what it was (when still kept).
#[derive(Clone, Debug, Default)]
pub(crate) struct Answered {
    pub(crate) by: Option<String>,
    pub(crate) at: Option<SystemTime>,
    pub(crate) decision: Option<Decision>,
    /// Whether it answered an earlier request than the run's current one.
    pub(crate) earlier: bool,
}

impl Answered {
    /// The last answer of the run `info` (its history), with `answer` the answer its row
    /// keeps (that of its current request, until it parks again).
    pub(crate) fn of(info: &RunInfo, answer: Option<&Answer>) -> Self {
        let Some(event) = info
            .history
            .iter()
            .rev()
            .find(|e| matches!(e.event, RunEventKind::Answered | RunEventKind::Expired))
        else {
            return Self::default();
        };
        let earlier = event.request.as_deref() != Some(info.request_id.as_str());
        let decision = if event.event == RunEventKind::Expired {
            Some(Decision::Expired)
        } else {
            answer
                .filter(|a| !earlier && event.request.as_deref() == Some(a.id.as_str()))
                .map(|a| decision(&info.kind, a))
        };
        Self {
            by: event
                .by
                .clone()
                .filter(|_| event.event == RunEventKind::Answered),
            at: Some(event.at),
            decision,
            earlier,
        }
    }
}

fn decision(kind: &str, answer: &Answer) -> Decision {
    if !answer.ok {
        return match answer.reason {
            Some(DeclineReason::Cancelled) => Decision::Cancelled,
            Some(DeclineReason::Expired) => Decision::Expired,
            _ => Decision::Declined,
        };
    }
    let edited = answer
        .data
        .as_ref()
        .is_some_and(|d| d.get(crate::request::DATA_ARGS).is_some());
    match kind {
        "approval" if edited => Decision::ApprovedWithChanges,
        "approval" => Decision::Approved,
        _ => Decision::Answered,
    }
}

/// Where the run is now, in plain words.
pub(crate) fn now_words(info: &RunInfo) -> &'static str {
    match info.state {
        RunState::Parked => "It asks again: waiting for an answer.",
        RunState::Answered => "Recorded: the assistant continues shortly.",
        RunState::Claimed => "The assistant is continuing.",
        RunState::Expired => "The assistant goes on without an answer.",
        RunState::Finished => match info.outcome() {
            Some("done") => "Finished.",
            _ => "Stopped before finishing.",
        },
        RunState::Failed => "Failed: the assistant could not go on.",
        _ => "Damaged: an operator should look at it.",
    }
}

pub(crate) fn page(
    title: &str,
    (entries, damaged): (&[Entry], usize),
    (back, rules): (&str, &str),
    newest: Option<&str>,
    older: Option<&str>,
) -> String {
    let now = SystemTime::now();
    layout(
        title,
        &html! {
            p { a href=(back) { "← waiting requests" } }
            h1 { (title) }
            @if damaged > 0 {
                p.notice role="status" {
                    (damaged) " answered run(s) on this page cannot be read; an operator's list of damaged runs says why."
                }
            }
            @if entries.is_empty() {
                p.muted { "Nothing has been answered yet." }
            } @else {
                ol.history {
                    @for e in entries {
                        li data-run=(e.info.run_id) data-state=(e.info.state.as_str()) {
                            div {
                                span.kind data-kind=(e.info.kind) { (kind_words(&e.info.kind)) } " "
                                span.prompt-line { (short(&e.info.prompt)) }
                            }
                            @if let Some(who) = who_text(&e.asker) { div.who { "From " (who) } }
                            div.decision {
                                @if e.answer.earlier { "An earlier request: " }
                                (e.answer.decision.map_or("Answered", Decision::words))
                                @if let Some(by) = &e.answer.by { " by " (by) }
                                @if let Some(at) = e.answer.at { ", " (ago(now, at)) }
                                "."
                            }
                            div.muted.now {
                                (now_words(&e.info))
                                @if let Some(href) = &e.again { " " a href=(href) { "Answer it" } }
                            }
                        }
                    }
                }
            }
            p {
                @if let Some(newest) = newest { a href=(newest) { "← newest" } " " }
                @if let Some(older) = older { a href=(older) rel="next" { "older →" } }
            }
            p { a href=(rules) id="rules-link" { "Remembered decisions →" } }
        },
    )
}
