//! A `tracing` subscriber for tests: every span, span record and event becomes one line of
//! text (`span <name>: field=value ..`, `record <name>: ..`, `<target>: ..`), at every level.

use std::fmt::Write as _;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use tracing::field::{Field, Visit};
use tracing::span::{Attributes, Id, Record};
use tracing::{Event, Metadata, Subscriber};

/// Records what `tracing` is told; clone it into `tracing::subscriber::set_default`.
#[derive(Clone, Debug, Default)]
pub struct Recorder {
    lines: Arc<Mutex<Vec<String>>>,
    names: Arc<Mutex<Vec<&'static str>>>,
    next: Arc<AtomicU64>,
}

impl Recorder {
    /// Every line so far, in order.
    pub fn lines(&self) -> Vec<String> {
        self.lines
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn push(&self, line: String) {
        self.lines
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(line);
    }
}

struct Line<'a>(&'a mut String);

impl Visit for Line<'_> {
    fn record_debug(&mut self, field: &Field, value: &dyn std::fmt::Debug) {
        let _ = write!(self.0, " {}={value:?}", field.name());
    }
}

impl Subscriber for Recorder {
    fn enabled(&self, _: &Metadata<'_>) -> bool {
        true
    }
    fn new_span(&self, span: &Attributes<'_>) -> Id {
        let name = span.metadata().name();
        let mut line = format!("span {name}:");
        span.record(&mut Line(&mut line));
        self.push(line);
        self.names
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(name);
        Id::from_u64(self.next.fetch_add(1, Ordering::SeqCst) + 1)
    }
    fn record(&self, id: &Id, values: &Record<'_>) {
        let index = usize::try_from(id.into_u64() - 1).unwrap_or(usize::MAX);
        let name = self
            .names
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .get(index)
            .copied()
            .unwrap_or("?");
        let mut line = format!("record {name}:");
        values.record(&mut Line(&mut line));
        self.push(line);
    }
    fn record_follows_from(&self, _: &Id, _: &Id) {}
    fn event(&self, event: &Event<'_>) {
        let mut line = format!("{}:", event.metadata().target());
        event.record(&mut Line(&mut line));
        self.push(line);
    }
    fn enter(&self, _: &Id) {}
    fn exit(&self, _: &Id) {}
}
