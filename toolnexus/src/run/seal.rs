//! Sealed records: a [`PendingRun`] with an HMAC-SHA-256 over its exact bytes, so that any edit
//! made outside the process is refused when it comes back.

use std::fmt;

use hmac::{Hmac, KeyInit, Mac};
use serde::Deserialize;
use sha2::Sha256;

use super::error::{RecordError, RecordResult};
use crate::util::{hex, unhex};

use super::pending::{PendingRun, check_depth};
use crate::json_text;

/// The MAC algorithm of a sealed record (`alg` in the envelope).
const ALG: &str = "HS256";
/// Domain separation: a MAC made for a sealed record means nothing anywhere else.
const CONTEXT: &[u8] = b"toolnexus sealed PendingRun\n";
/// The shortest secret a [`SealKey`] takes, 32 bytes (the HMAC-SHA-256 block of security).
pub const MIN_SEAL_KEY_LEN: usize = 32;

/// A key that seals and opens [`PendingRun`] records: an id (written into every sealed record,
/// so keys can rotate) and a secret of at least [`MIN_SEAL_KEY_LEN`] bytes.
///
/// The secret is never shown (`Debug` prints the id only). Draw it from a secure random
/// source once and keep it in your secret store; any process that opens records needs it.
///
/// ```
/// use toolnexus::run::SealKey;
///
/// let key = SealKey::new("2026-01", [7u8; 32]).unwrap();
/// assert_eq!(key.id(), "2026-01");
/// assert_eq!(format!("{key:?}"), r#"SealKey { id: "2026-01", .. }"#);
/// assert_eq!(
///     SealKey::new("k", *b"short").unwrap_err().to_string(),
///     "a seal key needs a secret of at least 32 bytes, got 5"
/// );
/// ```
#[derive(Clone)]
pub struct SealKey {
    id: String,
    secret: Vec<u8>,
}

impl fmt::Debug for SealKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("SealKey")
            .field("id", &self.id)
            .finish_non_exhaustive()
    }
}

impl SealKey {
    /// A key named `id` (1 to 64 characters of `[A-Za-z0-9._-]`) with `secret`.
    ///
    /// # Errors
    ///
    /// [`RecordError::Key`] for an invalid id or a secret shorter than [`MIN_SEAL_KEY_LEN`].
    pub fn new(id: impl Into<String>, secret: impl Into<Vec<u8>>) -> RecordResult<Self> {
        let id = id.into();
        let secret = secret.into();
        let valid = |c: char| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '-');
        if id.is_empty() || id.len() > 64 || !id.chars().all(valid) {
            return Err(RecordError::Key(format!(
                "invalid seal key id {id:?}: use 1 to 64 characters of [A-Za-z0-9._-]"
            )));
        }
        if secret.len() < MIN_SEAL_KEY_LEN {
            return Err(RecordError::Key(format!(
                "a seal key needs a secret of at least {MIN_SEAL_KEY_LEN} bytes, got {}",
                secret.len()
            )));
        }
        Ok(Self { id, secret })
    }

    /// The key's id.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// HMAC-SHA-256 (lowercase hex) of `parts` under this key, for the use named by `context`
    /// (domain separation) and bound to the key id; each part is followed by a NUL so that no
    /// two lists of parts give the same bytes.
    pub(crate) fn mac_parts(&self, context: &str, parts: &[&str]) -> String {
        hex(&self.parts_mac(context, parts).finalize().into_bytes())
    }

    /// Whether `mac` (hex) is [`SealKey::mac_parts`] of `parts` (in constant time).
    pub(crate) fn verify_parts(&self, context: &str, parts: &[&str], mac: &str) -> bool {
        unhex(mac).is_some_and(|mac| self.parts_mac(context, parts).verify_slice(&mac).is_ok())
    }

    fn parts_mac(&self, context: &str, parts: &[&str]) -> Hmac<Sha256> {
        let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(&self.secret)
            .unwrap_or_else(|_| unreachable!("HMAC accepts keys of any length"));
        for part in [context, self.id.as_str()].iter().chain(parts) {
            mac.update(part.as_bytes());
            mac.update(&[0]);
        }
        mac
    }

    fn mac(&self, record: &str) -> Hmac<Sha256> {
        // HMAC takes a key of any length: this cannot fail
        let mut mac = <Hmac<Sha256> as KeyInit>::new_from_slice(&self.secret)
            .unwrap_or_else(|_| unreachable!("HMAC accepts keys of any length"));
        mac.update(CONTEXT);
        mac.update(self.id.as_bytes());
        mac.update(b"\n");
        mac.update(record.as_bytes());
        mac
    }
}

/// The keys [`PendingRun::open`] may verify with, found by id: one [`SealKey`], or a slice,
/// array or `Vec` of them (the current key and the ones being retired).
pub trait SealKeys {
    /// The key named `id`.
    fn key(&self, id: &str) -> Option<&SealKey>;
    /// The ids of all keys (for error messages).
    fn ids(&self) -> Vec<&str>;
}

impl SealKeys for SealKey {
    fn key(&self, id: &str) -> Option<&SealKey> {
        (self.id == id).then_some(self)
    }

    fn ids(&self) -> Vec<&str> {
        vec![&self.id]
    }
}

impl SealKeys for [SealKey] {
    fn key(&self, id: &str) -> Option<&SealKey> {
        self.iter().find(|k| k.id == id)
    }

    fn ids(&self) -> Vec<&str> {
        self.iter().map(|k| k.id.as_str()).collect()
    }
}

impl<const N: usize> SealKeys for [SealKey; N] {
    fn key(&self, id: &str) -> Option<&SealKey> {
        self.as_slice().key(id)
    }

    fn ids(&self) -> Vec<&str> {
        self.as_slice().ids()
    }
}

impl SealKeys for Vec<SealKey> {
    fn key(&self, id: &str) -> Option<&SealKey> {
        self.as_slice().key(id)
    }

    fn ids(&self) -> Vec<&str> {
        self.as_slice().ids()
    }
}

/// The envelope's fields as read (the record is checked as text, by its exact bytes).
#[derive(Deserialize)]
#[serde(deny_unknown_fields)]
struct Envelope {
    kid: String,
    alg: String,
    #[allow(
        dead_code,
        reason = "read for its presence; the MAC covers the record's bytes"
    )]
    record: serde::de::IgnoredAny,
    mac: String,
}

impl PendingRun {
    /// The record, sealed with `key`: `{"kid", "alg": "HS256", "record", "mac"}`, where
    /// `record` is exactly [`PendingRun::to_json`] and `mac` is the HMAC-SHA-256 (lowercase
    /// hex) of those bytes under the key (bound to the key id and to this use). Read it back
    /// with [`PendingRun::open`]; any edit at all is then refused.
    ///
    /// # When to seal
    ///
    /// Whenever the record leaves the process's memory for a place someone else can write: a
    /// file, a database row, a queue message, a cookie, another service. Unsealed, a record
    /// is only checked against itself ([`PendingRun::from_json`]), which catches corruption
    /// and careless edits but not a consistent forgery (a changed argument with its fingerprint
    /// recomputed). Sealed, only a holder of the key can make a record that opens.
    ///
    /// # Rotating keys
    ///
    /// Seal with the newest key; open with the newest and the ones still in use
    /// (`PendingRun::open(json, &[new, old])`): each record names its key by id. Once no
    /// record sealed with an old key can still be answered (their requests expired, or the
    /// longest time a run may stay parked has passed), drop that key from the set; records
    /// sealed with it are then refused. A key that leaked is dropped at once.
    ///
    /// ```
    /// use toolnexus::run::SealKey;
    /// use toolnexus::{Client, PendingRun, Reply, Request, ScriptedModel, ToolResult, Toolkit};
    ///
    /// # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
    /// let toolkit = Toolkit::builder()
    ///     .tool(toolnexus::FnTool::builder("ask").description("Asks.")
    ///         .handler(|_, _| async { ToolResult::suspended(Request::approval("Go?")) })
    ///         .build().unwrap())
    ///     .build().unwrap();
    /// let client = Client::builder(ScriptedModel::new([Reply::tool_call("ask", serde_json::json!({}))]))
    ///     .model_name("m").build().unwrap();
    /// let halted = client.run("go", &toolkit).await.unwrap();
    ///
    /// let old = SealKey::new("2025-12", [1u8; 32]).unwrap();
    /// let new = SealKey::new("2026-01", [2u8; 32]).unwrap();
    /// let sealed = PendingRun::try_from(&halted).unwrap().seal(&new);
    ///
    /// // the newest key and the one being retired
    /// let record = PendingRun::open(&sealed, &[new.clone(), old]).unwrap();
    /// assert_eq!(record.run_id(), halted.run_id);
    ///
    /// // any edit is refused
    /// let edited = sealed.replace("Go?", "Go!");
    /// assert_eq!(
    ///     PendingRun::open(&edited, &new).unwrap_err().to_string(),
    ///     "invalid persisted run: the sealed record was changed after it was sealed (its MAC does not verify under key `2026-01`): refuse it"
    /// );
    /// # });
    /// ```
    pub fn seal(&self, key: &SealKey) -> String {
        let record = self.to_json();
        let mac = hex(&key.mac(&record).finalize().into_bytes());
        // the record goes in as the exact bytes the MAC covers
        let string = |s: &str| serde_json::Value::from(s).to_string();
        format!(
            r#"{{"kid":{},"alg":{},"record":{record},"mac":{}}}"#,
            string(&key.id),
            string(ALG),
            string(&mac)
        )
    }

    /// Reads a record sealed by [`PendingRun::seal`] with one of `keys` (found by the
    /// envelope's key id), verifies its MAC over the exact bytes, then reads and checks the
    /// record as [`PendingRun::from_json`] does.
    ///
    /// # Errors
    ///
    /// [`RecordError::Invalid`] when the text is not a sealed record, names a key that is not in
    /// `keys`, was changed in any way after it was sealed, or (sealed yet inconsistent, which
    /// only a key holder can make) disagrees with itself.
    pub fn open<K: SealKeys + ?Sized>(json: &str, keys: &K) -> RecordResult<Self> {
        Self::open_checked(json, keys).map(|(record, _)| record)
    }

    /// [`open`](Self::open), with what the record's check found (see
    /// [`from_json_checked`](Self::from_json_checked)).
    pub(crate) fn open_checked<K: SealKeys + ?Sized>(
        json: &str,
        keys: &K,
    ) -> RecordResult<(Self, usize)> {
        const FIELDS: [&str; 4] = ["kid", "alg", "record", "mac"];
        check_depth(json, 1)?;
        let not_sealed = |e: &dyn fmt::Display| {
            RecordError::Invalid(format!(
                "not a sealed record (`{{\"kid\",\"alg\",\"record\",\"mac\"}}` from `PendingRun::seal`): {e}"
            ))
        };
        let (value, members) =
            json_text::parse_with_spans(json, usize::MAX).map_err(|e| not_sealed(&e))?;
        // an unknown field is named in the text's order, as a streaming reader would
        if let Some((unknown, _)) = members.iter().find(|(k, _)| !FIELDS.contains(&k.as_str())) {
            return Err(not_sealed(&format!(
                "unknown field `{unknown}`, expected one of `kid`, `alg`, `record`, `mac`"
            )));
        }
        let envelope = Envelope::deserialize(&value).map_err(|e| not_sealed(&e))?;
        // one `record`, whose exact bytes the MAC is checked over
        let mut records = members.iter().filter(|(key, _)| key == "record");
        let (Some((_, record)), None) = (records.next(), records.next()) else {
            return Err(not_sealed(&"duplicate field `record`"));
        };
        let record = &json[record.clone()];
        if envelope.alg != ALG {
            return Err(RecordError::Invalid(format!(
                "`alg` is {:?} but sealed records use {ALG:?}",
                envelope.alg
            )));
        }
        let Some(key) = keys.key(&envelope.kid) else {
            return Err(RecordError::Invalid(format!(
                "the record was sealed with key `{}`, which is not in the key set (it has {}): add that key, or the record can no longer be opened",
                envelope.kid,
                keys.ids()
                    .iter()
                    .map(|id| format!("`{id}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            )));
        };
        let verified =
            unhex(&envelope.mac).is_some_and(|mac| key.mac(record).verify_slice(&mac).is_ok());
        if !verified {
            return Err(RecordError::Invalid(format!(
                "the sealed record was changed after it was sealed (its MAC does not verify under key `{}`): refuse it",
                key.id
            )));
        }
        Self::from_json_checked(record)
    }
}
