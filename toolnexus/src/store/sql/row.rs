//! The columns the SQL stores read, in [`RawRow`](crate::store::RawRow) order, and the few
//! pieces of SQL text both stores write the same way.

use crate::store::StoreError;

/// The SQL columns every store query reads, in [`RawRow`](crate::store::RawRow) order.
pub(crate) const COLUMNS: &str = "run_id, request_id, kind, prompt, created_at, expires_at, state, \
     lease_owner, lease_until, version, claims, history, approvers, escalate, record, answer, checkpoint, \
     result, votes";

/// The SQL columns of a row without its record, answer, checkpoint and result, in
/// [`RawRow`](crate::store::RawRow) order: what a change that returns only the run's
/// [`RunInfo`] reads back.
pub(crate) const INFO_COLUMNS: &str = "run_id, request_id, kind, prompt, created_at, expires_at, \
     state, lease_owner, lease_until, version, claims, history, approvers, escalate";

/// The SQL columns of a conversation, in `ConversationRow` order.
pub(crate) const CONVERSATION_COLUMNS: &str =
    "id, messages, turns, message_count, waiting_run, waiting_request, updated_at, version";

/// The states a readable row may hold, as an SQL list: a row in any other state is listed by
/// [`RunStore::list_damaged`](crate::store::RunStore::list_damaged).
pub(crate) const GOOD_STATES: &str =
    "('parked', 'answered', 'claimed', 'expired', 'finished', 'failed')";

/// A database failure, as its message.
pub(crate) fn backend(e: impl std::fmt::Display) -> StoreError {
    StoreError::Backend(e.to_string())
}

/// The SQL expression that appends the events of the text parameter `param` (a fragment from
/// [`events_json`](crate::store::events_json)) to the `history` column (a JSON array): text
/// only, the same in both SQL stores.
pub(crate) fn append_history(param: &str) -> String {
    format!(
        "history = substr(history, 1, length(history) - 1) \
         || CASE WHEN history = '[]' THEN '' ELSE ',' END || {param} || ']'"
    )
}
