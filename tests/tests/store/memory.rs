//! The run-store conformance suite against `MemoryStore`.

use std::sync::Arc;
use std::time::Duration;

use toolnexus::BoxFuture;
use toolnexus::store::MemoryStore;
use toolnexus_tests::store_conformance::{NOTIFIERS, Subject, retired_key, seal_key};

fn make(lease: Duration) -> BoxFuture<'static, Option<Subject>> {
    make_with(lease, false, false)
}

fn make_sealed(lease: Duration) -> BoxFuture<'static, Option<Subject>> {
    make_with(lease, true, false)
}

fn make_notifying(lease: Duration) -> BoxFuture<'static, Option<Subject>> {
    make_with(lease, false, true)
}

fn make_with(lease: Duration, sealed: bool, notify: bool) -> BoxFuture<'static, Option<Subject>> {
    Box::pin(async move {
        let mut store = MemoryStore::new().with_lease(lease);
        if sealed {
            store = store.with_seal_keys(seal_key(), [retired_key()]);
        }
        if notify {
            store = store.with_notifiers(NOTIFIERS).unwrap();
        }
        let (raw, columns) = (store.clone(), store.clone());
        Some(Subject {
            handles: vec![Arc::new(store.clone()), Arc::new(store)],
            write_raw: Box::new(move |run_id, text| {
                let raw = raw.clone();
                Box::pin(async move {
                    assert!(raw.write_raw_record(&run_id, &text), "no run {run_id}");
                })
            }),
            write_column: Box::new(move |run_id, column, value| {
                let held = columns
                    .write_raw_column(&run_id, column, value.as_deref())
                    .unwrap_or_else(|| panic!("no run {run_id}"));
                Box::pin(async move { held })
            }),
            guard: None,
        })
    })
}

toolnexus_tests::store_conformance!(make);
toolnexus_tests::store_conformance!(sealed: make_sealed);
toolnexus_tests::store_conformance!(outbox: make_notifying);
toolnexus_tests::store_conformance!(votes: make);
toolnexus_tests::store_conformance!(votes_sealed: make_sealed);
toolnexus_tests::store_conformance!(governed: make, make_notifying);
toolnexus_tests::store_conformance!(together: make);
toolnexus_tests::store_conformance!(together in together_sealed: make_sealed);

/// A conversation whose stored transcript cannot be read is a clear error naming it; the
/// others, and listing, are unaffected.
#[tokio::test]
async fn a_damaged_conversation_stays_local() {
    use toolnexus::store::{Conversation, ConversationStore, StoreError};
    let store = MemoryStore::new();
    store
        .put_conversation(&Conversation::new("bad"))
        .await
        .unwrap();
    store
        .put_conversation(&Conversation::new("good"))
        .await
        .unwrap();
    assert!(store.write_raw_conversation("bad", "[{\"role\":"));
    match store.get_conversation("bad").await {
        Err(StoreError::CorruptConversation { id, message }) => {
            assert_eq!(id, "bad");
            assert!(message.starts_with("EOF while parsing"), "{message}");
        }
        other => panic!("expected CorruptConversation, got {other:?}"),
    }
    assert!(store.get_conversation("good").await.unwrap().is_some());
    let page = store.list_conversations(None, 10).await.unwrap();
    assert_eq!(
        page.conversations
            .iter()
            .map(|c| c.id.as_str())
            .collect::<Vec<_>>(),
        ["bad", "good"]
    );
}

/// The store's indexes (parked, answered, expired, deadlines, leases) follow every change a
/// run goes through: parks with and without a deadline, an expiry, submits, a claim, a
/// `claim_next`, a finish, a lapsed lease taken over, a release, a delete and a damaged row;
/// and what workers read from them (`waiting`, `next_due`, the run `claim_next` takes) is
/// what the rows say.
#[tokio::test]
async fn the_indexes_follow_every_change() {
    use toolnexus::store::{RunState, RunStore};
    use toolnexus_tests::store_conformance::Agent;

    // The default lease (a minute): no step below may lapse a claim by taking long on a busy
    // machine; the one lapse the test needs is written into the row.
    let store = MemoryStore::new();
    let check = |step: &str| {
        store
            .check_indexes()
            .unwrap_or_else(|e| panic!("after {step}: {e}"));
    };
    let mut requests = Vec::new();
    for i in 0..6 {
        let agent = Agent {
            expires_ms: (i % 2 == 0).then_some(60_000),
            ..Agent::once()
        };
        let record = agent.halt().await;
        requests.push((record.run_id().to_owned(), record.pending().clone()));
        store.park(record).await.unwrap();
        check("a park");
    }
    let late = Agent {
        expires_ms: Some(-1_000),
        ..Agent::once()
    }
    .halt()
    .await;
    let late_run = late.run_id().to_owned();
    store.park(late).await.unwrap();
    check("a park past its deadline");
    // the nearest deadline is the one already past
    assert!(store.next_due().await.unwrap().unwrap() <= std::time::SystemTime::now());
    assert_eq!(store.waiting().await.unwrap(), 0);

    assert_eq!(store.expire().await.unwrap(), vec![late_run.clone()]);
    check("the expiry");
    assert_eq!(store.waiting().await.unwrap(), 1);

    for (_, request) in &requests[..2] {
        store.submit(&request.accept("Ada"), "ada").await.unwrap();
        check("a submit");
    }
    assert_eq!(store.waiting().await.unwrap(), 3);

    let held = store
        .claim(&requests[2].1.accept("Bo"), "w1")
        .await
        .unwrap();
    check("a claim");
    assert_eq!(store.waiting().await.unwrap(), 3);

    // takeovers first (the expired run), then the answered runs, oldest first
    let next = store.claim_next("w1").await.unwrap().unwrap();
    check("claim_next");
    let mut taken = vec![next.run_id.clone()];
    let done = Agent::once()
        .resume(&next.record, next.answer.clone())
        .await;
    let info = store.finish(&next, done).await.unwrap();
    assert_eq!(info.state, RunState::Finished);
    check("a finish");

    // the rest: the two answered runs, then nothing
    while let Some(claim) = store.claim_next("w1").await.unwrap() {
        check("claim_next");
        taken.push(claim.run_id.clone());
        store.release(&claim).await.unwrap();
        check("a release");
        // released: it needs a worker again; finish it to move on
        let again = store.claim_next("w1").await.unwrap().unwrap();
        assert_eq!(again.run_id, claim.run_id);
        let done = Agent::once()
            .resume(&again.record, again.answer.clone())
            .await;
        store.finish(&again, done).await.unwrap();
        check("a finish");
    }
    assert_eq!(
        taken,
        vec![late_run, requests[0].0.clone(), requests[1].0.clone()],
        "the expired run first, then the answered ones oldest first"
    );

    // the direct claim's lease lapses (its row says it ran out long ago): a worker takes it over
    assert_eq!(store.waiting().await.unwrap(), 0);
    assert_eq!(
        store.write_raw_column(&held.run_id, "lease_until", Some("1")),
        Some(true)
    );
    check("a lapsed lease");
    assert_eq!(store.waiting().await.unwrap(), 1);
    let over = store.take_over("w2").await.unwrap().unwrap();
    assert_eq!(over.run_id, held.run_id);
    check("a takeover");
    assert_eq!(store.waiting().await.unwrap(), 0);

    assert!(store.delete(&requests[3].0).await.unwrap());
    check("a delete");
    assert_eq!(
        store.write_raw_column(&requests[4].0, "state", Some("bogus")),
        Some(true)
    );
    check("a damaged state");
    assert_eq!(
        store.write_raw_column(&requests[5].0, "expires_at", Some("1")),
        Some(true)
    );
    check("a deadline rewritten");
    assert_eq!(store.expire().await.unwrap(), vec![requests[5].0.clone()]);
    check("the expiry of the rewritten deadline");
}
