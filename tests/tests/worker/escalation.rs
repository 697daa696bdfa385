//! A worker escalates a request on time: at its deadline the request goes to the next group
//! with its new deadline (instead of expiring), an answer from that group before it resumes the
//! run, and the tool runs once. On every store available here.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant, SystemTime};

use serde_json::json;
use toolnexus::store::{Answerer, RunEventKind, RunState};
use toolnexus::{Client, FnModel, FnTool, ModelRequest, Reply, Request, Role, ToolResult, Toolkit};

use super::{start, stores, worker};

fn payer(ran: Arc<AtomicUsize>) -> (Client, Toolkit) {
    let pay = FnTool::builder("pay")
        .description("Pays an invoice.")
        .handler(move |_args, ctx| {
            let ran = Arc::clone(&ran);
            async move {
                if ctx.answer().is_some_and(|a| a.ok) {
                    ran.fetch_add(1, Ordering::SeqCst);
                    return ToolResult::success("paid");
                }
                ToolResult::suspended(
                    Request::approval("Pay invoice 7?")
                        .with_approvers("finance")
                        .expires_in(Duration::from_millis(400))
                        .escalate_to("cfo", Duration::from_secs(30)),
                )
            }
        })
        .build()
        .unwrap();
    let model = FnModel::new(|req: ModelRequest| async move {
        match req.messages.iter().rev().find(|m| m.role == Role::Tool) {
            None => Reply::tool_call("pay", json!({})),
            Some(m) => Reply::text(format!("done: {}", m.content.clone().unwrap_or_default())),
        }
    });
    let client = Client::builder(model)
        .model_name("escalation")
        .build()
        .unwrap();
    (client, Toolkit::builder().tool(pay).build().unwrap())
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_worker_escalates_at_the_deadline_and_the_new_group_answers() {
    for backend in stores("worker::escalation", Duration::from_secs(30)).await {
        let ran = Arc::new(AtomicUsize::new(0));
        let (client, toolkit) = payer(Arc::clone(&ran));
        let running = start(worker(
            &backend,
            client.clone(),
            toolkit.clone(),
            "w-escalate",
        ));
        let store = &backend.store;
        let result = client.run("Pay invoice 7.", &toolkit).await.unwrap();
        let record = toolnexus::PendingRun::try_from(result).unwrap();
        let request = record.pending().clone();
        let deadline = request.expires_at_time().unwrap();
        let run_id = store.park(record).await.unwrap().run_id;

        // no one calls `expire`: the worker escalates when the deadline passes
        let start_wait = Instant::now();
        let escalated = loop {
            let info = store.info(&run_id).await.unwrap().unwrap();
            if info.approvers.as_deref() == Some("cfo") {
                break info;
            }
            assert!(
                start_wait.elapsed() < Duration::from_secs(10),
                "{}: not escalated: {:?}",
                backend.name,
                info.history
            );
            tokio::time::sleep(Duration::from_millis(20)).await;
        };
        let at = escalated.history.last().unwrap();
        assert_eq!(at.event, RunEventKind::Escalated, "{}", backend.name);
        assert!(
            at.at >= deadline,
            "{}: escalated before the deadline",
            backend.name
        );
        assert!(
            at.at < deadline + Duration::from_secs(5),
            "{}: escalated late",
            backend.name
        );
        assert_eq!(escalated.state, RunState::Parked);
        assert!(
            SystemTime::now() > deadline,
            "past the request's own expiresAt"
        );

        let cathy = Answerer::new("cathy").in_groups(["cfo"]);
        store
            .submit_as(&request.accept(json!({})), &cathy)
            .await
            .unwrap();
        let done = store
            .wait_finished(&run_id, Duration::from_secs(20))
            .await
            .unwrap()
            .expect("the run ends");
        assert_eq!(done.result.unwrap().text, "done: paid", "{}", backend.name);
        assert_eq!(
            ran.load(Ordering::SeqCst),
            1,
            "{}: the tool ran once",
            backend.name
        );
        running.stop().await;
    }
}

/// Keeps the notices it is given.
#[derive(Default)]
struct Kept(std::sync::Mutex<Vec<toolnexus::notify::Notice>>);

impl toolnexus::notify::Notifier for Kept {
    fn deliver<'a>(
        &'a self,
        notice: &'a toolnexus::notify::Notice,
    ) -> toolnexus::notify::BoxFuture<'a, Result<(), toolnexus::notify::NotifyError>> {
        self.0.lock().unwrap().push(notice.clone());
        Box::pin(async { Ok(()) })
    }
}

/// Attack: a request for finance escalates to the cfo at its deadline and the notifiers are
/// told. The escalation's notice must name whom it now waits for: its request carries the
/// group and deadline it moved to (as the answer page shows them), not the ones it was made
/// with, so a notifier routing by `approvers` tells the cfo, not finance again.
#[tokio::test]
async fn an_escalation_notice_names_the_group_and_deadline_it_moved_to() {
    use toolnexus::store::{MemoryStore, NotifyReason, RunStore};
    let store = Arc::new(MemoryStore::new().with_notifiers(["keep"]).unwrap());
    let kept = Arc::new(Kept::default());
    let deliverer = toolnexus::notify::Deliverer::builder(store.clone() as Arc<dyn RunStore>)
        .notifier("keep", kept.clone())
        .build();
    let (client, toolkit) = payer(Arc::new(AtomicUsize::new(0)));
    let result = client.run("Pay invoice 7.", &toolkit).await.unwrap();
    let record = toolnexus::PendingRun::try_from(result).unwrap();
    let request = record.pending().clone();
    let moved_to = request.escalation()[0].expires_at;
    store.park(record).await.unwrap();
    assert_eq!(deliverer.deliver_due().await.unwrap(), 1);
    while SystemTime::now() <= request.expires_at_time().unwrap() {
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    assert!(
        store.expire().await.unwrap().is_empty(),
        "escalated, not expired"
    );
    assert_eq!(deliverer.deliver_due().await.unwrap(), 1);
    let notices = kept.0.lock().unwrap().clone();
    assert_eq!(notices.len(), 2);
    assert_eq!(notices[0].notification().reason, NotifyReason::Parked);
    assert_eq!(notices[0].request()["data"]["approvers"], "finance");
    let escalated = &notices[1];
    assert_eq!(escalated.notification().reason, NotifyReason::Escalated);
    assert_eq!(escalated.request()["id"], json!(request.id));
    assert_eq!(escalated.request()["data"]["approvers"], "cfo");
    let now: Request = serde_json::from_value(escalated.request().clone()).unwrap();
    let ms = |at: SystemTime| {
        at.duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_millis()
    };
    assert_eq!(now.expires_at_time().map(ms), Some(ms(moved_to)));
}
