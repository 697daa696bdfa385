//! The [remembered decisions](crate::remember) a [`MemoryStore`] keeps beside its runs.

use std::time::SystemTime;

use super::MemoryStore;
use crate::remember::{Rule, RuleQuery, RuleStore, Within};
use crate::store::{RunEvent, StoreError, StoreResult};
use crate::util::BoxFuture;

impl RuleStore for MemoryStore {
    fn put_rule<'a>(&'a self, rule: &'a Rule) -> BoxFuture<'a, StoreResult<()>> {
        Box::pin(async move {
            let mut rules = self.rule_rows();
            if rules.contains_key(&rule.id) {
                return Err(StoreError::Conflict(format!(
                    "rule `{}` is already kept",
                    rule.id
                )));
            }
            rules.insert(rule.id.clone(), rule.clone());
            Ok(())
        })
    }

    fn candidate_rules<'a>(
        &'a self,
        call: &'a RuleQuery<'a>,
    ) -> BoxFuture<'a, StoreResult<Vec<Rule>>> {
        Box::pin(async move {
            Ok(self
                .rule_rows()
                .values()
                .filter(|r| {
                    let holder = match r.within {
                        Within::Conversation => call.conversation,
                        Within::Principal => call.principal,
                    };
                    r.tool == call.tool
                        && holder == Some(r.holder.as_str())
                        && !r.is_expired_at(call.at)
                })
                .cloned()
                .collect())
        })
    }

    fn get_rule<'a>(&'a self, id: &'a str) -> BoxFuture<'a, StoreResult<Option<Rule>>> {
        Box::pin(async move { Ok(self.rule_rows().get(id).cloned()) })
    }

    fn list_rules(&self, limit: usize) -> BoxFuture<'_, StoreResult<Vec<Rule>>> {
        Box::pin(async move {
            let mut rules: Vec<Rule> = self.rule_rows().values().cloned().collect();
            rules.sort_by(|a, b| (a.created_at, &a.id).cmp(&(b.created_at, &b.id)));
            rules.truncate(limit);
            Ok(rules)
        })
    }

    fn revoke_rule<'a>(&'a self, id: &'a str) -> BoxFuture<'a, StoreResult<bool>> {
        Box::pin(async move { Ok(self.rule_rows().remove(id).is_some()) })
    }

    fn purge_expired_rules(&self, now: SystemTime) -> BoxFuture<'_, StoreResult<u64>> {
        Box::pin(async move {
            let mut rules = self.rule_rows();
            let before = rules.len();
            rules.retain(|_, r| !r.is_expired_at(now));
            Ok(u64::try_from(before - rules.len()).unwrap_or(u64::MAX))
        })
    }

    fn note_decision<'a>(
        &'a self,
        run_id: &'a str,
        event: &'a RunEvent,
    ) -> BoxFuture<'a, StoreResult<bool>> {
        Box::pin(async move {
            let mut rows = self.rows();
            let Some(row) = rows.by_id.get_mut(run_id) else {
                return Ok(false);
            };
            row.append(&event.json());
            Ok(true)
        })
    }
}
