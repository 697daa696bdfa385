//! The webhook signature: HMAC-SHA-256 over `<timestamp>.<body>`, so a receiver can tell a
//! notification came from the holder of the shared secret, unchanged and recent.
//!
//! The receiver's check, in a few lines (any language):
//!
//! 1. read the headers `X-Toolnexus-Timestamp` (Unix seconds) and `X-Toolnexus-Signature`
//!    (`sha256=<hex>`), and the raw body bytes (before parsing them);
//! 2. refuse a timestamp more than 5 minutes from your clock (a replayed old delivery);
//! 3. compute `hex(HMAC-SHA-256(secret, "<timestamp>." + body))` and compare it with the
//!    header's hex in constant time; refuse on a mismatch;
//! 4. parse the body, and drop a `notification` id you handled already (delivery is at
//!    least once).
//!
//! [`verify`] is that check for a receiver written in Rust.

use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

/// The header holding the signature: `sha256=<lowercase hex>`.
pub const SIGNATURE_HEADER: &str = "X-Toolnexus-Signature";

/// The header holding the Unix time (seconds) the delivery was signed at.
pub const TIMESTAMP_HEADER: &str = "X-Toolnexus-Timestamp";

fn mac(secret: &[u8], timestamp: u64, body: &[u8]) -> Hmac<Sha256> {
    // HMAC takes a key of any length
    let mut m = <Hmac<Sha256> as KeyInit>::new_from_slice(secret)
        .unwrap_or_else(|_| unreachable!("HMAC accepts any key length"));
    m.update(timestamp.to_string().as_bytes());
    m.update(b".");
    m.update(body);
    m
}

/// The signature header's value for `body` sent at `timestamp` (Unix seconds):
/// `sha256=<hex of HMAC-SHA-256(secret, "<timestamp>.<body>")>`.
///
/// ```
/// let sig = toolnexus::notify::sign(b"secret", 1_800_000_000, br#"{"a":1}"#);
/// assert!(sig.starts_with("sha256=") && sig.len() == 7 + 64);
/// assert!(toolnexus::notify::verify(b"secret", "1800000000", br#"{"a":1}"#, &sig, 1_800_000_100, 300));
/// assert!(!toolnexus::notify::verify(b"secret", "1800000000", br#"{"a":2}"#, &sig, 1_800_000_100, 300));
/// ```
pub fn sign(secret: &[u8], timestamp: u64, body: &[u8]) -> String {
    format!(
        "sha256={}",
        crate::util::hex(&mac(secret, timestamp, body).finalize().into_bytes())
    )
}

/// The receiver's check: `signature` (the [`SIGNATURE_HEADER`] value) is `body`'s, signed with
/// `secret` at `timestamp` (the [`TIMESTAMP_HEADER`] value), and that time is at most
/// `tolerance_secs` from `now` (Unix seconds). Compares in constant time.
pub fn verify(
    secret: &[u8],
    timestamp: &str,
    body: &[u8],
    signature: &str,
    now: u64,
    tolerance_secs: u64,
) -> bool {
    let Ok(ts) = timestamp.parse::<u64>() else {
        return false;
    };
    if ts.abs_diff(now) > tolerance_secs {
        return false;
    }
    let Some(sig) = signature
        .strip_prefix("sha256=")
        .and_then(crate::util::unhex)
    else {
        return false;
    };
    mac(secret, ts, body).verify_slice(&sig).is_ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_signature_refuses_another_secret_body_time_or_an_old_delivery() {
        let sig = sign(b"k", 1000, b"body");
        assert!(verify(b"k", "1000", b"body", &sig, 1000, 300));
        assert!(!verify(b"other", "1000", b"body", &sig, 1000, 300));
        assert!(!verify(b"k", "1000", b"bodx", &sig, 1000, 300));
        assert!(!verify(b"k", "1001", b"body", &sig, 1000, 300));
        assert!(!verify(b"k", "1000", b"body", &sig, 1301, 300));
        assert!(!verify(
            b"k",
            "1000",
            b"body",
            &sig.replace("sha256=", ""),
            1000,
            300
        ));
        assert!(!verify(b"k", "x", b"body", &sig, 1000, 300));
    }
}
