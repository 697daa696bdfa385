//! Governed approvals: who may answer a request (its group, `data.approvers`) and where it goes
//! when its deadline passes (`data.escalate`). The store keeps the current group, lists by the
//! groups of a person, refuses a submit from outside the group (recording nothing), escalates
//! at the deadline instead of expiring (group, deadline and history move; exactly once under
//! racing sweeps), accepts an answer before the new deadline (the tool runs once) and declines
//! only at the last step's deadline.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, SystemTime};

use serde_json::json;
use toolnexus::store::{
    Answerer, NotifyReason, PendingQuery, RunEventKind, RunInfo, RunState, RunStore, StoreError,
};
use toolnexus::worker::Worker;
use toolnexus::{
    CancellationToken, Client, FnModel, FnTool, ModelRequest, PendingRun, Reply, Request, Role,
    RunStatus, ToolResult, Toolkit,
};

use super::{LEASE, Make, NOTIFIERS, make_subject};

/// An agent whose `pay` tool asks for an approval by `approvers` (when given), due in
/// `expires_ms` and escalating through `steps` (group, ms after the deadline before), and
/// counts its runs.
#[derive(Clone, Debug)]
struct Payer {
    approvers: Option<&'static str>,
    expires_ms: u64,
    steps: Vec<(&'static str, u64)>,
    ran: Arc<AtomicUsize>,
}

impl Payer {
    fn new(
        approvers: Option<&'static str>,
        expires_ms: u64,
        steps: &[(&'static str, u64)],
    ) -> Self {
        Self {
            approvers,
            expires_ms,
            steps: steps.to_vec(),
            ran: Arc::default(),
        }
    }

    fn toolkit(&self) -> Toolkit {
        let me = self.clone();
        let pay = FnTool::builder("pay")
            .description("Pays an invoice.")
            .handler(move |_args, ctx| {
                let me = me.clone();
                async move {
                    if let Some(answer) = ctx.answer() {
                        if !answer.ok {
                            return ToolResult::error("declined");
                        }
                        me.ran.fetch_add(1, Ordering::SeqCst);
                        return ToolResult::success("paid");
                    }
                    let mut request = Request::approval("Pay invoice 7?")
                        .expires_in(Duration::from_millis(me.expires_ms));
                    if let Some(group) = me.approvers {
                        request = request.with_approvers(group);
                    }
                    for (group, ms) in &me.steps {
                        request = request.escalate_to(*group, Duration::from_millis(*ms));
                    }
                    ToolResult::suspended(request)
                }
            })
            .build()
            .expect("the pay tool builds");
        Toolkit::builder()
            .tool(pay)
            .build()
            .expect("the toolkit builds")
    }

    fn client() -> Client {
        let model = FnModel::new(|req: ModelRequest| async move {
            match req.messages.iter().rev().find(|m| m.role == Role::Tool) {
                None => Reply::tool_call("pay", json!({})),
                Some(result) => Reply::text(format!(
                    "done: {}",
                    result.content.clone().unwrap_or_default()
                )),
            }
        });
        Client::builder(model)
            .model_name("governed")
            .build()
            .expect("the client builds")
    }

    async fn park(&self, store: &dyn RunStore) -> (RunInfo, Request) {
        let result = Self::client()
            .run("Pay invoice 7.", &self.toolkit())
            .await
            .expect("the run halts");
        assert_eq!(result.status, RunStatus::Pending, "{result:?}");
        let record = PendingRun::try_from(result).expect("a record");
        let request = record.pending().clone();
        (store.park(record).await.expect("parks"), request)
    }

    /// The run `run_id` resumed to its end by a worker over `store`.
    async fn resumed(
        &self,
        store: &Arc<dyn RunStore>,
        run_id: &str,
    ) -> toolnexus::store::StoredRun {
        let stop = CancellationToken::new();
        let worker = self.worker(store, &stop);
        let run = store
            .wait_finished(run_id, Duration::from_secs(20))
            .await
            .unwrap()
            .expect("the run ends");
        stop.cancel();
        worker.await.unwrap();
        run
    }

    fn worker(
        &self,
        store: &Arc<dyn RunStore>,
        stop: &CancellationToken,
    ) -> tokio::task::JoinHandle<()> {
        let worker = Worker::builder(Arc::clone(store), Self::client(), self.toolkit())
            .name("governed-worker")
            .poll(Duration::from_millis(50))
            .build();
        let stop = stop.clone();
        tokio::spawn(async move {
            worker.run(stop.cancelled_owned()).await;
        })
    }
}

fn ann() -> Answerer {
    Answerer::new("ann").in_groups(["finance"])
}

fn cathy() -> Answerer {
    Answerer::new("cathy").in_groups(["cfo"])
}

async fn sleep_until(at: SystemTime) {
    tokio::time::sleep(at.duration_since(SystemTime::now()).unwrap_or_default()).await;
}

fn events(info: &RunInfo, kind: RunEventKind) -> usize {
    info.history.iter().filter(|e| e.event == kind).count()
}

/// Listing by a person's groups shows the requests of their groups and those of none; a
/// submit by someone outside the group (or a plain `submit`, which cannot tell) is refused
/// and records nothing; a member's is recorded with who gave it.
pub async fn a_group_lists_and_answers_only_its_own_requests(make: Make) {
    let s = subject!(make);
    let store = s.store();
    let (finance, request) = Payer::new(Some("finance"), 60_000, &[]).park(store).await;
    let (open, _) = Payer::new(None, 60_000, &[]).park(store).await;
    assert_eq!(finance.approvers.as_deref(), Some("finance"));
    assert_eq!(open.approvers, None);

    let listed = |q: PendingQuery| async move {
        let mut ids: Vec<String> = store
            .list_pending(&q)
            .await
            .unwrap()
            .runs
            .into_iter()
            .map(|r| r.run_id)
            .collect();
        ids.sort();
        ids
    };
    let mut both = vec![finance.run_id.clone(), open.run_id.clone()];
    both.sort();
    assert_eq!(listed(PendingQuery::new()).await, both);
    assert_eq!(
        listed(PendingQuery::new().groups(["sales", "finance"])).await,
        both
    );
    assert_eq!(
        listed(PendingQuery::new().groups(["sales"])).await,
        vec![open.run_id.clone()]
    );
    assert_eq!(
        listed(PendingQuery::new().groups(Vec::<String>::new())).await,
        vec![open.run_id.clone()]
    );

    let answer = request.accept(json!({}));
    let bob = Answerer::new("bob").in_groups(["sales"]);
    let refused = store.submit_as(&answer, &bob).await.unwrap_err();
    assert!(
        matches!(&refused, StoreError::NotAllowed(why) if why.contains("`bob` may not answer") && why.contains("`finance`")),
        "{refused:?}"
    );
    let plain = store.submit(&answer, "bob").await.unwrap_err();
    assert!(
        matches!(&plain, StoreError::NotAllowed(why) if why.contains("group `finance` only")),
        "{plain:?}"
    );
    let after = store.info(&finance.run_id).await.unwrap().unwrap();
    assert_eq!(after.state, RunState::Parked, "nothing recorded");
    assert_eq!(after.version, finance.version);
    assert_eq!(events(&after, RunEventKind::Answered), 0);

    let recorded = store.submit_as(&answer, &ann()).await.unwrap();
    assert_eq!(recorded.state, RunState::Answered);
    assert_eq!(recorded.answered_by(), Some("ann"));
    // a request of no group takes a plain submit, as before
    let open_request = store
        .get(&open.run_id)
        .await
        .unwrap()
        .unwrap()
        .record
        .pending()
        .clone();
    assert_eq!(
        store
            .submit(&open_request.accept(json!({})), "bob")
            .await
            .unwrap()
            .state,
        RunState::Answered
    );
}

/// At its deadline a request with an escalation goes to the next group with the new deadline,
/// and its history says so; the old group may no longer answer; the new group's answer, after
/// the original `expiresAt` but before the new deadline, is accepted and the tool runs once.
pub async fn an_escalated_request_answered_in_time_runs_the_tool_once(make: Make) {
    let s = subject!(make);
    let store = &s.handles[0];
    let payer = Payer::new(Some("finance"), 400, &[("cfo", 20_000)]);
    let (info, request) = payer.park(store.as_ref()).await;
    let original = request.expires_at_time().unwrap();
    let new_deadline = request.escalation()[0].expires_at;
    assert_eq!(
        info.expires_at.map(toolnexus_ms),
        Some(toolnexus_ms(original))
    );

    sleep_until(original + Duration::from_millis(50)).await;
    assert_eq!(
        store.expire().await.unwrap(),
        Vec::<String>::new(),
        "escalated, not expired"
    );
    let escalated = store.info(&info.run_id).await.unwrap().unwrap();
    assert_eq!(escalated.state, RunState::Parked);
    assert_eq!(escalated.approvers.as_deref(), Some("cfo"));
    assert_eq!(
        escalated.expires_at.map(toolnexus_ms),
        Some(toolnexus_ms(new_deadline))
    );
    assert_eq!(escalated.version, info.version + 1);
    let event = escalated.history.last().unwrap();
    assert_eq!(event.event, RunEventKind::Escalated);
    assert_eq!(
        (
            event.request.as_deref(),
            event.from.as_deref(),
            event.to.as_deref()
        ),
        (Some(request.id.as_str()), Some("finance"), Some("cfo"))
    );
    assert_eq!(
        event.deadline.map(toolnexus_ms),
        Some(toolnexus_ms(new_deadline))
    );
    // the list follows the group
    let cfo = PendingQuery::new().groups(["cfo"]);
    assert_eq!(store.list_pending(&cfo).await.unwrap().runs.len(), 1);
    let finance = PendingQuery::new().groups(["finance"]);
    assert!(store.list_pending(&finance).await.unwrap().runs.is_empty());

    let answer = request.accept(json!({}));
    assert!(matches!(
        store.submit_as(&answer, &ann()).await,
        Err(StoreError::NotAllowed(_))
    ));
    let recorded = store.submit_as(&answer, &cathy()).await.unwrap();
    assert_eq!(recorded.answered_by(), Some("cathy"));

    let run = payer.resumed(store, &info.run_id).await;
    assert_eq!(run.result.expect("a result").text, "done: paid");
    assert_eq!(payer.ran.load(Ordering::SeqCst), 1, "the tool ran once");
}

/// Only the last step's deadline declines: past it the sweep expires the run, an answer is
/// refused as expired, and the run reads `declined/expired`.
pub async fn the_last_steps_deadline_declines(make: Make) {
    let s = subject!(make);
    let store = &s.handles[0];
    let payer = Payer::new(Some("finance"), 300, &[("cfo", 300)]);
    let (info, request) = payer.park(store.as_ref()).await;
    let last = request.escalation()[0].expires_at;

    sleep_until(request.expires_at_time().unwrap() + Duration::from_millis(20)).await;
    assert_eq!(store.expire().await.unwrap(), Vec::<String>::new());
    sleep_until(last + Duration::from_millis(50)).await;
    assert_eq!(store.expire().await.unwrap(), vec![info.run_id.clone()]);
    let expired = store.info(&info.run_id).await.unwrap().unwrap();
    assert_eq!(expired.state, RunState::Expired);
    assert_eq!(
        (
            events(&expired, RunEventKind::Escalated),
            events(&expired, RunEventKind::Expired)
        ),
        (1, 1)
    );
    assert_eq!(
        store.submit_as(&request.accept(json!({})), &cathy()).await,
        Err(StoreError::Expired {
            run_id: info.run_id.clone()
        })
    );
    let run = payer.resumed(store, &info.run_id).await;
    assert_eq!(
        run.result.unwrap().text,
        "done: declined/expired: Pay invoice 7?"
    );
    assert_eq!(payer.ran.load(Ordering::SeqCst), 0);
}

/// An answer arriving after a step's deadline but before the sweep escalates the request is
/// refused as late for its group, and leaves the run to the sweep: it escalates (it does not
/// expire, its plan skipped), and the next group's answer runs the tool once.
pub async fn a_late_answer_before_the_sweep_does_not_skip_the_escalation(make: Make) {
    let s = subject!(make);
    let store = &s.handles[0];
    let payer = Payer::new(Some("finance"), 300, &[("cfo", 20_000)]);
    let (info, request) = payer.park(store.as_ref()).await;
    sleep_until(request.expires_at_time().unwrap() + Duration::from_millis(50)).await;
    let answer = request.accept(json!({}));
    assert_eq!(
        store.submit_as(&answer, &ann()).await,
        Err(StoreError::Expired {
            run_id: info.run_id.clone()
        }),
        "late for finance"
    );
    let waiting = store.info(&info.run_id).await.unwrap().unwrap();
    assert_eq!(waiting.state, RunState::Parked, "left to the sweep");
    assert_eq!(events(&waiting, RunEventKind::Expired), 0);
    assert_eq!(store.expire().await.unwrap(), Vec::<String>::new());
    let escalated = store.info(&info.run_id).await.unwrap().unwrap();
    assert_eq!(escalated.approvers.as_deref(), Some("cfo"));
    assert_eq!(escalated.state, RunState::Parked);
    store.submit_as(&answer, &cathy()).await.unwrap();
    let run = payer.resumed(store, &info.run_id).await;
    assert_eq!(run.result.expect("a result").text, "done: paid");
    assert_eq!(payer.ran.load(Ordering::SeqCst), 1, "the tool ran once");
}

/// Two sweeps over the same due runs (two workers, two handles) escalate each run exactly once.
pub async fn two_sweeps_escalate_each_run_once(make: Make) {
    let s = subject!(make);
    let payer = Payer::new(Some("finance"), 300, &[("cfo", 60_000)]);
    let mut runs = Vec::new();
    for _ in 0..6 {
        runs.push(payer.park(s.store()).await);
    }
    let due = runs
        .iter()
        .map(|(_, r)| r.expires_at_time().unwrap())
        .max()
        .unwrap();
    sleep_until(due + Duration::from_millis(50)).await;
    let (first, last) = (
        Arc::clone(&s.handles[0]),
        Arc::clone(&s.handles[s.handles.len() - 1]),
    );
    let (one, two) = tokio::join!(
        tokio::spawn(async move { first.expire().await }),
        tokio::spawn(async move { last.expire().await })
    );
    assert!(one.unwrap().unwrap().is_empty() && two.unwrap().unwrap().is_empty());
    for (info, _) in &runs {
        let now = s.store().info(&info.run_id).await.unwrap().unwrap();
        assert_eq!(
            events(&now, RunEventKind::Escalated),
            1,
            "{:?}",
            now.history
        );
        assert_eq!(now.version, info.version + 1);
        assert_eq!(now.approvers.as_deref(), Some("cfo"));
    }
}

/// On a store with notifiers, an escalation writes one `escalated` notification per notifier
/// (`<request>.escalated.1.<notifier>`), once however many sweeps see the deadline.
pub async fn an_escalation_notifies_each_notifier_once(make: Make) {
    let s = subject!(make);
    let store = s.store();
    let payer = Payer::new(Some("finance"), 300, &[("cfo", 60_000)]);
    let (info, request) = payer.park(store).await;
    sleep_until(request.expires_at_time().unwrap() + Duration::from_millis(50)).await;
    for handle in &s.handles {
        handle.expire().await.unwrap();
    }
    store.expire().await.unwrap();
    let outbox = store.outbox().expect("a store with notifiers");
    let mut escalated: Vec<(String, String)> = outbox
        .notifications(&info.run_id)
        .await
        .unwrap()
        .into_iter()
        .filter(|n| n.reason == NotifyReason::Escalated)
        .map(|n| (n.id, n.notifier))
        .collect();
    escalated.sort();
    let expected: Vec<(String, String)> = NOTIFIERS
        .iter()
        .map(|n| (format!("{}.escalated.1.{n}", request.id), (*n).to_owned()))
        .collect();
    assert_eq!(escalated, expected);
}

fn toolnexus_ms(at: SystemTime) -> u128 {
    at.duration_since(SystemTime::UNIX_EPOCH)
        .unwrap()
        .as_millis()
}
