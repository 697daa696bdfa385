//! The run-store conformance suite against `MemoryStore`.

use std::sync::Arc;
use std::time::Duration;

use toolnexus::BoxFuture;
use toolnexus::store::MemoryStore;
use toolnexus_tests::store_conformance::{Subject, retired_key, seal_key};

fn make(lease: Duration) -> BoxFuture<'static, Option<Subject>> {
    make_with(lease, false)
}

fn make_sealed(lease: Duration) -> BoxFuture<'static, Option<Subject>> {
    make_with(lease, true)
}

fn make_with(lease: Duration, sealed: bool) -> BoxFuture<'static, Option<Subject>> {
    Box::pin(async move {
        let mut store = MemoryStore::new().with_lease(lease);
        if sealed {
            store = store.with_seal_keys(seal_key(), [retired_key()]);
        }
        let (raw, columns) = (store.clone(), store.clone());
        Some(Subject {
            handles: vec![Arc::new(store.clone()), Arc::new(store)],
            write_raw: Box::new(move |run_id, text| {
                let raw = raw.clone();
                Box::pin(async move {
                    assert!(raw.write_raw_record(&run_id, &text), "no run {run_id}");
                })
            }),
            write_column: Box::new(move |run_id, column, value| {
                let held = columns
                    .write_raw_column(&run_id, column, value.as_deref())
                    .unwrap_or_else(|| panic!("no run {run_id}"));
                Box::pin(async move { held })
            }),
            guard: None,
        })
    })
}

toolnexus_tests::store_conformance!(make);
toolnexus_tests::store_conformance!(sealed: make_sealed);

/// A conversation whose stored transcript cannot be read is a clear error naming it; the
/// others, and listing, are unaffected.
#[tokio::test]
async fn a_damaged_conversation_stays_local() {
    use toolnexus::store::{Conversation, ConversationStore, StoreError};
    let store = MemoryStore::new();
    store
        .put_conversation(&Conversation::new("bad"))
        .await
        .unwrap();
    store
        .put_conversation(&Conversation::new("good"))
        .await
        .unwrap();
    assert!(store.write_raw_conversation("bad", "[{\"role\":"));
    match store.get_conversation("bad").await {
        Err(StoreError::CorruptConversation { id, message }) => {
            assert_eq!(id, "bad");
            assert!(message.starts_with("EOF while parsing"), "{message}");
        }
        other => panic!("expected CorruptConversation, got {other:?}"),
    }
    assert!(store.get_conversation("good").await.unwrap().is_some());
    let page = store.list_conversations(None, 10).await.unwrap();
    assert_eq!(
        page.conversations
            .iter()
            .map(|c| c.id.as_str())
            .collect::<Vec<_>>(),
        ["bad", "good"]
    );
}
