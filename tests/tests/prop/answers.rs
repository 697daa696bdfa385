//! The trust boundary's one walk over answers (issue 33), through the public doors: whatever
//! depth and spelling, a key that names a credential is refused by `check_answer` (a web tier's
//! door) and by the loop (an edited approval resolved by `Client`), and an answer that passes
//! names no credential its request did not offer.

use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use proptest::prelude::*;
use serde_json::{Value, json};
use toolnexus::boundary::check_answer;
use toolnexus::{FnTool, Reply, Request, ScriptedModel, Toolkit};
use toolnexus_tests::fixtures::client_for;
use toolnexus_tests::tool_results;

/// Spellings the boundary reads as one credential word: case, separators, humps, Unicode
/// confusables (a Cyrillic `а`, a fullwidth `ｐ`), a zero-width space, and other words.
const SPELLINGS: &[&str] = &[
    "password",
    "Password",
    "PASSWORD",
    "pass_word",
    "pass-word",
    "passWord",
    "p\u{430}ssword",
    "pass\u{200b}word",
    "\u{ff50}assword",
    "api_key",
    "apiKey",
    "AccessToken",
    "2fa",
    "otp",
    "PIN",
    "cvv",
    "iban",
    "session_id",
    "credentials",
    "auth",
];

/// `{leaf: "x"}` under `depth - 1` containers (every third an array), the outermost an object:
/// the value, and the path below it to `leaf`.
fn nest(depth: usize, leaf: &str) -> (Value, String) {
    let (mut v, mut path) = (json!({ leaf: "x" }), leaf.to_owned());
    for level in 1..depth {
        if level % 3 == 2 {
            v = Value::Array(vec![v]);
            path = format!("[0].{path}");
        } else {
            v = json!({ format!("n{level}"): v });
            path = if path.starts_with('[') {
                format!("n{level}{path}")
            } else {
                format!("n{level}.{path}")
            };
        }
    }
    if v.is_array() {
        (json!({ "top": v }), format!("top{path}"))
    } else {
        (v, path)
    }
}

/// An editable tool taking any object, counting its runs.
fn editable(runs: Arc<AtomicUsize>) -> Toolkit {
    let tool = FnTool::builder("sign_in")
        .description("Signs in.")
        .destructive()
        .editable()
        .schema(json!({"type": "object"}))
        .handler(move |_, _| {
            runs.fetch_add(1, Ordering::SeqCst);
            async { "ran" }
        })
        .build()
        .unwrap();
    Toolkit::builder().tool(tool).build().unwrap()
}

/// The loop's door: `sign_in` proposed with `{"user": "ada"}`, approved with `edited`; the
/// tool's output and its runs.
fn through_the_loop(edited: Value) -> (String, usize) {
    let runs = Arc::new(AtomicUsize::new(0));
    let kit = editable(Arc::clone(&runs));
    let model = ScriptedModel::new([
        Reply::tool_call("sign_in", json!({"user": "ada"})),
        Reply::text("done"),
    ]);
    let client = client_for(model)
        .approve_destructive()
        .wait_for(move |req: Request| {
            let answer = req.approve_with(edited.clone());
            async move { answer }
        })
        .build()
        .unwrap();
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let result = rt.block_on(client.run("sign in", &kit)).unwrap();
    let output = tool_results(&result.messages)[0].1.clone();
    (output, runs.load(Ordering::SeqCst))
}

fn city_form() -> Request {
    Request::input("Where to?").with_data_entry(
        "schema",
        json!({"type": "object", "properties": {"city": {"type": "string"}}}),
    )
}

/// Every key of `value`, at any depth.
fn keys(value: &Value, out: &mut Vec<String>) {
    match value {
        Value::Array(items) => items.iter().for_each(|v| keys(v, out)),
        Value::Object(map) => map.iter().for_each(|(k, v)| {
            out.push(k.clone());
            keys(v, out);
        }),
        _ => {}
    }
}

/// A name: a spelling, an innocent word, or random letters.
fn name() -> impl Strategy<Value = String> {
    prop_oneof![
        prop::sample::select(SPELLINGS).prop_map(str::to_owned),
        prop::sample::select(&["city", "note", "compass", "author", "tokenizer", "n"][..])
            .prop_map(str::to_owned),
        "[a-z]{1,6}",
    ]
}

fn answer_data() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        "[a-z ]{0,12}".prop_map(Value::String),
        any::<i32>().prop_map(Value::from),
    ];
    leaf.prop_recursive(6, 48, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
            prop::collection::vec((name(), inner), 0..4)
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(192))]

    #[test]
    fn a_credential_at_any_depth_of_an_answer_is_refused_at_every_door(
        depth in 1usize..64,
        word in prop::sample::select(SPELLINGS),
    ) {
        let (deep, below) = nest(depth, word);
        // a form's answer, through check_answer
        let form = city_form();
        let err = check_answer(&form, &form.accept(json!({"city": "Oslo", "more": deep.clone()})))
            .expect_err("a form's answer");
        prop_assert_eq!(err.path(), format!("data.more.{below}"));
        // an edit, through check_answer
        let approval = Request::editable_approval("Sign in?", json!({"user": "ada"}), json!({"type": "object"}));
        let edit = json!({"user": "ada", "deep": deep});
        let err = check_answer(&approval, &approval.approve_with(edit.clone())).expect_err("an edit");
        prop_assert_eq!(err.path(), format!("data.args.deep.{below}"));
        // an edit, through the loop: refused, and nothing ran
        let (output, runs) = through_the_loop(edit);
        prop_assert_eq!(
            output,
            format!("edit refused: the edit changes `deep.{below}`, which holds a credential; secrets never pass through answer data; nothing ran")
        );
        prop_assert_eq!(runs, 0);
    }

    #[test]
    fn an_answer_that_passes_names_no_credential_it_was_not_offered(data in answer_data()) {
        let form = city_form();
        let answer = form.accept(data.clone());
        if check_answer(&form, &answer).is_ok() {
            let mut found = Vec::new();
            keys(&data, &mut found);
            for key in found {
                prop_assert!(
                    !SPELLINGS.contains(&key.as_str()),
                    "`{key}` passed in {data}"
                );
            }
        }
    }
}
