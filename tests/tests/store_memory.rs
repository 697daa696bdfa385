//! The run-store conformance suite against `MemoryStore`.

use std::sync::Arc;
use std::time::Duration;

use toolnexus::BoxFuture;
use toolnexus::store::MemoryStore;
use toolnexus_tests::store_conformance::Subject;

fn make(lease: Duration) -> BoxFuture<'static, Option<Subject>> {
    Box::pin(async move {
        let store = MemoryStore::new().with_lease(lease);
        let raw = store.clone();
        Some(Subject {
            handles: vec![Arc::new(store.clone()), Arc::new(store)],
            write_raw: Box::new(move |run_id, text| {
                let raw = raw.clone();
                Box::pin(async move {
                    assert!(raw.__write_raw_record(&run_id, &text), "no run {run_id}");
                })
            }),
            guard: None,
        })
    })
}

toolnexus_tests::store_conformance!(make);
