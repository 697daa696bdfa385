//! Resuming a halted run with the answer to its pending request ([contract section 4](crate::contract)).

use super::run::{Exec, Run, State};
use super::wait::Stop;
use super::{Client, PendingRun, RunResult, Sink};
use crate::error::{Error, Result};
use crate::request::{Answer, Request};
use crate::run::Halted;
use crate::toolkit::Toolkit;

/// What a resume starts from: where the halted turn's assistant message is, the halt, the
/// pending request and its answer.
pub(super) struct Resume {
    assistant_at: usize,
    halted: Halted,
    pending: Request,
    answer: Answer,
}

impl Client {
    pub(super) async fn resume_inner(
        &self,
        run: PendingRun,
        answer: Answer,
        toolkit: &Toolkit,
        sink: Option<Sink<'_>>,
    ) -> Result<RunResult> {
        if answer.id != run.pending().id {
            return Err(Error::AnswerMismatch {
                expected: run.pending().id.clone(),
                got: answer.id,
                run: Box::new(run),
            });
        }
        let at = run.check()?;
        let pending = run.pending().clone();
        let (result, halted) = run.into_parts();
        let state = State::from_run(result, toolkit);
        let resume = Resume {
            assistant_at: at,
            halted,
            pending,
            answer,
        };
        self.drive(state, toolkit, sink, sink.is_some(), Some(Box::new(resume)))
            .await
    }
}

impl Run<'_> {
    /// Resolves the halted call of a resumed run, then the rest of its turn.
    pub(super) async fn resume_turn(
        &self,
        st: &mut State,
        resume: Box<Resume>,
    ) -> Result<Option<Stop>> {
        let Resume {
            assistant_at,
            halted,
            pending,
            answer,
        } = *resume;
        let calls = st.request.messages[assistant_at].tool_calls.clone();
        let index = halted.call_index;
        let call = &calls[index];
        // the placeholder and the suspension's record are replaced by the resolved result;
        // the retry runs with the arguments of the suspension's record (checked against the
        // fingerprint on load)
        st.request.messages.pop();
        let args = st.records.pop().map(|r| r.args).unwrap_or_default();
        let resolved = Box::pin(self.resolve(call, &args, &pending, answer)).await;
        self.record(st, call, args, resolved);
        let pre = halted
            .deferred
            .into_iter()
            .map(|d| d.map(Exec::from))
            .collect();
        Box::pin(self.tool_phase(st, &calls, index + 1, pre)).await
    }
}
