//! What a turn resumes from: an answer and when it arrived, a halted run's resume, the wait
//! for `wait_for`'s answer and going on after it, and the claim's checkpoints.

use super::Run;
use std::future::Future;
use std::panic::AssertUnwindSafe;
use std::task::Poll;
use std::time::SystemTime;

use futures_util::FutureExt;
use serde_json::Value;
use tokio::sync::oneshot;

use crate::client::marks::{Marks, ran_with};
use crate::client::state::{Exec, State};
use crate::client::wait::{Cancelled, Parked, Stop, fired, panicked, turn_calls};
use crate::error::{Error, Result};
use crate::request::{Answer, Request};
use crate::run::{Halted, InFlight, PendingRun};
use crate::store::StoreError;
use crate::toolkit::Toolkit;

/// An answer, and when it counts as given: the request's `expiresAt` is judged against that
/// time ([`crate::suspend::resolve`]). An answer handed to the loop (`wait_for`,
/// [`Client::resume`], a remembered rule) arrives when the loop gets it; one a run store
/// recorded ([`Client::resume_claim`]) arrived when the store recorded it.
pub(in crate::client) struct Arrived {
    pub(in crate::client) answer: Answer,
    pub(in crate::client) at: SystemTime,
}

impl Arrived {
    /// `answer`, arriving now.
    pub(in crate::client) fn now(answer: Answer) -> Self {
        Self {
            answer,
            at: SystemTime::now(),
        }
    }
}

/// What a resume starts from: where the halted turn's assistant message is, the halt, the
/// pending request and its answer; or a checkpoint's turn in flight.
#[allow(clippy::large_enum_variant)] // always boxed (`Box<Resume>`)
pub(in crate::client) enum Resume {
    Answer {
        assistant_at: usize,
        halted: Halted,
        pending: Request,
        answer: Arrived,
    },
    InFlight(InFlight),
}

impl Resume {
    /// What resuming `run` with `answer` starts from, and the run's state: the record is
    /// checked against itself first (nothing runs when it disagrees), unless a run store
    /// checked it when it read it (`checked`: what its check found). `answered_at`: when a
    /// run store recorded the answer (`None`: it arrives now).
    pub(in crate::client) fn start(
        run: PendingRun,
        answer: Answer,
        answered_at: Option<SystemTime>,
        toolkit: &Toolkit,
        checked: Option<usize>,
    ) -> Result<(State, Box<Self>)> {
        let assistant_at = match checked {
            Some(at) => at,
            None => run.check()?,
        };
        let pending = run.pending().clone();
        let (result, halted) = run.into_parts();
        let (agent, conversation, principal) = (
            halted.agent.clone(),
            halted.conversation.clone(),
            halted.principal.clone(),
        );
        let answer = Arrived {
            answer,
            at: answered_at.unwrap_or_else(SystemTime::now),
        };
        let resume = Self::Answer {
            assistant_at,
            halted,
            pending,
            answer,
        };
        let mut state = State::from_run(result, toolkit);
        state.together = halted_together(&resume);
        state.agent = agent;
        state.conversation = conversation;
        state.principal = principal;
        Ok((state, Box::new(resume)))
    }
}

impl Resume {
    /// The resume of an answer a run store recorded before `deadline`, the deadline of the
    /// run's current step when it was claimed: an [escalation](crate::Request::escalate_to)
    /// moved it past the record's `expiresAt` (the record keeps the request as it was sealed),
    /// so the answer's lateness is judged by it.
    pub(in crate::client) fn with_deadline(
        mut self: Box<Self>,
        deadline: Option<SystemTime>,
    ) -> Box<Self> {
        if let (Self::Answer { pending, .. }, Some(deadline)) = (&mut *self, deadline)
            && pending.expires_at_time().is_some_and(|at| deadline > at)
        {
            pending.expires_at = Some(crate::request::format_rfc3339(deadline));
        }
        self
    }
}

/// Whether the record a resume starts from parked with every request of its turn.
fn halted_together(resume: &Resume) -> bool {
    matches!(resume, Resume::Answer { halted, .. } if halted.together)
}

impl Run<'_> {
    /// Resolves the halted call of a resumed run, then the rest of its turn.
    pub(in crate::client) async fn resume_turn(
        &self,
        st: &mut State,
        resume: Resume,
    ) -> Result<Option<Stop>> {
        let Resume::Answer {
            assistant_at,
            halted,
            pending,
            answer,
        } = resume
        else {
            return Ok(None);
        };
        let calls = st.request.messages[assistant_at].tool_calls.clone();
        let index = halted.call_index;
        let call = &calls[index];
        // the placeholder and the suspension's record are replaced by the resolved result;
        // the retry runs with the arguments of the suspension's record (checked against the
        // fingerprint on load)
        st.request.messages.pop();
        let (args, with) = st
            .records
            .pop()
            .map(|r| (r.args, ran_with(r.metadata.as_deref())))
            .unwrap_or_default();
        let marks = self.marks(&call.name).then(|| {
            let later = halted.deferred.iter().cloned();
            Marks::new(st, std::iter::once(None).chain(later).collect())
        });
        let resolving = self.resolve(call, args, &pending, answer, with, marks.as_ref());
        let resolved = Box::pin(resolving).await;
        if let Some(error) = marks.and_then(Marks::failure) {
            return Err(error);
        }
        self.record_resolved(st, call, resolved);
        let pre = halted
            .deferred
            .into_iter()
            .map(|d| d.map(Exec::from))
            .collect();
        Box::pin(self.tool_phase(st, &calls, index + 1, pre)).await
    }

    /// The host's answer to the parked call's request, or why there is none: `wait_for`
    /// failed or panicked, answered another request, or the run's timeout or cancellation
    /// (`cancelled`) interrupted it (the caller then halts the run on the request, which stays
    /// pending: [`Parked::fail`]).
    pub(in crate::client) fn wait<'w>(
        &self,
        request: &'w Request,
        cancelled: &'w mut Cancelled<'_>,
    ) -> impl Future<Output = Result<Answer, String>> + 'w {
        // a plain `poll_fn` owning what it polls, not an `async fn`: a parked run keeps no
        // more than this while it waits
        let mut waiting = match &self.client.wait_for {
            Some(wait_for) => {
                match std::panic::catch_unwind(AssertUnwindSafe(|| wait_for(request.clone()))) {
                    Ok(waiting) => Ok(AssertUnwindSafe(waiting).catch_unwind()),
                    Err(panic) => Err(panicked(&panic)),
                }
            }
            None => Err("no wait_for is set".to_owned()),
        };
        // boxed: only a run with a timeout pays for its timer while parked
        let mut deadline = self
            .deadline
            .map(|(at, limit)| (Box::pin(tokio::time::sleep_until(at)), limit));
        std::future::poll_fn(move |cx| {
            let waiting = match &mut waiting {
                Ok(waiting) => waiting,
                Err(failure) => return Poll::Ready(Err(std::mem::take(failure))),
            };
            if let Poll::Ready(outcome) = waiting.poll_unpin(cx) {
                let outcome = outcome.unwrap_or_else(|panic| Err(panicked(&panic)));
                return Poll::Ready(match outcome {
                    Ok(answer) if answer.id == request.id => Ok(answer),
                    Ok(answer) => Err(format!(
                        "it answered request `{}`; an answer must echo the pending request's id",
                        answer.id
                    )),
                    Err(message) => Err(message),
                });
            }
            if fired(cancelled, cx) {
                return Poll::Ready(Err(
                    "the run was cancelled while waiting for the answer".to_owned()
                ));
            }
            if let Some((sleep, limit)) = &mut deadline
                && sleep.as_mut().poll(cx).is_ready()
            {
                return Poll::Ready(Err(format!(
                    "the run timed out after {limit:?} while waiting for the answer"
                )));
            }
            Poll::Pending
        })
    }

    /// Goes on after `wait_for`'s answer: the parked call's result (resolved with the answer),
    /// then the rest of its turn.
    pub(in crate::client) async fn go_on(
        &self,
        st: &mut State,
        parked: Parked,
        answer: Answer,
    ) -> crate::error::Result<Option<Stop>> {
        let Parked {
            index,
            args,
            request,
            rest,
            result,
            ..
        } = parked;
        let calls = turn_calls(st);
        let Some(call) = calls.get(index) else {
            return Ok(None);
        };
        let args = Parked::args(args, call);
        let with = result.and_then(|r| ran_with(r.metadata.as_deref()));
        let marks = self.marks(&call.name).then(|| {
            let later = rest
                .iter()
                .zip(&calls[index + 1..])
                .map(|(e, call)| Some(e.deferred(st, call)));
            Marks::new(st, std::iter::once(None).chain(later).collect())
        });
        let answer = Arrived::now(answer);
        let resolving = self.resolve(call, args, &request, answer, with, marks.as_ref());
        let resolved = Box::pin(resolving).await;
        if let Some(error) = marks.and_then(Marks::failure) {
            return Err(error);
        }
        self.record_resolved(st, call, resolved);
        let pre = rest.into_iter().map(Some).collect();
        Box::pin(self.tool_phase(st, &calls, index + 1, pre)).await
    }

    /// Saves the run's state as the claim's checkpoint, when the run is a claimed one
    /// ([`Client::resume_claim`]); waits until the store has it.
    pub(in crate::client) async fn save_checkpoint(&self, st: &mut State) -> Result<()> {
        if self.client.checkpoints.is_none() {
            return Ok(());
        }
        self.send_checkpoint(st.checkpoint()).await
    }

    /// Sends `checkpoint` to the claim's store and waits until the store has it (nothing when
    /// the run is not a claimed one).
    pub(in crate::client) async fn send_checkpoint(&self, checkpoint: Value) -> Result<()> {
        let Some(checkpoints) = &self.client.checkpoints else {
            return Ok(());
        };
        let (ack, stored) = oneshot::channel();
        let gone = || {
            Error::Store(StoreError::Backend(
                "the checkpoint writer stopped".to_owned(),
            ))
        };
        checkpoints
            .send((checkpoint, ack))
            .await
            .map_err(|_| gone())?;
        stored.await.map_err(|_| gone())??;
        Ok(())
    }
}
