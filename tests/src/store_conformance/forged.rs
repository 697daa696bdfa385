//! Forged rows in a store without seal keys: a record whose run id or request id was
//! rewritten, consistently with its row, needs no hashing to forge, but the fingerprint binds
//! both ids (contract section 4), so it is refused as `Corrupt` for that run only; the other
//! runs go on.

use toolnexus::store::{RunState, StoreError};
use toolnexus::{Answer, PendingRun};

use super::{Agent, LEASE, Make, Subject, make_subject};

/// What the fingerprint refusal says.
const REFUSAL: &str = "the call, its run id or its request id changed after its request was made";

/// Parks two runs, lets `forge` rewrite the first one's row (it returns the run id the row
/// now has and the answer an attacker would send), and checks the forged run is refused as
/// `Corrupt` (by `get` and by a claim with that answer) with the fingerprint refusal, while
/// the second run is claimed and finished as usual.
async fn refused<F>(make: Make, forge: F)
where
    F: for<'a> FnOnce(
        &'a Subject,
        &'a PendingRun,
        &'a PendingRun,
    ) -> toolnexus::BoxFuture<'a, (String, Answer)>,
{
    let Some(s) = make_subject(make, LEASE).await else {
        return;
    };
    let store = s.store();
    let agent = Agent::once();
    let (victim, other) = (agent.halt().await, agent.halt().await);
    let other_answer = other.pending().accept("Bob");
    store.park(victim.clone()).await.unwrap();
    store.park(other.clone()).await.unwrap();
    let (run_id, answer) = forge(&s, &victim, &other).await;

    match store.get(&run_id).await {
        Err(StoreError::Corrupt { run_id: r, message }) => {
            assert_eq!(r, run_id);
            assert!(message.contains(REFUSAL), "{message}");
        }
        other => panic!("expected Corrupt, got {other:?}"),
    }
    match store.claim(&answer, "worker-1").await {
        Err(StoreError::Corrupt { run_id: r, message }) => {
            assert_eq!(r, run_id);
            assert!(message.contains(REFUSAL), "{message}");
        }
        other => panic!("expected Corrupt, got {other:?}"),
    }
    // the other run is untouched
    let claim = store.claim(&other_answer, "worker-1").await.unwrap();
    let result = agent.resume(&claim.record, claim.answer.clone()).await;
    let done = store.finish(&claim, result).await.unwrap();
    assert_eq!(done.state, RunState::Finished);
}

/// The attack: another row's record is copied into this run's row with its run id and
/// request id rewritten to this row's, so that approving this request would run the other
/// call (a consistent splice: no key, no hashing).
pub async fn a_record_spliced_with_its_ids_rewritten_is_refused(make: Make) {
    refused(make, |s, victim, other| {
        Box::pin(async move {
            let forged = other
                .to_json()
                .replace(other.run_id(), victim.run_id())
                .replace(&other.pending().id, &victim.pending().id);
            assert_ne!(forged, other.to_json());
            (s.write_raw)(victim.run_id().to_owned(), forged).await;
            (victim.run_id().to_owned(), victim.pending().accept("Ada"))
        })
    })
    .await;
}

/// The attack: a run is given another run id, in its record and in its row, so that its
/// tools' idempotency keys change and a call that already ran runs again.
pub async fn a_run_whose_run_id_was_changed_is_refused(make: Make) {
    refused(make, |s, victim, _| {
        Box::pin(async move {
            let new_id = format!("{}-again", victim.run_id());
            let forged = victim.to_json().replace(victim.run_id(), &new_id);
            (s.write_raw)(victim.run_id().to_owned(), forged).await;
            assert!(
                (s.write_column)(victim.run_id().to_owned(), "run_id", Some(new_id.clone())).await
            );
            (new_id, victim.pending().accept("Ada"))
        })
    })
    .await;
}

/// The attack: a run's request id is rewritten, in its record and in its row, so that an
/// answer given to another request (say, one approving something harmless) resumes this call.
pub async fn a_run_whose_request_id_was_changed_is_refused(make: Make) {
    refused(make, |s, victim, _| {
        Box::pin(async move {
            let new_id = format!("{}-approved-elsewhere", victim.pending().id);
            let forged = victim.to_json().replace(&victim.pending().id, &new_id);
            (s.write_raw)(victim.run_id().to_owned(), forged).await;
            assert!(
                (s.write_column)(
                    victim.run_id().to_owned(),
                    "request_id",
                    Some(new_id.clone())
                )
                .await
            );
            (victim.run_id().to_owned(), Answer::accept(new_id, "Ada"))
        })
    })
    .await;
}
