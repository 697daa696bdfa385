//! The outbox as an in-memory table (the memory store's): notifications by id with their
//! leases, each step the [decisions](super::decide) applied to the rows as they are.

use std::collections::BTreeMap;

use super::Notification;
use super::decide::{Claiming, Recording, due_at, listing_order};

/// The memory store's notifications, by id, with their leases (ms).
#[derive(Default)]
pub(crate) struct MemRows {
    rows: BTreeMap<String, (Notification, Option<i64>)>,
}

impl MemRows {
    /// Writes a park's notifications (an id written already is kept as it is).
    pub(crate) fn insert(&mut self, rows: Vec<Notification>) {
        for n in rows {
            self.rows.entry(n.id.clone()).or_insert((n, None));
        }
    }

    /// What `claiming` takes, claimed ([`Claiming::pick`]).
    pub(crate) fn claim(&mut self, claiming: &Claiming<'_>) -> Vec<Notification> {
        claiming.pick(self.rows.values_mut())
    }

    /// Applies `recording` to its row; `false` when the row is gone or no longer holds the
    /// attempt.
    pub(crate) fn record(&mut self, recording: &Recording<'_>) -> bool {
        self.rows
            .get_mut(&recording.claimed.id)
            .is_some_and(|(row, lease)| recording.apply(row, lease))
    }

    /// The notifications of run `run_id`, in [listing order](listing_order).
    pub(crate) fn of_run(&self, run_id: &str) -> Vec<Notification> {
        let mut found: Vec<Notification> = self
            .rows
            .values()
            .filter(|(n, _)| n.run_id == run_id)
            .map(|(n, _)| n.clone())
            .collect();
        found.sort_by(listing_order);
        found
    }

    /// When the nearest pending notification is due ([`due_at`]), in ms.
    pub(crate) fn next_due(&self) -> Option<i64> {
        self.rows
            .values()
            .filter_map(|(n, lease)| due_at(n, *lease))
            .min()
    }
}
