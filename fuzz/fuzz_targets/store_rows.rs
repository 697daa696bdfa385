//! Feeds arbitrary rows to the run stores' row decoding (`toolnexus::store::rows::decode`, the
//! one function the SQL stores read a row through): the input is a JSON object
//! `{"cells": [..], "sealed": bool, "tamper": n}` whose cells are the columns in order
//! (`null`, an integer, a float, a string, or `{"bytes": "<text>"}` for a blob). With `sealed`,
//! a record, answer or checkpoint cell that reads as one is first written as a sealed store
//! writes it (and `tamper` flips one of its bytes). Never a panic; a row that reads is the
//! row of its own run and request, and a row is either listed or reported damaged.
#![no_main]

use libfuzzer_sys::fuzz_target;
use serde_json::Value;
use toolnexus::run::SealKey;
use toolnexus::store::rows::{Cell, answer_text, checkpoint_text, decode};
use toolnexus::{Answer, PendingRun};

fn key() -> SealKey {
    SealKey::new("fuzz-1", [7u8; 32]).expect("a valid key")
}

fn cell(value: &Value) -> Cell {
    match value {
        Value::Null => Cell::Null,
        Value::Bool(b) => Cell::Int(i64::from(*b)),
        Value::Number(n) => n
            .as_i64()
            .map_or_else(|| Cell::Real(n.as_f64().unwrap_or(0.0)), Cell::Int),
        Value::String(s) => Cell::Text(s.clone()),
        Value::Object(o) => match o.get("bytes") {
            Some(Value::String(s)) => Cell::Blob(s.as_bytes().to_vec()),
            _ => Cell::Text(value.to_string()),
        },
        Value::Array(_) => Cell::Text(value.to_string()),
    }
}

/// The cell as a sealed store writes it, when it reads as what the column holds.
fn sealed(k: usize, cell: Cell, run_id: &str, tamper: Option<usize>) -> Cell {
    let Cell::Text(text) = &cell else {
        return cell;
    };
    let keys = [key()];
    let written = match k {
        12 => PendingRun::from_json(text).ok().map(|r| r.seal(&keys[0])),
        13 => serde_json::from_str::<Answer>(text)
            .ok()
            .map(|a| answer_text(&keys, &a)),
        14 => serde_json::from_str::<Value>(text)
            .ok()
            .map(|v| checkpoint_text(&keys, run_id, &v)),
        _ => None,
    };
    let Some(mut written) = written else {
        return cell;
    };
    if let Some(at) = tamper {
        let mut bytes = written.into_bytes();
        if !bytes.is_empty() {
            let at = at % bytes.len();
            bytes[at] ^= 1;
        }
        written = String::from_utf8_lossy(&bytes).into_owned();
    }
    Cell::Text(written)
}

fuzz_target!(|data: &[u8]| {
    let Ok(input) = serde_json::from_slice::<Value>(data) else {
        return;
    };
    let Some(cells) = input.get("cells").and_then(Value::as_array) else {
        return;
    };
    let is_sealed = input.get("sealed").and_then(Value::as_bool) == Some(true);
    let tamper = input
        .get("tamper")
        .and_then(Value::as_u64)
        .and_then(|t| usize::try_from(t).ok());
    let run_id = cells
        .first()
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_owned();
    let mut row: Vec<Cell> = cells.iter().take(20).map(cell).collect();
    if is_sealed {
        row = row
            .into_iter()
            .enumerate()
            .map(|(k, c)| sealed(k, c, &run_id, tamper))
            .collect();
    }
    let keys = if is_sealed { vec![key()] } else { Vec::new() };
    let decoded = decode(row.clone(), &keys);

    if let Ok(run) = &decoded.run {
        assert!(
            decoded.info.is_ok(),
            "a row that reads has readable columns"
        );
        assert_eq!(
            run.record.run_id(),
            run.info.run_id,
            "the record is its row's run"
        );
        assert_eq!(
            run.record.pending().id,
            run.info.request_id,
            "and its row's request"
        );
        if let Some(answer) = &run.answer {
            assert_eq!(
                answer.id, run.info.request_id,
                "the answer answers its row's request"
            );
        }
        // what reads once reads again the same, through its own JSON
        let again = PendingRun::from_json(&run.record.to_json()).expect("a record reads back");
        assert_eq!(again.to_json(), run.record.to_json());
    }
    if let Ok(claim) = &decoded.takeover {
        assert_eq!(claim.answer.id, claim.record.pending().id);
    }
    let listed = decoded.page.runs.len() + decoded.page.damaged.len();
    assert_eq!(
        listed, 1,
        "a row is listed or reported damaged: {:?}",
        decoded.page
    );
    assert_eq!(decoded.page.runs.len(), usize::from(decoded.info.is_ok()));
    if decoded.info.is_err() {
        assert!(
            decoded.damaged.is_some(),
            "an unreadable row is listed for an operator"
        );
    }
});
