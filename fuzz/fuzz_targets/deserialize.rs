//! Deserializes arbitrary text as a `Request`, an `Answer`, a `ToolResult` and a persisted
//! halted run (`PendingRun::from_json`): never a panic, and what parses serializes to text
//! that parses back to the same value and the same bytes.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde::Serialize;
use serde::de::DeserializeOwned;
use toolnexus::{Answer, PendingRun, Request, ToolResult, pending_of};

fn round_trip<T: Serialize + DeserializeOwned + PartialEq + std::fmt::Debug>(text: &str) {
    let Ok(value) = serde_json::from_str::<T>(text) else {
        return;
    };
    let once = serde_json::to_string(&value).expect("a parsed value serializes");
    let again: T = serde_json::from_str(&once).expect("its own serialization parses back");
    let twice = serde_json::to_string(&again).expect("serializes again");
    assert_eq!(once, twice, "serialization is not stable");
}

fuzz_target!(|data: &[u8]| {
    let Ok(text) = std::str::from_utf8(data) else {
        return;
    };
    round_trip::<Request>(text);
    round_trip::<Answer>(text);
    round_trip::<ToolResult>(text);
    if let Ok(result) = serde_json::from_str::<ToolResult>(text) {
        let _ = pending_of(&result);
    }
    if let Ok(run) = PendingRun::from_json(text) {
        let json = run.to_json();
        let back = PendingRun::from_json(&json).expect("a record's own JSON reads back");
        assert_eq!(back.to_json(), json, "the record's JSON is not stable");
        let _ = (run.pending(), run.messages(), run.tool_calls(), run.turns());
    }
});
