//! The trust boundary's one walk over answers (issue 33): an answer, an edited approval's
//! arguments included, never carries a secret the request did not hold, at any depth (one
//! level down, in an array), in any spelling the boundary reads; a value the model proposed
//! may stay where it was.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use serde_json::{Value, json};
use toolnexus::{Answer, FnTool, Reply, Request, RunStatus, ScriptedModel, ToolResult, Toolkit};
use toolnexus_tests::fixtures::client_for;
use toolnexus_tests::tool_results;

/// `sign_in`: an editable tool whose arguments nest (`account` holds a `password`).
fn sign_in(runs: Arc<AtomicUsize>) -> Toolkit {
    let tool = FnTool::builder("sign_in")
        .description("Signs in.")
        .destructive()
        .editable()
        .schema(json!({"type": "object", "properties": {
            "user": {"type": "string"},
            "account": {"type": "object"},
            "accounts": {"type": "array"}
        }, "required": ["user"]}))
        .handler(move |args, _ctx| {
            runs.fetch_add(1, Ordering::SeqCst);
            let args = Value::Object(args);
            async move { format!("signed in with {args}") }
        })
        .build()
        .unwrap();
    Toolkit::builder().tool(tool).build().unwrap()
}

/// Runs `sign_in` proposed with `proposed`, approved with `edited`: the tool's output, and how
/// many times it ran.
async fn edit(proposed: Value, edited: Value) -> (String, usize) {
    let runs = Arc::new(AtomicUsize::new(0));
    let kit = sign_in(Arc::clone(&runs));
    let model = ScriptedModel::new([Reply::tool_call("sign_in", proposed), Reply::text("done")]);
    let client = client_for(model)
        .approve_destructive()
        .wait_for(move |req: Request| {
            let answer = req.approve_with(edited.clone());
            async move { answer }
        })
        .build()
        .unwrap();
    let result = client.run("sign in", &kit).await.unwrap();
    assert_eq!(result.status, RunStatus::Done);
    let output = tool_results(&result.messages)[0].1.clone();
    (output, runs.load(Ordering::SeqCst))
}

#[tokio::test]
async fn an_edit_cannot_carry_a_secret_one_level_down() {
    let (output, runs) = edit(
        json!({"user": "ada", "account": {"id": "a1"}}),
        json!({"user": "ada", "account": {"id": "a1", "password": "hunter2"}}),
    )
    .await;
    assert_eq!(
        output,
        "edit refused: the edit changes `account.password`, which holds a credential; secrets never pass through answer data; nothing ran"
    );
    assert_eq!(runs, 0);
}

#[tokio::test]
async fn an_edit_cannot_carry_a_secret_in_an_array_whatever_its_spelling() {
    for spelling in [
        "PIN",
        "Pass_Word",
        "p\u{430}ssword",
        "pass\u{200b}word",
        "apiKey",
    ] {
        let (output, runs) = edit(
            json!({"user": "ada", "accounts": [{"id": "a1"}]}),
            json!({"user": "ada", "accounts": [{"id": "a1", "more": {spelling: "1234"}}]}),
        )
        .await;
        assert_eq!(
            output,
            format!(
                "edit refused: the edit changes `accounts[0].more.{spelling}`, which holds a credential; secrets never pass through answer data; nothing ran"
            )
        );
        assert_eq!(runs, 0, "{spelling}");
    }
}

#[tokio::test]
async fn an_edit_may_keep_a_value_the_model_proposed_one_level_down() {
    // the model's own arguments hold a `password` (the tool's business); the person changes
    // only the user, and the proposed value stays where it was
    let (output, runs) = edit(
        json!({"user": "ada", "account": {"password": "from-the-model"}}),
        json!({"user": "bob", "account": {"password": "from-the-model"}}),
    )
    .await;
    assert_eq!(
        output,
        r#"signed in with {"account":{"password":"from-the-model"},"user":"bob"}"#
    );
    assert_eq!(runs, 1);
    // the same place with another value is typed by the person: refused
    let (output, runs) = edit(
        json!({"user": "ada", "account": {"password": "from-the-model"}}),
        json!({"user": "ada", "account": {"password": "typed"}}),
    )
    .await;
    assert!(
        output.starts_with("edit refused: the edit changes `account.password`"),
        "{output}"
    );
    assert_eq!(runs, 0);
}

/// `where_to`: asks a form with one field, `city`, and greets with the answer's data.
fn where_to(runs: Arc<AtomicUsize>) -> Toolkit {
    let tool = FnTool::builder("where_to")
        .description("Asks where to.")
        .handler(move |_, ctx| {
            let n = runs.fetch_add(1, Ordering::SeqCst);
            async move {
                match ctx.answer() {
                    Some(answer) => ToolResult::success(format!(
                        "going with {} (run {n})",
                        answer.data.clone().unwrap_or_default()
                    )),
                    None => ToolResult::suspended(Request::input("Where to?").with_data_entry(
                        "schema",
                        json!({"type": "object", "properties": {"city": {"type": "string"}}}),
                    )),
                }
            }
        })
        .build()
        .unwrap();
    Toolkit::builder().tool(tool).build().unwrap()
}

async fn answer_form(data: Value) -> (String, usize) {
    let runs = Arc::new(AtomicUsize::new(0));
    let kit = where_to(Arc::clone(&runs));
    let model = ScriptedModel::new([Reply::tool_call("where_to", json!({})), Reply::text("ok")]);
    let client = client_for(model)
        .wait_for(move |req: Request| {
            let answer = Answer::accept(&req.id, data.clone());
            async move { answer }
        })
        .build()
        .unwrap();
    let result = client.run("go", &kit).await.unwrap();
    let output = tool_results(&result.messages)[0].1.clone();
    (output, runs.load(Ordering::SeqCst))
}

#[tokio::test]
async fn a_form_answer_cannot_carry_a_secret_one_level_down() {
    let (output, runs) = answer_form(json!({"city": "Oslo", "extra": {"token": "t0k"}})).await;
    assert_eq!(
        output,
        "invalid answer: `data.extra.token` of the answer to the `input` request has the name `token`, which reads as the credential word `token`; secrets must never pass through answer data: use an `authorization` request with a `url` instead; nothing ran"
    );
    assert_eq!(runs, 1, "asked once, never run with the answer");
    // the form's own field, and values of any text, pass
    let (output, runs) = answer_form(json!({"city": "my password is not here"})).await;
    assert_eq!(
        output,
        r#"going with {"city":"my password is not here"} (run 1)"#
    );
    assert_eq!(runs, 2);
}
