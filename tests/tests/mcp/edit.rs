//! Issue 25 over MCP: an editable approval served as an elicitation is a form of the proposed
//! arguments; an accepted change runs as the edit, checked as the loop checks it, both when
//! the call is answered live and when it is parked in a run store; an edit never carries a
//! secret, one level down included (issue 33).

use rmcp::model::{CallToolRequestParams, CallToolResult};
use serde_json::{Value, json};
use toolnexus::mcp::McpService;
use toolnexus::{Toolkit, tool};
use toolnexus_tests::mcp_fixtures::{Script, accept};

use super::parked::{in_process, text};

/// Pays someone.
#[tool(destructive, approval = "Pay {amount} EUR to {to}?", editable)]
#[allow(clippy::needless_pass_by_value)] // a tool's parameters are owned
fn pay(amount: u32, to: String) -> String {
    format!("paid {amount} EUR to {to}")
}

fn kit() -> Toolkit {
    Toolkit::builder().tool(Pay).build().unwrap()
}

async fn pay_through(service: McpService, reply: Value) -> (CallToolResult, Script) {
    let script = Script::new();
    let client = in_process(service, script.clone(), false).await;
    script.reply(accept(reply));
    let mut params = CallToolRequestParams::new("pay");
    params.arguments = json!({"amount": 140, "to": "Ada"}).as_object().cloned();
    let result = client.call_tool(params).await.expect("tools/call");
    let _ = client.cancel().await;
    (result, script)
}

fn services() -> [(&'static str, McpService); 2] {
    [
        ("live", McpService::new(kit())),
        (
            "parked",
            McpService::new(kit())
                .with_store(std::sync::Arc::new(toolnexus::store::MemoryStore::new())),
        ),
    ]
}

#[tokio::test]
async fn an_edited_approval_over_mcp_runs_the_edit() {
    for (path, service) in services() {
        let (result, script) = pay_through(service, json!({"amount": 90, "to": "Ada"})).await;
        assert_eq!(
            text(&result),
            ("paid 90 EUR to Ada".to_owned(), false),
            "{path}"
        );
        // the form the person saw: the proposed arguments, filled in
        let seen = script.seen.lock().unwrap()[0].clone();
        assert_eq!(
            seen["requestedSchema"]["properties"]["amount"]["default"], 140,
            "{path}"
        );
        assert_eq!(
            seen["requestedSchema"]["properties"]["to"]["default"], "Ada",
            "{path}"
        );
    }
}

#[tokio::test]
async fn an_unchanged_edit_form_runs_what_was_shown() {
    for (path, service) in services() {
        let (result, _) = pay_through(service, json!({"amount": 140, "to": "Ada"})).await;
        assert_eq!(
            text(&result),
            ("paid 140 EUR to Ada".to_owned(), false),
            "{path}"
        );
    }
}

#[tokio::test]
async fn an_edit_that_does_not_fit_the_tool_runs_nothing() {
    for (path, service) in services() {
        let (result, _) = pay_through(service, json!({"amount": -5, "to": "Ada"})).await;
        let (said, is_error) = text(&result);
        assert!(is_error, "{path}: {said}");
        assert!(
            said.starts_with("edit refused: the edited arguments do not fit `pay`'s parameters"),
            "{path}: {said}"
        );
        assert!(said.ends_with("; nothing ran"), "{path}: {said}");
    }
}

/// `sign_in`: suspends with an editable approval of its arguments (`user`, and an `account`
/// object), and once approved returns the arguments it ran with.
fn sign_in_kit() -> Toolkit {
    let schema = json!({"type": "object", "properties": {
        "user": {"type": "string"}, "account": {"type": "object"}
    }, "required": ["user"]});
    let asked = schema.clone();
    let tool = toolnexus::FnTool::builder("sign_in")
        .description("Signs in, once approved.")
        .editable()
        .schema(schema)
        .handler(move |args, ctx: toolnexus::Context| {
            let asked = asked.clone();
            async move {
                if ctx.answer().is_none() {
                    let request = toolnexus::Request::editable_approval(
                        "Sign in?",
                        Value::Object(args),
                        asked,
                    );
                    return toolnexus::ToolResult::suspended(request);
                }
                toolnexus::ToolResult::success(format!("signed in with {}", Value::Object(args)))
            }
        })
        .build()
        .unwrap();
    Toolkit::builder().tool(tool).build().unwrap()
}

#[tokio::test]
async fn an_edit_over_mcp_cannot_carry_a_secret_one_level_down() {
    let services = [
        ("live", McpService::new(sign_in_kit())),
        (
            "parked",
            McpService::new(sign_in_kit())
                .with_store(std::sync::Arc::new(toolnexus::store::MemoryStore::new())),
        ),
    ];
    for (path, service) in services {
        let script = Script::new();
        let client = in_process(service, script.clone(), false).await;
        // the MCP client answers the approval with a password one level down
        script.reply(accept(
            json!({"account": {"id": "a1", "password": "hunter2"}}),
        ));
        let mut params = CallToolRequestParams::new("sign_in");
        params.arguments = json!({"user": "ada", "account": {"id": "a1"}})
            .as_object()
            .cloned();
        let result = client.call_tool(params).await.expect("tools/call");
        let _ = client.cancel().await;
        assert_eq!(
            text(&result),
            (
                "edit refused: the edit changes `account.password`, which holds a credential; secrets never pass through answer data; nothing ran".to_owned(),
                true
            ),
            "{path}"
        );
    }
}
