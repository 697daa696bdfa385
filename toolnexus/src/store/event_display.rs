//! [`RunEvent`] and [`RunEventKind`] in words, for logs and operator tools:
//! `2026-12-06T13:01:02.123Z answered request q-1 by alice`.

use std::fmt;

use super::{RunEvent, RunEventKind};

impl RunEventKind {
    /// The kind in words: `requested`, `answered`, `expired`, `claimed`, `taken over`,
    /// `released`, `finished`, `failed`, `damaged`, `decided`, `notified`, `voted`,
    /// `escalated`, `other`.
    pub fn as_words(self) -> &'static str {
        match self {
            RunEventKind::Requested => "requested",
            RunEventKind::Answered => "answered",
            RunEventKind::Expired => "expired",
            RunEventKind::Claimed => "claimed",
            RunEventKind::TakenOver => "taken over",
            RunEventKind::Released => "released",
            RunEventKind::Finished => "finished",
            RunEventKind::Failed => "failed",
            RunEventKind::Damaged => "damaged",
            RunEventKind::Decided => "decided",
            RunEventKind::Notified => "notified",
            RunEventKind::Voted => "voted",
            RunEventKind::Escalated => "escalated",
            RunEventKind::Other => "other",
        }
    }
}

impl fmt::Display for RunEventKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_words())
    }
}

/// One line: when (RFC 3339 UTC, milliseconds), what, then what the event carries: `request
/// <id>`, `by <who>`, `attempt <n>`, `rule <id>`, `from <group> to <group>`, `until <deadline>`,
/// `-> <outcome>`, `: <error>`.
///
/// ```
/// use toolnexus::store::RunEvent;
///
/// // as a run's history keeps it (`RunInfo::history`)
/// let event: RunEvent = serde_json::from_value(serde_json::json!(
///     {"event": "answered", "at": 1_796_562_062_123_i64, "request": "q-1", "by": "alice"}
/// )).unwrap();
/// assert_eq!(event.to_string(), "2026-12-06T13:01:02.123Z answered request q-1 by alice");
/// ```
impl fmt::Display for RunEvent {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let at = time::OffsetDateTime::from(self.at);
        write!(
            f,
            "{:04}-{:02}-{:02}T{:02}:{:02}:{:02}.{:03}Z {}",
            at.year(),
            u8::from(at.month()),
            at.day(),
            at.hour(),
            at.minute(),
            at.second(),
            at.millisecond(),
            self.event
        )?;
        if let Some(request) = &self.request {
            write!(f, " request {request}")?;
        }
        if let Some(by) = &self.by {
            write!(f, " by {by}")?;
        }
        if let Some(attempt) = self.attempt {
            write!(f, " attempt {attempt}")?;
        }
        if let Some(rule) = &self.rule {
            write!(f, " rule {rule}")?;
        }
        if let Some(to) = &self.to {
            write!(
                f,
                " from {} to {to}",
                self.from.as_deref().unwrap_or("anyone")
            )?;
        }
        if let Some(deadline) = self.deadline {
            write!(f, " until {}", crate::request::format_rfc3339(deadline))?;
        }
        if let Some(outcome) = &self.outcome {
            write!(f, " -> {outcome}")?;
        }
        if let Some(error) = &self.error {
            write!(f, ": {error}")?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::{RunEvent, RunEventKind};

    #[test]
    fn every_field_is_said_in_order() {
        let at = 1_796_562_062_005;
        let mut e = RunEvent::new(RunEventKind::TakenOver, at).by("w-2");
        e.attempt = Some(3);
        assert_eq!(
            e.to_string(),
            "2026-12-06T13:01:02.005Z taken over by w-2 attempt 3"
        );
        let mut e = RunEvent::new(RunEventKind::Failed, at).by("w-1");
        e.outcome = Some("failed".into());
        e.error = Some("model down".into());
        assert_eq!(
            e.to_string(),
            "2026-12-06T13:01:02.005Z failed by w-1 -> failed: model down"
        );
        let mut e = RunEvent::new(RunEventKind::Decided, at).request("q-9");
        e.rule = Some("rule-1".into());
        e.outcome = Some("allowed".into());
        assert_eq!(
            e.to_string(),
            "2026-12-06T13:01:02.005Z decided request q-9 rule rule-1 -> allowed"
        );
        let e = RunEvent::new(RunEventKind::Escalated, at)
            .request("q-9")
            .escalation(Some("finance"), "cfo", at + 3_600_000);
        assert_eq!(
            e.to_string(),
            "2026-12-06T13:01:02.005Z escalated request q-9 from finance to cfo until 2026-12-06T14:01:02.005Z"
        );
        assert_eq!(RunEventKind::Other.to_string(), "other");
    }
}
