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

use serde::{Deserialize, Serialize};
use serde_json::Value;
use serde_json::value::RawValue;

use super::{StoreError, StoreResult};
use crate::request::Answer;
use crate::run::{PendingRun, SealKey, SealKeys};

/// The MAC algorithm of a sealed checkpoint.
const ALG: &str = "HS256";
/// Domain separation for sealed checkpoints.
const CHECKPOINT: &str = "toolnexus sealed checkpoint";
/// Domain separation for sealed answers.
const ANSWER: &str = "toolnexus sealed answer";

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

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct AnswerEnvelope<'a> {
    kid: String,
    alg: String,
    #[serde(borrow)]
    answer: &'a RawValue,
    mac: String,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Envelope<'a> {
    kid: String,
    alg: String,
    #[serde(borrow)]
    checkpoint: &'a RawValue,
    mac: String,
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
    ) -> StoreResult<PendingRun> {
        let corrupt = |message: String| StoreError::Corrupt {
            run_id: run_id.to_owned(),
            message,
        };
        let record = match &self.0 {
            Some(keys) => PendingRun::open(text, &keys[..]),
            None => PendingRun::from_json(text),
        }
        .map_err(|e| corrupt(e.to_string()))?;
        if record.run_id() != run_id || record.pending().id != request_id {
            return Err(corrupt(format!(
                "the record is the record of run `{}` waiting on request `{}`, not of this row (request `{request_id}`): a record moved from another row is refused",
                crate::limits::excerpt(record.run_id()),
                crate::limits::excerpt(&record.pending().id)
            )));
        }
        Ok(record)
    }

    /// The text the checkpoint `state` of run `run_id` is kept as.
    pub(crate) fn checkpoint(&self, run_id: &str, state: &Value) -> String {
        let json = state.to_string();
        let Some(keys) = &self.0 else {
            return json;
        };
        let key = &keys[0];
        let mac = key.mac_parts(CHECKPOINT, &[run_id, &json]);
        // a `Value`'s text is valid JSON; an envelope of strings and a raw value serializes
        let raw = RawValue::from_string(json).unwrap_or_else(|_| unreachable!());
        serde_json::to_string(&Envelope {
            kid: key.id().to_owned(),
            alg: ALG.to_owned(),
            checkpoint: &raw,
            mac,
        })
        .unwrap_or_default()
    }

    /// Reads the checkpoint text of run `run_id`.
    pub(crate) fn open_checkpoint(&self, run_id: &str, text: &str) -> StoreResult<Value> {
        let corrupt = |message: String| StoreError::Corrupt {
            run_id: run_id.to_owned(),
            message: format!("checkpoint: {message}"),
        };
        let Some(keys) = &self.0 else {
            return serde_json::from_str(text).map_err(|e| corrupt(e.to_string()));
        };
        let envelope: Envelope<'_> = serde_json::from_str(text)
            .map_err(|e| corrupt(format!("not a sealed checkpoint: {e}")))?;
        if envelope.alg != ALG {
            return Err(corrupt(format!(
                "`alg` is {:?} but sealed checkpoints use {ALG:?}",
                crate::limits::excerpt(&envelope.alg)
            )));
        }
        let Some(key) = keys[..].key(&envelope.kid) else {
            return Err(corrupt(format!(
                "sealed with key `{}`, which is not in the store's key set",
                crate::limits::excerpt(&envelope.kid)
            )));
        };
        let inner = envelope.checkpoint.get();
        if !key.verify_parts(CHECKPOINT, &[run_id, inner], &envelope.mac) {
            return Err(corrupt(format!(
                "changed after it was sealed, or sealed for another run (its MAC does not verify under key `{}`)",
                key.id()
            )));
        }
        serde_json::from_str(inner).map_err(|e| corrupt(e.to_string()))
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
        // an answer's JSON is valid JSON; an envelope of strings and a raw value serializes
        let raw = RawValue::from_string(json).unwrap_or_else(|_| unreachable!());
        serde_json::to_string(&AnswerEnvelope {
            kid: key.id().to_owned(),
            alg: ALG.to_owned(),
            answer: &raw,
            mac,
        })
        .unwrap_or_default()
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
            None => serde_json::from_str(text).map_err(|e| corrupt(e.to_string()))?,
            Some(keys) => {
                let envelope: AnswerEnvelope<'_> = serde_json::from_str(text)
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
                let inner = envelope.answer.get();
                if !key.verify_parts(ANSWER, &[request_id, inner], &envelope.mac) {
                    return Err(corrupt(format!(
                        "changed after it was sealed, or sealed for another request (its MAC does not verify under key `{}`)",
                        key.id()
                    )));
                }
                serde_json::from_str(inner).map_err(|e| corrupt(e.to_string()))?
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
}
