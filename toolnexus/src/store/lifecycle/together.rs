//! A turn's questions together: the answer to one of the several requests a run parked with
//! ([`PendingRun::is_together`]), as a pure transition. Each answer is checked on its own
//! (the run still parked, the request one of the run's, not answered before, not past its own
//! `expiresAt`) and recorded on its own: the run's row gains an `Answered` event and one more
//! version (the guard: no other change came between the read and this one), the request's
//! turn row its sealed answer; the answer that completes the turn also makes the run
//! answered, its `answer` column the first request's answer, so a worker claims it as any
//! answered run.

use super::{Change, Guard, Key, refusal};
use crate::request::{Answer, DeclineReason};
use crate::run::PendingRun;
use crate::store::together::TurnRow;
use crate::store::{RawRow, RunEvent, RunEventKind, RunState, Seal, StoreError};

/// What one answer to a together run does: the run row's change and the request's turn row
/// as it becomes; `refused`: the answer came after its request's `expiresAt`, so the request
/// is recorded declined (`expired`) and the caller is told so.
#[derive(Debug)]
pub(crate) struct TurnAnswer {
    pub(crate) change: Change,
    pub(crate) row: TurnRow,
    pub(crate) refused: Option<StoreError>,
}

/// The answer `answer`, given by `by` at `now`, to one request of the together run `row`
/// (as read, with its `record` and its requests' turn rows `turn`).
///
/// # Errors
///
/// [`StoreError::AlreadyAnswered`] when the run is no longer parked or the request has an
/// answer already (a replay), [`StoreError::Expired`] when the run expired,
/// [`StoreError::NotFound`] when the request is not one of the run's.
pub(crate) fn answer_one(
    row: &RawRow,
    record: &PendingRun,
    turn: &[TurnRow],
    answer: &Answer,
    by: &str,
    seal: &Seal,
    now: i64,
) -> Result<TurnAnswer, StoreError> {
    let not_found = || StoreError::NotFound {
        key: answer.id.clone(),
    };
    let current = turn
        .iter()
        .find(|t| t.request_id == answer.id)
        .ok_or_else(not_found)?;
    let state = row.info()?.state;
    if current.answer.is_some() {
        // a replay: the request has its answer
        return Err(StoreError::AlreadyAnswered {
            run_id: row.run_id.clone(),
            request_id: answer.id.clone(),
            state,
        });
    }
    if state != RunState::Parked {
        return Err(refusal(&row.run_id, &answer.id, state));
    }
    let requests = record.requests();
    let Some(request) = requests.iter().find(|r| r.id == answer.id) else {
        // a request of an earlier turn that went on without its answer: it expired
        return Err(StoreError::Expired {
            run_id: row.run_id.clone(),
        });
    };
    // past its own deadline: recorded declined (expired), the answer refused; the run's own
    // request by the row's deadline, which an escalation moves (the record keeps the request
    // as it was sealed)
    let late = if request.id == row.request_id {
        row.expires_at.is_some_and(|at| at <= now)
    } else {
        request.expires_at.as_ref().is_some_and(|_| {
            request
                .expires_at_time()
                .is_none_or(|at| crate::store::millis(at) <= now)
        })
    };
    let (kept, refused) = if late {
        (
            Answer::decline(&answer.id, DeclineReason::Expired),
            Some(StoreError::Expired {
                run_id: row.run_id.clone(),
            }),
        )
    } else {
        (answer.clone(), None)
    };
    let sealed = seal.answer(&kept);
    let mut event = RunEvent::new(RunEventKind::Answered, now).request(&answer.id);
    if refused.is_none() {
        event = event.by(by);
    }
    let mut change = Change::new(
        Key::Run(row.run_id.clone()),
        now,
        Guard::Version(row.version),
        &[event],
    );
    let complete = turn
        .iter()
        .all(|t| t.request_id == answer.id || t.answer.is_some());
    if complete {
        let first = record.pending().id.as_str();
        let first_answer = if first == answer.id {
            Some(sealed.clone())
        } else {
            turn.iter()
                .find(|t| t.request_id == first)
                .and_then(|t| t.answer.clone())
        };
        change.set.state = Some(RunState::Answered);
        change.set.answer = Some(first_answer.ok_or_else(|| StoreError::Corrupt {
            run_id: row.run_id.clone(),
            message: "a together run's first request has no turn row".to_owned(),
        })?);
    }
    Ok(TurnAnswer {
        change,
        row: TurnRow {
            request_id: answer.id.clone(),
            position: current.position,
            answer: Some(sealed),
            answered_by: refused.is_none().then(|| by.to_owned()),
            answered_at: Some(now),
        },
        refused,
    })
}

/// Whether `by` may give `answer` to a request of the together run `record`, checked before
/// anything is recorded: a request that refuses its requester refuses the run's principal,
/// and an acceptance of an approval that needs several approvals is refused (a turn's
/// requests keep one answer each, not votes: one acceptance must not stand for several).
///
/// # Errors
///
/// [`StoreError::NotAllowed`], nothing recorded.
pub(crate) fn govern(record: &PendingRun, answer: &Answer, by: &str) -> Result<(), StoreError> {
    let requests = record.requests();
    let Some(request) = requests.iter().find(|r| r.id == answer.id) else {
        return Ok(());
    };
    if request.not_by_requester() && record.principal() == Some(by) {
        return Err(super::votes::by_requester(&answer.id, by));
    }
    let required = request.required_approvals();
    if required > 1 && answer.ok {
        return Err(StoreError::NotAllowed(format!(
            "the answer to `{}` is refused, nothing was recorded: it needs {required} approvals, and a request of a turn parked together takes one answer; decline it, or park the turn's requests one at a time",
            crate::limits::excerpt(&answer.id)
        )));
    }
    Ok(())
}

/// The answers a claim of a together run resumes with besides its first request's, in call
/// order, opened under `seal`: a request left unanswered (the run expired) reads as declined,
/// `expired`.
///
/// # Errors
///
/// [`StoreError::Corrupt`] when a kept answer does not open (an edit at rest).
pub(crate) fn other_answers(
    run_id: &str,
    record: &PendingRun,
    turn: &[TurnRow],
    seal: &Seal,
) -> Result<Vec<Answer>, StoreError> {
    let requests = record.requests();
    requests
        .iter()
        .skip(1)
        .map(|request| {
            match turn
                .iter()
                .find(|t| t.request_id == request.id)
                .and_then(|t| t.answer.as_deref())
            {
                Some(text) => seal.open_answer(run_id, &request.id, text),
                None => Ok(Answer::decline(&request.id, DeclineReason::Expired)),
            }
        })
        .collect()
}

/// The answer the first request of a together run's turn has on its turn row, opened under
/// `seal`, and when it was recorded (ms); `None` while it has none. A claim resumes with it
/// rather than the run's `answer` column, which an expiry of the incomplete turn sets to
/// `declined/expired` whether or not the first request was answered in time.
///
/// # Errors
///
/// [`StoreError::Corrupt`] when the kept answer does not open (an edit at rest).
pub(crate) fn first_answer(
    run_id: &str,
    record: &PendingRun,
    turn: &[TurnRow],
    seal: &Seal,
) -> Result<Option<(Answer, Option<i64>)>, StoreError> {
    let first = record.pending().id.as_str();
    turn.iter()
        .find(|t| t.request_id == first)
        .and_then(|t| t.answer.as_deref().map(|text| (text, t.answered_at)))
        .map(|(text, at)| Ok((seal.open_answer(run_id, first, text)?, at)))
        .transpose()
}

/// The turn rows a together run keeps for its requests `request_ids` (a park's, or a finish
/// that parks again on several), in call order: each at its place, none answered.
pub(crate) fn turn_rows(request_ids: Vec<String>) -> Vec<TurnRow> {
    request_ids
        .into_iter()
        .enumerate()
        .map(|(position, request_id)| TurnRow {
            request_id,
            position: i64::try_from(position).unwrap_or(i64::MAX),
            answer: None,
            answered_by: None,
            answered_at: None,
        })
        .collect()
}

/// Whether run `run_id` may keep `rows`: none of their requests is another run's
/// (`holder(request)`: the run whose turn row it is, if any). A request the run holds
/// already is kept as it is.
///
/// # Errors
///
/// [`StoreError::Conflict`] naming the first request, in call order, another run holds.
pub(crate) fn check_link<'h>(
    run_id: &str,
    rows: &[TurnRow],
    holder: impl Fn(&str) -> Option<&'h str>,
) -> Result<(), StoreError> {
    match rows
        .iter()
        .find(|t| holder(&t.request_id).is_some_and(|run| run != run_id))
    {
        Some(taken) => Err(StoreError::Conflict(format!(
            "request `{}` is already the request of another run: request ids name one run",
            taken.request_id
        ))),
        None => Ok(()),
    }
}

/// Whether the turn row `kept`, of run `holder`, takes an answer of run `run_id`: it is that
/// run's, and not answered yet (else another answer came between, and the answer is read
/// again).
pub(crate) fn takes_answer(holder: &str, kept: &TurnRow, run_id: &str) -> bool {
    holder == run_id && kept.answer.is_none()
}

/// The order a run's turn rows read in: by place, then by request id.
pub(crate) fn turn_order(a: &TurnRow, b: &TurnRow) -> std::cmp::Ordering {
    (a.position, &a.request_id).cmp(&(b.position, &b.request_id))
}

#[cfg(test)]
mod link_tests {
    use super::{check_link, takes_answer, turn_order, turn_rows};
    use crate::store::StoreError;

    fn ids(ids: &[&str]) -> Vec<String> {
        ids.iter().map(|&s| s.to_owned()).collect()
    }

    #[test]
    fn a_turns_rows_take_their_places_in_call_order_unanswered() {
        let rows = turn_rows(ids(&["b", "a", "c"]));
        let places: Vec<(&str, i64)> = rows
            .iter()
            .map(|t| (t.request_id.as_str(), t.position))
            .collect();
        assert_eq!(places, [("b", 0), ("a", 1), ("c", 2)]);
        assert!(
            rows.iter()
                .all(|t| t.answer.is_none() && t.answered_by.is_none() && t.answered_at.is_none())
        );
        let mut sorted = rows.clone();
        sorted.reverse();
        sorted.sort_by(turn_order);
        assert_eq!(sorted, rows);
    }

    #[test]
    fn a_request_another_run_holds_refuses_the_link_naming_the_first() {
        let rows = turn_rows(ids(&["a", "b", "c"]));
        let holder = |id: &str| match id {
            "a" => Some("run-1"),
            "b" | "c" => Some("run-2"),
            _ => None,
        };
        assert_eq!(
            check_link("run-1", &rows, holder),
            Err(StoreError::Conflict(
                "request `b` is already the request of another run: request ids name one run"
                    .to_owned()
            ))
        );
        assert_eq!(check_link("run-1", &rows, |_| None), Ok(()));
        assert_eq!(
            check_link("run-1", &rows, |_| Some("run-1")),
            Ok(()),
            "its own requests, linked again (a finish that parks again)"
        );
    }

    #[test]
    fn a_turn_row_takes_one_answer_of_its_own_run() {
        let [mut row] = turn_rows(ids(&["a"])).try_into().unwrap();
        assert!(takes_answer("run-1", &row, "run-1"));
        assert!(
            !takes_answer("run-1", &row, "run-2"),
            "another run's request"
        );
        row.answer = Some("sealed".to_owned());
        assert!(!takes_answer("run-1", &row, "run-1"), "answered already");
    }
}

#[cfg(test)]
mod tests {
    use super::{answer_one, other_answers};
    use crate::request::{Answer, DeclineReason};
    use crate::run::{PendingRun, SealKey};
    use crate::store::lifecycle::park;
    use crate::store::together::TurnRow;
    use crate::store::{RawRow, RunState, Seal, StoreError};
    use crate::{Client, FnTool, Reply, Request, ScriptedModel, ToolResult, Toolkit};

    const NOW: i64 = 1_000_000;

    /// A together record of three requests `r0`, `r1`, `r2` (`r1` expired long before
    /// [`NOW`] when `late`).
    fn record(late: bool) -> PendingRun {
        let ask = FnTool::builder("ask")
            .description("Asks.")
            .handler(move |args, _| async move {
                let n = args["n"].as_u64().unwrap_or_default();
                let mut request = Request::input(format!("q{n}")).with_id(format!("r{n}"));
                if late && n == 1 {
                    request.expires_at = Some("1970-01-01T00:00:01Z".to_owned());
                }
                ToolResult::suspended(request)
            })
            .build()
            .unwrap();
        let toolkit = Toolkit::builder().tool(ask).build().unwrap();
        let turn = Reply::tool_call("ask", serde_json::json!({"n": 0}))
            .with_call("ask", serde_json::json!({"n": 1}))
            .with_call("ask", serde_json::json!({"n": 2}));
        let client = Client::builder(ScriptedModel::new([turn]))
            .model_name("m")
            .questions_together(true)
            .build()
            .unwrap();
        crate::store::lifecycle::tests::halt(&client, &toolkit)
    }

    fn turn() -> Vec<TurnRow> {
        super::turn_rows((0..3).map(|n| format!("r{n}")).collect())
    }

    /// Applies one answer to `row` and `turn` as a store would.
    fn give(
        row: &mut RawRow,
        record: &PendingRun,
        turn: &mut [TurnRow],
        answer: &Answer,
        seal: &Seal,
    ) -> Result<Option<StoreError>, StoreError> {
        let step = answer_one(row, record, turn, answer, "alice", seal, NOW)?;
        assert!(step.change.apply(row), "the guard holds on the row as read");
        let at = turn
            .iter()
            .position(|t| t.request_id == step.row.request_id)
            .unwrap();
        turn[at] = step.row;
        Ok(step.refused)
    }

    #[test]
    fn answers_in_any_order_complete_the_turn_only_with_the_last() {
        let seal = Seal::default();
        let record = record(false);
        let mut row = park(&record, &seal, NOW).row;
        let mut turn = turn();
        for id in ["r2", "r0"] {
            give(&mut row, &record, &mut turn, &Answer::accept(id, id), &seal).unwrap();
            assert_eq!(row.state, "parked");
            assert_eq!(row.answer, None);
        }
        let version = row.version;
        give(
            &mut row,
            &record,
            &mut turn,
            &Answer::accept("r1", "x"),
            &seal,
        )
        .unwrap();
        assert_eq!((row.state.as_str(), row.version), ("answered", version + 1));
        // the run's answer is its first request's, whoever answered last
        assert_eq!(row.answer(&seal).unwrap(), Some(Answer::accept("r0", "r0")));
        let others = other_answers(&row.run_id, &record, &turn, &seal).unwrap();
        assert_eq!(
            others,
            [Answer::accept("r1", "x"), Answer::accept("r2", "r2")]
        );
    }

    #[test]
    fn a_replay_a_stranger_and_a_stale_read_are_refused() {
        let seal = Seal::default();
        let record = record(false);
        let mut row = park(&record, &seal, NOW).row;
        let mut turn = turn();
        let read = row.clone();
        give(
            &mut row,
            &record,
            &mut turn,
            &Answer::accept("r1", 1),
            &seal,
        )
        .unwrap();
        assert_eq!(
            answer_one(
                &row,
                &record,
                &turn,
                &Answer::accept("r1", 2),
                "bob",
                &seal,
                NOW
            )
            .unwrap_err(),
            StoreError::AlreadyAnswered {
                run_id: row.run_id.clone(),
                request_id: "r1".to_owned(),
                state: RunState::Parked,
            }
        );
        assert_eq!(
            answer_one(
                &row,
                &record,
                &turn,
                &Answer::accept("r9", 2),
                "bob",
                &seal,
                NOW
            )
            .unwrap_err(),
            StoreError::NotFound {
                key: "r9".to_owned()
            }
        );
        // decided on a row read before another answer: its guard no longer holds
        let stale = answer_one(
            &read,
            &record,
            &turn,
            &Answer::accept("r2", 2),
            "b",
            &seal,
            NOW,
        );
        assert!(!stale.unwrap().change.apply(&mut row));
    }

    #[test]
    fn a_late_answer_is_refused_and_its_request_reads_declined() {
        let seal = Seal::default();
        let record = record(true);
        let mut row = park(&record, &seal, NOW).row;
        let mut turn = turn();
        let refused = give(
            &mut row,
            &record,
            &mut turn,
            &Answer::accept("r1", 1),
            &seal,
        );
        assert_eq!(
            refused.unwrap(),
            Some(StoreError::Expired {
                run_id: row.run_id.clone()
            })
        );
        let others = other_answers(&row.run_id, &record, &turn, &seal).unwrap();
        assert_eq!(
            others,
            [
                Answer::decline("r1", DeclineReason::Expired),
                Answer::decline("r2", DeclineReason::Expired),
            ],
            "unanswered reads declined (expired) too"
        );
    }

    #[test]
    fn a_sealed_extra_answer_edited_at_rest_or_moved_to_another_request_is_refused() {
        let key = SealKey::new("k1", [7u8; 32]).unwrap();
        let seal = Seal::new(key, []);
        let record = record(false);
        let mut row = park(&record, &seal, NOW).row;
        let mut turn = turn();
        give(
            &mut row,
            &record,
            &mut turn,
            &Answer::accept("r2", "yes"),
            &seal,
        )
        .unwrap();
        let kept = turn[2].answer.clone().unwrap();
        assert!(other_answers(&row.run_id, &record, &turn, &seal).is_ok());
        turn[2].answer = Some(kept.replace("yes", "no!"));
        assert!(matches!(
            other_answers(&row.run_id, &record, &turn, &seal),
            Err(StoreError::Corrupt { .. })
        ));
        // r2's sealed answer put on r1's row
        turn[2].answer = None;
        turn[1].answer = Some(kept);
        assert!(matches!(
            other_answers(&row.run_id, &record, &turn, &seal),
            Err(StoreError::Corrupt { .. })
        ));
    }
}
