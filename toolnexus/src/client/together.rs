//! A turn's questions together ([`ClientBuilder::questions_together`](super::ClientBuilder::questions_together)):
//! a halted run resumed with the answers to several requests of its turn, in any order, and
//! the requests `wait_for` is asked besides the first of a together turn.

use std::collections::HashSet;

use super::run::Run;
use super::state::Exec;
use super::{Client, Event};
use crate::error::{Error, Result};
use crate::request::{Answer, Request};
use crate::run::{PendingRun, RunResult};
use crate::toolkit::Toolkit;

impl Client {
    /// Resumes a run that parked with every request of its turn
    /// ([`ClientBuilder::questions_together`](super::ClientBuilder::questions_together)) with
    /// `answers` to them, in any order: each answered call is executed once with its answer
    /// (accepted: the tool again with `ctx.answer`; declined: `declined/expired: <prompt>`),
    /// the calls in tool-call order, and the loop goes on as [`Client::resume`] does. A later
    /// request left without an answer surfaces again (the run halts on the requests still
    /// unanswered, the same ids). A record that waits on one request resumes as with
    /// [`Client::resume`].
    ///
    /// See [`ClientBuilder::questions_together`](super::ClientBuilder::questions_together) for
    /// an example.
    ///
    /// # Errors
    ///
    /// [`Error::AnswerMismatch`] (nothing ran; the record is handed back) when no answer
    /// echoes the first request ([`PendingRun::pending`]), when an answer echoes no request of
    /// the record ([`PendingRun::requests`]), or when two answers echo the same request; then
    /// as [`Client::resume`].
    pub async fn resume_all(
        &self,
        run: PendingRun,
        answers: Vec<Answer>,
        toolkit: &Toolkit,
    ) -> Result<RunResult> {
        let (first, others) = match split_answers(&run, answers) {
            Ok(split) => split,
            Err((expected, got)) => {
                return Err(Error::AnswerMismatch {
                    expected,
                    got,
                    run: Box::new(run),
                });
            }
        };
        self.resume_inner(run, (first, others), None, toolkit, None, None)
            .await
    }
}

/// The answer to `run`'s first request and the others, or what was expected and what came
/// (for [`Error::AnswerMismatch`]).
fn split_answers(
    run: &PendingRun,
    answers: Vec<Answer>,
) -> std::result::Result<(Answer, Vec<Answer>), (String, String)> {
    let ids: Vec<&str> = run.requests().iter().map(|r| r.id.as_str()).collect();
    let mut seen = HashSet::new();
    for answer in &answers {
        if !ids.contains(&answer.id.as_str()) {
            let expected = ids
                .iter()
                .map(|id| format!("`{id}`"))
                .collect::<Vec<_>>()
                .join(", ");
            return Err((format!("one of {expected}"), answer.id.clone()));
        }
        if !seen.insert(answer.id.as_str()) {
            return Err((
                "one answer per request".to_owned(),
                format!("{} (twice)", answer.id),
            ));
        }
    }
    let first_id = &run.pending().id;
    let mut first = None;
    let mut others = Vec::new();
    for answer in answers {
        if answer.id == *first_id {
            first = Some(answer);
        } else {
            others.push(answer);
        }
    }
    let got = others
        .iter()
        .map(|a| a.id.as_str())
        .collect::<Vec<_>>()
        .join(", ");
    first
        .map(|first| (first, others))
        .ok_or((first_id.clone(), got))
}

impl Run<'_> {
    /// The requests of a together turn's later calls (`rest`, in call order) that `wait_for`
    /// is asked besides the first: each announced now ([`Event::Pending`]), before anything
    /// waits on it.
    pub(super) fn together_others(&self, rest: &[Exec]) -> Vec<Request> {
        let others: Vec<Request> = rest
            .iter()
            .filter_map(|e| e.result.pending().cloned())
            .collect();
        for request in &others {
            self.emit(|| Event::Pending {
                request: request.clone(),
            });
        }
        others
    }
}
