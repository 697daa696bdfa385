//! `#[tool]` return mapping: every supported return type, exact results.

// Tools take their arguments by value and may be `async` without awaiting: these tests write
// tools the way users do, and the expectations are long golden strings.
#![allow(
    clippy::needless_pass_by_value,
    clippy::unused_async,
    clippy::result_large_err,
    clippy::too_many_lines,
    clippy::unnecessary_wraps
)]

use std::collections::BTreeMap;
use std::fmt;

use serde_json::json;
use toolnexus::{Context, Request, Suspension, Tool, ToolResult, tool};

async fn run(t: &dyn Tool) -> ToolResult {
    t.execute(serde_json::Map::new(), &Context::new()).await
}

fn parked() -> Suspension {
    Suspension::new(Request::input("Which city?").with_id("r1"))
}

fn is_parked(r: &ToolResult) {
    assert_eq!(r.output, "Input required: Which city?");
    assert!(r.is_error);
    assert_eq!(toolnexus::pending_of(r).unwrap().id, "r1");
}

/// A String.
#[tool]
fn a_string() -> String {
    "hello".to_owned()
}

/// A static str.
#[tool]
fn a_static_str() -> &'static str {
    "static"
}

/// A str borrowed from an argument.
#[tool]
fn a_borrowed_str(text: &str) -> &str {
    text.trim()
}

/// Nothing.
#[tool]
async fn unit() {}

/// Passes a ToolResult through.
#[tool]
fn passthrough() -> ToolResult {
    ToolResult::success("as is").with_metadata("k", json!(1))
}

/// Suspends.
#[tool]
fn suspends() -> Suspension {
    parked()
}

/// Suspends through a ToolResult.
#[tool]
fn suspends_as_result() -> ToolResult {
    parked().into()
}

#[derive(serde::Serialize)]
struct Weather {
    city: &'static str,
    celsius: i8,
}

/// A Serialize struct.
#[tool]
fn get_weather() -> Weather {
    Weather {
        city: "Oslo",
        celsius: -3,
    }
}

/// A map.
#[tool]
fn a_map() -> BTreeMap<&'static str, u8> {
    BTreeMap::from([("a", 1), ("b", 2)])
}

/// A number.
#[tool]
fn a_number() -> f64 {
    1.5
}

/// An Option.
#[tool]
fn an_option() -> Option<u8> {
    None
}

/// A tuple of Vec.
#[tool]
fn a_vec() -> Vec<(u8, bool)> {
    vec![(1, true)]
}

/// An opaque Serialize value.
#[tool]
fn opaque() -> impl serde::Serialize {
    [1, 2]
}

/// Result<(), E>: empty output.
#[tool]
async fn nothing_or_err() -> Result<(), std::io::Error> {
    Ok(())
}

/// A JSON value.
#[tool]
fn a_value() -> serde_json::Value {
    json!({"x": [1, "two"]})
}

#[derive(Debug)]
struct Plain;

impl fmt::Display for Plain {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str("plain failure")
    }
}

/// Result<String, E: Display>.
#[tool]
fn display_err(fail: bool) -> Result<String, Plain> {
    if fail { Err(Plain) } else { Ok("fine".into()) }
}

/// Result<Serialize, E: Display>.
#[tool]
fn json_or_display_err(fail: bool) -> Result<Weather, Plain> {
    if fail {
        Err(Plain)
    } else {
        Ok(Weather {
            city: "Pune",
            celsius: 31,
        })
    }
}

/// Result<Serialize, E: Error>.
#[tool]
fn json_or_io_err(fail: bool) -> Result<Vec<Weather>, std::io::Error> {
    if fail {
        Err(std::io::Error::other("disk on fire"))
    } else {
        Ok(vec![])
    }
}

/// Result<String, Suspension>: return Err(suspension).
#[tool]
fn err_is_suspension(ask: bool) -> Result<String, Suspension> {
    if ask {
        return Err(parked());
    }
    Ok("no need".into())
}

/// Result<String, Box<dyn Error>>: `?` on a suspension.
#[tool]
async fn boxed_question_mark(
    ask: bool,
) -> Result<String, Box<dyn std::error::Error + Send + Sync>> {
    if ask {
        Err(parked())?;
    }
    Err("a plain boxed failure".into())
}

#[derive(Debug)]
enum BookingError {
    SoldOut,
    Suspended(Suspension),
}

impl fmt::Display for BookingError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::SoldOut => f.write_str("sold out"),
            Self::Suspended(_) => f.write_str("waiting for the traveller"),
        }
    }
}

impl std::error::Error for BookingError {
    fn source(&self) -> Option<&(dyn std::error::Error + 'static)> {
        match self {
            Self::Suspended(s) => Some(s),
            Self::SoldOut => None,
        }
    }
}

impl From<Suspension> for BookingError {
    fn from(s: Suspension) -> Self {
        Self::Suspended(s)
    }
}

/// Result<String, E: Error + From<Suspension>>: `Err(s.into())` and `?`.
#[tool]
fn own_error(mode: u8) -> Result<String, BookingError> {
    match mode {
        0 => Err(parked().into()),
        1 => {
            let r: Result<(), Suspension> = Err(parked());
            r?;
            Ok("unreachable".into())
        }
        _ => Err(BookingError::SoldOut),
    }
}

/// Result<u32, E: Error> with a suspension in the chain.
#[tool]
fn own_error_json(ask: bool) -> Result<u32, BookingError> {
    if ask { Err(parked().into()) } else { Ok(7) }
}

#[tokio::test]
async fn plain_values() {
    assert_eq!(run(&AString).await, ToolResult::success("hello"));
    assert_eq!(run(&AStaticStr).await, ToolResult::success("static"));
    let args = json!({"text": "  spaced  "}).as_object().unwrap().clone();
    assert_eq!(
        ABorrowedStr.execute(args, &Context::new()).await,
        ToolResult::success("spaced")
    );
    assert_eq!(run(&Unit).await, ToolResult::success(""));
    assert_eq!(
        run(&Passthrough).await,
        ToolResult::success("as is").with_metadata("k", json!(1))
    );
}

#[tokio::test]
async fn serialize_values_are_compact_json() {
    assert_eq!(
        run(&GetWeather).await,
        ToolResult::success(r#"{"city":"Oslo","celsius":-3}"#)
    );
    assert_eq!(run(&AMap).await, ToolResult::success(r#"{"a":1,"b":2}"#));
    assert_eq!(run(&ANumber).await, ToolResult::success("1.5"));
    assert_eq!(run(&AnOption).await, ToolResult::success("null"));
    assert_eq!(run(&AVec).await, ToolResult::success("[[1,true]]"));
    assert_eq!(
        run(&AValue).await,
        ToolResult::success(r#"{"x":[1,"two"]}"#)
    );
    assert_eq!(run(&Opaque).await, ToolResult::success("[1,2]"));
    assert_eq!(run(&NothingOrErr).await, ToolResult::success(""));
}

async fn run_with(t: &dyn Tool, args: serde_json::Value) -> ToolResult {
    t.execute(args.as_object().unwrap().clone(), &Context::new())
        .await
}

#[tokio::test]
async fn errors_become_failures_with_their_display_text() {
    assert_eq!(
        run_with(&DisplayErr, json!({"fail": false})).await,
        ToolResult::success("fine")
    );
    assert_eq!(
        run_with(&DisplayErr, json!({"fail": true})).await,
        ToolResult::error("plain failure")
    );
    assert_eq!(
        run_with(&JsonOrDisplayErr, json!({"fail": false})).await,
        ToolResult::success(r#"{"city":"Pune","celsius":31}"#)
    );
    assert_eq!(
        run_with(&JsonOrDisplayErr, json!({"fail": true})).await,
        ToolResult::error("plain failure")
    );
    assert_eq!(
        run_with(&JsonOrIoErr, json!({"fail": false})).await,
        ToolResult::success("[]")
    );
    assert_eq!(
        run_with(&JsonOrIoErr, json!({"fail": true})).await,
        ToolResult::error("disk on fire")
    );
    assert_eq!(
        run_with(&OwnError, json!({"mode": 2})).await,
        ToolResult::error("sold out")
    );
    assert_eq!(
        run_with(&BoxedQuestionMark, json!({"ask": false})).await,
        ToolResult::error("a plain boxed failure")
    );
}

#[tokio::test]
async fn suspensions_stay_suspensions() {
    is_parked(&run(&Suspends).await);
    is_parked(&run(&SuspendsAsResult).await);
    is_parked(&run_with(&ErrIsSuspension, json!({"ask": true})).await);
    assert_eq!(
        run_with(&ErrIsSuspension, json!({"ask": false})).await,
        ToolResult::success("no need")
    );
    is_parked(&run_with(&BoxedQuestionMark, json!({"ask": true})).await);
    is_parked(&run_with(&OwnError, json!({"mode": 0})).await);
    is_parked(&run_with(&OwnError, json!({"mode": 1})).await);
    is_parked(&run_with(&OwnErrorJson, json!({"ask": true})).await);
    assert_eq!(
        run_with(&OwnErrorJson, json!({"ask": false})).await,
        ToolResult::success("7")
    );
}
