//! Small helpers shared across the crate: the boxed future every trait of it returns, and two
//! that word failures (the kind of a JSON value, the text of a panic).

use std::future::Future;
use std::pin::Pin;

use serde_json::Value;

/// A boxed, `Send` future, the return type of [`Tool::execute`](crate::Tool::execute) (and of
/// every other trait method of the crate that does asynchronous work).
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// The text of a panic payload.
pub(crate) fn panic_message(payload: &(dyn std::any::Any + Send)) -> String {
    if let Some(s) = payload.downcast_ref::<&str>() {
        (*s).to_owned()
    } else if let Some(s) = payload.downcast_ref::<String>() {
        s.clone()
    } else {
        "a panic with a non-string payload".to_owned()
    }
}

/// What a JSON value is, as an error message names it (`a string`, `an array`, ...).
pub(crate) fn json_kind(v: &Value) -> &'static str {
    match v {
        Value::Null => "null",
        Value::Bool(_) => "a boolean",
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    }
}
