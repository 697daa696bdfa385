//! A [`Change`] of the lifecycle as one SQL `UPDATE`: its fields as the `SET` list, its guard
//! as the `WHERE` condition, the same text in both SQL stores (each names its parameters and
//! adds what it reads back).

use super::{SqlParam, append_history};
use crate::store::lifecycle::{Change, Guard, Key, LeaseSet};

/// The pieces of the `UPDATE` of a change: `UPDATE runs SET {set} WHERE {guard}`, with
/// `params` for the placeholders the store's `placeholder(n)` named (from 1). The text
/// depends only on the change's shape (which fields it sets, which guard), so a store's
/// statement cache keeps a few statements.
#[derive(Debug)]
pub(crate) struct ChangeSql {
    pub(crate) set: String,
    pub(crate) guard: String,
    pub(crate) params: Vec<SqlParam>,
}

impl ChangeSql {
    /// The whole statement, reading back `returning` (SQL columns, or empty: nothing).
    pub(crate) fn update(&self, returning: &str) -> String {
        let mut sql = format!("UPDATE runs SET {} WHERE {}", self.set, self.guard);
        if !returning.is_empty() {
            sql.push_str(" RETURNING ");
            sql.push_str(returning);
        }
        sql
    }
}

/// The `UPDATE` pieces of `change`, naming parameter n with `placeholder(n)`: the guard's
/// first (the key `1`, then its value: a claim's token `2`), then the fields set (a new
/// request's id first: `3` after a claim's guard), so a statement around it can name them.
pub(crate) fn change_sql(change: &Change, placeholder: fn(usize) -> String) -> ChangeSql {
    let mut params = Vec::new();
    let mut param = |value: SqlParam| {
        params.push(value);
        placeholder(params.len())
    };
    let guard = guard_sql(change, &mut param);
    let set_fields = &change.set;
    let mut set = Vec::new();
    if let Some(state) = set_fields.state {
        set.push(format!("state = '{}'", state.as_str()));
    }
    match &set_fields.lease {
        LeaseSet::Keep => {}
        LeaseSet::Clear => set.push("lease_owner = NULL, lease_until = NULL".to_owned()),
        LeaseSet::Hold { owner, until } => set.push(format!(
            "lease_owner = {}, lease_until = {}",
            param(SqlParam::Text(owner.clone())),
            param(SqlParam::Int(*until))
        )),
        LeaseSet::Until(until) => {
            set.push(format!("lease_until = {}", param(SqlParam::Int(*until))));
        }
    }
    if let Some(answer) = &set_fields.answer {
        set.push(format!(
            "answer = {}",
            param(SqlParam::Text(answer.clone()))
        ));
    }
    if let Some(checkpoint) = &set_fields.checkpoint {
        set.push(format!(
            "checkpoint = {}",
            param(SqlParam::Text(checkpoint.clone()))
        ));
    }
    if set_fields.claimed {
        set.push("claims = claims + 1".to_owned());
    }
    if let Some(cols) = &set_fields.request {
        let expires = match cols.expires_at {
            Some(at) => param(SqlParam::Int(at)),
            None => "NULL".to_owned(),
        };
        set.push(format!(
            "request_id = {}, kind = {}, prompt = {}, expires_at = {expires}, record = {}, \
             created_at = {}, answer = NULL, checkpoint = NULL, votes = NULL, approvers = {}, escalate = {}",
            param(SqlParam::Text(cols.request_id.clone())),
            param(SqlParam::Text(cols.kind.clone())),
            param(SqlParam::Text(cols.prompt.clone())),
            param(SqlParam::Text(cols.record.clone())),
            param(SqlParam::Int(change.at)),
            param(SqlParam::MaybeText(cols.approvers.clone())),
            param(SqlParam::MaybeText(cols.escalate.clone())),
        ));
    }
    if let Some(result) = &set_fields.result {
        set.push(format!(
            "result = {}",
            param(SqlParam::Text(result.clone()))
        ));
    }
    if let Some(votes) = &set_fields.votes {
        set.push(format!("votes = {}", param(SqlParam::Text(votes.clone()))));
    }
    if let Some(step) = &set_fields.escalate {
        set.push(format!(
            "approvers = {}, expires_at = {}, escalate = {}",
            param(SqlParam::Text(step.approvers.clone())),
            param(SqlParam::Int(step.expires_at)),
            param(SqlParam::MaybeText(step.rest.clone())),
        ));
    }
    set.push("version = version + 1".to_owned());
    if !change.events.is_empty() {
        set.push(append_history(&param(SqlParam::Text(
            change.events.clone(),
        ))));
    }
    ChangeSql {
        set: set.join(", "),
        guard,
        params,
    }
}

/// The `WHERE` condition of `change`: its key, then what its guard requires.
fn guard_sql(change: &Change, param: &mut dyn FnMut(SqlParam) -> String) -> String {
    let key = match &change.key {
        Key::Run(id) => format!("run_id = {}", param(SqlParam::Text(id.clone()))),
        Key::Request(id) => format!("request_id = {}", param(SqlParam::Text(id.clone()))),
    };
    match change.guard {
        Guard::Answerable { now } => format!(
            "{key} AND state = 'parked' AND (expires_at IS NULL OR expires_at > {})",
            param(SqlParam::Int(now))
        ),
        Guard::Parked => format!("{key} AND state = 'parked'"),
        Guard::Claimed { token } => format!(
            "{key} AND state = 'claimed' AND claims = {}",
            param(SqlParam::Int(token))
        ),
        Guard::Claims(claims) => format!("{key} AND claims = {}", param(SqlParam::Int(claims))),
        Guard::Version(version) => {
            format!("{key} AND version = {}", param(SqlParam::Int(version)))
        }
        Guard::Votable { version, now } => format!(
            "{key} AND version = {} AND state = 'parked' AND (expires_at IS NULL OR expires_at > {})",
            param(SqlParam::Int(version)),
            param(SqlParam::Int(now))
        ),
    }
}
