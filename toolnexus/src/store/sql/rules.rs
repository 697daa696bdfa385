//! How a rule is kept in a row of the SQL stores, and the statements of `RuleStore` both SQL
//! stores run: the dialects differ only in how a parameter is named (and PostgreSQL's cast of the
//! history text), so the SQL text is written once here and each store binds [`RuleRow`]'s values.

use super::{SqlCols, SqlParam};
use crate::ledger::{StoreError, StoreResult, from_millis};
use crate::remember::{Effect, Rule, Scope, Within};
use crate::store::rules::ListedRow;

/// The columns, in [`RuleRow`] order.
pub(crate) const RULE_COLUMNS: &str = "id, effect, tool, scope, args, fingerprint, reach, \
     holder, ends_at, created_at, answered_by, request_id, run_id";

/// One rule's columns.
#[derive(Clone, Debug)]
pub(crate) struct RuleRow {
    pub(crate) id: String,
    pub(crate) effect: String,
    pub(crate) tool: String,
    pub(crate) scope: String,
    pub(crate) args: Option<String>,
    pub(crate) fingerprint: Option<String>,
    pub(crate) within: String,
    pub(crate) holder: String,
    pub(crate) until: Option<i64>,
    pub(crate) created_at: i64,
    pub(crate) answered_by: Option<String>,
    pub(crate) request_id: String,
    pub(crate) run_id: String,
}

impl RuleRow {
    pub(crate) fn of(rule: &Rule) -> Self {
        let millis = crate::ledger::millis;
        Self {
            id: rule.id.clone(),
            effect: rule.effect.as_str().to_owned(),
            tool: rule.tool.clone(),
            scope: rule.scope.as_str().to_owned(),
            args: rule.args.as_ref().map(ToString::to_string),
            fingerprint: rule.fingerprint.clone(),
            within: rule.within.as_str().to_owned(),
            holder: rule.holder.clone(),
            until: rule.until.map(millis),
            created_at: millis(rule.created_at),
            answered_by: rule.answered_by.clone(),
            request_id: rule.request_id.clone(),
            run_id: rule.run_id.clone(),
        }
    }

    /// The columns of `r`, in [`RULE_COLUMNS`] order; why the first that does not read fails.
    fn read(r: &dyn SqlCols) -> Result<Self, String> {
        Ok(Self {
            id: r.text(0)?,
            effect: r.text(1)?,
            tool: r.text(2)?,
            scope: r.text(3)?,
            args: r.maybe_text(4)?,
            fingerprint: r.maybe_text(5)?,
            within: r.text(6)?,
            holder: r.text(7)?,
            until: r.maybe_int(8)?,
            created_at: r.int(9)?,
            answered_by: r.maybe_text(10)?,
            request_id: r.text(11)?,
            run_id: r.text(12)?,
        })
    }

    /// The rule of row `r` as a listing reads it, or its id, `created_at` and why it does not
    /// read. A `created_at` that is no integer lists as the newest (`i64::MAX`).
    pub(crate) fn listed(r: &dyn SqlCols) -> ListedRow {
        match Self::read(r) {
            Ok(row) => {
                let (ms, id) = (row.created_at, row.id.clone());
                let rule = row.decode().map_err(|e| match e {
                    StoreError::CorruptRule { message, .. } => message,
                    other => other.to_string(),
                });
                (ms, id, rule)
            }
            Err(why) => (
                r.int(9).unwrap_or(i64::MAX),
                r.shown(0),
                Err(format!("a column does not read: {why}")),
            ),
        }
    }

    /// The row's values, in [`RULE_COLUMNS`] order: the parameters of [`RuleSql::insert`].
    pub(crate) fn params(self) -> Vec<SqlParam> {
        vec![
            SqlParam::Text(self.id),
            SqlParam::Text(self.effect),
            SqlParam::Text(self.tool),
            SqlParam::Text(self.scope),
            SqlParam::MaybeText(self.args),
            SqlParam::MaybeText(self.fingerprint),
            SqlParam::Text(self.within),
            SqlParam::Text(self.holder),
            SqlParam::MaybeInt(self.until),
            SqlParam::Int(self.created_at),
            SqlParam::MaybeText(self.answered_by),
            SqlParam::Text(self.request_id),
            SqlParam::Text(self.run_id),
        ]
    }

    /// The rule; a row that does not read as one is [`StoreError::CorruptRule`] naming it.
    pub(crate) fn decode(self) -> StoreResult<Rule> {
        let bad = |what: String| StoreError::CorruptRule {
            id: self.id.clone(),
            message: what,
        };
        let effect = Effect::parse(&self.effect)
            .ok_or_else(|| bad(format!("unknown effect `{}`", self.effect)))?;
        let scope = Scope::parse(&self.scope)
            .ok_or_else(|| bad(format!("unknown scope `{}`", self.scope)))?;
        let within = Within::parse(&self.within)
            .ok_or_else(|| bad(format!("unknown within `{}`", self.within)))?;
        let args = self
            .args
            .as_deref()
            .map(crate::limits::parse_checked)
            .transpose()
            .map_err(|e| bad(format!("arguments do not read: {e}")))?;
        if scope == Scope::Args && self.fingerprint.is_none() {
            return Err(bad("an `args` rule without its fingerprint".to_owned()));
        }
        Ok(Rule {
            id: self.id,
            effect,
            tool: self.tool,
            scope,
            args,
            fingerprint: self.fingerprint,
            within,
            holder: self.holder,
            until: self.until.map(from_millis),
            created_at: from_millis(self.created_at),
            answered_by: self.answered_by,
            request_id: self.request_id,
            run_id: self.run_id,
        })
    }
}

/// The statements of `RuleStore` in one SQL dialect.
pub(crate) struct RuleSql {
    /// Inserts a rule: the 13 values of [`RuleRow`] ([`RuleRow::params`]).
    pub(crate) insert: String,
    /// The rules that may cover a call: 1 the tool, 2 the conversation (or `NULL`), 3 the
    /// principal (or `NULL`), 4 the time (ms), 5 the call's fingerprint.
    pub(crate) candidates: String,
    /// The rule of id 1.
    pub(crate) get: String,
    /// The oldest rules, at most 1.
    pub(crate) list: String,
    /// The newest rules, at most 1.
    pub(crate) newest: String,
    /// The newest rules older than the cursor (1 its `created_at` ms, 2 its id), at most 3.
    pub(crate) older: String,
    /// Deletes the rule of id 1.
    pub(crate) revoke: String,
    /// Deletes the rules ended at or before time 1 (ms).
    pub(crate) purge: String,
    /// Appends event 2 (JSON text) to the history of run 1.
    pub(crate) note: String,
}

impl RuleSql {
    /// The statements with `placeholder(n)` naming the n-th parameter (from 1) and `text` the
    /// n-th parameter as text (PostgreSQL casts the event it appends).
    pub(crate) fn new(placeholder: fn(usize) -> String, text: fn(usize) -> String) -> Self {
        let p = placeholder;
        let values: Vec<String> = (1..=13).map(p).collect();
        Self {
            insert: format!(
                "INSERT INTO rules ({RULE_COLUMNS}) VALUES ({})",
                values.join(", ")
            ),
            candidates: candidate_rules_sql(p),
            get: format!("SELECT {RULE_COLUMNS} FROM rules WHERE id = {}", p(1)),
            list: format!(
                "SELECT {RULE_COLUMNS} FROM rules ORDER BY created_at, id LIMIT {}",
                p(1)
            ),
            newest: format!(
                "SELECT {RULE_COLUMNS} FROM rules ORDER BY created_at DESC, id DESC LIMIT {}",
                p(1)
            ),
            older: format!(
                "SELECT {RULE_COLUMNS} FROM rules
                 WHERE created_at < {ms} OR (created_at = {ms} AND id < {id})
                 ORDER BY created_at DESC, id DESC LIMIT {take}",
                ms = p(1),
                id = p(2),
                take = p(3),
            ),
            revoke: format!("DELETE FROM rules WHERE id = {}", p(1)),
            purge: format!(
                "DELETE FROM rules WHERE ends_at IS NOT NULL AND ends_at <= {}",
                p(1)
            ),
            note: format!(
                "UPDATE runs SET {} WHERE run_id = {}",
                super::append_history(&text(2)),
                p(1)
            ),
        }
    }
}

/// The statement of the rules that may cover a call: `placeholder(n)` names the n-th
/// parameter: 1 the tool, 2 the conversation (or `NULL`), 3 the principal (or `NULL`), 4 the
/// time (ms), 5 the call's fingerprint. Four index lookups (a reach and a scope each), so a
/// check reads the matching rules only, however many rules the holder has.
fn candidate_rules_sql(placeholder: fn(usize) -> String) -> String {
    let p = placeholder;
    let live = format!("(ends_at IS NULL OR ends_at > {})", p(4));
    let mut parts = Vec::with_capacity(4);
    for (reach, holder) in [("conversation", p(2)), ("principal", p(3))] {
        parts.push(format!(
            "SELECT {cols} FROM rules WHERE tool = {tool} AND reach = '{reach}' AND holder = {holder}
               AND scope = 'tool' AND {live}",
            cols = RULE_COLUMNS,
            tool = p(1),
        ));
        parts.push(format!(
            "SELECT {cols} FROM rules WHERE fingerprint = {fp} AND reach = '{reach}' AND holder = {holder}
               AND tool = {tool} AND scope = 'args' AND {live}",
            cols = RULE_COLUMNS,
            fp = p(5),
            tool = p(1),
        ));
    }
    parts.join(" UNION ALL ")
}
