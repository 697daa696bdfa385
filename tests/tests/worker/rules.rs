//! Where remembered decisions meet a crash: the rule an answer asks for is kept before its
//! call runs, so a run whose resume dies inside the call is resumed again by the worker that
//! takes it over. That second resume must not keep a second copy of the rule (a copy the
//! rules page would list twice, and that a revoke of one would leave deciding). On every
//! store available here.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::json;
use toolnexus::remember::{Rule, Scope, Within};
use toolnexus::store::RunState;
use toolnexus::{
    Answer, Client, FnModel, FnTool, ModelRequest, PendingRun, Remember, Reply, Request, Role,
    ToolResult, Toolkit,
};

use super::{Backend, every_store, resume_next, stores};

/// `deploy` (idempotent): asks for approval; its first approved run stalls inside the call
/// (the worker dies there), any later one returns.
fn deployer(tries: Arc<AtomicUsize>, inside: Arc<tokio::sync::Notify>) -> Toolkit {
    let deploy = FnTool::builder("deploy")
        .description("Deploys.")
        .idempotent()
        .handler(move |_args, ctx| {
            let (tries, inside) = (Arc::clone(&tries), Arc::clone(&inside));
            async move {
                if ctx.answer().is_none() {
                    return ToolResult::suspended(Request::approval("Deploy?"));
                }
                if tries.fetch_add(1, Ordering::SeqCst) == 0 {
                    inside.notify_one();
                    return std::future::pending::<ToolResult>().await;
                }
                ToolResult::success("deployed")
            }
        })
        .build()
        .unwrap();
    Toolkit::builder().tool(deploy).build().unwrap()
}

fn client() -> Client {
    let model = FnModel::new(|req: ModelRequest| async move {
        match req.messages.iter().rev().find(|m| m.role == Role::Tool) {
            None => Reply::tool_call("deploy", json!({})),
            Some(m) => Reply::text(format!("done: {}", m.content.clone().unwrap_or_default())),
        }
    });
    Client::builder(model).model_name("rules").build().unwrap()
}

/// `client`'s run of `prompt` for alice with `toolkit`, parked: its record.
pub(crate) async fn parked_for_alice(
    client: &Client,
    prompt: &str,
    toolkit: &Toolkit,
) -> PendingRun {
    let parked = client
        .for_principal("alice")
        .run(prompt, toolkit)
        .await
        .unwrap();
    PendingRun::try_from(parked).unwrap()
}

/// Asserts run `run_id` of `s`'s store finished with exactly one rule kept; that rule.
async fn finished_with_one_rule(s: &Backend, run_id: &str) -> Rule {
    let info = s.store.info(run_id).await.unwrap().unwrap();
    assert_eq!(info.state, RunState::Finished, "{}", s.name);
    let mut rules = toolnexus_tests::kept_rules(s.store.as_ref()).await;
    assert_eq!(rules.len(), 1, "{}: {rules:?}", s.name);
    rules.remove(0)
}

/// Attack: alice approves her own run "every call of this tool, for me"; the worker's resume
/// keeps the rule and dies inside `deploy`; the run is taken over and finishes. One rule.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_resume_taken_over_after_a_crash_keeps_the_remembered_rule_once() {
    let lease = Duration::from_millis(200);
    for s in stores("a_resume_taken_over_keeps_the_rule_once", lease).await {
        let (tries, inside) = (
            Arc::new(AtomicUsize::new(0)),
            Arc::new(tokio::sync::Notify::new()),
        );
        let toolkit = deployer(Arc::clone(&tries), Arc::clone(&inside));
        let record = parked_for_alice(&client(), "Deploy.", &toolkit).await;
        let request = record.pending().clone();
        let run_id = s.store.park(record).await.unwrap().run_id;
        let always =
            Answer::ok(&request.id).remember(Remember::new(Scope::Tool, Within::Principal));
        s.store.submit(&always, "alice").await.unwrap();

        let claim = s.store.claim_next("w-a").await.unwrap().expect("answered");
        let dying = {
            let (store, toolkit) = (Arc::clone(&s.store), toolkit.clone());
            tokio::spawn(async move {
                client()
                    .resume_claim(store.as_ref(), &claim, &toolkit)
                    .await
            })
        };
        tokio::time::timeout(Duration::from_secs(10), inside.notified())
            .await
            .expect("the approved call is inside deploy");
        dying.abort();
        tokio::time::sleep(lease + Duration::from_millis(150)).await;
        let taken = s.store.take_over("w-b").await.unwrap().expect("lapsed");
        let done = client()
            .resume_claim(s.store.as_ref(), &taken, &toolkit)
            .await
            .unwrap();
        assert_eq!(done.text, "done: deployed", "{}", s.name);
        let rule = finished_with_one_rule(&s, &run_id).await;
        assert_eq!(rule.holder, "alice", "{}", s.name);
        assert_eq!(rule.request_id, request.id, "{}", s.name);
    }
}

/// `deploy` (it asks `ask(env)` before it runs), and a client asking a turn's questions
/// together whose model deploys `a` and `b` in one turn, then says `done`.
pub(crate) fn two_deploys(ask: fn(&str) -> Request) -> (Client, Toolkit) {
    let deploy = FnTool::builder("deploy")
        .description("Deploys.")
        .handler(move |args, ctx| async move {
            let env = args["env"].as_str().unwrap_or_default().to_owned();
            if ctx.answer().is_none() {
                return ToolResult::suspended(ask(&env));
            }
            ToolResult::success(format!("deployed {env}"))
        })
        .build()
        .unwrap();
    let model = FnModel::new(|req: ModelRequest| async move {
        if req.messages.iter().any(|m| m.role == Role::Tool) {
            return Reply::text("done");
        }
        Reply::tool_call("deploy", json!({"env": "a"})).with_call("deploy", json!({"env": "b"}))
    });
    let client = Client::builder(model)
        .model_name("deploys")
        .questions_together(true)
        .build()
        .unwrap();
    (client, Toolkit::builder().tool(deploy).build().unwrap())
}

/// Attack: alice's run asks two approvals together; bob answers the first, alice the second
/// with "this exact call, for me". The rule the worker keeps names who made it: alice, not
/// bob (who answered the run's first request).
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_rule_made_by_a_later_answer_of_a_together_turn_names_who_gave_it() {
    for s in every_store("a_rule_of_a_together_turn_names_who_gave_it").await {
        let (client, toolkit) = two_deploys(|env| Request::approval(format!("Deploy {env}?")));
        let record = parked_for_alice(&client, "Deploy both.", &toolkit).await;
        let ids: Vec<String> = record.requests().iter().map(|r| r.id.clone()).collect();
        let run_id = s.store.park(record).await.unwrap().run_id;
        s.store.submit(&Answer::ok(&ids[0]), "bob").await.unwrap();
        let mine = Answer::ok(&ids[1]).remember(Remember::new(Scope::Args, Within::Principal));
        s.store.submit(&mine, "alice").await.unwrap();
        let done = resume_next(&s, "w-a", &client, &toolkit).await;
        assert_eq!(done.text, "done", "{}", s.name);
        let rule = finished_with_one_rule(&s, &run_id).await;
        assert_eq!(rule.request_id, ids[1], "{}", s.name);
        assert_eq!(rule.holder, "alice", "{}", s.name);
        assert_eq!(rule.answered_by.as_deref(), Some("alice"), "{}", s.name);
    }
}
