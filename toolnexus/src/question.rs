//! The built-in `question` tool ([contract section 7](crate::contract)): the model asks the human one or more
//! questions, optionally with options to choose from.

use std::sync::OnceLock;

use serde::Deserialize;
use serde_json::{Map, Value, json};

use crate::context::Context;
use crate::request::Request;
use crate::result::ToolResult;
use crate::tool::{BoxFuture, Tool, deserialize_args};

/// The name of the built-in question tool.
pub const QUESTION_TOOL_NAME: &str = "question";

/// `source` of built-in tools.
pub const SOURCE_BUILTIN: &str = "builtin";

const DESCRIPTION: &str = "Ask the user one or more questions and wait for the answers. Use it when you need information or a decision only the user can give. Give each question optional choices in `options`; set `multiple` when several may be chosen.";

/// The built-in `question` tool ([contract section 7](crate::contract)).
///
/// Input: `{"questions":[{"question":string,"header"?:string,"options"?:[string],"multiple"?:bool}]}`.
///
/// - The first call suspends with a `question` request whose `data.questions` is the input
///   array as given and whose prompt is each question's text, with ` (options: a, b)` appended
///   when it has options, joined by `\n` (the suspension's output is the prompt).
/// - On the retry with an accepted answer it returns `answer.data` as compact JSON, or `{}`
///   when the answer has no data.
/// - On a retry with a declined answer it fails with `<reason>: <prompt>`.
///
/// ```
/// use serde_json::json;
/// use toolnexus::{question::QuestionTool, assert_pending, assert_success, testing};
///
/// # tokio::runtime::Builder::new_current_thread().build().unwrap().block_on(async {
/// let args = json!({"questions": [{"question": "Which seat?", "options": ["aisle", "window"]}]});
/// let first = testing::call(&QuestionTool::new(), args.clone()).await;
/// let request = assert_pending!(first, question "Which seat? (options: aisle, window)");
///
/// let answer = request.accept(json!({"Which seat?": "aisle"}));
/// let second = testing::retry_with(&QuestionTool::new(), args, answer).await;
/// assert_success!(second, r#"{"Which seat?":"aisle"}"#);
/// # });
/// ```
#[derive(Clone, Copy, Debug, Default)]
pub struct QuestionTool {
    _private: (),
}

impl QuestionTool {
    /// The tool.
    pub fn new() -> Self {
        Self::default()
    }
}

/// One question of the tool's input (only what the prompt needs; `data.questions` keeps the
/// input as given).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct QuestionItem {
    question: String,
    #[serde(default)]
    #[allow(dead_code)] // read by the host from data.questions, not by the tool
    header: Option<String>,
    #[serde(default)]
    options: Option<Vec<String>>,
    #[serde(default)]
    #[allow(dead_code)] // read by the host from data.questions, not by the tool
    multiple: Option<bool>,
}

#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Input {
    questions: Vec<QuestionItem>,
}

fn schema() -> &'static Value {
    static SCHEMA: OnceLock<Value> = OnceLock::new();
    SCHEMA.get_or_init(|| {
        let mut schema =
        json!({
            "type": "object",
            "properties": {
                "questions": {
                    "type": "array",
                    "description": "The questions to ask.",
                    "items": {
                        "type": "object",
                        "properties": {
                            "question": {"type": "string", "description": "The question."},
                            "header": {"type": "string", "description": "A short label for the question."},
                            "options": {"type": "array", "items": {"type": "string"}, "description": "Choices to offer."},
                            "multiple": {"type": "boolean", "description": "Whether several options may be chosen."}
                        },
                        "required": ["question"],
                        "additionalProperties": false
                    },
                    "minItems": 1
                }
            },
            "required": ["questions"],
            "additionalProperties": false
        });
        // keys sorted in every build, as every schema toolnexus writes
        schema.sort_all_objects();
        schema
    })
}

/// The prompt of a question request: each question, with ` (options: a, b)` when it has
/// options, joined by `\n`.
fn prompt(questions: &[QuestionItem]) -> String {
    questions
        .iter()
        .map(|q| match &q.options {
            Some(options) if !options.is_empty() => {
                format!("{} (options: {})", q.question, options.join(", "))
            }
            _ => q.question.clone(),
        })
        .collect::<Vec<_>>()
        .join("\n")
}

impl Tool for QuestionTool {
    fn name(&self) -> &str {
        QUESTION_TOOL_NAME
    }

    fn description(&self) -> &str {
        DESCRIPTION
    }

    fn input_schema(&self) -> &Value {
        schema()
    }

    fn source(&self) -> &str {
        SOURCE_BUILTIN
    }

    fn execute<'a>(
        &'a self,
        args: Map<String, Value>,
        ctx: &'a Context,
    ) -> BoxFuture<'a, ToolResult> {
        Box::pin(async move {
            let raw = args.get("questions").cloned();
            let input: Input = match deserialize_args(QUESTION_TOOL_NAME, args) {
                Ok(input) => input,
                Err(failure) => return failure,
            };
            if input.questions.is_empty() {
                return ToolResult::error(format!(
                    "invalid arguments for {QUESTION_TOOL_NAME}: questions: at least one question is needed"
                ));
            }
            let prompt = prompt(&input.questions);
            match ctx.answer() {
                Some(answer) if answer.ok => ToolResult::success(
                    answer
                        .data
                        .as_ref()
                        .map_or_else(|| "{}".to_owned(), Value::to_string),
                ),
                Some(answer) => ToolResult::error(format!(
                    "{}: {prompt}",
                    answer
                        .reason
                        .clone()
                        .unwrap_or(crate::request::DeclineReason::Declined)
                )),
                None => ToolResult::suspended(
                    Request::question(prompt)
                        .with_data_entry("questions", raw.unwrap_or(Value::Null)),
                ),
            }
        })
    }
}
