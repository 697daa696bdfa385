//! CONTRACT section 4: a parked run is single-use. `resume` consumes the record; the run id (in
//! the record and in every result of the run) makes a second resume of a copy detectable, and
//! the guard the docs describe (consume `(run id, request id)` before resuming) refuses it.

use std::collections::HashSet;

use serde_json::json;
use toolnexus::{Answer, Client, PendingRun, Reply, RunResult, RunStatus, ScriptedModel, Toolkit};
use toolnexus_tests::{Calls, asker};

fn client(replies: Vec<Reply>) -> Client {
    Client::builder(ScriptedModel::new(replies))
        .model_name("m")
        .build()
        .unwrap()
}

async fn parked(toolkit: &Toolkit, calls: usize) -> RunResult {
    let mut first = Reply::tool_call("ask", json!({"k": 0}));
    for k in 1..calls {
        first = first.with_call("ask", json!({"k": k}));
    }
    let halted = client(vec![first]).run("go", toolkit).await.unwrap();
    assert_eq!(halted.status, RunStatus::Pending);
    halted
}

#[tokio::test]
async fn every_run_has_its_own_id_kept_across_its_halts_and_resumes() {
    let (ask, _) = asker("ask", "Sure?");
    let toolkit = Toolkit::builder().tool(ask).build().unwrap();
    let one = parked(&toolkit, 2).await;
    let other = parked(&toolkit, 2).await;
    assert!(one.run_id.starts_with("run-"), "{}", one.run_id);
    assert_ne!(one.run_id, other.run_id, "two runs, two ids");

    let record = PendingRun::try_from(&one).unwrap();
    assert_eq!(record.run_id(), one.run_id);
    let first_request = record.pending().id.clone();
    let answer = record.pending().accept(1);
    let again = client(vec![Reply::text("done")])
        .resume(record, answer, &toolkit)
        .await
        .unwrap();
    assert_eq!(
        again.status,
        RunStatus::Pending,
        "the second call asks in turn"
    );
    assert_eq!(again.run_id, one.run_id, "the same run");
    let next = PendingRun::try_from(&again).unwrap();
    assert_eq!(next.run_id(), one.run_id);
    assert_ne!(
        next.pending().id,
        first_request,
        "a new request, a new record"
    );

    let answer = next.pending().accept(2);
    let done = client(vec![Reply::text("done")])
        .resume(next, answer, &toolkit)
        .await
        .unwrap();
    assert_eq!(done.status, RunStatus::Done);
    assert_eq!(done.run_id, one.run_id);
}

/// The guard a host without a store keeps: a record runs only when its `(run id, request id)`
/// was not consumed before (in production: an atomic delete or compare-and-swap).
#[derive(Default)]
struct Consumed(HashSet<(String, String)>);

impl Consumed {
    async fn resume(
        &mut self,
        json: &str,
        answer: Answer,
        toolkit: &Toolkit,
    ) -> Result<RunResult, String> {
        let record = PendingRun::from_json(json).map_err(|e| e.to_string())?;
        let key = (record.run_id().to_owned(), record.pending().id.clone());
        if !self.0.insert(key.clone()) {
            return Err(format!(
                "run {} was already resumed from request {}",
                key.0, key.1
            ));
        }
        client(vec![Reply::text("done")])
            .resume(record, answer, toolkit)
            .await
            .map_err(|e| e.to_string())
    }
}

#[tokio::test]
async fn a_double_resume_of_one_record_is_detected_by_its_run_id_and_refused() {
    let (ask, calls): (_, Calls) = asker("ask", "Deploy?");
    let toolkit = Toolkit::builder().tool(ask).build().unwrap();
    let halted = parked(&toolkit, 1).await;
    let json = PendingRun::try_from(&halted).unwrap().to_json();
    let answer = halted.pending.as_ref().unwrap().accept(true);

    // without a guard, two copies of one record both resume: the same run id continuing
    // from the same request twice is what gives it away
    let a = client(vec![Reply::text("done")])
        .resume(
            PendingRun::from_json(&json).unwrap(),
            answer.clone(),
            &toolkit,
        )
        .await
        .unwrap();
    let b = client(vec![Reply::text("done")])
        .resume(
            PendingRun::from_json(&json).unwrap(),
            answer.clone(),
            &toolkit,
        )
        .await
        .unwrap();
    assert_eq!(a.run_id, halted.run_id);
    assert_eq!(b.run_id, halted.run_id);
    assert_eq!(calls.get(), 3, "first run, then the approved tool twice");

    // with the guard the docs describe, the second resume is refused and nothing runs
    let mut consumed = Consumed::default();
    let done = consumed
        .resume(&json, answer.clone(), &toolkit)
        .await
        .unwrap();
    assert_eq!(done.status, RunStatus::Done);
    assert_eq!(calls.get(), 4);
    let twice = consumed.resume(&json, answer, &toolkit).await.unwrap_err();
    assert_eq!(
        twice,
        format!(
            "run {} was already resumed from request {}",
            halted.run_id,
            halted.pending.as_ref().unwrap().id
        )
    );
    assert_eq!(calls.get(), 4, "the approved tool did not run again");
}

#[tokio::test]
async fn a_refused_answer_hands_the_record_back_unchanged() {
    let (ask, calls) = asker("ask", "Deploy?");
    let toolkit = Toolkit::builder().tool(ask).build().unwrap();
    let record = PendingRun::try_from(parked(&toolkit, 1).await).unwrap();
    let json = record.to_json();
    let err = client(vec![Reply::text("done")])
        .resume(record, Answer::ok("ask-999"), &toolkit)
        .await
        .unwrap_err();
    let back = err.into_pending_run().unwrap();
    assert_eq!(back.to_json(), json);
    assert_eq!(calls.get(), 1, "nothing ran");
    let answer = back.pending().accept(true);
    let done = client(vec![Reply::text("done")])
        .resume(back, answer, &toolkit)
        .await
        .unwrap();
    assert_eq!(done.status, RunStatus::Done);
    assert!(toolnexus::Error::Cancelled.into_pending_run().is_none());
}
