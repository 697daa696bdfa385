//! `#[tool(approval = "..", approvers = "..", expires_in = "..", escalate(..))]`: the approval
//! a tool asks for names the group that may answer it, its deadline, and the steps it
//! escalates through, as the contract's `data.approvers` and `data.escalate`.

use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use serde_json::json;
use toolnexus::{Reply, Request, RunStatus, ScriptedModel, Toolkit, tool};
use toolnexus_tests::fixtures::client_for;

/// Pays an invoice.
#[tool(
    approval = "Pay invoice {invoice}?",
    approvers = "finance",
    expires_in = "1h",
    escalate(approvers = "cfo", after = "1h"),
    escalate(approvers = "ceo", after = "30m")
)]
fn pay(invoice: u32) -> String {
    format!("paid invoice {invoice}")
}

#[tokio::test]
async fn a_governed_tools_approval_names_its_group_deadline_and_escalation() {
    let before = SystemTime::now();
    let toolkit = Toolkit::builder().tool(Pay).build().unwrap();
    let model = ScriptedModel::new([
        Reply::tool_call("pay", json!({"invoice": 7})),
        Reply::text("done"),
    ]);
    let asked: Arc<Mutex<Vec<Request>>> = Arc::default();
    let record = Arc::clone(&asked);
    let client = client_for(model)
        .wait_for(move |req: Request| {
            record.lock().unwrap().push(req.clone());
            async move { req.accept(json!(null)) }
        })
        .build()
        .unwrap();
    let result = client.run("go", &toolkit).await.unwrap();
    assert_eq!(result.status, RunStatus::Done);
    let asked = asked.lock().unwrap();
    let req = &asked[0];
    assert_eq!(
        (req.kind.as_str(), req.prompt.as_str()),
        ("approval", "Pay invoice 7?")
    );
    assert_eq!(req.approvers(), Some("finance"));
    let deadline = req.expires_at_time().expect("expires_in sets expiresAt");
    let hour = Duration::from_secs(3600);
    // `expiresAt` keeps milliseconds: the deadline is an hour from the call, to the millisecond
    let ms = |t: SystemTime| {
        t.duration_since(SystemTime::UNIX_EPOCH)
            .unwrap()
            .as_millis()
    };
    assert!(ms(deadline) >= ms(before + hour) && deadline <= SystemTime::now() + hour);
    let steps = req.escalation();
    assert_eq!(steps.len(), 2);
    assert_eq!(
        (steps[0].approvers.as_str(), steps[1].approvers.as_str()),
        ("cfo", "ceo")
    );
    assert_eq!(ms(steps[0].expires_at), ms(deadline) + 3_600_000);
    assert_eq!(ms(steps[1].expires_at), ms(deadline) + 5_400_000);
    assert_eq!(
        req.data_entry("escalate")
            .and_then(|v| v.as_array())
            .map(Vec::len),
        Some(2),
        "several steps are an array"
    );
}

/// The newcomer's whole case: two approvals from finance, escalating to the CFO after an hour.
#[tool(
    approval = "Pay invoice {invoice}?",
    approvals = 2,
    approvers = "finance",
    expires_in = "1h",
    escalate(approvers = "cfo", after = "1h")
)]
fn pay_twice_approved(invoice: u32) -> String {
    format!("paid invoice {invoice}")
}

/// Two approvals from finance with escalation to the CFO: only finance may vote, one person
/// counts once, the second finance vote answers the run, and the tool runs once on resume.
#[tokio::test]
async fn two_approvals_from_finance_escalating_to_the_cfo() {
    use toolnexus::store::{Answerer, MemoryStore, RunState, RunStore, StoreError};
    let store = Arc::new(MemoryStore::new());
    let toolkit = Toolkit::builder().tool(PayTwiceApproved).build().unwrap();
    let model = ScriptedModel::new([
        Reply::tool_call("pay_twice_approved", json!({"invoice": 7})),
        Reply::text("Paid."),
    ]);
    let client = client_for(model).store(store.clone()).build().unwrap();
    let parked = client.run("Pay invoice 7", &toolkit).await.unwrap();
    assert_eq!(parked.status, RunStatus::Pending);
    let request = parked.pending.unwrap();
    assert_eq!(
        (
            request.approvers(),
            request.required_approvals(),
            request.escalation()[0].approvers.as_str()
        ),
        (Some("finance"), 2, "cfo")
    );
    let yes = request.accept(json!({}));
    let sales = Answerer::new("sam").in_groups(["sales"]);
    assert!(matches!(
        store.submit_as(&yes, &sales).await,
        Err(StoreError::NotAllowed(_))
    ));
    let ann = Answerer::new("ann").in_groups(["finance"]);
    assert_eq!(
        store.submit_as(&yes, &ann).await.unwrap().state,
        RunState::Parked
    );
    assert_eq!(
        store.submit_as(&yes, &ann).await.unwrap().state,
        RunState::Parked,
        "the same person twice counts once"
    );
    let ben = Answerer::new("ben").in_groups(["finance", "sales"]);
    assert_eq!(
        store.submit_as(&yes, &ben).await.unwrap().state,
        RunState::Answered
    );
    let claim = store.claim_next("worker-1").await.unwrap().unwrap();
    let run = client
        .resume_claim(store.as_ref(), &claim, &toolkit)
        .await
        .unwrap();
    assert_eq!(run.status, RunStatus::Done);
    assert_eq!(run.tool_calls.len(), 1);
    assert_eq!(run.tool_calls[0].output, "paid invoice 7");
    let stored = store.get(&claim.run_id).await.unwrap().unwrap();
    assert_eq!(
        stored
            .votes
            .iter()
            .map(|v| v.by.as_str())
            .collect::<Vec<_>>(),
        ["ann", "ben"]
    );
}
