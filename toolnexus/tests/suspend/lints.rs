//! The macros expand cleanly under strict user lints.
#![deny(warnings, missing_docs, unsafe_code, unreachable_pub)]
#![deny(clippy::all, clippy::pedantic)]

use serde_json::json;
use toolnexus::{
    Context, Form, Suspension, ToolResult, ask, assert_failure, assert_not_pending, assert_pending,
    assert_success, suspend,
};

/// A seat.
#[derive(Debug, Form, serde::Deserialize)]
pub enum Seat {
    /// Aisle.
    Aisle,
    /// Window.
    Window,
}

/// A form.
#[derive(Debug, Form, serde::Deserialize)]
pub struct Trip {
    /// Where to.
    pub city: String,
    /// Where to sit.
    pub seat: Option<Seat>,
}

fn book(ctx: &Context) -> Result<String, Suspension> {
    let trip = ask!(ctx, input "Where to?", schema = Trip);
    if trip.city.is_empty() {
        return Err(suspend!(approval format!("Book {}?", trip.city), data = json!({"k": 1})));
    }
    Ok(trip.city)
}

#[test]
fn strict_lints() {
    let r: ToolResult = book(&Context::new()).map_or_else(Into::into, ToolResult::success);
    assert_pending!(r, input "Where to?", schema = Trip);
    assert_not_pending!(ToolResult::success("x"));
    assert_success!(ToolResult::success("x"), "x");
    assert_failure!(ToolResult::error("x"));
}
