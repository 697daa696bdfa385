//! A provider that drops the connection mid-stream, seen from the agent loop: the run ends
//! with a transport error (text already streamed stays delivered), and a halted run being
//! resumed when that happens is not lost: the record is only read, so resuming it again
//! finishes the run.

use serde_json::json;
use toolnexus::{Client, PendingRun, RunStatus, Toolkit};
use toolnexus_tests::asker;
use toolnexus_tests::fake_provider::{FakeProvider, FakeReply, openai};
use toolnexus_tests::fixtures::{assert_broken_mid_stream, text_deltas as deltas};

fn client(fake: &FakeProvider) -> Client {
    let provider = fake.openai("k").build().unwrap();
    Client::builder(provider).model_name("m-1").build().unwrap()
}

#[tokio::test]
async fn a_stream_dropped_while_resuming_leaves_the_halted_run_resumable() {
    let fake = FakeProvider::start().await;
    let (ask, calls) = asker("ask", "Which city?");
    let toolkit = Toolkit::builder().tool(ask).build().unwrap();

    // turn 1 (not streamed): the model calls `ask`, which suspends: the run halts
    fake.push(FakeReply::json(openai::tool_calls(
        &[("call_a", "ask", "{}")],
        3,
        2,
    )));
    let halted = client(&fake)
        .run("book me a flight", &toolkit)
        .await
        .unwrap();
    assert_eq!(halted.status, RunStatus::Pending);
    let json = PendingRun::try_from(&halted).unwrap().to_json();
    let record = PendingRun::from_json(&json).unwrap();

    // the resume streams the next turn; the connection drops after "Booked " (role chunk,
    // two deltas)
    fake.push(
        FakeReply::sse(openai::stream_text(&["Booked ", "to ", "Oslo."], 5, 3)).break_after(3),
    );
    let (seen, sink) = deltas();
    let answer = record.pending().accept("Oslo");
    let err = client(&fake)
        .stream_resume(record, answer, &toolkit, sink)
        .await
        .unwrap_err();
    assert_broken_mid_stream(&err);
    assert_eq!(*seen.lock().unwrap(), ["Booked ", "to "]);
    assert_eq!(
        calls.get(),
        2,
        "the tool ran with the answer before the model broke"
    );

    // the persisted record is unchanged: the same answer resumes it to the end
    let record = PendingRun::from_json(&json).unwrap();
    fake.push(FakeReply::sse(openai::stream_text(
        &["Booked ", "to ", "Oslo."],
        5,
        3,
    )));
    let (seen, sink) = deltas();
    let answer = record.pending().accept("Oslo");
    let done = client(&fake)
        .stream_resume(record, answer, &toolkit, sink)
        .await
        .unwrap();
    assert_eq!(done.status, RunStatus::Done);
    assert_eq!(done.text, "Booked to Oslo.");
    assert_eq!(*seen.lock().unwrap(), ["Booked ", "to ", "Oslo."]);
    assert_eq!(done.tool_calls[0].output, "ask got \"Oslo\"");
    // what the model was sent on the successful resume: the answered call's result
    let sent = fake.requests().last().unwrap().body.clone();
    let messages = sent["messages"].as_array().unwrap();
    assert_eq!(
        messages.last().unwrap(),
        &json!({"role": "tool", "tool_call_id": "call_a", "content": "ask got \"Oslo\""})
    );
}

#[tokio::test]
async fn a_stream_dropped_mid_run_ends_it_with_a_transport_error_not_retried() {
    let fake = FakeProvider::start().await;
    let toolkit = Toolkit::builder().build().unwrap();
    fake.push(FakeReply::sse(openai::stream_text(&["one ", "two ", "three"], 5, 5)).break_after(2));
    let (seen, sink) = deltas();
    let err = client(&fake)
        .stream("count", &toolkit, sink)
        .await
        .unwrap_err();
    assert_broken_mid_stream(&err);
    assert_eq!(*seen.lock().unwrap(), ["one "]);
    assert_eq!(fake.requests().len(), 1, "a broken stream is not retried");
}
