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
