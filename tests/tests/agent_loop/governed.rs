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
