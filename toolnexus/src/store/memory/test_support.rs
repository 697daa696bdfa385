//! Test hooks (feature `test-support`): write a row's stored text as a damaged database would
//! hold it, to test that a store reads it as damaged and every other run goes on.

use super::MemoryStore;

impl MemoryStore {
    /// Replaces a run's stored record text as is (no check, no seal), to test how a damaged
    /// row reads. Returns whether the run exists.
    #[cfg_attr(docsrs, doc(cfg(feature = "test-support")))]
    pub fn write_raw_record(&self, run_id: &str, record: &str) -> bool {
        self.rows()
            .by_id
            .get_mut(run_id)
            .map(|row| record.clone_into(&mut row.record))
            .is_some()
    }

    /// Sets one column of a run's row to `value` as is (`None`: SQL `NULL`), to test how a
    /// damaged or forged row reads: `run_id`, `request_id`, `state`, `record`, `answer`,
    /// `checkpoint`, `result`, `history`, or an integer column (`created_at`, `expires_at`,
    /// `lease_until`). Returns `None` when the run does not exist, `Some(false)` when the column
    /// cannot hold `value` (text in an integer column, `NULL` where the row needs a value, an
    /// unknown column), as a typed SQL column would refuse it.
    #[cfg_attr(docsrs, doc(cfg(feature = "test-support")))]
    pub fn write_raw_column(
        &self,
        run_id: &str,
        column: &str,
        value: Option<&str>,
    ) -> Option<bool> {
        let mut rows = self.rows();
        let mut row = rows.by_id.get(run_id)?.clone();
        let int = || value.map(str::parse::<i64>);
        let held = match (column, value) {
            ("run_id", Some(v)) => {
                rows.unindex(&row);
                rows.by_id.remove(run_id);
                v.clone_into(&mut row.run_id);
                true
            }
            ("request_id", Some(v)) => {
                v.clone_into(&mut row.request_id);
                true
            }
            ("state", Some(v)) => {
                v.clone_into(&mut row.state);
                true
            }
            ("record", Some(v)) => {
                v.clone_into(&mut row.record);
                true
            }
            ("history", Some(v)) => {
                v.clone_into(&mut row.history);
                true
            }
            ("answer", v) => {
                row.answer = v.map(str::to_owned);
                true
            }
            ("checkpoint", v) => {
                row.checkpoint = v.map(str::to_owned);
                true
            }
            ("result", v) => {
                row.result = v.map(str::to_owned);
                true
            }
            ("votes", v) => {
                row.votes = v.map(str::to_owned);
                true
            }
            ("created_at", Some(_)) => match int() {
                Some(Ok(at)) => {
                    row.created_at = at;
                    true
                }
                _ => false,
            },
            ("expires_at", _) => match int().transpose() {
                Ok(at) => {
                    row.expires_at = at;
                    true
                }
                Err(_) => false,
            },
            ("lease_until", _) => match int().transpose() {
                Ok(at) => {
                    row.lease_until = at;
                    true
                }
                Err(_) => false,
            },
            _ => false,
        };
        if held {
            rows.insert(row);
        }
        Some(held)
    }

    /// Checks the store's indexes against its rows: each run is in the index of its state
    /// (and, parked, in the deadlines when it has one; claimed, in the leases) with the keys
    /// its row holds, and in no other; each run's current request names it. For tests that
    /// every change keeps them in step.
    ///
    /// # Errors
    ///
    /// The first index that disagrees with the rows, with both sides.
    #[cfg_attr(docsrs, doc(cfg(feature = "test-support")))]
    pub fn check_indexes(&self) -> Result<(), String> {
        let rows = self.rows();
        let mut fresh = super::Rows::default();
        for row in rows.by_id.values() {
            fresh.index(row);
            if rows.by_request.get(&row.request_id) != Some(&row.run_id) {
                return Err(format!(
                    "request `{}` of run `{}` names {:?}",
                    row.request_id,
                    row.run_id,
                    rows.by_request.get(&row.request_id)
                ));
            }
        }
        let sets = [
            ("parked", &rows.parked, &fresh.parked),
            ("answered", &rows.answered, &fresh.answered),
            ("expired", &rows.expired, &fresh.expired),
            ("deadlines", &rows.deadlines, &fresh.deadlines),
            ("leases", &rows.leases, &fresh.leases),
        ];
        for (name, kept, rebuilt) in sets {
            if kept != rebuilt {
                return Err(format!(
                    "the {name} index holds {kept:?}; the rows say {rebuilt:?}"
                ));
            }
        }
        Ok(())
    }

    /// Replaces a conversation's stored transcript text as is, to test how a damaged row
    /// reads. Returns whether the conversation exists.
    #[cfg_attr(docsrs, doc(cfg(feature = "test-support")))]
    pub fn write_raw_conversation(&self, id: &str, messages: &str) -> bool {
        self.conversation_rows()
            .get_mut(id)
            .map(|row| messages.clone_into(&mut row.messages))
            .is_some()
    }
}
