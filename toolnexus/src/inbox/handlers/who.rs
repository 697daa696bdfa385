//! Who or what is asking: the agent's name and the conversation a run's record names, read
//! for the runs a page shows.

use futures_util::future::join_all;

use crate::inbox::Shared;
use crate::run::PendingRun;
use crate::store::StoredRun;

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
