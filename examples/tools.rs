//! Tools from plain functions with `#[tool]`, and tools with shared state with `#[toolset]`.
//!
//! Run with `cargo run -p toolnexus-examples --example tools`.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex};

use serde_json::json;
use toolnexus::{Context, Toolkit, tool, toolset};

/// Convert a temperature between Celsius and Fahrenheit.
#[tool]
fn convert_temperature(
    /// The temperature to convert.
    value: f64,
    /// Convert to Fahrenheit (`true`) or to Celsius (`false`).
    #[arg(default = true)]
    to_fahrenheit: bool,
) -> String {
    if to_fahrenheit {
        format!("{:.1} °F", value * 9.0 / 5.0 + 32.0)
    } else {
        format!("{:.1} °C", (value - 32.0) * 5.0 / 9.0)
    }
}

/// Split a sentence into words and count them.
///
/// The result is a JSON object from word to count.
#[tool]
fn word_count(
    /// The text to count.
    text: &str,
    /// Ignore letter case.
    ignore_case: Option<bool>,
) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for word in text.split_whitespace() {
        let word = if ignore_case.unwrap_or(false) {
            word.to_lowercase()
        } else {
            word.to_owned()
        };
        *counts.entry(word).or_insert(0) += 1;
    }
    counts
}

/// Greet someone, after a short pause (tools can be `async fn`).
#[tool]
async fn greet(
    /// Who to greet.
    name: String,
) -> String {
    tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    format!("hello, {name}")
}

/// A notebook shared by its tools: state lives in the struct, the tools get `&self`.
#[derive(Default)]
struct Notebook {
    notes: Mutex<Vec<String>>,
}

#[toolset]
impl Notebook {
    /// Write a note down. Returns how many notes there are.
    #[tool]
    fn add_note(
        &self,
        /// The note's text.
        text: String,
    ) -> Result<usize, String> {
        if text.trim().is_empty() {
            return Err("a note needs some text".to_owned());
        }
        let mut notes = self.notes.lock().map_err(|e| e.to_string())?;
        notes.push(text);
        Ok(notes.len())
    }

    /// List the notes written so far, oldest first.
    #[tool]
    fn list_notes(&self, ctx: &toolnexus::Context) -> Vec<String> {
        let _ = ctx.call_id();
        self.notes.lock().map(|n| n.clone()).unwrap_or_default()
    }
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let notebook = Arc::new(Notebook::default());
    let toolkit = Toolkit::builder()
        .tool(ConvertTemperature)
        .tool(WordCount)
        .tool(Greet)
        .tools(Arc::clone(&notebook).tools())
        .build()?;

    println!("tools as OpenAI sees them:");
    println!("{}", serde_json::to_string_pretty(&toolkit.to_openai()?)?);

    let ctx = Context::new();
    let calls = [
        ("convert_temperature", json!({"value": 21.5})),
        (
            "word_count",
            json!({"text": "the cat saw The dog", "ignore_case": true}),
        ),
        ("greet", json!({"name": "Ada"})),
        ("add_note", json!({"text": "buy milk"})),
        ("add_note", json!({"text": "  "})),
        ("list_notes", json!({})),
        // arguments a model got wrong: the message says what to fix
        ("convert_temperature", json!({"value": "hot"})),
        ("add_note", json!({"txt": "typo"})),
    ];
    for (name, args) in calls {
        let r = toolkit.execute(name, args.clone(), &ctx).await;
        let tag = if r.is_error { "error" } else { "ok" };
        println!("{name}({args}) -> [{tag}] {}", r.output);
    }
    println!(
        "notes kept by the shared instance: {:?}",
        notebook.notes.lock().map(|n| n.len())
    );
    Ok(())
}
