//! Who submits an answer, and which groups they are in: what a run store checks against the
//! group a request names ([`Request::with_approvers`](crate::Request::with_approvers)) before it
//! records the answer ([`RunStore::submit_as`](super::RunStore::submit_as)).

use super::StoreError;

/// A person submitting an answer, with the groups the host says they are in.
///
/// A request that names a group ([`RunInfo::approvers`](super::RunInfo::approvers), which an
/// [escalation](crate::Request::escalate_to) moves) takes answers only from its members;
/// a request that names none, from anyone.
///
/// ```
/// use toolnexus::store::Answerer;
///
/// let ann = Answerer::new("ann").in_groups(["finance"]);
/// assert!(ann.may_answer(Some("finance")));
/// assert!(ann.may_answer(None));
/// assert!(!ann.may_answer(Some("cfo")));
/// // the host checked who may answer itself (its own rules): every group's requests
/// assert!(Answerer::new("ops-bot").checked().may_answer(Some("cfo")));
/// ```
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Answerer {
    who: String,
    groups: Vec<String>,
    checked: bool,
    granting: bool,
}

impl Answerer {
    /// `who`, in no group yet: may answer the requests that name no group.
    pub fn new(who: impl Into<String>) -> Self {
        Self {
            who: who.into(),
            groups: Vec::new(),
            checked: false,
            granting: false,
        }
    }

    /// Adds the groups `who` is in.
    #[must_use]
    pub fn in_groups(mut self, groups: impl IntoIterator<Item = impl Into<String>>) -> Self {
        self.groups.extend(groups.into_iter().map(Into::into));
        self
    }

    /// The host checked that `who` may answer the request, whatever its group: the store does
    /// not check the group. What [`RunStore::submit`](super::RunStore::submit) cannot say, so a
    /// host that checks groups its own way says it here.
    #[must_use]
    pub fn checked(mut self) -> Self {
        self.checked = true;
        self
    }

    /// The host lets `who` make [remembered decisions](crate::remember) for the run's
    /// principal ([`RunStore::submit_granting`](super::RunStore::submit_granting)).
    #[must_use]
    pub fn granting(mut self) -> Self {
        self.granting = true;
        self
    }

    /// Who answers (the `by` of the answer's history event).
    pub fn who(&self) -> &str {
        &self.who
    }

    /// The groups `who` is in.
    pub fn groups(&self) -> &[String] {
        &self.groups
    }

    /// Whether the answerer may make remembered decisions for the run's principal.
    pub fn is_granting(&self) -> bool {
        self.granting
    }

    /// Whether `who` may answer a request whose current group is `group` (`None`: it names
    /// none).
    pub fn may_answer(&self, group: Option<&str>) -> bool {
        match group {
            None => true,
            Some(_) if self.checked => true,
            Some(group) => self.groups.iter().any(|g| g == group),
        }
    }

    /// The refusal of an answer to `request_id`, whose current group is `group`, when `who`
    /// may not give it.
    pub(crate) fn check(&self, request_id: &str, group: Option<&str>) -> Result<(), StoreError> {
        match group {
            Some(group) if !self.may_answer(Some(group)) => Err(StoreError::NotAllowed(format!(
                "`{}` may not answer request `{}`: only group `{group}` may, and `{}` is not in it",
                self.who,
                crate::limits::excerpt(request_id),
                self.who
            ))),
            _ => Ok(()),
        }
    }
}

/// The refusal of a plain [`submit`](super::RunStore::submit) of an answer to `request_id`,
/// whose request names `group`: the store cannot tell whether the answerer is in it.
pub(crate) fn unchecked(request_id: &str, group: &str) -> StoreError {
    StoreError::NotAllowed(format!(
        "request `{}` may be answered by group `{group}` only: submit it with `RunStore::submit_as` and the answerer's groups (or `Answerer::checked` when the host checked them)",
        crate::limits::excerpt(request_id)
    ))
}

/// The refusal of a claim by a person whose groups this door does not know (an MCP client) of
/// a request that names a group: it is answered where the host knows who is in it.
pub(crate) fn groups_unknown(request_id: &str, group: &str) -> StoreError {
    StoreError::NotAllowed(format!(
        "request `{}` may be answered by group `{group}` only, and this answer came where no one's groups are known: answer it on the answer page (or through a host that checks the group)",
        crate::limits::excerpt(request_id)
    ))
}
