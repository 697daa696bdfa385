//! `Client` with a run store: every halt parks itself, `answer` claims, resumes and records.

use std::sync::Arc;
use std::time::Duration;

use toolnexus::store::{MemoryStore, RunState, RunStore, SqliteStore, StoreError};
use toolnexus::{Client, Error, FnModel, ModelRequest, Reply};
use toolnexus_tests::store_conformance::Agent;

fn client_with(agent: &Agent, store: Arc<dyn RunStore>) -> Client {
    Client::builder(agent.model())
        .model_name("conformance")
        .store(store)
        .build()
        .unwrap()
}

#[tokio::test]
async fn halts_park_themselves_and_an_answer_resumes_once() {
    let dir = std::env::temp_dir().join(format!("toolnexus-client-store-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("runs.db");
    let agent = Agent {
        halts: 2,
        ..Agent::once()
    };
    let toolkit = Agent::toolkit();

    // process 1: the run halts and parks itself
    let store: Arc<dyn RunStore> = Arc::new(SqliteStore::open(&path).await.unwrap());
    let first = client_with(&agent, Arc::clone(&store))
        .run("Greet me.", &toolkit)
        .await
        .unwrap();
    let request = first.pending.clone().unwrap();
    let parked = store.get_by_request(&request.id).await.unwrap().unwrap();
    assert_eq!(parked.info.state, RunState::Parked);
    drop(store);

    // process 2: a fresh store handle and client answer by request id; the run halts again
    let store: Arc<dyn RunStore> = Arc::new(SqliteStore::open(&path).await.unwrap());
    let client = client_with(&agent, Arc::clone(&store));
    let (a, b) = tokio::join!(
        client.answer(request.accept("Ada"), &toolkit),
        client.answer(request.accept("Eve"), &toolkit),
    );
    let (second, loser) = match (a, b) {
        (Ok(r), Err(e)) | (Err(e), Ok(r)) => (r, e),
        other => panic!("exactly one answer resumes: {other:?}"),
    };
    assert!(
        matches!(loser, Error::Store(StoreError::AlreadyClaimed { .. })),
        "{loser}"
    );
    assert!(second.is_pending());
    let next = second.pending.clone().unwrap();
    let again = store.get_by_request(&next.id).await.unwrap().unwrap();
    assert_eq!(again.info.run_id, parked.info.run_id);
    assert_eq!(again.info.state, RunState::Parked);

    let done = client.answer(next.accept("Bob"), &toolkit).await.unwrap();
    assert_eq!(done.text, r#"done: hello "Bob""#);
    let stored = store.get(&parked.info.run_id).await.unwrap().unwrap();
    assert_eq!(stored.info.state, RunState::Finished);
    assert_eq!(stored.result.unwrap(), done);
    let _ = std::fs::remove_dir_all(&dir);
}

#[tokio::test]
async fn a_failed_wait_for_parks_its_halted_run() {
    let store = Arc::new(MemoryStore::new());
    let client = Client::builder(FnModel::new(|_req: ModelRequest| async {
        Reply::tool_call("ask", serde_json::json!({"kind": "input"}))
    }))
    .model_name("m")
    .wait_for(|_req| async {
        tokio::time::sleep(Duration::from_secs(5)).await;
        toolnexus::Answer::ok("never")
    })
    .timeout(Duration::from_millis(50))
    .store(store.clone())
    .build()
    .unwrap();
    let err = client
        .run("Greet me.", &Agent::toolkit())
        .await
        .unwrap_err();
    let halted = err.halted_run().expect("the error carries the halted run");
    let request = halted.pending.clone().unwrap();
    let parked = store.get_by_request(&request.id).await.unwrap().unwrap();
    assert_eq!(parked.info.state, RunState::Parked);
    assert_eq!(parked.record.pending(), &*request);
}
