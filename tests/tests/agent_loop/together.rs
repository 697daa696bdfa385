//! A turn's questions together (contract section 3, this port's extension, opt-in per
//! client): the default still halts on the first suspension; opted in, the run executes every
//! call of the turn, parks with every request, takes their answers in any order (declined
//! ones too), and goes on once all are answered; `wait_for` is asked each request.

use serde_json::json;
use toolnexus::{
    Answer, Client, Error, PendingRun, Reply, Request, RunStatus, ScriptedModel, Toolkit,
    request::DeclineReason,
};
use toolnexus_tests::fake_provider::{FakeProvider, FakeReply, openai};
use toolnexus_tests::fixtures::client_for;
use toolnexus_tests::{Calls, Log, asker, echo, tool_results};

/// `ask_a`, `echo`, `ask_b`, and the calls each counts.
fn toolkit() -> (Toolkit, Calls, Calls, Calls) {
    let (a, a_calls) = asker("ask_a", "Which city?");
    let (b, b_calls) = asker("ask_b", "Which date?");
    let (echo, echo_calls) = echo();
    let toolkit = Toolkit::builder()
        .tool(a)
        .tool(echo)
        .tool(b)
        .build()
        .unwrap();
    (toolkit, a_calls, echo_calls, b_calls)
}

/// One turn calling `ask_a`, `echo` and `ask_b`.
fn turn() -> Reply {
    Reply::tool_call("ask_a", json!({}))
        .with_call("echo", json!({"text": "hi"}))
        .with_call("ask_b", json!({}))
}

fn together(model: ScriptedModel) -> Client {
    client_for(model).questions_together(true).build().unwrap()
}

#[tokio::test]
async fn by_default_the_run_halts_on_the_first_suspension_and_later_results_stay_out() {
    let (toolkit, _, _, _) = toolkit();
    let client = client_for(ScriptedModel::new([turn()])).build().unwrap();
    let halted = client.run("plan", &toolkit).await.unwrap();
    assert_eq!(halted.status, RunStatus::Pending);
    assert_eq!(halted.pending.as_ref().unwrap().id, "ask_a-1");
    assert!(halted.pending_all.is_empty(), "one request: no list");
    assert_eq!(
        halted
            .requests()
            .iter()
            .map(|r| r.id.as_str())
            .collect::<Vec<_>>(),
        ["ask_a-1"]
    );
    // only the halted call's placeholder: echo's and ask_b's results are not in the transcript
    assert_eq!(
        tool_results(&halted.messages),
        [("call_1_0".to_owned(), "Which city?".to_owned(), true)]
    );
    let json = serde_json::to_value(&halted).unwrap();
    assert!(json.get("pendingAll").is_none(), "{json}");
    let record = PendingRun::try_from(&halted).unwrap();
    assert!(!record.is_together());
    assert!(!record.to_json().contains("together"));
}

#[tokio::test]
async fn opted_in_the_turn_runs_every_call_and_parks_with_every_request() {
    let (toolkit, a, e, b) = toolkit();
    let halted = together(ScriptedModel::new([turn()]))
        .run("plan", &toolkit)
        .await
        .unwrap();
    assert_eq!(halted.status, RunStatus::Pending);
    assert_eq!(
        halted.pending.as_ref().unwrap().id,
        "ask_a-1",
        "the first in call order"
    );
    let ids: Vec<&str> = halted.pending_all.iter().map(|r| r.id.as_str()).collect();
    assert_eq!(ids, ["ask_a-1", "ask_b-1"]);
    assert_eq!(
        (a.get(), e.get(), b.get()),
        (1, 1, 1),
        "every call ran once"
    );
    let json = serde_json::to_value(&halted).unwrap();
    assert_eq!(json["pendingAll"][1]["id"], "ask_b-1");
    assert_eq!(json["pending"]["id"], "ask_a-1");
    let record = PendingRun::from_json(&PendingRun::try_from(&halted).unwrap().to_json()).unwrap();
    assert!(record.is_together());
    let ids: Vec<&str> = record.requests().iter().map(|r| r.id.as_str()).collect();
    assert_eq!(ids, ["ask_a-1", "ask_b-1"]);
}

#[tokio::test]
async fn answers_in_reverse_order_run_each_call_once_and_keep_the_transcript_balanced() {
    let (toolkit, a, e, b) = toolkit();
    let halted = together(ScriptedModel::new([turn()]))
        .run("plan", &toolkit)
        .await
        .unwrap();
    let record = PendingRun::from_json(&PendingRun::try_from(&halted).unwrap().to_json()).unwrap();
    let model = ScriptedModel::new([Reply::text("Booked.")]);
    let log = Log::default();
    let resumer = client_for(model.clone())
        .on_event(log.sink())
        .build()
        .unwrap();
    let answers = vec![
        Answer::accept("ask_b-1", "May 1"),
        Answer::accept("ask_a-1", "Oslo"),
    ];
    let done = resumer.resume_all(record, answers, &toolkit).await.unwrap();
    assert_eq!(done.status, RunStatus::Done);
    assert_eq!(done.text, "Booked.");
    assert_eq!(
        (a.get(), e.get(), b.get()),
        (2, 1, 2),
        "each asker once more, echo not again"
    );
    let sent = &model.requests()[0];
    assert_eq!(
        tool_results(&sent.messages),
        [
            (
                "call_1_0".to_owned(),
                "ask_a got \"Oslo\"".to_owned(),
                false
            ),
            ("call_1_1".to_owned(), "hi".to_owned(), false),
            (
                "call_1_2".to_owned(),
                "ask_b got \"May 1\"".to_owned(),
                false
            ),
        ],
        "exactly one result per call, in call order"
    );
    assert!(
        !log.types().contains(&"pending".to_owned()),
        "nothing asked again"
    );
}

#[tokio::test]
async fn a_declined_request_of_the_turn_reads_declined_and_its_tool_does_not_run_again() {
    let (toolkit, a, _, b) = toolkit();
    let halted = together(ScriptedModel::new([turn()]))
        .run("plan", &toolkit)
        .await
        .unwrap();
    let record = PendingRun::try_from(&halted).unwrap();
    let model = ScriptedModel::new([Reply::text("ok")]);
    let answers = vec![
        Answer::accept("ask_a-1", "Oslo"),
        Answer::decline("ask_b-1", DeclineReason::Declined),
    ];
    let done = client_for(model.clone())
        .build()
        .unwrap()
        .resume_all(record, answers, &toolkit)
        .await
        .unwrap();
    assert_eq!(done.status, RunStatus::Done);
    assert_eq!((a.get(), b.get()), (2, 1));
    assert_eq!(
        tool_results(&model.requests()[0].messages)[2],
        (
            "call_1_2".to_owned(),
            "declined/expired: Which date?".to_owned(),
            true
        )
    );
}

#[tokio::test]
async fn a_second_answer_to_the_same_request_or_a_stranger_is_refused_and_nothing_runs() {
    let (toolkit, a, _, b) = toolkit();
    let halted = together(ScriptedModel::new([turn()]))
        .run("plan", &toolkit)
        .await
        .unwrap();
    let record = PendingRun::try_from(&halted).unwrap();
    let client = client_for(ScriptedModel::new([Reply::text("ok")]))
        .build()
        .unwrap();
    let twice = vec![
        Answer::accept("ask_a-1", "Oslo"),
        Answer::accept("ask_b-1", "May 1"),
        Answer::accept("ask_b-1", "May 2"),
    ];
    let err = client
        .resume_all(record, twice, &toolkit)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("`ask_b-1 (twice)`"), "{err}");
    let record = err.into_pending_run().expect("the record comes back");
    let stranger = vec![Answer::accept("ask_a-1", "Oslo"), Answer::accept("nope", 1)];
    let err = client
        .resume_all(record, stranger, &toolkit)
        .await
        .unwrap_err();
    assert!(
        matches!(&err, Error::AnswerMismatch { expected, got, .. }
            if expected == "one of `ask_a-1`, `ask_b-1`" && got == "nope"),
        "{err}"
    );
    assert_eq!((a.get(), b.get()), (1, 1), "nothing ran");
}

#[tokio::test]
async fn a_later_request_left_unanswered_parks_the_run_again_on_it_with_its_id() {
    let (toolkit, a, _, b) = toolkit();
    let halted = together(ScriptedModel::new([turn()]))
        .run("plan", &toolkit)
        .await
        .unwrap();
    let record = PendingRun::try_from(&halted).unwrap();
    let again = together(ScriptedModel::new([Reply::text("ok")]))
        .resume_all(record, vec![Answer::accept("ask_a-1", "Oslo")], &toolkit)
        .await
        .unwrap();
    assert_eq!(again.status, RunStatus::Pending);
    assert_eq!(
        again.pending.as_ref().unwrap().id,
        "ask_b-1",
        "the same request"
    );
    assert!(again.pending_all.is_empty());
    assert_eq!(
        (a.get(), b.get()),
        (2, 1),
        "ask_b not run again before its answer"
    );
}

#[tokio::test]
async fn wait_for_is_asked_every_request_of_the_turn_before_it_goes_on() {
    let (toolkit, a, e, b) = toolkit();
    let log = Log::default();
    let asked = Log::default();
    let seen = asked.clone();
    let model = ScriptedModel::new([turn(), Reply::text("Booked.")]);
    let client = client_for(model.clone())
        .questions_together(true)
        .on_event(log.sink())
        .wait_for(move |request: Request| {
            seen.push(json!(request.id));
            async move { request.accept(format!("for {}", request.id)) }
        })
        .build()
        .unwrap();
    let done = client.run("plan", &toolkit).await.unwrap();
    assert_eq!(done.status, RunStatus::Done);
    assert_eq!((a.get(), e.get(), b.get()), (2, 1, 2));
    assert_eq!(asked.all(), [json!("ask_a-1"), json!("ask_b-1")]);
    let pending: Vec<String> = log
        .all()
        .iter()
        .filter(|e| e["type"] == "pending")
        .map(|e| e["request"]["id"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(pending, ["ask_a-1", "ask_b-1"], "both announced");
    assert_eq!(
        tool_results(&model.requests()[1].messages),
        [
            (
                "call_1_0".to_owned(),
                "ask_a got \"for ask_a-1\"".to_owned(),
                false
            ),
            ("call_1_1".to_owned(), "hi".to_owned(), false),
            (
                "call_1_2".to_owned(),
                "ask_b got \"for ask_b-1\"".to_owned(),
                false
            ),
        ]
    );
}

#[tokio::test]
async fn over_the_wire_the_together_turn_resumes_with_one_result_per_call() {
    let provider = FakeProvider::scripted([
        FakeReply::json(openai::tool_calls(
            &[
                ("c1", "ask_a", "{}"),
                ("c2", "echo", r#"{"text":"hi"}"#),
                ("c3", "ask_b", "{}"),
            ],
            5,
            1,
        )),
        FakeReply::json(openai::text("Booked.", 7, 1)),
    ])
    .await;
    let (toolkit, _, _, _) = toolkit();
    let model = provider.openai("k").model("m").build().unwrap();
    let client = Client::builder(model)
        .questions_together(true)
        .build()
        .unwrap();
    let halted = client.run("plan", &toolkit).await.unwrap();
    assert_eq!(halted.pending_all.len(), 2);
    let record = PendingRun::try_from(&halted).unwrap();
    let answers = vec![
        halted.pending_all[1].accept("May 1"),
        halted.pending_all[0].accept("Oslo"),
    ];
    let done = client.resume_all(record, answers, &toolkit).await.unwrap();
    assert_eq!(done.text, "Booked.");
    let body = &provider.requests()[1].body;
    let results: Vec<(&str, &str)> = body["messages"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|m| m["role"] == "tool")
        .map(|m| {
            (
                m["tool_call_id"].as_str().unwrap(),
                m["content"].as_str().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        results,
        [
            ("c1", "ask_a got \"Oslo\""),
            ("c2", "hi"),
            ("c3", "ask_b got \"May 1\"")
        ]
    );
}
