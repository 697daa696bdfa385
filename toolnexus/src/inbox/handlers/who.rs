//! Who or what is asking: the agent's name and the conversation a run's record names, read
//! for the runs a page shows.

use futures_util::future::join_all;

use crate::inbox::Shared;
use crate::run::PendingRun;
use crate::store::{RunInfo, StoredRun};

/// Who is asking, as a run's record says: the agent's name
/// ([`ClientBuilder::agent_name`](crate::client::ClientBuilder::agent_name)) and the
/// conversation the run is a turn of. Either may be unknown.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct Asker {
    pub(crate) agent: Option<String>,
    pub(crate) conversation: Option<String>,
}

impl Asker {
    pub(crate) fn of(record: &PendingRun) -> Self {
        Self {
            agent: record.agent().map(str::to_owned),
            conversation: record.conversation().map(str::to_owned),
        }
    }
}

/// The stored runs of `run_ids`, read at once (a page's worth); `None` for a run that is gone
/// or cannot be read (its page row then shows what its columns say).
pub(super) async fn stored_runs<'a>(
    shared: &Shared,
    run_ids: impl Iterator<Item = &'a str>,
) -> Vec<Option<StoredRun>> {
    join_all(run_ids.map(|id| async move { shared.store.get(id).await.ok().flatten() })).await
}

/// The runs of page `page` (from 1) of `runs`, [`Shared::page_size`] a page, each with who is
/// asking (read from its stored record); and whether a later page has runs.
pub(super) async fn page_with_askers<'r>(
    shared: &Shared,
    runs: &'r [RunInfo],
    page: usize,
) -> (Vec<(&'r RunInfo, Asker)>, bool) {
    let size = shared.page_size;
    let shown: Vec<_> = runs.iter().skip((page - 1) * size).take(size).collect();
    let stored = stored_runs(shared, shown.iter().map(|r| r.run_id.as_str())).await;
    let askers = stored
        .into_iter()
        .map(|run| run.map(|run| Asker::of(&run.record)).unwrap_or_default());
    let more = runs.len() > page * size;
    (shown.into_iter().zip(askers).collect(), more)
}
