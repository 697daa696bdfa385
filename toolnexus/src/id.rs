//! Ids unique across threads, processes and machines: `<prefix>-<unix epoch ms>-<process-wide
//! counter from 1>-<64 random bits as 16 lowercase hex digits>`.
//!
//! The time and the counter make ids of one process distinct and roughly ordered; the random
//! suffix (from the operating system's entropy source, through `getrandom`) makes ids of
//! different processes and machines distinct even when they start in the same millisecond,
//! and makes an id impossible to guess from another one.

use std::hash::{BuildHasher, RandomState};
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{SystemTime, UNIX_EPOCH};

static COUNTER: AtomicU64 = AtomicU64::new(1);

/// A fresh id with `prefix` (`sus` for requests, `run` for runs).
pub(crate) fn unique(prefix: &str) -> String {
    let millis = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map_or(0, |d| d.as_millis());
    let n = COUNTER.fetch_add(1, Ordering::Relaxed);
    let mut id = format!("{prefix}-{millis}-{n}-{:016x}", random_u64(n));
    // ids live as long as their run or request (parked ones too): no spare capacity
    id.shrink_to_fit();
    id
}

/// 64 bits from the OS entropy source. Should the OS refuse (it practically never does on the
/// platforms Rust supports), std's `RandomState`, itself seeded from OS entropy once per
/// process, hashes the counter instead: still distinct per process and unpredictable.
pub(crate) fn random_u64(n: u64) -> u64 {
    getrandom::u64().unwrap_or_else(|_| RandomState::new().hash_one((n, std::process::id())))
}

#[cfg(test)]
mod tests {
    use super::unique;

    #[test]
    fn ids_have_time_counter_and_64_random_bits() {
        let id = unique("sus");
        let parts: Vec<&str> = id.split('-').collect();
        assert_eq!(parts.len(), 4, "{id}");
        assert_eq!(parts[0], "sus");
        assert!(parts[1].parse::<u128>().is_ok(), "{id}");
        assert!(parts[2].parse::<u64>().unwrap() >= 1, "{id}");
        assert_eq!(parts[3].len(), 16, "{id}");
        assert!(
            parts[3]
                .bytes()
                .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')),
            "{id}"
        );
    }

    #[test]
    fn suffixes_differ_between_ids() {
        let suffix = |id: String| id.rsplit('-').next().unwrap().to_owned();
        let a = suffix(unique("sus"));
        let b = suffix(unique("sus"));
        assert_ne!(a, b);
    }
}
