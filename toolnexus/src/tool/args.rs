//! Argument decoding: a model's arguments read as a JSON object (`parse_arguments`), then
//! as a Rust type ([`deserialize_args`]), or a failure that tells the model what is wrong.

use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::limits::{MAX_DEPTH, deeper_than, excerpt, parse_checked, shorten, too_deep};
use crate::result::ToolResult;
use crate::util::json_kind;

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

/// The model's arguments as an object, or the failure that tells the model what is wrong:
/// `invalid arguments for <tool>: not valid JSON: <serde message>` or `... expected a JSON
/// object, got <kind>`, or `... nested more than 128 levels deep`. `null` and an empty string
/// read as `{}`.
pub(crate) fn parse_arguments(
    tool: &str,
    arguments: &Value,
) -> Result<Map<String, Value>, ToolResult> {
    // what the loop accepts it can persist and read back (see `MAX_DEPTH`)
    let too_deep = match arguments {
        Value::String(s) => deeper_than(s, MAX_DEPTH).is_some(),
        other => too_deep(other),
    };
    if too_deep {
        return Err(ToolResult::error(format!(
            "invalid arguments for {tool}: nested more than {MAX_DEPTH} levels deep"
        )));
    }
    let not_object = |v: &Value| {
        ToolResult::error(format!(
            "invalid arguments for {tool}: expected a JSON object, got {}",
            json_kind(v)
        ))
    };
    match arguments {
        Value::Object(map) => Ok(map.clone()),
        Value::Null => Ok(Map::new()),
        Value::String(s) if s.trim().is_empty() => Ok(Map::new()),
        Value::String(s) => match parse_checked(s) {
            Ok(Value::Object(map)) => Ok(map),
            Ok(other) => Err(not_object(&other)),
            Err(e) => Err(ToolResult::error(format!(
                "invalid arguments for {tool}: not valid JSON: {e}"
            ))),
        },
        other => Err(not_object(other)),
    }
}
