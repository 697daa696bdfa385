//! Argument decoding: a call's JSON arguments read as a Rust type, or a failure that tells the
//! model which field is wrong.

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::limits::{excerpt, shorten};
use crate::result::ToolResult;

/// Deserializes a tool's arguments, or explains to the model what is wrong:
/// `invalid arguments for <tool>: <field path>: <serde's message>`, with any long value quoted
/// as its first 64 characters and its length (`"xxxx…" (52428800 bytes)`).
///
/// # Errors
///
/// The failure [`ToolResult`] to hand back to the model.
pub fn deserialize_args<T: DeserializeOwned>(
    tool: &str,
    args: Map<String, Value>,
) -> std::result::Result<T, ToolResult> {
    serde_path_to_error::deserialize(Value::Object(args)).map_err(|err| {
        let path = error_path(&err);
        let inner = err.into_inner();
        let message = if path.is_empty() {
            format!("invalid arguments for {tool}: {inner}")
        } else {
            format!("invalid arguments for {tool}: {}: {inner}", excerpt(&path))
        };
        ToolResult::error(shorten(message))
    })
}

/// Where a decoding error happened (`a.b[2]`; empty at the root). An unknown key is reported
/// at its parent, so its name is not said twice (`a: unknown field `zip``, not `a.zip: ..`).
pub(crate) fn error_path(err: &serde_path_to_error::Error<serde_json::Error>) -> String {
    use serde_path_to_error::Segment;
    let mut segments: Vec<&Segment> = err.path().iter().collect();
    if let Some(Segment::Map { key }) = segments.last()
        && err
            .inner()
            .to_string()
            .starts_with(&format!("unknown field `{key}`"))
    {
        segments.pop();
    }
    let mut out = String::new();
    for (i, seg) in segments.iter().enumerate() {
        if i > 0 && !matches!(seg, Segment::Seq { .. }) {
            out.push('.');
        }
        out.push_str(&seg.to_string());
    }
    out
}
