//! The votes of a request that needs several approvals ([`Request::with_approvals`]): each
//! acceptance kept with who gave it, when, and which arguments it approved (as their
//! fingerprint), in the run's `votes` column (sealed like its answer in a sealed store).

use std::time::SystemTime;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::{StoreError, StoreResult, StoredRun, from_millis, millis};
#[cfg(doc)]
use crate::request::Request;
use crate::request::{Answer, DATA_ARGS};

/// The fingerprint of a vote for the arguments as shown (an approval without `data.args`).
pub(crate) const AS_SHOWN: &str = "shown";

/// One person's acceptance of a request that needs several approvals.
#[derive(Clone, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub struct Vote {
    /// Who accepted (the `answered_by` of [`RunStore::submit`](super::RunStore::submit)).
    pub by: String,
    /// When the store recorded it.
    pub at: SystemTime,
    /// Which arguments it approves: `shown` for the arguments the request shows, else the
    /// fingerprint ([`call_fingerprint`](crate::remember::call_fingerprint) with an empty
    /// tool name) of the edited arguments (`data.args`) it carried. Votes count together
    /// only when they approve the same arguments.
    pub args: String,
}

/// A vote as the `votes` column keeps it.
#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct Stored {
    by: String,
    at: i64,
    args: String,
}

/// The votes as the `votes` column keeps them (before sealing): a JSON array.
pub(crate) fn votes_json(votes: &[Vote]) -> String {
    let rows: Vec<Stored> = votes
        .iter()
        .map(|v| Stored {
            by: v.by.clone(),
            at: millis(v.at),
            args: v.args.clone(),
        })
        .collect();
    serde_json::to_string(&rows).unwrap_or_else(|_| "[]".to_owned())
}

/// The votes of the `votes` column's JSON array (after opening its seal).
pub(crate) fn parse_votes(run_id: &str, value: Value) -> StoreResult<Vec<Vote>> {
    let rows: Vec<Stored> = serde_json::from_value(value).map_err(|e| StoreError::Corrupt {
        run_id: run_id.to_owned(),
        message: format!("votes: {e}"),
    })?;
    Ok(rows
        .into_iter()
        .map(|r| Vote {
            by: r.by,
            at: from_millis(r.at),
            args: r.args,
        })
        .collect())
}

/// Which arguments `answer` approves, as [`Vote::args`] says: the edited arguments it carries,
/// when the request proposed arguments (`proposed`, an editable approval) and they differ;
/// else [`AS_SHOWN`].
pub(crate) fn voted_args(answer: &Answer, proposed: Option<&Value>) -> String {
    let edited = answer
        .data
        .as_ref()
        .and_then(|d| d.get(DATA_ARGS))
        .filter(|_| proposed.is_some());
    match edited {
        Some(args) if Some(args) != proposed => crate::run::call_fingerprint("", args),
        _ => AS_SHOWN.to_owned(),
    }
}

/// How many distinct people voted for `args`.
pub(crate) fn count_for(votes: &[Vote], args: &str) -> u32 {
    let mut by: Vec<&str> = votes
        .iter()
        .filter(|v| v.args == args)
        .map(|v| v.by.as_str())
        .collect();
    by.sort_unstable();
    by.dedup();
    u32::try_from(by.len()).unwrap_or(u32::MAX)
}

impl StoredRun {
    /// How many distinct people must accept the run's current request (1 unless it needs
    /// several approvals, [`Request::with_approvals`]).
    pub fn approvals_required(&self) -> u32 {
        self.record.pending().required_approvals()
    }

    /// The most approvals any one set of arguments has so far (the count the run goes on
    /// at, once it reaches [`approvals_required`](Self::approvals_required)).
    pub fn approvals_given(&self) -> u32 {
        self.votes
            .iter()
            .map(|v| count_for(&self.votes, &v.args))
            .max()
            .unwrap_or(0)
    }

    /// How many more approvals the run waits for (0 once it is no longer parked).
    pub fn approvals_missing(&self) -> u32 {
        if self.info.state != super::RunState::Parked {
            return 0;
        }
        self.approvals_required()
            .saturating_sub(self.approvals_given())
    }
}
