//! How a rule is kept in a row of the SQL stores.

use super::{Effect, Rule, Scope, Within};
use crate::ledger::{StoreError, StoreResult, from_millis};

/// The columns, in [`RuleRow`] order.
pub(crate) const RULE_COLUMNS: &str = "id, effect, tool, scope, args, fingerprint, reach, \
     holder, ends_at, created_at, answered_by, request_id, run_id";

/// One row of a listing: `(created_at ms, id, the rule or why its row cannot be read)`.
pub(crate) type ListedRow = (i64, String, Result<Rule, String>);

/// A listed row of `read` (its columns, or the id, `created_at` and why they do not read).
pub(crate) fn listed(read: Result<RuleRow, (String, i64, String)>) -> ListedRow {
    match read {
        Ok(row) => {
            let (ms, id) = (row.created_at, row.id.clone());
            let rule = row.decode().map_err(|e| match e {
                StoreError::CorruptRule { message, .. } => message,
                other => other.to_string(),
            });
            (ms, id, rule)
        }
        Err((id, ms, why)) => (ms, id, Err(why)),
    }
}

/// The rules of `rows`, a damaged one left out (and logged).
pub(crate) fn readable(rows: impl Iterator<Item = ListedRow>) -> Vec<Rule> {
    rows.filter_map(|(_, id, rule)| {
        rule.map_err(|why| {
            tracing::warn!(target: "toolnexus", rule = %id, why = %why, "a kept rule cannot be read: left out of the listing");
        })
        .ok()
    })
    .collect()
}

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
            .map(serde_json::from_str)
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
