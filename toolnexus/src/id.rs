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

#[cfg(feature = "http")]
static REPLIES: AtomicU64 = AtomicU64::new(0);

/// The stem of the ids a provider's reply gives the tool calls that came without one:
/// `call_<16 lowercase hex digits>`, the call's position in the reply then appended
/// (`call_<stem>_<index>`). Distinct for every reply in the process (a process-wide counter
/// through a bijective 64-bit mix keyed once per process from the OS entropy source), so ids
/// filled on different turns of a run, or in different runs, never repeat; and, keyed
/// randomly, unlikely to meet another process's.
#[cfg(feature = "http")]
pub(crate) fn call_stem() -> String {
    static KEY: std::sync::OnceLock<u64> = std::sync::OnceLock::new();
    let key = *KEY.get_or_init(|| random_u64(0));
    let n = REPLIES.fetch_add(1, Ordering::Relaxed);
    format!("call_{:016x}", mix(n ^ key))
}

/// SplitMix64's finalizer: a bijection of `u64`, so distinct inputs give distinct outputs.
#[cfg(feature = "http")]
fn mix(mut z: u64) -> u64 {
    z = (z ^ (z >> 30)).wrapping_mul(0xbf58_476d_1ce4_e5b9);
    z = (z ^ (z >> 27)).wrapping_mul(0x94d0_49bb_1331_11eb);
    z ^ (z >> 31)
}

/// 64 bits from the OS entropy source. Should the OS refuse (it practically never does on the
/// platforms Rust supports), std's `RandomState`, itself seeded from OS entropy once per
/// process, hashes the counter instead: still distinct per process and unpredictable.
fn random_u64(n: u64) -> u64 {
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

    #[cfg(feature = "http")]
    #[test]
    fn call_stems_are_distinct_and_well_formed() {
        let stems: std::collections::HashSet<String> =
            (0..1000).map(|_| super::call_stem()).collect();
        assert_eq!(stems.len(), 1000);
        for stem in &stems {
            let hex = stem.strip_prefix("call_").unwrap();
            assert_eq!(hex.len(), 16, "{stem}");
            assert!(
                hex.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')),
                "{stem}"
            );
        }
    }

    #[test]
    fn suffixes_differ_between_ids() {
        let suffix = |id: String| id.rsplit('-').next().unwrap().to_owned();
        let a = suffix(unique("sus"));
        let b = suffix(unique("sus"));
        assert_ne!(a, b);
    }
}
