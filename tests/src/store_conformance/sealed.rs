//! Sealed stores (`with_seal_keys`): each attack on a row is refused as `Corrupt` for that run
//! only, with a message that says what was wrong; the other runs go on.

use std::time::Duration;

use toolnexus::run::SealKey;
use toolnexus::store::{RunState, StoreError};

use super::{Agent, LEASE, Make, make_subject};

/// The key a sealed subject seals with.
pub fn seal_key() -> SealKey {
    SealKey::new("store-test-2", [7u8; 32]).expect("a valid key")
}

/// The retired key a sealed subject still opens with.
pub fn retired_key() -> SealKey {
    SealKey::new("store-test-1", [5u8; 32]).expect("a valid key")
}

/// Parks two runs on a sealed subject, replaces the first one's stored record with `forged`
/// (made from the two records), and checks the first is refused as `Corrupt` with a message
/// containing `expected`, while the second is claimed and finished as usual.
async fn refused(
    make: Make,
    forged: impl FnOnce(&toolnexus::PendingRun, &toolnexus::PendingRun) -> String,
    expected: &str,
) {
    let Some(s) = make_subject(make, LEASE).await else {
        return;
    };
    let store = s.store();
    let agent = Agent::once();
    let (victim, other) = (agent.halt().await, agent.halt().await);
    let text = forged(&victim, &other);
    let victim_answer = victim.pending().accept("Ada");
    let other_answer = other.pending().accept("Bob");
    let victim_info = store.park(victim).await.unwrap();
    store.park(other).await.unwrap();
    (s.write_raw)(victim_info.run_id.clone(), text).await;

    match store.get(&victim_info.run_id).await {
        Err(StoreError::Corrupt { run_id, message }) => {
            assert_eq!(run_id, victim_info.run_id);
            assert!(message.contains(expected), "{message}");
        }
        other => panic!("expected Corrupt, got {other:?}"),
    }
    match store.claim(&victim_answer, "worker-1").await {
        Err(StoreError::Corrupt { run_id, .. }) => assert_eq!(run_id, victim_info.run_id),
        other => panic!("expected Corrupt, got {other:?}"),
    }
    // the other run is untouched
    let claim = store.claim(&other_answer, "worker-1").await.unwrap();
    let result = agent.resume(&claim.record, claim.answer.clone()).await;
    let done = store.finish(&claim, result).await.unwrap();
    assert_eq!(done.state, RunState::Finished);
}

/// The attack: another row's sealed record (a different call, a valid MAC) is copied into this
/// run's row, so that approving this request would run the other call.
pub async fn a_record_spliced_from_another_row_is_refused(make: Make) {
    refused(
        make,
        |_, other| other.seal(&seal_key()),
        "a record moved from another row is refused",
    )
    .await;
}

/// The attack: the row is downgraded to an unsealed (self-consistent) record, which a store
/// without keys would read.
pub async fn an_unsealed_record_in_a_sealed_store_is_refused(make: Make) {
    refused(make, |victim, _| victim.to_json(), "not a sealed record").await;
}

/// The attack: one byte of the sealed record is changed (its prompt), the MAC left as it was.
pub async fn an_edited_sealed_record_is_refused(make: Make) {
    refused(
        make,
        |victim, _| {
            let sealed = victim.seal(&seal_key());
            let prompt = &victim.pending().prompt;
            let edited = sealed.replacen(prompt.as_str(), &prompt.to_uppercase(), 1);
            assert_ne!(edited, sealed, "the prompt is in the record");
            edited
        },
        "changed after it was sealed",
    )
    .await;
}

/// The attack: a record sealed with a key the store does not hold (an attacker's own key
/// under an id of their choosing).
pub async fn a_record_sealed_with_an_unknown_key_is_refused(make: Make) {
    refused(
        make,
        |victim, _| victim.seal(&SealKey::new("attacker", [9u8; 32]).unwrap()),
        "which is not in the key set",
    )
    .await;
}

/// Keys rotate: a record sealed with the retired key still opens, claims and finishes.
pub async fn a_record_sealed_with_a_retired_key_opens(make: Make) {
    let Some(s) = make_subject(make, Duration::from_secs(30)).await else {
        return;
    };
    let store = s.store();
    let agent = Agent::once();
    let record = agent.halt().await;
    let sealed = record.seal(&retired_key());
    let answer = record.pending().accept("Ada");
    let info = store.park(record.clone()).await.unwrap();
    (s.write_raw)(info.run_id.clone(), sealed).await;
    let stored = store.get(&info.run_id).await.unwrap().unwrap();
    assert_eq!(stored.record.to_json(), record.to_json());
    let claim = store.claim(&answer, "worker-1").await.unwrap();
    let result = agent.resume(&claim.record, claim.answer.clone()).await;
    assert_eq!(
        store.finish(&claim, result).await.unwrap().state,
        RunState::Finished
    );
}
