//! Who may answer what: the host's [`InboxBuilder::groups_of`] names the groups of the person
//! [`InboxBuilder::answered_by`] names, and the inbox lists and takes answers to a request
//! that names a group ([`Request::with_approvers`](crate::Request::with_approvers)) only from
//! its members.

use std::sync::Arc;

use axum::http::request::Parts;

use super::{InboxBuilder, Shared};
use crate::store::Answerer;

/// The host's groups check: the groups of a person, by the name `answered_by` gives them.
pub(crate) type GroupsOfFn = dyn Fn(&str) -> Vec<String> + Send + Sync;

impl InboxBuilder {
    /// Names the groups of a person (by the name [`answered_by`](Self::answered_by) gives
    /// them): a request that names a group ([`Request::with_approvers`](crate::Request::with_approvers),
    /// or the group an [escalation](crate::Request::escalate_to) moved it to) is listed for,
    /// shown to and answered by the members of that group only. Everyone else does not see it
    /// in the list, and its page says it is for another group (`403`, the JSON API's too);
    /// nothing is recorded. Requests that name no group are everyone's, as before.
    ///
    /// Without it (or for a caller `answered_by` does not name, such as a bare signed link)
    /// nobody is in any group, so no request that names one can be answered here. The inbox
    /// matches the group names itself: the host only says who is in what.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use toolnexus::inbox::Inbox;
    /// # use toolnexus::store::{MemoryStore, RunStore};
    /// # let store: Arc<dyn RunStore> = Arc::new(MemoryStore::new());
    /// let inbox = Inbox::builder(store)
    ///     .authorize(|_, _| true)
    ///     .answered_by(|parts| parts.headers.get("x-user")?.to_str().ok().map(str::to_owned))
    ///     .groups_of(|person| match person {
    ///         "ann" | "bob" => vec!["finance".to_owned()],
    ///         "cathy" => vec!["cfo".to_owned(), "finance".to_owned()],
    ///         _ => vec![],
    ///     })
    ///     .build()
    ///     .unwrap();
    /// # let _ = inbox;
    /// ```
    pub fn groups_of<F>(mut self, f: F) -> Self
    where
        F: Fn(&str) -> Vec<String> + Send + Sync + 'static,
    {
        self.groups_of = Some(Arc::new(f));
        self
    }
}

impl Shared {
    /// The groups of the caller of `parts`: none without a name or without the host's check.
    pub(crate) fn groups(&self, parts: &Parts) -> Vec<String> {
        match (&self.groups_of, self.named_answerer(parts)) {
            (Some(f), Some(who)) => f(&who),
            _ => Vec::new(),
        }
    }

    /// Who answers request `request_id`, with their groups (`granting`: the host's `grants`
    /// check lets them make rules for the run's principal).
    pub(crate) fn answerer_of(&self, parts: &Parts, request_id: &str, granting: bool) -> Answerer {
        let answerer =
            Answerer::new(self.answerer(parts, request_id)).in_groups(self.groups(parts));
        if granting {
            answerer.granting()
        } else {
            answerer
        }
    }
}

/// What the page and the API say to a caller outside the group that may answer.
pub(crate) fn not_your_group(group: &str) -> String {
    format!(
        "This request is for the {group} group to answer; you are not in it, so it cannot be answered here."
    )
}
