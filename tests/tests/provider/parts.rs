//! Content parts of tool results on the wire: OpenAI content parts and Anthropic content
//! blocks in the tool-result messages, and a part neither has a block for.

use serde_json::json;
use toolnexus::{ContentPart, Message, Model, ModelRequest, model::ToolCall};
use toolnexus_tests::fake_provider::{FakeProvider, FakeReply, anthropic, openai};

fn transcript() -> Vec<Message> {
    vec![
        Message::user("Show me"),
        Message::assistant_tool_calls(
            None,
            vec![
                ToolCall::new("call_a", "chart", json!({})),
                ToolCall::new("call_b", "plain", json!({})),
            ],
        ),
        Message::tool_result("call_a", "the chart", false).with_parts(vec![
            ContentPart::image("aGk=", "image/png"),
            ContentPart::url("image", "https://x/c.png"),
            ContentPart::file("JVBERg==", "application/pdf").with_extra("name", json!("r.pdf")),
            ContentPart::audio("UklGRg==", "audio/wav"),
            ContentPart::audio("T2dnUw==", "audio/ogg"),
        ]),
        Message::tool_result("call_b", "plain text", false),
    ]
}

#[tokio::test]
async fn openai_tool_messages_carry_parts_as_content_parts() {
    let fake = FakeProvider::start().await;
    fake.push(FakeReply::json(openai::text("ok", 1, 1)));
    let provider = fake.openai("k").build().unwrap();
    let request = ModelRequest::new("m", transcript(), vec![]);
    provider.complete(&request, None).await.unwrap();
    let body = &fake.requests()[0].body;
    assert_eq!(
        body["messages"][2],
        json!({"role": "tool", "tool_call_id": "call_a", "content": [
            {"type": "text", "text": "the chart"},
            {"type": "image_url", "image_url": {"url": "data:image/png;base64,aGk="}},
            {"type": "image_url", "image_url": {"url": "https://x/c.png"}},
            {"type": "file", "file": {"file_data": "data:application/pdf;base64,JVBERg==", "filename": "r.pdf"}},
            {"type": "input_audio", "input_audio": {"data": "UklGRg==", "format": "wav"}},
            {"type": "text", "text": "[audio part (audio/ogg) not supported by this provider]"},
        ]})
    );
    // a result without parts keeps its plain string content
    assert_eq!(
        body["messages"][3],
        json!({"role": "tool", "tool_call_id": "call_b", "content": "plain text"})
    );
}

#[tokio::test]
async fn anthropic_tool_results_carry_parts_as_content_blocks() {
    let fake = FakeProvider::start().await;
    fake.push(FakeReply::json(anthropic::text("ok", 1, 1)));
    let provider = fake.anthropic("k").build().unwrap();
    let request = ModelRequest::new("m", transcript(), vec![]);
    provider.complete(&request, None).await.unwrap();
    let body = &fake.requests()[0].body;
    assert_eq!(
        body["messages"][2],
        json!({"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": "call_a", "is_error": false, "content": [
                {"type": "text", "text": "the chart"},
                {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "aGk="}},
                {"type": "image", "source": {"type": "url", "url": "https://x/c.png"}},
                {"type": "document", "source": {"type": "base64", "media_type": "application/pdf", "data": "JVBERg=="}},
                {"type": "text", "text": "[audio part (audio/wav) not supported by this provider]"},
                {"type": "text", "text": "[audio part (audio/ogg) not supported by this provider]"},
            ]},
            {"type": "tool_result", "tool_use_id": "call_b", "content": "plain text", "is_error": false},
        ]})
    );
}
