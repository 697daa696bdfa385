//! The MCP elicitation mapping, both ways (`toolnexus::mcp::mapping`): the first byte picks
//! the direction, the rest is JSON.
//!
//! - Serving (even first byte): a [`Request`] becomes an elicitation only after the trust
//!   boundary passed it; the elicitation's message is the prompt; consumed again (as a
//!   toolnexus client would), it is a mode the consumer knows, and an accepted answer mapped
//!   to an elicitation result and back is still accepted, for the same request.
//! - Consuming (odd first byte): a server's elicitation params (with an optional `_meta`
//!   object under `"meta"`) become a request for the host only when the trust boundary passes
//!   it; a refused one is declined to the server with the reason.
//!
//! Never a panic.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::{Map, Value};
use toolnexus::boundary::check_request;
use toolnexus::mcp::mapping::{answer_from_result, consume, refused, result_from_answer, serve};
use toolnexus::mcp::rmcp::model::{ElicitRequestParams, ElicitationAction};
use toolnexus::{Answer, Request};

fn serving(text: &str) {
    let Ok(input) = serde_json::from_str::<Value>(text) else {
        return;
    };
    let Ok(request) =
        serde_json::from_value::<Request>(input.get("request").cloned().unwrap_or(Value::Null))
    else {
        return;
    };
    let Ok(mapped) = serve(&request) else {
        // refused: the boundary refuses it on its own too
        assert!(check_request(&request).is_err());
        return;
    };
    assert!(
        check_request(&request).is_ok(),
        "an elicitation left that the boundary refuses"
    );
    let Some((_, params)) = mapped else {
        return;
    };
    let value = serde_json::to_value(&params).expect("params serialize");
    assert_eq!(
        value.get("message").and_then(Value::as_str),
        Some(request.prompt.as_str())
    );
    let meta: Option<Map<String, Value>> = value.get("_meta").and_then(Value::as_object).cloned();
    assert!(
        consume("fuzz", &params, meta.as_ref()).is_some(),
        "a served elicitation is a mode the consumer knows"
    );
    // an accepted answer, through the elicitation result, is still an acceptance
    let data = input.get("data").cloned();
    let answer = match data {
        Some(data) => Answer::accept(request.id.clone(), data),
        None => Answer::ok(request.id.clone()),
    };
    let result = result_from_answer(&request, &answer);
    assert_eq!(result.action, ElicitationAction::Accept);
    let back = answer_from_result(&request, &result);
    assert!(back.ok);
    assert_eq!(back.id, request.id);
}

fn consuming(text: &str) {
    let Ok(input) = serde_json::from_str::<Value>(text) else {
        return;
    };
    let Ok(params) = serde_json::from_value::<ElicitRequestParams>(
        input.get("params").cloned().unwrap_or(Value::Null),
    ) else {
        return;
    };
    let meta = input.get("meta").and_then(Value::as_object);
    match consume("fuzz", &params, meta) {
        Some(Ok(request)) => {
            assert!(
                check_request(&request).is_ok(),
                "the host saw what the boundary refuses"
            );
            // the host's decline goes back as a decline or a cancel, never an acceptance
            let no = Answer::decline(
                request.id.clone(),
                toolnexus::request::DeclineReason::Declined,
            );
            assert_eq!(
                result_from_answer(&request, &no).action,
                ElicitationAction::Decline
            );
        }
        Some(Err(why)) => {
            let result = refused(&why);
            assert_eq!(result.action, ElicitationAction::Decline);
            assert!(result.meta.is_some());
        }
        None => {}
    }
}

fuzz_target!(|data: &[u8]| {
    let Some((&first, rest)) = data.split_first() else {
        return;
    };
    let Ok(text) = std::str::from_utf8(rest) else {
        return;
    };
    if first % 2 == 0 {
        serving(text);
    } else {
        consuming(text);
    }
});
