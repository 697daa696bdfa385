//! A turn's questions together through the `Worker`, on every store: the run is resumed once
//! the last of its answers is recorded, each call executed once with its own answer; a run
//! whose first request expires is resumed with its unanswered requests declined.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use toolnexus::Answer;
use toolnexus::store::RunState;
use toolnexus_tests::store_conformance::{
    halt_together, halt_together_expiring, together_client, together_toolkit,
};

use super::{start, stores, worker};

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_worker_resumes_a_together_run_once_its_last_answer_arrives() {
    for s in stores(
        "the_worker_resumes_a_together_run_once_its_last_answer_arrives",
        Duration::from_secs(30),
    )
    .await
    {
        let ran = Arc::new(AtomicUsize::new(0));
        let record = halt_together(&ran, None).await;
        let ids: Vec<String> = record.requests().iter().map(|r| r.id.clone()).collect();
        let run_id = s.store.park(record).await.unwrap().run_id;
        let w = worker(&s, together_client(None), together_toolkit(&ran), "w-1");
        let running = start(w);
        s.store
            .submit(&Answer::accept(&ids[2], "12A"), "carol")
            .await
            .unwrap();
        s.store
            .submit(&Answer::accept(&ids[1], "May 1"), "bob")
            .await
            .unwrap();
        tokio::time::sleep(Duration::from_millis(300)).await;
        let waiting = s.store.info(&run_id).await.unwrap().unwrap();
        assert_eq!(
            waiting.state,
            RunState::Parked,
            "{}: one still waits",
            s.name
        );
        s.store
            .submit(&Answer::accept(&ids[0], "Oslo"), "alice")
            .await
            .unwrap();
        let done = s
            .store
            .wait_finished(&run_id, Duration::from_secs(20))
            .await
            .unwrap()
            .unwrap_or_else(|| panic!("{}: the run did not finish", s.name));
        assert_eq!(
            done.result.unwrap().text,
            r#"city is "Oslo"; date is "May 1"; seat is "12A""#,
            "{}",
            s.name
        );
        assert_eq!(
            ran.load(Ordering::SeqCst),
            6,
            "{}: each call once more",
            s.name
        );
        let stats = running.stop().await;
        assert_eq!(
            (stats.claimed, stats.finished),
            (1, 1),
            "{}: {stats:?}",
            s.name
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_expired_together_run_reads_its_unanswered_requests_declined() {
    for s in stores(
        "an_expired_together_run_reads_its_unanswered_requests_declined",
        Duration::from_secs(30),
    )
    .await
    {
        let ran = Arc::new(AtomicUsize::new(0));
        // the run's deadline is its first request's
        let record = halt_together_expiring(&ran, [Some(600), None, None]).await;
        let ids: Vec<String> = record.requests().iter().map(|r| r.id.clone()).collect();
        let run_id = s.store.park(record).await.unwrap().run_id;
        s.store
            .submit(&Answer::accept(&ids[1], "May 1"), "bob")
            .await
            .unwrap();
        let w = worker(&s, together_client(None), together_toolkit(&ran), "w-1");
        let running = start(w);
        let done = s
            .store
            .wait_finished(&run_id, Duration::from_secs(20))
            .await
            .unwrap()
            .unwrap_or_else(|| panic!("{}: the run did not finish", s.name));
        assert!(
            done.info
                .history
                .iter()
                .any(|e| e.event == toolnexus::store::RunEventKind::Expired),
            "{}",
            s.name
        );
        assert_eq!(
            done.result.unwrap().text,
            "declined/expired: city?; date is \"May 1\"; declined/expired: seat?",
            "{}",
            s.name
        );
        running.stop().await;
    }
}
