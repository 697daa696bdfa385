//! A store that fails: the worker backs off (doubling waits), never spins, and goes on once
//! the store is back.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, SystemTime};

use serde_json::Value;
use toolnexus::store::{
    Claim, MemoryStore, Page, PendingQuery, RunInfo, RunStore, StoreError, StoreResult, StoredRun,
};
use toolnexus::worker::Worker;
use toolnexus::{Answer, BoxFuture, PendingRun, RunResult};
use toolnexus_tests::store_conformance::Agent;

use super::start;

/// A [`MemoryStore`] whose `claim_next` fails while `down` is set, counting its calls, and
/// keeping every checkpoint it is given.
#[derive(Debug, Default)]
pub(crate) struct Flaky {
    pub(crate) inner: MemoryStore,
    down: AtomicBool,
    calls: AtomicUsize,
    pub(crate) checkpoints: std::sync::Mutex<Vec<Value>>,
}

impl RunStore for Flaky {
    fn park(&self, record: PendingRun) -> BoxFuture<'_, StoreResult<RunInfo>> {
        self.inner.park(record)
    }
    fn get<'a>(&'a self, run_id: &'a str) -> BoxFuture<'a, StoreResult<Option<StoredRun>>> {
        self.inner.get(run_id)
    }
    fn get_by_request<'a>(
        &'a self,
        request_id: &'a str,
    ) -> BoxFuture<'a, StoreResult<Option<StoredRun>>> {
        self.inner.get_by_request(request_id)
    }
    fn claim<'a>(
        &'a self,
        answer: &'a Answer,
        owner: &'a str,
    ) -> BoxFuture<'a, StoreResult<Claim>> {
        self.inner.claim(answer, owner)
    }
    fn submit<'a>(
        &'a self,
        answer: &'a Answer,
        answered_by: &'a str,
    ) -> BoxFuture<'a, StoreResult<RunInfo>> {
        self.inner.submit(answer, answered_by)
    }
    fn claim_next<'a>(&'a self, owner: &'a str) -> BoxFuture<'a, StoreResult<Option<Claim>>> {
        self.calls.fetch_add(1, Ordering::SeqCst);
        if self.down.load(Ordering::SeqCst) {
            return Box::pin(async { Err(StoreError::Backend("connection refused".to_owned())) });
        }
        self.inner.claim_next(owner)
    }
    fn release<'a>(&'a self, claim: &'a Claim) -> BoxFuture<'a, StoreResult<()>> {
        self.inner.release(claim)
    }
    fn next_due(&self) -> BoxFuture<'_, StoreResult<Option<SystemTime>>> {
        self.inner.next_due()
    }
    fn list_damaged(
        &self,
        limit: usize,
    ) -> BoxFuture<'_, StoreResult<Vec<toolnexus::store::DamagedRun>>> {
        self.inner.list_damaged(limit)
    }
    fn waiting(&self) -> BoxFuture<'_, StoreResult<u64>> {
        self.inner.waiting()
    }
    fn wait_for_work(&self, timeout: Duration) -> BoxFuture<'_, ()> {
        self.inner.wait_for_work(timeout)
    }
    fn take_over<'a>(&'a self, owner: &'a str) -> BoxFuture<'a, StoreResult<Option<Claim>>> {
        self.inner.take_over(owner)
    }
    fn renew<'a>(&'a self, claim: &'a mut Claim) -> BoxFuture<'a, StoreResult<()>> {
        self.inner.renew(claim)
    }
    fn checkpoint<'a>(&'a self, claim: &'a Claim, state: Value) -> BoxFuture<'a, StoreResult<()>> {
        self.checkpoints.lock().unwrap().push(state.clone());
        self.inner.checkpoint(claim, state)
    }
    fn finish<'a>(
        &'a self,
        claim: &'a Claim,
        result: RunResult,
    ) -> BoxFuture<'a, StoreResult<RunInfo>> {
        self.inner.finish(claim, result)
    }
    fn list_pending<'a>(&'a self, query: &'a PendingQuery) -> BoxFuture<'a, StoreResult<Page>> {
        self.inner.list_pending(query)
    }
    fn expire(&self) -> BoxFuture<'_, StoreResult<Vec<String>>> {
        self.inner.expire()
    }
    fn delete<'a>(&'a self, run_id: &'a str) -> BoxFuture<'a, StoreResult<bool>> {
        self.inner.delete(run_id)
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn backs_off_while_the_store_fails_and_goes_on_after() {
    let store = Arc::new(Flaky::default());
    store.down.store(true, Ordering::SeqCst);
    let agent = Agent::once();
    let w = Worker::builder(store.clone(), agent.client(), Agent::toolkit())
        .name("w-flaky")
        .poll(Duration::from_millis(20))
        .max_backoff(Duration::from_millis(800))
        .build();
    let running = start(w.clone());
    tokio::time::sleep(Duration::from_millis(1600)).await;
    // 50 + 100 + 200 + 400 + 800 ms: five waits fit, so at most six calls (a spinning worker,
    // or one that polled every 20 ms, would make dozens)
    let calls = store.calls.load(Ordering::SeqCst);
    assert!((4..=7).contains(&calls), "{calls} calls in 1.6 s");
    assert_eq!(
        usize::try_from(w.stats().store_errors).unwrap(),
        calls,
        "each failure counted"
    );

    // back up: a submitted answer is resumed within the longest wait
    let record = agent.halt().await;
    let answer = record.pending().accept("Ada");
    let info = store.park(record).await.unwrap();
    store.down.store(false, Ordering::SeqCst);
    store.submit(&answer, "alice").await.unwrap();
    let done = store
        .wait_finished(&info.run_id, Duration::from_secs(3))
        .await
        .unwrap()
        .expect("resumed once the store is back");
    assert_eq!(done.result.unwrap().text, r#"done: hello "Ada""#);
    let stats = running.stop().await;
    assert_eq!(stats.finished, 1);
}
