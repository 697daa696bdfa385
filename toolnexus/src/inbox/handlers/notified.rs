//! What the request's JSON and its status say of its notifications (issue 37): each
//! notifier's notification of the request, delivered, pending or given up (with the last
//! error), from the store's [outbox](crate::store::outbox); `[]` for a store without one.

use serde_json::{Value, json};

use crate::store::RunStore;

/// `[{"id","notifier","state","attempts","lastError"}]` of the notifications of `request_id`
/// (run `run_id`).
pub(super) async fn notifications(store: &dyn RunStore, run_id: &str, request_id: &str) -> Value {
    let Some(outbox) = store.outbox() else {
        return json!([]);
    };
    match outbox.notifications(run_id).await {
        Ok(all) => all
            .iter()
            .filter(|n| n.request_id == request_id)
            .map(|n| {
                json!({
                    "id": n.id,
                    "notifier": n.notifier,
                    "state": n.state.as_str(),
                    "attempts": n.attempts,
                    "lastError": n.last_error,
                })
            })
            .collect(),
        Err(e) => {
            tracing::warn!(error = %e, "inbox: cannot read a run's notifications");
            Value::Null
        }
    }
}
