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
    // whether the winner had parked again on its next request or not: answered already
    assert!(
        matches!(&loser, Error::Store(StoreError::AlreadyAnswered { run_id, request_id, .. })
            if *run_id == parked.info.run_id && *request_id == request.id),
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

/// Issue 22: `client.answer` took a 50 MB answer (9x its size in RSS through SQLite). Over
/// `MAX_ANSWER_DATA_BYTES` the store refuses it before writing, on every store, and the run
/// stays parked; an answer at the cap resumes it.
#[tokio::test]
async fn a_50_mb_answer_is_refused_and_the_run_stays_parked() {
    let dir = std::env::temp_dir().join(format!("toolnexus-answer-cap-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let stores: Vec<Arc<dyn RunStore>> = vec![
        Arc::new(MemoryStore::new()),
        Arc::new(SqliteStore::open(dir.join("runs.db")).await.unwrap()),
    ];
    let toolkit = Agent::toolkit();
    for store in stores {
        let agent = Agent::once();
        let client = client_with(&agent, Arc::clone(&store));
        let run = client.run("Greet me.", &toolkit).await.unwrap();
        let request = run.pending.clone().unwrap();
        let huge = "x".repeat(50 << 20);
        let err = client
            .answer(request.accept(huge), &toolkit)
            .await
            .expect_err("refused");
        assert!(
            matches!(&err, Error::Store(StoreError::Invalid(_))),
            "{err:?}"
        );
        assert_eq!(
            err.to_string(),
            format!(
                "the answer to `{}` is refused: its data is larger than 1048576 bytes as JSON (`toolnexus::limits::MAX_ANSWER_DATA_BYTES`)",
                request.id
            )
        );
        let parked = store.get_by_request(&request.id).await.unwrap().unwrap();
        assert_eq!(parked.info.state, RunState::Parked);
        // the same through submit
        assert!(matches!(
            store
                .submit(&request.accept("y".repeat(2 << 20)), "someone")
                .await,
            Err(StoreError::Invalid(_))
        ));
        let done = client
            .answer(request.accept("Ada"), &toolkit)
            .await
            .unwrap();
        assert!(!done.is_pending());
    }
    let _ = std::fs::remove_dir_all(&dir);
}
