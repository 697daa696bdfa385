//! The built-in `question` tool, contract section 7, golden.

use serde_json::json;
use toolnexus::{
    Answer, Context, Tool, Toolkit, assert_failure, assert_pending, assert_success,
    question::QuestionTool, request::DeclineReason, testing,
};

#[test]
fn name_source_and_schema_golden() {
    let tool = QuestionTool::new();
    assert_eq!(tool.name(), "question");
    assert_eq!(tool.source(), "builtin");
    assert_eq!(
        tool.description(),
        "Ask the user one or more questions and wait for the answers. Use it when you need information or a decision only the user can give. Give each question optional choices in `options`; set `multiple` when several may be chosen."
    );
    assert_eq!(
        tool.input_schema().to_string(),
        r#"{"additionalProperties":false,"properties":{"questions":{"description":"The questions to ask.","items":{"additionalProperties":false,"properties":{"header":{"description":"A short label for the question.","type":"string"},"multiple":{"description":"Whether several options may be chosen.","type":"boolean"},"options":{"description":"Choices to offer.","items":{"type":"string"},"type":"array"},"question":{"description":"The question.","type":"string"}},"required":["question"],"type":"object"},"minItems":1,"type":"array"}},"required":["questions"],"type":"object"}"#
    );
    // a valid tool schema for every provider
    toolnexus::schema::check_input_schema("question", tool.input_schema()).unwrap();
}

#[tokio::test]
async fn first_call_suspends_with_the_rendered_prompt_and_the_questions() {
    let questions = json!([
        {"question": "Which seat?", "header": "Seat", "options": ["aisle", "window"]},
        {"question": "Any meal preference?"},
        {"question": "Extras?", "options": ["bag", "lounge"], "multiple": true},
        {"question": "Empty options?", "options": []}
    ]);
    let r = testing::call(&QuestionTool::new(), json!({"questions": questions})).await;
    let prompt = "Which seat? (options: aisle, window)\nAny meal preference?\nExtras? (options: bag, lounge)\nEmpty options?";
    let req = assert_pending!(r, question prompt);
    assert_eq!(r.output, prompt);
    assert!(r.is_error);
    assert_eq!(
        serde_json::to_string(&req.data).unwrap(),
        r#"{"questions":[{"header":"Seat","options":["aisle","window"],"question":"Which seat?"},{"question":"Any meal preference?"},{"multiple":true,"options":["bag","lounge"],"question":"Extras?"},{"options":[],"question":"Empty options?"}]}"#
    );
    assert!(req.id.starts_with("sus-"));
    assert_eq!(req.url, None);
    assert_eq!(req.expires_at, None);
}

#[tokio::test]
async fn retry_returns_the_answer_data_as_compact_json() {
    let args = json!({"questions": [{"question": "Which seat?", "options": ["aisle", "window"]}]});
    let tool = QuestionTool::new();
    let first = testing::call(&tool, args.clone()).await;
    let req = assert_pending!(first, question "Which seat? (options: aisle, window)");

    let data = json!({"answers": [["aisle"]], "note": "near the front"});
    let r = testing::retry_with(&tool, args.clone(), req.accept(&data)).await;
    assert_success!(r, r#"{"answers":[["aisle"]],"note":"near the front"}"#);

    let r = testing::retry_with(&tool, args.clone(), req.accept("aisle")).await;
    assert_success!(r, r#""aisle""#);

    let r = testing::retry_with(&tool, args.clone(), Answer::ok(req.id.clone())).await;
    assert_success!(r, "{}");

    let r = testing::retry_with(&tool, args, req.decline(DeclineReason::Declined)).await;
    assert_failure!(r, "declined: Which seat? (options: aisle, window)");
}

#[tokio::test]
async fn bad_arguments_are_failures_naming_the_field() {
    let tool = QuestionTool::new();
    assert_failure!(
        testing::call(&tool, json!({})).await,
        "invalid arguments for question: missing field `questions`"
    );
    assert_failure!(
        testing::call(&tool, json!({"questions": [{"question": 3}]})).await,
        "invalid arguments for question: questions[0].question: invalid type: integer `3`, expected a string"
    );
    assert_failure!(
        testing::call(&tool, json!({"questions": []})).await,
        "invalid arguments for question: questions: at least one question is needed"
    );
}

#[tokio::test]
async fn through_a_toolkit() {
    let toolkit = Toolkit::builder()
        .tool(QuestionTool::new())
        .build()
        .unwrap();
    let args = json!({"questions": [{"question": "Go?"}]});
    let r = toolkit
        .execute("question", args.clone(), &Context::new())
        .await;
    let req = assert_pending!(r, question "Go?");
    let ctx = Context::new().with_answer(req.accept(json!({"Go?": "yes"})));
    assert_success!(
        toolkit.execute("question", args, &ctx).await,
        r#"{"Go?":"yes"}"#
    );
}
