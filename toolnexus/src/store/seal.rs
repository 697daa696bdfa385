//! Sealed stores: what a store given seal keys writes and how it reads it back.
//!
//! A store with keys keeps each record as [`PendingRun::seal`] writes it (HMAC-SHA-256 over its
//! exact bytes, under the newest key), each checkpoint in an envelope of the same kind whose
//! MAC also binds the run id, and each answer in one whose MAC binds the request it answers. On read, a row must open under one of the keys (found by the id
//! it names), and the record it holds must be the record of the row's run and request: a
//! record spliced from another row is refused even though its own MAC verifies. A store
//! without keys keeps records as [`PendingRun::to_json`] writes them and trusts whoever can
//! write its database (a record is still checked against itself, which catches damage but not
//! a consistent forgery).

use std::sync::Arc;

use serde_json::Value;

use super::{StoreError, StoreResult};
use crate::request::Answer;
use crate::run::{PendingRun, SealKey, SealKeys};

/// The MAC algorithm of a sealed checkpoint.
const ALG: &str = "HS256";
/// Domain separation for sealed checkpoints.
const CHECKPOINT: &str = "toolnexus sealed checkpoint";
/// Domain separation for sealed answers.
const ANSWER: &str = "toolnexus sealed answer";
/// Domain separation for sealed votes.
const VOTES: &str = "toolnexus sealed votes";

/// A store's seal keys: the first seals, all open. `None`: the store keeps rows unsealed.
#[derive(Clone, Default)]
pub(crate) struct Seal(Option<Arc<[SealKey]>>);

impl std::fmt::Debug for Seal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match &self.0 {
            Some(keys) => f
                .debug_list()
                .entries(keys.iter().map(SealKey::id))
                .finish(),
            None => f.write_str("unsealed"),
        }
    }
}

/// The nesting an envelope's text is read to (the envelope and a few levels around a value at
/// [`MAX_DEPTH`](crate::limits::MAX_DEPTH)).
const ENVELOPE_DEPTH: usize = crate::limits::MAX_DEPTH + 8;

/// A sealed envelope (`{"kid","alg",<field>,"mac"}`) as read: its strings, and the exact text
/// of its payload member (what the MAC covers) with the value read from it.
struct Opened<'t> {
    kid: String,
    alg: String,
    mac: String,
    inner: &'t str,
    payload: Value,
}

/// The envelope around `payload` (JSON text, kept byte for byte: the MAC covers those bytes).
fn envelope(field: &str, kid: &str, payload: &str, mac: &str) -> String {
    let string = |s: &str| Value::from(s).to_string();
    format!(
        r#"{{"kid":{},"alg":{},"{field}":{payload},"mac":{}}}"#,
        string(kid),
        string(ALG),
        string(mac)
    )
}

/// Reads an envelope written by [`envelope`] with the payload member `field`: an object of
/// exactly those four members, each once, the three others strings.
fn open_envelope<'t>(text: &'t str, field: &str) -> Result<Opened<'t>, String> {
    let (value, members) = crate::json_text::parse_with_spans(text, ENVELOPE_DEPTH)
        .map_err(|e| crate::json_text::explain(text, &e))?;
    let Value::Object(mut map) = value else {
        return Err(format!(
            "expected an object `{{\"kid\",\"alg\",\"{field}\",\"mac\"}}`"
        ));
    };
    let fields = ["kid", "alg", field, "mac"];
    // an unknown field is named in the text's order, as a streaming reader would
    if let Some((unknown, _)) = members.iter().find(|(k, _)| !fields.contains(&k.as_str())) {
        return Err(format!(
            "unknown field `{}`, expected one of `kid`, `alg`, `{field}`, `mac`",
            crate::limits::excerpt(unknown)
        ));
    }
    for name in fields {
        match members.iter().filter(|(k, _)| k == name).count() {
            0 => return Err(format!("missing field `{name}`")),
            1 => {}
            _ => return Err(format!("duplicate field `{name}`")),
        }
    }
    let mut string = |name: &str| match map.remove(name) {
        Some(Value::String(s)) => Ok(s),
        _ => Err(format!("`{name}` is not a string")),
    };
    let (kid, alg, mac) = (string("kid")?, string("alg")?, string("mac")?);
    let span = members
        .iter()
        .find(|(k, _)| k == field)
        .map(|(_, span)| span.clone())
        .unwrap_or_default();
    Ok(Opened {
        kid,
        alg,
        mac,
        inner: &text[span],
        payload: map.remove(field).unwrap_or_default(),
    })
}

/// A value kept in an envelope whose MAC binds it to one id (the run's, the request's), and
/// what the refusals of an envelope that does not open call it.
struct Sealed {
    /// The envelope's payload member.
    field: &'static str,
    /// The MAC's domain separation.
    domain: &'static str,
    /// "not <noun>: ..." when the text is no such envelope.
    noun: &'static str,
    /// "... but <kind> use HS256".
    kind: &'static str,
    /// "<changed> does not verify under key ..." when the MAC fails.
    changed: &'static str,
}

const SEALED_CHECKPOINT: Sealed = Sealed {
    field: "checkpoint",
    domain: CHECKPOINT,
    noun: "a sealed checkpoint",
    kind: "sealed checkpoints",
    changed: "changed after it was sealed, or sealed for another run (its MAC",
};

const SEALED_VOTES: Sealed = Sealed {
    field: "votes",
    domain: VOTES,
    noun: "sealed votes",
    kind: "sealed votes",
    changed: "changed after they were sealed, or sealed for another request (their MAC",
};

/// Opens the envelope `text` of `what` under `keys`, its MAC bound to `bound`: the payload,
/// or why not.
fn open_sealed(keys: &[SealKey], text: &str, bound: &str, what: &Sealed) -> Result<Value, String> {
    let envelope =
        open_envelope(text, what.field).map_err(|e| format!("not {}: {e}", what.noun))?;
    if envelope.alg != ALG {
        return Err(format!(
            "`alg` is {:?} but {} use {ALG:?}",
            crate::limits::excerpt(&envelope.alg),
            what.kind
        ));
    }
    let Some(key) = keys.key(&envelope.kid) else {
        return Err(format!(
            "sealed with key `{}`, which is not in the store's key set",
            crate::limits::excerpt(&envelope.kid)
        ));
    };
    if !key.verify_parts(what.domain, &[bound, envelope.inner], &envelope.mac) {
        return Err(format!(
            "{} does not verify under key `{}`)",
            what.changed,
            key.id()
        ));
    }
    Ok(envelope.payload)
}

impl Seal {
    /// Seals with `current`, opens with `current` and `retired`.
    pub(crate) fn new(current: SealKey, retired: impl IntoIterator<Item = SealKey>) -> Self {
        let keys: Vec<SealKey> = std::iter::once(current).chain(retired).collect();
        Self(Some(keys.into()))
    }

    /// The text a record is kept as.
    pub(crate) fn record(&self, record: &PendingRun) -> String {
        match &self.0 {
            Some(keys) => record.seal(&keys[0]),
            None => record.to_json(),
        }
    }

    /// Reads the record of the row of run `run_id` waiting on `request_id`.
    pub(crate) fn open_record(
        &self,
        run_id: &str,
        request_id: &str,
        text: &str,
    ) -> StoreResult<(PendingRun, usize)> {
        let corrupt = |message: String| StoreError::Corrupt {
            run_id: run_id.to_owned(),
            message,
        };
        let (record, at) = match &self.0 {
            Some(keys) => PendingRun::open_checked(text, &keys[..]),
            None => PendingRun::from_json_checked(text),
        }
        .map_err(|e| corrupt(e.to_string()))?;
        if record.run_id() != run_id || record.pending().id != request_id {
            return Err(corrupt(format!(
                "the record is the record of run `{}` waiting on request `{}`, not of this row (request `{request_id}`): a record moved from another row is refused",
                crate::limits::excerpt(record.run_id()),
                crate::limits::excerpt(&record.pending().id)
            )));
        }
        Ok((record, at))
    }

    /// The text the checkpoint `state` of run `run_id` is kept as.
    pub(crate) fn checkpoint(&self, run_id: &str, state: &Value) -> String {
        let json = state.to_string();
        let Some(keys) = &self.0 else {
            return json;
        };
        let key = &keys[0];
        let mac = key.mac_parts(CHECKPOINT, &[run_id, &json]);
        envelope("checkpoint", key.id(), &json, &mac)
    }

    /// Reads the checkpoint text of run `run_id`.
    pub(crate) fn open_checkpoint(&self, run_id: &str, text: &str) -> StoreResult<Value> {
        let corrupt = |message: String| StoreError::Corrupt {
            run_id: run_id.to_owned(),
            message: format!("checkpoint: {message}"),
        };
        let Some(keys) = &self.0 else {
            return crate::json_text::parse_or_explain(text, ENVELOPE_DEPTH).map_err(corrupt);
        };
        open_sealed(&keys[..], text, run_id, &SEALED_CHECKPOINT).map_err(corrupt)
    }

    /// The text the answer `answer` is kept as: its JSON, or with keys an envelope whose MAC
    /// binds it to the request it answers (its own `id`, which must be the row's request).
    pub(crate) fn answer(&self, answer: &Answer) -> String {
        let json = serde_json::to_string(answer).unwrap_or_default();
        let Some(keys) = &self.0 else {
            return json;
        };
        let key = &keys[0];
        let mac = key.mac_parts(ANSWER, &[&answer.id, &json]);
        envelope("answer", key.id(), &json, &mac)
    }

    /// Reads the answer text of the row of run `run_id` waiting on `request_id`: it must open
    /// under the keys (with keys) and answer the row's own request.
    pub(crate) fn open_answer(
        &self,
        run_id: &str,
        request_id: &str,
        text: &str,
    ) -> StoreResult<Answer> {
        let corrupt = |message: String| StoreError::Corrupt {
            run_id: run_id.to_owned(),
            message: format!("answer: {message}"),
        };
        let answer: Answer = match &self.0 {
            None => crate::limits::from_json_str(text).map_err(|e| corrupt(e.to_string()))?,
            Some(keys) => {
                let envelope = open_envelope(text, "answer")
                    .map_err(|e| corrupt(format!("not a sealed answer: {e}")))?;
                if envelope.alg != ALG {
                    return Err(corrupt(format!(
                        "`alg` is {:?} but sealed answers use {ALG:?}",
                        crate::limits::excerpt(&envelope.alg)
                    )));
                }
                let Some(key) = keys[..].key(&envelope.kid) else {
                    return Err(corrupt(format!(
                        "sealed with key `{}`, which is not in the store's key set",
                        crate::limits::excerpt(&envelope.kid)
                    )));
                };
                if !key.verify_parts(ANSWER, &[request_id, envelope.inner], &envelope.mac) {
                    return Err(corrupt(format!(
                        "changed after it was sealed, or sealed for another request (its MAC does not verify under key `{}`)",
                        key.id()
                    )));
                }
                serde_json::from_value(envelope.payload).map_err(|e| corrupt(e.to_string()))?
            }
        };
        if answer.id != request_id {
            return Err(corrupt(format!(
                "it answers request `{}`, not this row's request `{}`: an answer moved from another row is refused",
                crate::limits::excerpt(&answer.id),
                crate::limits::excerpt(request_id)
            )));
        }
        Ok(answer)
    }

    /// The text the votes `json` (a JSON array) on `request_id` are kept as: the JSON, or
    /// with keys an envelope whose MAC binds them to the request they vote on.
    pub(crate) fn votes(&self, request_id: &str, json: &str) -> String {
        let Some(keys) = &self.0 else {
            return json.to_owned();
        };
        let key = &keys[0];
        let mac = key.mac_parts(VOTES, &[request_id, json]);
        envelope("votes", key.id(), json, &mac)
    }

    /// Reads the votes text of the row of run `run_id` waiting on `request_id`.
    pub(crate) fn open_votes(
        &self,
        run_id: &str,
        request_id: &str,
        text: &str,
    ) -> StoreResult<Value> {
        let corrupt = |message: String| StoreError::Corrupt {
            run_id: run_id.to_owned(),
            message: format!("votes: {message}"),
        };
        let Some(keys) = &self.0 else {
            return crate::json_text::parse_or_explain(text, ENVELOPE_DEPTH).map_err(corrupt);
        };
        open_sealed(&keys[..], text, request_id, &SEALED_VOTES).map_err(corrupt)
    }
}
