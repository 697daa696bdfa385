//! Remembered decisions through the loop: the loop checks the store's rules before a call
//! asks (a remembered approval answers the next call, a deny declines, a principal's rule holds
//! for that principal's runs only, only approvals are remembered, a tool's own approval).

use std::sync::atomic::{AtomicU32, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use serde_json::{Value, json};
use toolnexus::remember::{Effect, Scope, Within, rule_of_answer};
use toolnexus::store::{RunEventKind, RunStore};
use toolnexus::{
    Answer, Client, DeclineReason, Event, FnModel, FnTool, ModelRequest, Remember, Reply, Request,
    Role, RunStatus, ToolResult, Toolkit,
};

use super::rules::{rule, rules_of};
use super::{LEASE, Make, make_subject};

/// The `pay` tool (counting its runs) and a client-wide approval policy that asks before
/// each call: `Pay <to> <amount>?`.
pub(super) struct Payments {
    ran: Arc<AtomicU32>,
    pub(super) toolkit: Toolkit,
}

impl Payments {
    pub(super) fn new() -> Self {
        let ran = Arc::new(AtomicU32::new(0));
        let counter = ran.clone();
        let pay = FnTool::builder("pay")
            .description("Pays someone.")
            .handler(move |args, _ctx| {
                counter.fetch_add(1, Ordering::SeqCst);
                async move { ToolResult::success(format!("paid {} {}", args["to"], args["amount"])) }
            })
            .build()
            .unwrap();
        let toolkit = Toolkit::builder().tool(pay).build().unwrap();
        Self { ran, toolkit }
    }

    pub(super) fn ran(&self) -> u32 {
        self.ran.load(Ordering::SeqCst)
    }

    /// A model that, each turn, pays the user message's text 40 twice (one call after the
    /// other), then says `done`.
    fn model() -> FnModel {
        FnModel::new(|req: ModelRequest| async move {
            let user = req
                .messages
                .iter()
                .rposition(|m| m.role == Role::User)
                .unwrap();
            let to = req.messages[user].content.clone().unwrap_or_default();
            let results = req.messages[user..]
                .iter()
                .filter(|m| m.role == Role::Tool)
                .count();
            if results < 2 {
                Reply::tool_call("pay", json!({"to": to, "amount": 40}))
            } else {
                Reply::text("done")
            }
        })
    }

    pub(super) fn client(store: Arc<dyn RunStore>) -> toolnexus::client::ClientBuilder {
        Client::builder(Self::model())
            .model_name("rules")
            .store(store)
            .approval_policy(|_, args| {
                Some(format!(
                    "Pay {} {}?",
                    args["to"].as_str().unwrap_or_default(),
                    args["amount"]
                ))
            })
    }
}

/// Through the loop and the store: a person's "these arguments, in this conversation" answers
/// the same call again without asking, in the same run (its history names the rule) and in
/// the conversation's next turn, and never other arguments or another conversation.
pub async fn a_remembered_approval_answers_the_next_call(make: Make) {
    let s = subject!(make);
    let store = s.handles[0].clone();
    let pay = Payments::new();
    let client = Payments::client(store.clone()).build().unwrap();

    let halted = client.ask("c1", "ada", &pay.toolkit).await.unwrap();
    let request = halted.pending.clone().expect("the payment asks");
    assert_eq!(request.prompt, "Pay ada 40?");
    assert_eq!(pay.ran(), 0);
    let answer = Answer::ok(&request.id).remember(Remember::new(Scope::Args, Within::Conversation));
    store.submit(&answer, "ada@example.com").await.unwrap();
    let claim = store.claim_next("worker-1").await.unwrap().unwrap();
    let done = client
        .resume_claim(store.as_ref(), &claim, &pay.toolkit)
        .await
        .unwrap();
    assert_eq!(done.status, RunStatus::Done, "{done:?}");
    let outputs: Vec<&str> = done.tool_calls.iter().map(|c| c.output.as_str()).collect();
    assert_eq!(outputs, ["paid \"ada\" 40", "paid \"ada\" 40"]);
    assert_eq!(pay.ran(), 2, "the second call ran without asking");

    let rules = rules_of(store.as_ref()).list_rules(10).await.unwrap();
    assert_eq!(rules.len(), 1);
    let kept = &rules[0];
    assert_eq!(
        (
            kept.effect,
            kept.scope,
            kept.within,
            kept.holder.as_str(),
            kept.tool.as_str()
        ),
        (
            Effect::Allow,
            Scope::Args,
            Within::Conversation,
            "c1",
            "pay"
        )
    );
    assert_eq!(kept.args, Some(json!({"to": "ada", "amount": 40})));
    assert_eq!(kept.answered_by.as_deref(), Some("ada@example.com"));
    assert_eq!(
        (kept.request_id.as_str(), kept.run_id.as_str()),
        (request.id.as_str(), done.run_id.as_str())
    );

    let info = store.info(&done.run_id).await.unwrap().unwrap();
    let decided: Vec<_> = info
        .history
        .iter()
        .filter(|e| e.event == RunEventKind::Decided)
        .collect();
    assert_eq!(decided.len(), 1, "{:?}", info.history);
    assert_eq!(decided[0].rule.as_deref(), Some(kept.id.as_str()));
    assert_eq!(decided[0].outcome.as_deref(), Some("allowed"));
    let finished = info
        .history
        .iter()
        .position(|e| e.event == RunEventKind::Finished);
    let at = info
        .history
        .iter()
        .position(|e| e.event == RunEventKind::Decided);
    assert!(
        at < finished,
        "decided before the run finished: {:?}",
        info.history
    );

    // the conversation's next turn: the same payment twice, nobody asked
    let next = client.ask("c1", "ada", &pay.toolkit).await.unwrap();
    assert_eq!(next.status, RunStatus::Done, "{next:?}");
    assert_eq!(pay.ran(), 4);
    // other arguments ask
    let other = client.ask("c1", "bob", &pay.toolkit).await.unwrap();
    assert_eq!(
        other.pending.map(|r| r.prompt).as_deref(),
        Some("Pay bob 40?")
    );
    // another conversation asks
    let elsewhere = client.ask("c2", "ada", &pay.toolkit).await.unwrap();
    assert_eq!(
        elsewhere.pending.map(|r| r.prompt).as_deref(),
        Some("Pay ada 40?")
    );
    // a fresh run outside any conversation asks
    let outside = client.run("ada", &pay.toolkit).await.unwrap();
    assert_eq!(outside.status, RunStatus::Pending);
    assert_eq!(pay.ran(), 4);
}

/// Through the loop: a deny rule declines without asking (the model reads the declined text,
/// an event names the rule, a run that parks later keeps the decision in its history); a
/// principal's rule holds for that principal's runs only; an ended rule asks again; a
/// `wait_for` answer remembered for the principal answers the turn's second call.
pub async fn deny_principal_and_expiry_through_the_loop(make: Make) {
    let s = subject!(make);
    let store = s.handles[0].clone();
    let rules = rules_of(store.as_ref());
    let pay = Payments::new();
    let events = Arc::new(Mutex::new(Vec::new()));
    let seen = events.clone();
    let client = Payments::client(store.clone())
        .on_event(move |e| {
            if let Event::Decided {
                rule,
                allowed,
                name,
                ..
            } = e
            {
                seen.lock()
                    .unwrap()
                    .push((name.clone(), rule.clone(), *allowed));
            }
        })
        .build()
        .unwrap();

    let deny = rule(
        |id| {
            Answer::decline(id, DeclineReason::Declined)
                .remember(Remember::new(Scope::Tool, Within::Principal))
        },
        &json!({}),
        None,
        Some("ada"),
    );
    rules.put_rule(&deny).await.unwrap();
    let declined = client
        .for_principal("ada")
        .run("eve", &pay.toolkit)
        .await
        .unwrap();
    assert_eq!(declined.status, RunStatus::Done, "{declined:?}");
    let outputs: Vec<(&str, bool)> = declined
        .tool_calls
        .iter()
        .map(|c| (c.output.as_str(), c.is_error))
        .collect();
    assert_eq!(
        outputs,
        [
            ("declined/expired: Pay eve 40?", true),
            ("declined/expired: Pay eve 40?", true)
        ]
    );
    assert_eq!(pay.ran(), 0);
    assert_eq!(
        *events.lock().unwrap(),
        [
            ("pay".to_owned(), deny.id.clone(), false),
            ("pay".to_owned(), deny.id.clone(), false)
        ]
    );

    // bob's runs are not ada's: asked, and parked
    let bob = client
        .for_principal("bob")
        .run("eve", &pay.toolkit)
        .await
        .unwrap();
    assert_eq!(bob.status, RunStatus::Pending);

    ended_rule_asks_again(store.as_ref(), &client, &pay).await;
    decision_before_a_park_is_in_its_history(&store, &pay).await;
    wait_for_remembers_for_the_principal(&store, &pay).await;
    a_run_stays_its_principals(&client, &pay, &bob).await;
}

/// Part of [`deny_principal_and_expiry_through_the_loop`]: a run stays the run of the
/// principal it started for, whoever resumes it. Bob's parked run, answered through a client
/// for ada (whose deny rule covers the tool), runs its first call and asks for the second
/// instead of taking ada's rule; its records say bob.
async fn a_run_stays_its_principals(client: &Client, pay: &Payments, bob: &toolnexus::RunResult) {
    let record = toolnexus::PendingRun::try_from(bob).unwrap();
    assert_eq!(record.principal(), Some("bob"));
    let ran = pay.ran();
    let answer = Answer::accept(&record.pending().id, json!(true));
    let next = client
        .for_principal("ada")
        .answer(answer, &pay.toolkit)
        .await
        .unwrap();
    assert_eq!(next.status, RunStatus::Pending, "{next:?}");
    assert_eq!(pay.ran(), ran + 1);
    assert_eq!(
        next.tool_calls.last().map(|c| c.output.as_str()),
        Some("Approval required: Pay eve 40?")
    );
    let again = toolnexus::PendingRun::try_from(&next).unwrap();
    assert_eq!(again.principal(), Some("bob"));
}

/// Part of [`deny_principal_and_expiry_through_the_loop`].
async fn ended_rule_asks_again(store: &dyn RunStore, client: &Client, pay: &Payments) {
    let rules = rules_of(store);
    // an allow rule for cy that ends soon: it answers, then it has ended and cy is asked
    let soon = rule(
        |id| {
            Answer::ok(id).remember(
                Remember::new(Scope::Tool, Within::Principal)
                    .until(SystemTime::now() + Duration::from_millis(400)),
            )
        },
        &json!({}),
        None,
        Some("cy"),
    );
    rules.put_rule(&soon).await.unwrap();
    let for_cy = client.for_principal("cy");
    let allowed = for_cy.run("eve", &pay.toolkit).await.unwrap();
    assert_eq!(allowed.status, RunStatus::Done, "{allowed:?}");
    assert_eq!(pay.ran(), 2);
    tokio::time::sleep(Duration::from_millis(450)).await;
    let asked = for_cy.run("eve", &pay.toolkit).await.unwrap();
    assert_eq!(asked.status, RunStatus::Pending);
    assert_eq!(pay.ran(), 2);
}

/// Part of [`deny_principal_and_expiry_through_the_loop`].
async fn decision_before_a_park_is_in_its_history(store: &Arc<dyn RunStore>, pay: &Payments) {
    let rules = rules_of(store.as_ref());
    // a run for ada whose first call an allow rule answers and whose second parks: the
    // decision is in the parked run's history
    let first_only = rule(
        |id| Answer::ok(id).remember(Remember::new(Scope::Args, Within::Principal)),
        &json!({"to": "dan", "amount": 40}),
        None,
        Some("dan"),
    );
    rules.put_rule(&first_only).await.unwrap();
    let odd = Client::builder(FnModel::new(|req: ModelRequest| async move {
        let results = req.messages.iter().filter(|m| m.role == Role::Tool).count();
        let amount = if results == 0 { 40 } else { 41 };
        Reply::tool_call("pay", json!({"to": "dan", "amount": amount}))
    }))
    .model_name("rules")
    .store(store.clone())
    .approval_policy(|_, args| Some(format!("Pay {}?", args["amount"])))
    .build()
    .unwrap();
    let parked = odd
        .for_principal("dan")
        .run("go", &pay.toolkit)
        .await
        .unwrap();
    assert_eq!(
        parked.pending.as_ref().map(|r| r.prompt.as_str()),
        Some("Pay 41?")
    );
    assert_eq!(pay.ran(), 3);
    let info = store.info(&parked.run_id).await.unwrap().unwrap();
    let kinds: Vec<RunEventKind> = info.history.iter().map(|e| e.event).collect();
    assert_eq!(kinds, [RunEventKind::Requested, RunEventKind::Decided]);
    assert_eq!(
        info.history[1].rule.as_deref(),
        Some(first_only.id.as_str())
    );
    assert_eq!(info.history[1].outcome.as_deref(), Some("allowed"));
}

/// Part of [`deny_principal_and_expiry_through_the_loop`].
async fn wait_for_remembers_for_the_principal(store: &Arc<dyn RunStore>, pay: &Payments) {
    let rules = rules_of(store.as_ref());
    // in-process: `wait_for` answers "this tool, for me"; the turn's second call is not asked
    let asks = Arc::new(AtomicU32::new(0));
    let counted = asks.clone();
    let waiting =
        Payments::client(store.clone())
            .wait_for(move |req: Request| {
                counted.fetch_add(1, Ordering::SeqCst);
                async move {
                    Answer::ok(&req.id).remember(Remember::new(Scope::Tool, Within::Principal))
                }
            })
            .build()
            .unwrap();
    let done = waiting
        .for_principal("fay")
        .run("eve", &pay.toolkit)
        .await
        .unwrap();
    assert_eq!(done.status, RunStatus::Done, "{done:?}");
    assert_eq!((asks.load(Ordering::SeqCst), pay.ran()), (1, 5));
    let fays: Vec<_> = rules
        .list_rules(100)
        .await
        .unwrap()
        .into_iter()
        .filter(|r| r.holder == "fay")
        .collect();
    assert_eq!(fays.len(), 1);
    assert_eq!(
        (fays[0].within, fays[0].scope, fays[0].effect),
        (Within::Principal, Scope::Tool, Effect::Allow)
    );
}

/// Only approvals are remembered: an `input` request is asked every time, whatever its
/// answer said.
pub async fn only_approvals_are_remembered(make: Make) {
    let s = subject!(make);
    let store = s.handles[0].clone();
    let asks = Arc::new(AtomicU32::new(0));
    let counted = asks.clone();
    let name = FnTool::builder("name")
        .description("Asks a name.")
        .handler(|_, ctx| async move {
            match ctx.answer_data::<Value>() {
                Ok(Some(data)) => ToolResult::success(data["name"].to_string()),
                _ => ToolResult::suspended(Request::input("Name?")),
            }
        })
        .build()
        .unwrap();
    let toolkit = Toolkit::builder().tool(name).build().unwrap();
    let client = Client::builder(FnModel::new(|req: ModelRequest| async move {
        if req.messages.iter().filter(|m| m.role == Role::Tool).count() < 2 {
            Reply::tool_call("name", json!({}))
        } else {
            Reply::text("done")
        }
    }))
    .model_name("rules")
    .store(store.clone())
    .wait_for(move |req: Request| {
        counted.fetch_add(1, Ordering::SeqCst);
        async move {
            Answer::accept(
                &req.id,
                json!({"name": "Ada", "remember": {"scope": "tool", "within": "principal"}}),
            )
        }
    })
    .build()
    .unwrap();
    let done = client
        .for_principal("ada")
        .run("go", &toolkit)
        .await
        .unwrap();
    assert_eq!(done.status, RunStatus::Done);
    assert_eq!(asks.load(Ordering::SeqCst), 2);
    assert!(
        rules_of(store.as_ref())
            .list_rules(10)
            .await
            .unwrap()
            .is_empty()
    );
}

/// A tool that asks for approval itself (not a client policy): an allow rule approves it as a
/// person would (the tool runs again with the accepting answer); after the rule is revoked,
/// the call asks again.
pub async fn a_tools_own_approval_is_answered_by_a_rule(make: Make) {
    let s = subject!(make);
    let store = s.handles[0].clone();
    let deliveries = Arc::new(AtomicU32::new(0));
    let counter = deliveries.clone();
    let send = FnTool::builder("send")
        .description("Sends the report.")
        .handler(move |_, ctx| {
            let counter = counter.clone();
            async move {
                match ctx.answer() {
                    Some(answer) if answer.ok => {
                        counter.fetch_add(1, Ordering::SeqCst);
                        ToolResult::success("sent")
                    }
                    Some(_) => ToolResult::error("not sent"),
                    None => ToolResult::suspended(Request::approval("Send the report?")),
                }
            }
        })
        .build()
        .unwrap();
    let toolkit = Toolkit::builder().tool(send).build().unwrap();
    let client = Client::builder(FnModel::new(|req: ModelRequest| async move {
        if req.messages.iter().any(|m| m.role == Role::Tool) {
            Reply::text("done")
        } else {
            Reply::tool_call("send", json!({"week": 3}))
        }
    }))
    .model_name("rules")
    .store(store.clone())
    .build()
    .unwrap()
    .for_principal("ada");
    let allow = rule(
        |id| Answer::ok(id).remember(Remember::new(Scope::Args, Within::Principal)),
        &json!({"week": 3}),
        None,
        Some("ada"),
    );
    let rules = rules_of(store.as_ref());
    rules.put_rule(&allow).await.unwrap();
    // the rule was made for `pay`: `send` asks
    let asked = client.run("send it", &toolkit).await.unwrap();
    assert_eq!(asked.status, RunStatus::Pending);
    let request = Request::approval("Send?");
    let answer = Answer::ok(&request.id).remember(Remember::new(Scope::Args, Within::Principal));
    let for_send = rule_of_answer(
        &request,
        &answer,
        "send",
        &json!({"week": 3}),
        "run-1",
        None,
        Some("ada"),
        Some("ada"),
    )
    .unwrap()
    .unwrap();
    rules.put_rule(&for_send).await.unwrap();
    let done = client.run("send it", &toolkit).await.unwrap();
    assert_eq!(done.status, RunStatus::Done, "{done:?}");
    assert_eq!(done.tool_calls[0].output, "sent");
    assert_eq!(deliveries.load(Ordering::SeqCst), 1);
    assert!(rules.revoke_rule(&for_send.id).await.unwrap());
    let again = client.run("send it", &toolkit).await.unwrap();
    assert_eq!(
        again.pending.map(|r| r.prompt).as_deref(),
        Some("Send the report?")
    );
    assert_eq!(deliveries.load(Ordering::SeqCst), 1);
}
