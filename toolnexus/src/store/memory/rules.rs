//! The [remembered decisions](crate::remember) a [`MemoryStore`] keeps beside its runs.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::time::SystemTime;

use super::MemoryStore;
use crate::remember::{Rule, RulePage, RuleQuery, RuleStore, Scope, Within};
use crate::store::{RunEvent, StoreError, StoreResult, millis};
use crate::util::BoxFuture;

/// Where a rule is found by the approval check: its tool, reach and holder, and for an
/// `args` rule its fingerprint (`None`: a `tool` rule).
type Key = (String, Within, String, Option<String>);

/// The rules, by id, with the indexes the approval check and the listing read: a check
/// looks up the rules of its call's key only, a page walks the rules by age.
#[derive(Default)]
pub(super) struct RuleRows {
    rows: BTreeMap<String, Rule>,
    keyed: HashMap<Key, BTreeSet<String>>,
    /// `(created_at ms, id)`.
    aged: BTreeSet<(i64, String)>,
}

fn key_of(rule: &Rule) -> Key {
    (
        rule.tool.clone(),
        rule.within,
        rule.holder.clone(),
        match rule.scope {
            Scope::Args => rule.fingerprint.clone(),
            Scope::Tool => None,
        },
    )
}

impl RuleRows {
    fn contains(&self, id: &str) -> bool {
        self.rows.contains_key(id)
    }

    fn insert(&mut self, rule: Rule) {
        self.keyed
            .entry(key_of(&rule))
            .or_default()
            .insert(rule.id.clone());
        self.aged.insert((millis(rule.created_at), rule.id.clone()));
        self.rows.insert(rule.id.clone(), rule);
    }

    fn remove(&mut self, id: &str) -> Option<Rule> {
        let rule = self.rows.remove(id)?;
        let key = key_of(&rule);
        if let Some(ids) = self.keyed.get_mut(&key) {
            ids.remove(id);
            if ids.is_empty() {
                self.keyed.remove(&key);
            }
        }
        self.aged
            .remove(&(millis(rule.created_at), rule.id.clone()));
        Some(rule)
    }

    /// The rules kept under `key`.
    fn under(&self, key: &Key) -> impl Iterator<Item = &Rule> {
        self.keyed
            .get(key)
            .into_iter()
            .flatten()
            .filter_map(|id| self.rows.get(id))
    }
}

impl RuleStore for MemoryStore {
    fn put_rule<'a>(&'a self, rule: &'a Rule) -> BoxFuture<'a, StoreResult<()>> {
        Box::pin(async move {
            let mut rules = self.rule_rows();
            if rules.contains(&rule.id) {
                return Err(StoreError::Conflict(format!(
                    "rule `{}` is already kept",
                    rule.id
                )));
            }
            rules.insert(rule.clone());
            Ok(())
        })
    }

    fn candidate_rules<'a>(
        &'a self,
        call: &'a RuleQuery<'a>,
    ) -> BoxFuture<'a, StoreResult<Vec<Rule>>> {
        Box::pin(async move {
            let rules = self.rule_rows();
            let mut found = Vec::new();
            for (within, holder) in [
                (Within::Conversation, call.conversation),
                (Within::Principal, call.principal),
            ] {
                let Some(holder) = holder else { continue };
                for fingerprint in [None, Some(call.fingerprint.to_owned())] {
                    let key = (call.tool.to_owned(), within, holder.to_owned(), fingerprint);
                    found.extend(
                        rules
                            .under(&key)
                            .filter(|r| !r.is_expired_at(call.at))
                            .cloned(),
                    );
                }
            }
            Ok(found)
        })
    }

    fn get_rule<'a>(&'a self, id: &'a str) -> BoxFuture<'a, StoreResult<Option<Rule>>> {
        Box::pin(async move { Ok(self.rule_rows().rows.get(id).cloned()) })
    }

    fn list_rules(&self, limit: usize) -> BoxFuture<'_, StoreResult<Vec<Rule>>> {
        Box::pin(async move {
            let rows = self.rule_rows();
            Ok(rows
                .aged
                .iter()
                .take(limit)
                .filter_map(|(_, id)| rows.rows.get(id).cloned())
                .collect())
        })
    }

    fn list_rules_page<'a>(
        &'a self,
        after: Option<&'a str>,
        limit: usize,
    ) -> BoxFuture<'a, StoreResult<RulePage>> {
        Box::pin(async move {
            let after = crate::remember::decode_rule_cursor(after)?;
            let rows = self.rule_rows();
            let mut newest = rows.aged.iter().rev();
            let page: Vec<&(i64, String)> = match &after {
                Some(cursor) => newest
                    .by_ref()
                    .skip_while(|k| (k.0, &k.1) >= (cursor.0, &cursor.1))
                    .take(limit.max(1) + 1)
                    .collect(),
                None => newest.take(limit.max(1) + 1).collect(),
            };
            let rules = page
                .iter()
                .filter_map(|(ms, id)| rows.rows.get(id).map(|r| (*ms, r.clone())));
            Ok(RulePage::of(
                rules.map(|(ms, r)| (ms, r.id.clone(), Ok(r))),
                limit,
            ))
        })
    }

    fn revoke_rule<'a>(&'a self, id: &'a str) -> BoxFuture<'a, StoreResult<bool>> {
        Box::pin(async move { Ok(self.rule_rows().remove(id).is_some()) })
    }

    fn purge_expired_rules(&self, now: SystemTime) -> BoxFuture<'_, StoreResult<u64>> {
        Box::pin(async move {
            let mut rules = self.rule_rows();
            let ended: Vec<String> = rules
                .rows
                .values()
                .filter(|r| r.is_expired_at(now))
                .map(|r| r.id.clone())
                .collect();
            for id in &ended {
                rules.remove(id);
            }
            Ok(u64::try_from(ended.len()).unwrap_or(u64::MAX))
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
