//! Crash-cut calls (the `reconcile` kind): a worker dies inside `pay` (not idempotent), the
//! takeover parks the run on a `reconcile` request, and every answer to it does what it says
//! through the loop: rerun, record, fail (with or without an output), decline; an answer that
//! says none of them runs nothing. A rerun in a claimed run saves its marker again, so a
//! second crash asks again.

use std::sync::Arc;
use std::time::Duration;

use serde_json::json;
use toolnexus::reconcile::Reconcile;
use toolnexus::store::{MemoryStore, RunStore};
use toolnexus::{Answer, DeclineReason, PendingRun, RunResult};
use toolnexus_tests::store_conformance::{CrashCut, assert_reconcile};

const LEASE: Duration = Duration::from_millis(200);

/// The run parked on the reconcile request of the cut `pay` call, the tools and the store.
async fn parked() -> (CrashCut, Arc<dyn RunStore>, RunResult) {
    let store: Arc<dyn RunStore> = Arc::new(MemoryStore::new().with_lease(LEASE));
    let tools = CrashCut::new();
    let taken = tools.crash_inside_pay(&store, LEASE).await;
    let parked = CrashCut::client()
        .resume_claim(store.as_ref(), &taken, &tools.toolkit)
        .await
        .unwrap();
    let key = tools.keys.lock().unwrap()[0].clone();
    assert_reconcile(&parked, &key);
    (tools, store, parked)
}

/// `pay`'s result and the run's final text after resuming `record` with `answer`.
async fn answered(tools: &CrashCut, record: &PendingRun, answer: Answer) -> (String, bool, String) {
    let done = CrashCut::client()
        .resume(record.clone(), answer, &tools.toolkit)
        .await
        .unwrap();
    let pay = &done.tool_calls[1];
    assert_eq!(pay.name, "pay");
    (pay.output.clone(), pay.is_error, done.text)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn each_answer_to_a_reconcile_request_does_what_it_says() {
    let (tools, _store, parked) = parked().await;
    let request = parked.pending.as_deref().unwrap().clone();
    let record = PendingRun::try_from(&parked).unwrap();
    assert_eq!(tools.counts(), [1, 2]);
    let prompt = &request.prompt;

    let rerun = answered(&tools, &record, Reconcile::Rerun.answer(&request)).await;
    assert_eq!(
        rerun,
        (
            "paid 40 #2".to_owned(),
            false,
            "done: paid 40 #2 | looked #2".to_owned()
        )
    );
    assert_eq!(tools.counts(), [2, 2], "rerun ran pay once more");
    let key = tools.keys.lock().unwrap().clone();
    assert_eq!(key[0], key[1], "the rerun keeps the call's idempotency key");

    let cases = [
        (
            Reconcile::Record("paid by hand".to_owned()).answer(&request),
            ("paid by hand".to_owned(), false),
        ),
        (
            Reconcile::Fail(Some("bounced".to_owned())).answer(&request),
            ("bounced".to_owned(), true),
        ),
        (
            Reconcile::Fail(None).answer(&request),
            (
                format!("failed: the call was cut off by a crash, and a person chose to fail it: {prompt}"),
                true,
            ),
        ),
        (
            request.decline(DeclineReason::Declined),
            (format!("declined/expired: {prompt}"), true),
        ),
        (
            request.accept(json!({"action": "retry"})),
            (
                "invalid reconcile answer: unknown action `retry`; expected `rerun`, `record` or `fail`; nothing ran".to_owned(),
                true,
            ),
        ),
        (
            request.accept(json!({"action": "record"})),
            (
                "invalid reconcile answer: `record` needs the call's `output`; nothing ran".to_owned(),
                true,
            ),
        ),
        (
            Answer::ok(&request.id),
            (
                "invalid reconcile answer: the answer carries no `action` (one of `rerun`, `record`, `fail`); nothing ran".to_owned(),
                true,
            ),
        ),
        (
            request.accept(json!({"action": "fail", "output": 7})),
            (
                "invalid reconcile answer: `output` must be text, not 7; nothing ran".to_owned(),
                true,
            ),
        ),
    ];
    for (answer, (output, is_error)) in cases {
        let (got, got_error, text) = answered(&tools, &record, answer).await;
        assert_eq!((&got, got_error), (&output, is_error));
        assert_eq!(text, format!("done: {output} | looked #2"));
    }
    assert_eq!(tools.counts(), [2, 2], "only the rerun ran pay");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_rerun_that_is_cut_again_is_asked_again() {
    let (tools, store, parked) = parked().await;
    let request = parked.pending.as_deref().unwrap().clone();
    let claim = store
        .claim(&Reconcile::Rerun.answer(&request), "worker-c")
        .await
        .unwrap();
    let stalled = Arc::new(tokio::sync::Notify::new());
    *tools.stall.lock().unwrap() = Some(Arc::clone(&stalled));
    let tools = Arc::new(tools);
    let worker_c = {
        let (store, tools) = (Arc::clone(&store), Arc::clone(&tools));
        tokio::spawn(async move {
            CrashCut::client()
                .resume_claim(store.as_ref(), &claim, &tools.toolkit)
                .await
        })
    };
    tokio::time::timeout(Duration::from_secs(10), stalled.notified())
        .await
        .expect("the rerun is inside pay");
    worker_c.abort();
    let _ = worker_c.await;
    *tools.stall.lock().unwrap() = None;
    tokio::time::sleep(LEASE + Duration::from_millis(150)).await;
    let taken = store.take_over("worker-d").await.unwrap().unwrap();
    let again = CrashCut::client()
        .resume_claim(store.as_ref(), &taken, &tools.toolkit)
        .await
        .unwrap();
    let key = tools.keys.lock().unwrap()[0].clone();
    let second = assert_reconcile(&again, &key);
    assert_ne!(second.id, request.id, "a new request");
    // `look`'s result from the first takeover was kept with the marker: it did not run again
    assert_eq!(
        tools.counts(),
        [2, 2],
        "pay ran twice in all, never silently"
    );
}
