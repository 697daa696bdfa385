//! Bounds on the strings a host hands in (`toolnexus::limits::MAX_NAME_BYTES`,
//! `MAX_CONVERSATION_ID_BYTES`): over them, a clear error at the door, and nothing recorded.

use std::sync::Arc;
use std::sync::atomic::{AtomicU32, Ordering};

use toolnexus::limits::{MAX_CONVERSATION_ID_BYTES, MAX_NAME_BYTES};
use toolnexus::store::{PendingQuery, RunEventKind, RunState, StoreError};
use toolnexus::{Client, Error, FnModel, ModelRequest, Reply};

use super::{Agent, LEASE, Make, make_subject};

/// `submit` refuses an `answered_by` one byte over the bound (and one of 4 MiB) with
/// `StoreError::Invalid`, and records nothing: the run stays parked, its history and answer
/// untouched; one of exactly the bound is recorded whole.
pub async fn submit_refuses_an_answered_by_over_the_limit(make: Make) {
    let s = subject!(make);
    let store = s.store();
    let record = Agent::once().halt().await;
    let request = record.pending().clone();
    let parked = store.park(record).await.unwrap();
    let answer = request.accept("Ada");
    for len in [MAX_NAME_BYTES + 1, 4 << 20] {
        let by = "b".repeat(len);
        assert_eq!(
            store.submit(&answer, &by).await.unwrap_err(),
            StoreError::Invalid(format!(
                "the answer to `{}` is refused: `answered_by` is {len} bytes, more than the {MAX_NAME_BYTES} allowed (`toolnexus::limits::MAX_NAME_BYTES`)",
                request.id
            ))
        );
        let stored = store.get(&parked.run_id).await.unwrap().unwrap();
        assert_eq!(stored.info.state, RunState::Parked);
        assert_eq!(stored.info.answered_by(), None);
        assert_eq!(stored.answer, None);
        let events: Vec<RunEventKind> = stored.info.history.iter().map(|e| e.event).collect();
        assert_eq!(events, [RunEventKind::Requested]);
    }
    let pending = store.list_pending(&PendingQuery::new()).await.unwrap();
    assert_eq!(pending.runs.len(), 1, "still waiting for its answer");

    let at_the_bound = "é".repeat(MAX_NAME_BYTES / 2);
    let info = store.submit(&answer, &at_the_bound).await.unwrap();
    assert_eq!(info.state, RunState::Answered);
    assert_eq!(info.answered_by(), Some(at_the_bound.as_str()));
}

/// A model that counts its turns and answers `hi`.
fn counting_client(turns: &Arc<AtomicU32>, s: &super::Subject) -> Client {
    let turns = Arc::clone(turns);
    let model = FnModel::new(move |_: ModelRequest| {
        turns.fetch_add(1, Ordering::SeqCst);
        async { Reply::text("hi") }
    });
    Client::builder(model)
        .model_name("conformance")
        .store(Arc::clone(&s.handles[0]))
        .build()
        .expect("the client builds")
}

/// `Client::ask` refuses a conversation id over the bound before anything is loaded or runs:
/// the model is never asked and no conversation is stored; one of exactly the bound is a
/// conversation like any other.
pub async fn ask_refuses_a_conversation_id_over_the_limit(make: Make) {
    let s = subject!(make);
    let turns = Arc::new(AtomicU32::new(0));
    let client = counting_client(&turns, &s);
    let toolkit = Agent::toolkit();
    let long = "c".repeat(MAX_CONVERSATION_ID_BYTES + 1);
    let refused = client.ask(&long, "hello", &toolkit).await.unwrap_err();
    assert!(
        matches!(&refused, Error::Store(StoreError::Invalid(why)) if *why == format!(
            "the conversation id is {} bytes, more than the {MAX_CONVERSATION_ID_BYTES} allowed (`toolnexus::limits::MAX_CONVERSATION_ID_BYTES`)",
            MAX_CONVERSATION_ID_BYTES + 1
        )),
        "{refused:?}"
    );
    assert_eq!(turns.load(Ordering::SeqCst), 0, "nothing ran");
    let conversations = s.store().conversations().expect("keeps conversations");
    let listed = conversations.list_conversations(None, 10).await.unwrap();
    assert!(listed.conversations.is_empty(), "{listed:?}");

    let at_the_bound = "c".repeat(MAX_CONVERSATION_ID_BYTES);
    let done = client.ask(&at_the_bound, "hello", &toolkit).await.unwrap();
    assert_eq!(done.text, "hi");
    let stored = conversations
        .get_conversation(&at_the_bound)
        .await
        .unwrap()
        .expect("stored");
    assert_eq!(stored.id, at_the_bound);
}

/// A client for a principal over the bound runs nothing: the run fails with `Error::Config`
/// before the model is asked, and nothing is parked; one of exactly the bound runs and parks
/// its halted run with that principal.
pub async fn a_principal_over_the_limit_runs_nothing(make: Make) {
    let s = subject!(make);
    let agent = Agent::once();
    let client = Client::builder(agent.model())
        .model_name("conformance")
        .store(Arc::clone(&s.handles[0]))
        .build()
        .expect("the client builds");
    let long = "p".repeat(MAX_NAME_BYTES + 1);
    let refused = client
        .for_principal(long)
        .run("Greet me.", &Agent::toolkit())
        .await
        .unwrap_err();
    assert!(
        matches!(&refused, Error::Config(why) if *why == format!(
            "the principal is {} bytes, more than the {MAX_NAME_BYTES} allowed (`toolnexus::limits::MAX_NAME_BYTES`)",
            MAX_NAME_BYTES + 1
        )),
        "{refused:?}"
    );
    let pending = s.store().list_pending(&PendingQuery::new()).await.unwrap();
    assert!(pending.runs.is_empty(), "nothing parked: {pending:?}");

    let at_the_bound = "p".repeat(MAX_NAME_BYTES);
    let halted = client
        .for_principal(at_the_bound.clone())
        .run("Greet me.", &Agent::toolkit())
        .await
        .unwrap();
    let pending = s.store().list_pending(&PendingQuery::new()).await.unwrap();
    assert_eq!(pending.runs.len(), 1);
    let stored = s
        .store()
        .get(&pending.runs[0].run_id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(stored.record.principal(), Some(at_the_bound.as_str()));
    assert!(halted.pending.is_some());
}
