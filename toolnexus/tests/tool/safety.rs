//! Declarative safety on `#[tool]`: annotations (`read_only`, `destructive`, `idempotent`,
//! `open_world`) carried by `Tool`, and `approval = ".."`, which asks before the body runs.

use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::json;
use toolnexus::tool::ToolAnnotations;
use toolnexus::{
    Context, Suspension, Tool, Toolkit, ask, assert_failure, assert_pending, assert_success,
    request::DeclineReason, tool,
};

/// Reads a file.
#[tool(read_only, idempotent, open_world = false)]
fn read_file(path: &str) -> String {
    format!("contents of {path}")
}

/// Overwrites a file.
#[tool(destructive)]
fn write_file(path: &str) -> String {
    format!("wrote {path}")
}

/// Says nothing about itself.
#[tool]
fn plain() -> String {
    String::new()
}

static DELETED: AtomicUsize = AtomicUsize::new(0);

/// Deletes a file.
#[tool(destructive, approval = "Delete {path} ({recursive})? {{really}}")]
async fn delete_file(path: &str, #[arg(rename = "rec")] recursive: Option<bool>) -> String {
    tokio::task::yield_now().await;
    DELETED.fetch_add(1, Ordering::SeqCst);
    format!("deleted {path} recursive={recursive:?}")
}

/// Moves money, after approval, to an account the human names.
#[tool(approval = "Pay {amount} EUR?")]
fn pay(amount: u32, ctx: &toolnexus::Context) -> Result<String, Suspension> {
    let to: String = ask!(ctx, input "To which account?");
    Ok(format!("paid {amount} to {to}"))
}

#[test]
fn annotations_on_the_attribute_are_carried_by_the_tool() {
    assert_eq!(
        ReadFile.annotations(),
        ToolAnnotations::new()
            .read_only(true)
            .idempotent(true)
            .open_world(false)
    );
    assert!(ReadFile.annotations().is_read_only());
    assert_eq!(ReadFile.annotations().destructive, None);
    assert_eq!(
        WriteFile.annotations(),
        ToolAnnotations::new().destructive(true)
    );
    assert!(WriteFile.annotations().is_destructive());
    assert_eq!(Plain.annotations(), ToolAnnotations::default());
    // through a toolkit, as a shared tool
    let kit = Toolkit::builder().tool(DeleteFile).build().unwrap();
    assert!(
        kit.get("delete_file")
            .unwrap()
            .annotations()
            .is_destructive()
    );
}

#[tokio::test]
async fn approval_asks_first_with_the_prompt_formatted_from_the_arguments() {
    let args = json!({"path": "/tmp/x", "rec": true});
    let kit = Toolkit::builder().tool(DeleteFile).build().unwrap();
    let before = DELETED.load(Ordering::SeqCst);
    let first = kit
        .execute("delete_file", args.clone(), &Context::new())
        .await;
    let request = assert_pending!(first, approval "Delete /tmp/x (true)? {really}");
    assert_eq!(
        first.output,
        "Approval required: Delete /tmp/x (true)? {really}"
    );
    assert_eq!(
        DELETED.load(Ordering::SeqCst),
        before,
        "the body did not run"
    );

    // an argument the model left out reads as null
    let no_rec = kit
        .execute("delete_file", json!({"path": "/tmp/y"}), &Context::new())
        .await;
    assert_pending!(no_rec, approval "Delete /tmp/y (null)? {really}");

    // accepted: the body runs, once
    let ctx = Context::new().with_answer(request.accept(json!(null)));
    let approved = kit.execute("delete_file", args.clone(), &ctx).await;
    assert_success!(approved, "deleted /tmp/x recursive=Some(true)");
    assert_eq!(DELETED.load(Ordering::SeqCst), before + 1);

    // declined (or another reason): the body does not run
    let ctx = Context::new().with_answer(request.decline(DeclineReason::Declined));
    let declined = kit.execute("delete_file", args.clone(), &ctx).await;
    assert_failure!(declined, "declined: Delete /tmp/x (true)? {really}");
    let ctx = Context::new().with_answer(request.decline(DeclineReason::Other("timeout".into())));
    let timed_out = kit.execute("delete_file", args, &ctx).await;
    assert_failure!(timed_out, "timeout: Delete /tmp/x (true)? {really}");
    assert_eq!(DELETED.load(Ordering::SeqCst), before + 1);
}

#[tokio::test]
async fn invalid_arguments_fail_before_approval_is_asked() {
    let kit = Toolkit::builder().tool(DeleteFile).build().unwrap();
    let r = kit
        .execute("delete_file", json!({"path": 3}), &Context::new())
        .await;
    assert_failure!(
        r,
        "invalid arguments for delete_file: path: invalid type: integer `3`, expected a string"
    );
}

#[tokio::test]
async fn the_body_runs_without_the_approval_answer_so_its_own_ask_asks_afresh() {
    let args = json!({"amount": 40});
    let first = Pay
        .execute(args.as_object().unwrap().clone(), &Context::new())
        .await;
    let approval = assert_pending!(first, approval "Pay 40 EUR?");
    let ctx = Context::new().with_answer(approval.accept(json!(null)));
    let second = Pay.execute(args.as_object().unwrap().clone(), &ctx).await;
    // the approval is not read as the account: the body's own question is asked
    assert_pending!(second, input "To which account?");
}
