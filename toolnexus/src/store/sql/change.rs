//! A [`Change`] of the lifecycle as one SQL `UPDATE`: its fields as the `SET` list, its guard
//! as the `WHERE` condition, the same text in both SQL stores (each names its parameters and
//! adds what it reads back).

use super::{SqlParam, append_history};
use crate::store::Columns;
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
        let mut sql =
            String::with_capacity(40 + self.set.len() + self.guard.len() + returning.len());
        sql.push_str("UPDATE runs SET ");
        sql.push_str(&self.set);
        sql.push_str(" WHERE ");
        sql.push_str(&self.guard);
        if !returning.is_empty() {
            sql.push_str(" RETURNING ");
            sql.push_str(returning);
        }
        sql
    }
}

/// The parameters of a statement being written: each value pushed is named in the text by the
/// store's placeholder (written in place, not allocated per parameter, when the store names
/// parameter n as a mark followed by n, as both SQL stores do).
struct Params {
    placeholder: fn(usize) -> String,
    /// The mark before each parameter's number (`$`, `?`), when the placeholder is such.
    mark: Option<String>,
    values: Vec<SqlParam>,
}

impl Params {
    fn new(placeholder: fn(usize) -> String) -> Self {
        let first = placeholder(1);
        let mark = first
            .strip_suffix('1')
            .filter(|m| placeholder(12) == format!("{m}12"))
            .map(str::to_owned);
        Self {
            placeholder,
            mark,
            values: Vec::with_capacity(16),
        }
    }

    /// Pushes `value` and writes its placeholder to `sql`.
    fn push(&mut self, sql: &mut String, value: SqlParam) {
        use std::fmt::Write as _;
        self.values.push(value);
        let n = self.values.len();
        match &self.mark {
            Some(mark) => {
                sql.push_str(mark);
                let _ = write!(sql, "{n}");
            }
            None => sql.push_str(&(self.placeholder)(n)),
        }
    }
}

/// The `UPDATE` pieces of `change`, naming parameter n with `placeholder(n)`: the guard's
/// first (the key `1`, then its value: a claim's token `2`), then the fields set (a new
/// request's id first: `3` after a claim's guard), so a statement around it can name them.
pub(crate) fn change_sql(change: &Change, placeholder: fn(usize) -> String) -> ChangeSql {
    let mut p = Params::new(placeholder);
    let guard = guard_sql(change, &mut p);
    let fields = &change.set;
    let mut set = String::with_capacity(256);
    // each assignment after the first is preceded by a comma
    let next = |set: &mut String| {
        if !set.is_empty() {
            set.push_str(", ");
        }
    };
    if let Some(state) = fields.state {
        next(&mut set);
        set.push_str("state = '");
        set.push_str(state.as_str());
        set.push('\'');
    }
    match &fields.lease {
        LeaseSet::Keep => {}
        LeaseSet::Clear => {
            next(&mut set);
            set.push_str("lease_owner = NULL, lease_until = NULL");
        }
        LeaseSet::Hold { owner, until } => {
            next(&mut set);
            set.push_str("lease_owner = ");
            p.push(&mut set, SqlParam::Text(owner.clone()));
            set.push_str(", lease_until = ");
            p.push(&mut set, SqlParam::Int(*until));
        }
        LeaseSet::Until(until) => {
            next(&mut set);
            set.push_str("lease_until = ");
            p.push(&mut set, SqlParam::Int(*until));
        }
    }
    text_field(&mut set, &mut p, "answer", fields.answer.as_ref());
    text_field(&mut set, &mut p, "checkpoint", fields.checkpoint.as_ref());
    if fields.claimed {
        next(&mut set);
        set.push_str("claims = claims + 1");
    }
    if let Some(cols) = &fields.request {
        next(&mut set);
        request_sql(cols, change.at, &mut p, &mut set);
    }
    text_field(&mut set, &mut p, "result", fields.result.as_ref());
    text_field(&mut set, &mut p, "votes", fields.votes.as_ref());
    if let Some(step) = &fields.escalate {
        next(&mut set);
        set.push_str("approvers = ");
        p.push(&mut set, SqlParam::Text(step.approvers.clone()));
        set.push_str(", expires_at = ");
        p.push(&mut set, SqlParam::Int(step.expires_at));
        set.push_str(", escalate = ");
        p.push(&mut set, SqlParam::MaybeText(step.rest.clone()));
    }
    next(&mut set);
    set.push_str("version = version + 1");
    if !change.events.is_empty() {
        set.push_str(", ");
        let mut param = String::with_capacity(4);
        p.push(&mut param, SqlParam::Text(change.events.clone()));
        set.push_str(&append_history(&param));
    }
    ChangeSql {
        set,
        guard,
        params: p.values,
    }
}

/// `name = <its parameter>`, after a comma unless first, when the change sets `value`.
fn text_field(set: &mut String, p: &mut Params, name: &str, value: Option<&String>) {
    if let Some(value) = value {
        if !set.is_empty() {
            set.push_str(", ");
        }
        set.push_str(name);
        set.push_str(" = ");
        p.push(set, SqlParam::Text(value.clone()));
    }
}

/// The assignments of a finish that parks the run again on the request of `cols` at `at`.
fn request_sql(cols: &Columns, at: i64, p: &mut Params, set: &mut String) {
    set.push_str("request_id = ");
    p.push(set, SqlParam::Text(cols.request_id.clone()));
    set.push_str(", kind = ");
    p.push(set, SqlParam::Text(cols.kind.clone()));
    set.push_str(", prompt = ");
    p.push(set, SqlParam::Text(cols.prompt.clone()));
    set.push_str(", expires_at = ");
    match cols.expires_at {
        Some(at) => p.push(set, SqlParam::Int(at)),
        None => set.push_str("NULL"),
    }
    set.push_str(", record = ");
    p.push(set, SqlParam::Text(cols.record.clone()));
    set.push_str(", created_at = ");
    p.push(set, SqlParam::Int(at));
    set.push_str(", answer = NULL, checkpoint = NULL, votes = NULL, approvers = ");
    p.push(set, SqlParam::MaybeText(cols.approvers.clone()));
    set.push_str(", escalate = ");
    p.push(set, SqlParam::MaybeText(cols.escalate.clone()));
}

/// The `WHERE` condition of `change`: its key, then what its guard requires.
fn guard_sql(change: &Change, p: &mut Params) -> String {
    let mut sql = String::with_capacity(96);
    match &change.key {
        Key::Run(id) => {
            sql.push_str("run_id = ");
            p.push(&mut sql, SqlParam::Text(id.clone()));
        }
        Key::Request(id) => {
            sql.push_str("request_id = ");
            p.push(&mut sql, SqlParam::Text(id.clone()));
        }
    }
    match change.guard {
        Guard::Answerable { now } => {
            sql.push_str(" AND state = 'parked' AND (expires_at IS NULL OR expires_at > ");
            p.push(&mut sql, SqlParam::Int(now));
            sql.push(')');
        }
        Guard::Parked => sql.push_str(" AND state = 'parked'"),
        Guard::Claimed { token } => {
            sql.push_str(" AND state = 'claimed' AND claims = ");
            p.push(&mut sql, SqlParam::Int(token));
        }
        Guard::Claims(claims) => {
            sql.push_str(" AND claims = ");
            p.push(&mut sql, SqlParam::Int(claims));
        }
        Guard::Version(version) => {
            sql.push_str(" AND version = ");
            p.push(&mut sql, SqlParam::Int(version));
        }
        Guard::Votable { version, now } => {
            sql.push_str(" AND version = ");
            p.push(&mut sql, SqlParam::Int(version));
            sql.push_str(" AND state = 'parked' AND (expires_at IS NULL OR expires_at > ");
            p.push(&mut sql, SqlParam::Int(now));
            sql.push(')');
        }
    }
    sql
}
