//! When and how long to wait before retrying a provider request.

use std::time::Duration;

use reqwest::StatusCode;
use reqwest::header::{HeaderMap, RETRY_AFTER};

/// The statuses a request is retried on by default: 429, 500/502/503/504 and 529 (Anthropic's
/// "overloaded").
pub(crate) fn is_retryable_status(status: StatusCode) -> bool {
    matches!(status.as_u16(), 429 | 500 | 502 | 503 | 504 | 529)
}

/// `Retry-After` in its whole-seconds form (`"0"`, `"7"`); any other form (an HTTP date, a
/// fraction, a negative number, garbage) is `None`, and the caller falls back to backoff.
pub(crate) fn retry_after(headers: &HeaderMap) -> Option<Duration> {
    let value = headers.get(RETRY_AFTER)?.to_str().ok()?.trim();
    if value.is_empty() || !value.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    value.parse::<u64>().ok().map(Duration::from_secs)
}

/// Exponential backoff with jitter: `base * 2^attempt`, then a random point in its upper half
/// (`[d/2, d]`), so concurrent clients spread out but never retry sooner than half the step.
pub(crate) fn backoff(base: Duration, attempt: u32) -> Duration {
    let step = base.saturating_mul(2u32.saturating_pow(attempt.min(16)));
    let half = step / 2;
    let jitter_nanos = u64::try_from(half.as_nanos()).unwrap_or(u64::MAX);
    half + Duration::from_nanos(fastrand::u64(0..=jitter_nanos))
}

#[cfg(test)]
mod tests {
    use super::*;
    use reqwest::header::HeaderValue;

    fn headers(value: &str) -> HeaderMap {
        let mut h = HeaderMap::new();
        h.insert(RETRY_AFTER, HeaderValue::from_str(value).unwrap());
        h
    }

    #[test]
    fn retry_after_accepts_whole_seconds_only() {
        assert_eq!(retry_after(&headers("0")), Some(Duration::ZERO));
        assert_eq!(retry_after(&headers("1")), Some(Duration::from_secs(1)));
        assert_eq!(retry_after(&headers(" 12 ")), Some(Duration::from_secs(12)));
        assert_eq!(retry_after(&headers("-1")), None);
        assert_eq!(retry_after(&headers("1.5")), None);
        assert_eq!(retry_after(&headers("+3")), None);
        assert_eq!(retry_after(&headers("Wed, 21 Oct 2015 07:28:00 GMT")), None);
        assert_eq!(retry_after(&headers("")), None);
        assert_eq!(retry_after(&headers("99999999999999999999999")), None);
        assert_eq!(retry_after(&HeaderMap::new()), None);
    }

    #[test]
    fn backoff_doubles_and_stays_within_its_jitter_band() {
        let base = Duration::from_millis(500);
        for attempt in 0..4 {
            let step = base * 2u32.pow(attempt);
            for _ in 0..50 {
                let d = backoff(base, attempt);
                assert!(d >= step / 2 && d <= step, "attempt {attempt}: {d:?}");
            }
        }
        assert_eq!(backoff(Duration::ZERO, 3), Duration::ZERO);
        // huge attempt counts saturate instead of overflowing
        assert!(backoff(Duration::from_secs(1), u32::MAX) >= Duration::from_secs(32768));
    }
}
