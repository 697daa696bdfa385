//! The notification outbox (`toolnexus::store::outbox`, `toolnexus::notify`): a store built
//! with the notifiers [`NOTIFIERS`] writes one notification per notifier with each park, in
//! the park's transaction; a deliverer delivers it at least once to a real HTTP receiver on
//! 127.0.0.1, retries a refusal, gives up visibly, skips an answered request, and a
//! deliverer that dies mid-delivery leaves it to the next (the receiver drops the duplicate
//! by id).

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use toolnexus::notify::{BoxFuture, Deliverer, Notice, Notifier, NotifyError, WebhookNotifier};
use toolnexus::store::{
    NotificationState, NotifyReason, RunEvent, RunEventKind, RunStore, StoreError,
};
use toolnexus::{Answer, RunStatus};

use super::{Agent, Make, make_subject};
use crate::receivers::{HttpReceiver, Reply, SECRET};

/// The notifier names the outbox cases' stores are built with.
pub const NOTIFIERS: [&str; 2] = ["hook", "keep"];

/// The lease the outbox cases' deliverers hold a notification for.
const LEASE: Duration = Duration::from_millis(400);

/// Counts what it is told; fails the first `fail_first` deliveries.
#[derive(Default)]
struct Keep {
    fail_first: usize,
    calls: AtomicUsize,
}

impl Notifier for Keep {
    fn deliver<'a>(&'a self, _notice: &'a Notice) -> BoxFuture<'a, Result<(), NotifyError>> {
        Box::pin(async move {
            let call = self.calls.fetch_add(1, Ordering::SeqCst);
            if call < self.fail_first {
                Err(NotifyError::retry(format!("keep refuses call {call}")))
            } else {
                Ok(())
            }
        })
    }
}

fn deliverer(store: Arc<dyn RunStore>, hook_url: &str, keep: Arc<Keep>) -> Deliverer {
    let hook = WebhookNotifier::new(hook_url, SECRET.to_vec()).expect("the webhook notifier");
    Deliverer::builder(store)
        .notifier("hook", Arc::new(hook))
        .notifier("keep", keep)
        .links(|id| Some(format!("https://desk.example/r/{id}?exp=1&sig=x")))
        .retry_delay(Duration::from_millis(20))
        .lease(LEASE)
        .build()
}

/// The `notified` events of a history, as `(notifier, attempt, outcome)`.
fn notified(history: &[RunEvent]) -> Vec<(String, u32, String)> {
    history
        .iter()
        .filter(|e| e.event == RunEventKind::Notified)
        .map(|e| {
            (
                e.by.clone().unwrap_or_default(),
                e.attempt.unwrap_or(0),
                e.outcome.clone().unwrap_or_default(),
            )
        })
        .collect()
}

/// Calls `deliver_due` until `done` holds of the run's notifications, at most 10 s.
async fn deliver_until(
    d: &Deliverer,
    store: &dyn RunStore,
    run_id: &str,
    done: impl Fn(&[toolnexus::store::Notification]) -> bool,
) {
    let outbox = store.outbox().expect("an outbox");
    let deadline = tokio::time::Instant::now() + Duration::from_secs(10);
    loop {
        d.deliver_due().await.expect("deliver_due");
        let ns = outbox.notifications(run_id).await.unwrap();
        if done(&ns) {
            return;
        }
        assert!(
            tokio::time::Instant::now() < deadline,
            "not delivered in time: {ns:?}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// The notification of `run_id` for `notifier`.
async fn notification_of(
    outbox: &dyn toolnexus::store::Outbox,
    run_id: &str,
    notifier: &str,
) -> toolnexus::store::Notification {
    outbox
        .notifications(run_id)
        .await
        .unwrap()
        .into_iter()
        .find(|n| n.notifier == notifier)
        .unwrap_or_else(|| panic!("no notification for {notifier}"))
}

fn all_in(state: NotificationState) -> impl Fn(&[toolnexus::store::Notification]) -> bool {
    move |ns| !ns.is_empty() && ns.iter().all(|n| n.state == state)
}

/// A park writes exactly one notification per notifier, with ids the receivers dedupe on; a
/// refused park writes none; a finish that parks the run again writes its new request's.
pub async fn a_park_writes_one_notification_per_notifier(make: Make) {
    let s = subject!(make);
    let store = s.store();
    let outbox = store
        .outbox()
        .expect("a store built with notifiers has an outbox");
    assert_eq!(outbox.notifier_names(), NOTIFIERS);
    let agent = Agent {
        halts: 2,
        ..Agent::once()
    };
    let record = agent.halt().await;
    let info = store.park(record.clone()).await.unwrap();
    let ns = outbox.notifications(&info.run_id).await.unwrap();
    let mut ids: Vec<_> = ns.iter().map(|n| n.id.clone()).collect();
    ids.sort();
    assert_eq!(
        ids,
        [
            format!("{}.parked.hook", info.request_id),
            format!("{}.parked.keep", info.request_id)
        ]
    );
    for n in &ns {
        assert_eq!(
            (n.state, n.attempts, n.reason),
            (NotificationState::Pending, 0, NotifyReason::Parked)
        );
        assert_eq!(
            (n.run_id.as_str(), n.request_id.as_str()),
            (info.run_id.as_str(), info.request_id.as_str())
        );
    }
    // a second park of the same run is refused, and writes nothing
    assert!(matches!(
        store.park(record).await,
        Err(StoreError::Conflict(_))
    ));
    assert_eq!(outbox.notifications(&info.run_id).await.unwrap().len(), 2);
    // the answer resumes it; it halts again on a new request: two more
    let answer = Answer::accept(&info.request_id, "Ada");
    let claim = store.claim(&answer, "w").await.unwrap();
    let result = agent.resume(&claim.record, claim.answer.clone()).await;
    assert_eq!(result.status, RunStatus::Pending);
    let again = store.finish(&claim, result).await.unwrap();
    let ns = outbox.notifications(&info.run_id).await.unwrap();
    assert_eq!(ns.len(), 4, "{ns:?}");
    assert_eq!(
        ns.iter()
            .filter(|n| n.request_id == again.request_id)
            .count(),
        2
    );
}

/// A receiver that refuses the first two deliveries (503) gets the notification on the third
/// attempt, signed, with the request as the contract writes it, the run and the link; each
/// attempt is in the run's history (notifier, attempt, outcome).
pub async fn a_failing_receiver_gets_it_on_retry(make: Make) {
    let s = subject!(make);
    let store = s.handles[0].clone();
    let receiver = HttpReceiver::start(vec![Reply::Status(503), Reply::Status(503)]).await;
    let keep = Arc::new(Keep::default());
    let d = deliverer(store.clone(), &receiver.url, keep.clone());
    let info = store.park(Agent::once().halt().await).await.unwrap();
    deliver_until(
        &d,
        store.as_ref(),
        &info.run_id,
        all_in(NotificationState::Delivered),
    )
    .await;
    let handled = receiver.handled();
    assert_eq!(handled.len(), 1, "{handled:?}");
    let body = &handled[0];
    assert_eq!(
        body["notification"],
        format!("{}.parked.hook", info.request_id)
    );
    assert_eq!(body["run"], info.run_id.as_str());
    assert_eq!(body["request"]["id"], info.request_id.as_str());
    assert_eq!(body["request"]["kind"], "input");
    assert_eq!(body["request"]["prompt"], "What is your name?");
    assert_eq!(body["attempt"], 3);
    assert_eq!(
        body["link"],
        format!("https://desk.example/r/{}?exp=1&sig=x", info.request_id)
    );
    assert_eq!(receiver.requests().len(), 3);
    assert!(receiver.requests().iter().all(|(_, signed)| *signed));
    assert_eq!(keep.calls.load(Ordering::SeqCst), 1);
    let history = store.info(&info.run_id).await.unwrap().unwrap().history;
    let mut events = notified(&history);
    events.sort();
    let e = |n: &str, a, o: &str| (n.to_owned(), a, o.to_owned());
    assert_eq!(
        events,
        [
            e("hook", 1, "retry"),
            e("hook", 2, "retry"),
            e("hook", 3, "delivered"),
            e("keep", 1, "delivered")
        ]
    );
    let refused = history
        .iter()
        .find(|e| e.outcome.as_deref() == Some("retry"))
        .and_then(|e| e.error.clone())
        .unwrap();
    assert!(
        refused.ends_with("the receiver replied 503 Service Unavailable"),
        "{refused}"
    );
    assert_eq!(d.stats().delivered, 2);
    assert_eq!(d.stats().retried, 2);
}

/// A deliverer that dies mid-delivery (after its POST reached the receiver, before it
/// recorded the attempt) leaves the notification leased; once the lease runs out, the next
/// deliverer delivers it again. The receiver saw two requests with one id and handles it
/// once; the history records the attempt that was recorded (attempt 2).
pub async fn a_deliverer_that_dies_mid_delivery_leaves_it_to_the_next(make: Make) {
    let s = subject!(make);
    let store = s.handles[0].clone();
    let receiver = HttpReceiver::start(vec![Reply::Stall]).await;
    let keep = Arc::new(Keep::default());
    let info = store.park(Agent::once().halt().await).await.unwrap();
    let dying = deliverer(store.clone(), &receiver.url, keep.clone());
    let task = tokio::spawn(async move { dying.deliver_due().await });
    // the POST arrived (the receiver stalls on it): the deliverer dies now
    let deadline = tokio::time::Instant::now() + Duration::from_secs(5);
    while receiver.requests().is_empty() {
        assert!(tokio::time::Instant::now() < deadline, "no POST arrived");
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    task.abort();
    let _ = task.await;
    let outbox = store.outbox().unwrap();
    let hook = notification_of(outbox, &info.run_id, "hook").await;
    assert_eq!((hook.state, hook.attempts), (NotificationState::Pending, 1));
    // another handle, another deliverer
    let next = deliverer(s.handles.last().unwrap().clone(), &receiver.url, keep);
    deliver_until(
        &next,
        store.as_ref(),
        &info.run_id,
        all_in(NotificationState::Delivered),
    )
    .await;
    assert_eq!(receiver.requests().len(), 2);
    assert_eq!(
        receiver.requests()[0].0,
        receiver.requests()[1].0.clone().tap_attempt(1)
    );
    assert_eq!(receiver.handled().len(), 1);
    let history = store.info(&info.run_id).await.unwrap().unwrap().history;
    let hook_events: Vec<_> = notified(&history)
        .into_iter()
        .filter(|(n, ..)| n == "hook")
        .collect();
    assert_eq!(
        hook_events,
        [("hook".to_owned(), 2, "delivered".to_owned())]
    );
}

/// Sets a webhook body's `attempt`: two attempts' bodies differ only there.
trait TapAttempt {
    fn tap_attempt(self, n: u32) -> Self;
}

impl TapAttempt for serde_json::Value {
    fn tap_attempt(mut self, n: u32) -> Self {
        self["attempt"] = n.into();
        self
    }
}

/// A refusal of the notification itself (400) gives it up at once; a receiver that stays
/// down gives it up after the last attempt. Both are visible: the notification's state and
/// last error, and a `given_up` event in the run's history.
pub async fn a_refused_or_exhausted_notification_is_given_up_visibly(make: Make) {
    let s = subject!(make);
    let store = s.handles[0].clone();
    let outbox = store.outbox().unwrap();
    // refused: 400
    let refusing = HttpReceiver::start(vec![Reply::Status(400)]).await;
    let d = deliverer(store.clone(), &refusing.url, Arc::new(Keep::default()));
    let info = store.park(Agent::once().halt().await).await.unwrap();
    deliver_until(&d, store.as_ref(), &info.run_id, |ns| {
        ns.iter().all(|n| n.state != NotificationState::Pending)
    })
    .await;
    let hook = notification_of(outbox, &info.run_id, "hook").await;
    assert_eq!((hook.state, hook.attempts), (NotificationState::GivenUp, 1));
    assert!(
        hook.last_error
            .unwrap()
            .ends_with("replied 400 Bad Request")
    );
    // down: the keep notifier fails every time; 3 attempts at most
    let keep = Arc::new(Keep {
        fail_first: usize::MAX,
        ..Keep::default()
    });
    let receiver = HttpReceiver::start(vec![]).await;
    let hook = WebhookNotifier::new(&receiver.url, SECRET.to_vec()).unwrap();
    let d = Deliverer::builder(store.clone())
        .notifier("hook", Arc::new(hook))
        .notifier("keep", keep.clone())
        .retry_delay(Duration::from_millis(10))
        .max_attempts(3)
        .lease(LEASE)
        .build();
    let info = store.park(Agent::once().halt().await).await.unwrap();
    deliver_until(&d, store.as_ref(), &info.run_id, |ns| {
        ns.iter().all(|n| n.state != NotificationState::Pending)
    })
    .await;
    assert_eq!(keep.calls.load(Ordering::SeqCst), 3);
    let history = store.info(&info.run_id).await.unwrap().unwrap().history;
    let keep_events: Vec<_> = notified(&history)
        .into_iter()
        .filter(|(n, ..)| n == "keep")
        .map(|(_, a, o)| (a, o))
        .collect();
    let o = |a, s: &str| (a, s.to_owned());
    assert_eq!(
        keep_events,
        [o(1, "retry"), o(2, "retry"), o(3, "given_up")]
    );
    let given_up = history
        .iter()
        .rev()
        .find(|e| e.outcome.as_deref() == Some("given_up"))
        .unwrap();
    assert_eq!(given_up.error.as_deref(), Some("keep refuses call 2"));
    assert_eq!(d.stats().given_up, 1);
}

/// A request answered before its notification went out is not notified: the notification is
/// skipped (and says why), and the receiver hears nothing.
pub async fn an_answered_request_is_not_notified(make: Make) {
    let s = subject!(make);
    let store = s.handles[0].clone();
    let receiver = HttpReceiver::start(vec![]).await;
    let d = deliverer(store.clone(), &receiver.url, Arc::new(Keep::default()));
    let info = store.park(Agent::once().halt().await).await.unwrap();
    store
        .submit(&Answer::accept(&info.request_id, "Ada"), "alice")
        .await
        .unwrap();
    deliver_until(
        &d,
        store.as_ref(),
        &info.run_id,
        all_in(NotificationState::Skipped),
    )
    .await;
    assert!(receiver.requests().is_empty());
    let ns = store
        .outbox()
        .unwrap()
        .notifications(&info.run_id)
        .await
        .unwrap();
    assert_eq!(
        ns[0].last_error.as_deref(),
        Some("the request was answered before its delivery (the run is answered)")
    );
}

/// A notification whose deliverers keep dying in it (each claim begins an attempt that is
/// never recorded) is given up once its attempts pass the maximum, not claimed without end.
pub async fn a_notification_whose_deliverers_keep_dying_is_given_up(make: Make) {
    let s = subject!(make);
    let store = s.handles[0].clone();
    let outbox = store.outbox().unwrap();
    let info = store.park(Agent::once().halt().await).await.unwrap();
    let names = vec!["hook".to_owned()];
    for _ in 0..2 {
        // a deliverer claims it for 1 ms and dies
        let claimed = outbox
            .claim_notifications("dead", &names, 10, Duration::from_millis(1))
            .await
            .unwrap();
        assert_eq!(claimed.len(), 1);
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    let receiver = HttpReceiver::start(vec![]).await;
    let hook = WebhookNotifier::new(&receiver.url, SECRET.to_vec()).unwrap();
    let d = Deliverer::builder(store.clone())
        .notifier("hook", Arc::new(hook))
        .max_attempts(2)
        .lease(LEASE)
        .build();
    d.deliver_due().await.unwrap();
    let hook = notification_of(outbox, &info.run_id, "hook").await;
    assert_eq!((hook.state, hook.attempts), (NotificationState::GivenUp, 3));
    assert_eq!(
        hook.last_error.as_deref(),
        Some(
            "2 attempts were begun and the last ones never ended (their deliverers died): given up"
        )
    );
    assert!(receiver.requests().is_empty());
    // and nobody claims it again
    tokio::time::sleep(Duration::from_millis(5)).await;
    assert!(
        outbox
            .claim_notifications("late", &names, 10, LEASE)
            .await
            .unwrap()
            .is_empty()
    );
}

/// Only the deliverer holding an attempt records it, once; it still does after the run was
/// deleted (the notification's row ends as the attempt did; no history is left to append
/// to).
pub async fn an_attempt_is_recorded_by_its_owner_once_even_after_its_run_is_deleted(make: Make) {
    let s = subject!(make);
    let store = s.store();
    let outbox = store.outbox().unwrap();
    let info = store.park(Agent::once().halt().await).await.unwrap();
    let names = vec!["hook".to_owned()];
    let [n]: [toolnexus::store::Notification; 1] = outbox
        .claim_notifications("d1", &names, 10, LEASE)
        .await
        .unwrap()
        .try_into()
        .expect("one claimed");
    assert_eq!((n.attempts, n.lease_owner.as_deref()), (1, Some("d1")));
    let lost = StoreError::LeaseLost {
        run_id: info.run_id.clone(),
    };
    let delivered = toolnexus::store::Attempt::Delivered;
    assert_eq!(
        outbox.record_attempt(&n, "d2", &delivered).await,
        Err(lost.clone()),
        "not d2's attempt"
    );
    assert!(store.delete(&info.run_id).await.unwrap());
    outbox.record_attempt(&n, "d1", &delivered).await.unwrap();
    assert_eq!(
        outbox.record_attempt(&n, "d1", &delivered).await,
        Err(lost),
        "recorded already"
    );
    let hook = notification_of(outbox, &info.run_id, "hook").await;
    assert_eq!(
        (hook.state, hook.attempts, hook.lease_owner),
        (NotificationState::Delivered, 1, None)
    );
}
