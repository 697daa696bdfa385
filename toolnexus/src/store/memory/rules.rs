//! The [remembered decisions](crate::remember) a [`MemoryStore`] keeps beside its runs: the
//! rules' [driver](RuleDriver) over maps with the indexes the approval check and the listing
//! read; [`RuleStore`](crate::remember::RuleStore) itself is written once ([`rule_store!`]).

use std::collections::{BTreeMap, BTreeSet, HashMap};

use super::MemoryStore;
use crate::remember::{Rule, Scope, Within};
use crate::store::lifecycle::rules::RuleChange;
use crate::store::rules::{ListedRow, RuleDriver, RuleRead, rule_store};
use crate::store::{StoreResult, millis};
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

/// `rule` as a listing reads it.
fn listed(rule: &Rule) -> ListedRow {
    (millis(rule.created_at), rule.id.clone(), Ok(rule.clone()))
}

/// `n` as a count of changes.
fn count(n: usize) -> u64 {
    u64::try_from(n).unwrap_or(u64::MAX)
}

impl RuleRows {
    /// Keeps `rule` unless its id is kept already; whether it was.
    fn insert(&mut self, rule: &Rule) -> bool {
        if self.rows.contains_key(&rule.id) {
            return false;
        }
        self.keyed
            .entry(key_of(rule))
            .or_default()
            .insert(rule.id.clone());
        self.aged.insert((millis(rule.created_at), rule.id.clone()));
        self.rows.insert(rule.id.clone(), rule.clone());
        true
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

    /// The rules `read` selects.
    fn read(&self, read: &RuleRead<'_>) -> Vec<ListedRow> {
        let by_age = |keys: &mut dyn Iterator<Item = &(i64, String)>, take: usize| -> Vec<_> {
            keys.take(take)
                .filter_map(|(_, id)| self.rows.get(id).map(listed))
                .collect()
        };
        match read {
            RuleRead::Candidates(call) => {
                let mut found = Vec::new();
                for (within, holder) in [
                    (Within::Conversation, call.conversation),
                    (Within::Principal, call.principal),
                ] {
                    let Some(holder) = holder else { continue };
                    for fingerprint in [None, Some(call.fingerprint.to_owned())] {
                        let key = (call.tool.to_owned(), within, holder.to_owned(), fingerprint);
                        found.extend(self.under(&key).map(listed));
                    }
                }
                found
            }
            RuleRead::Get(id) => self.rows.get(*id).map(listed).into_iter().collect(),
            RuleRead::Oldest(limit) => by_age(&mut self.aged.iter(), *limit),
            RuleRead::Newest { after, take } => {
                let mut newest = self.aged.iter().rev();
                match after {
                    Some((ms, id)) => {
                        by_age(&mut newest.skip_while(|k| (k.0, &k.1) >= (*ms, id)), *take)
                    }
                    None => by_age(&mut newest, *take),
                }
            }
        }
    }
}

impl RuleDriver for MemoryStore {
    fn read_rules<'a>(&'a self, read: RuleRead<'a>) -> BoxFuture<'a, StoreResult<Vec<ListedRow>>> {
        Box::pin(async move { Ok(self.rule_rows().read(&read)) })
    }

    fn change_rules<'a>(&'a self, change: RuleChange<'a>) -> BoxFuture<'a, StoreResult<u64>> {
        Box::pin(async move {
            Ok(match change {
                RuleChange::Insert(rule) => u64::from(self.rule_rows().insert(rule)),
                RuleChange::Delete(id) => u64::from(self.rule_rows().remove(id).is_some()),
                RuleChange::Purge(at) => {
                    let mut rules = self.rule_rows();
                    let ended: Vec<String> = rules
                        .rows
                        .values()
                        .filter(|r| r.until.is_some_and(|until| millis(until) <= at))
                        .map(|r| r.id.clone())
                        .collect();
                    for id in &ended {
                        rules.remove(id);
                    }
                    count(ended.len())
                }
                RuleChange::Note { run_id, event } => {
                    let mut rows = self.rows();
                    let Some(row) = rows.by_id.get_mut(run_id) else {
                        return Ok(0);
                    };
                    row.append(&event);
                    1
                }
            })
        })
    }
}

rule_store!(MemoryStore);
