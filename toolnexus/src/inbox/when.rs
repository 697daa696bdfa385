//! Times in words on the pages: how long ago, when a deadline comes, when a worker was last
//! seen.

use std::time::{Duration, SystemTime};

/// A duration in short words: `40 s`, `5 min`, `2 h`, `3 d`.
fn span(d: Duration) -> String {
    let s = d.as_secs();
    match s {
        0..60 => format!("{s} s"),
        60..3600 => format!("{} min", s / 60),
        3600..86400 => format!("{} h", s / 3600),
        _ => format!("{} d", s / 86400),
    }
}

/// How long ago `at` was: `5 min ago`.
pub(crate) fn ago(now: SystemTime, at: SystemTime) -> String {
    format!("{} ago", span(now.duration_since(at).unwrap_or_default()))
}

/// When a deadline comes, in words: `in 5 min`, `expired`, `never`.
pub(super) fn expiry(now: SystemTime, at: Option<SystemTime>) -> String {
    match at {
        None => "never".to_owned(),
        Some(at) => match at.duration_since(now) {
            Ok(left) => format!("in {}", span(left)),
            Err(_) => "expired".to_owned(),
        },
    }
}

/// When a worker was last seen, in words: `at 2026-12-06 13:01:02 UTC (4 minutes ago)`.
pub(crate) fn seen_words(at: std::time::SystemTime) -> String {
    let ago = std::time::SystemTime::now()
        .duration_since(at)
        .unwrap_or_default()
        .as_secs();
    let ago = match ago {
        0..60 => "less than a minute ago".to_owned(),
        60..120 => "1 minute ago".to_owned(),
        120..7200 => format!("{} minutes ago", ago / 60),
        7200..172_800 => format!("{} hours ago", ago / 3600),
        _ => format!("{} days ago", ago / 86_400),
    };
    format!("at {} ({ago})", utc_words(at))
}

/// `2026-12-06 13:01:02 UTC`.
fn utc_words(at: std::time::SystemTime) -> String {
    let at = time::OffsetDateTime::from(at);
    format!(
        "{:04}-{:02}-{:02} {:02}:{:02}:{:02} UTC",
        at.year(),
        u8::from(at.month()),
        at.day(),
        at.hour(),
        at.minute(),
        at.second()
    )
}
