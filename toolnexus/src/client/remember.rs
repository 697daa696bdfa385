//! The loop's part of [remembered decisions](crate::remember): before a call asks for
//! approval, the store's rules may answer it; an answer that asks to be remembered becomes a
//! rule.

use std::time::SystemTime;

use serde_json::Value;

use super::Event;
use super::run::Run;
use super::state::State;
use crate::model::ToolCall;
use crate::remember::{Effect, RuleQuery, RuleStore, call_fingerprint, rule_of_answer};
use crate::request::{Answer, DeclineReason, KIND_APPROVAL, Request};
use crate::store::RunStore;

/// Where a run's remembered decisions come from and go: the store that keeps the rules, the
/// run's conversation and principal, who answered the answer it resumes with.
#[derive(Clone, Default)]
pub(super) struct Remembering<'a> {
    /// The store whose [rules](RunStore::rules) are checked and kept.
    pub(super) store: Option<&'a dyn RunStore>,
    /// The conversation the run belongs to.
    pub(super) conversation: Option<String>,
    /// Who the run is for ([`Client::for_principal`](super::Client::for_principal)), as its
    /// state (and records) keep it.
    pub(super) principal: Option<String>,
    /// Who answered the request the run resumes with, as the store recorded it.
    pub(super) answered_by: Option<String>,
    /// Who answered each other request of a together turn the run resumes with (request id,
    /// who), as the store recorded it.
    pub(super) answered_by_request: Vec<(String, String)>,
    /// Whether the run is in `store` (a claimed run): its decisions enter its history at once.
    pub(super) stored: bool,
}

impl<'a> Remembering<'a> {
    pub(super) fn rules(&self) -> Option<&'a dyn RuleStore> {
        self.store.and_then(RunStore::rules)
    }
}

impl Run<'_> {
    /// The answer a remembered rule gives to `call`'s approval `request` (made with `args`),
    /// when one covers it; emits [`Event::Decided`] and notes it in the run's history.
    pub(super) async fn remembered(
        &self,
        st: &mut State,
        call: &ToolCall,
        args: &Value,
        request: &Request,
    ) -> Option<Answer> {
        if request.kind != KIND_APPROVAL {
            return None;
        }
        let remembering = self.remembering.as_deref()?;
        let rules = remembering.rules()?;
        let fingerprint = call_fingerprint(&call.name, args);
        let query = RuleQuery::new(&call.name, &fingerprint, SystemTime::now())
            .in_conversation(remembering.conversation.as_deref())
            .for_principal(remembering.principal.as_deref());
        let rule = match rules.decide(&query).await {
            Ok(rule) => rule?,
            Err(e) => {
                // the store cannot say: a person is asked, as without rules
                tracing::warn!(target: "toolnexus", error = %e, tool = %call.name, "remembered rules could not be read; asking");
                return None;
            }
        };
        let allowed = rule.effect == Effect::Allow;
        if allowed && request.is_governed() {
            // one person's rule never stands in for the several people (or the someone
            // other than the requester) the request needs: they are asked
            return None;
        }
        self.emit(|| Event::Decided {
            id: call.id.clone(),
            name: call.name.clone(),
            request: request.clone(),
            rule: rule.id.clone(),
            allowed,
        });
        let event = crate::remember::decided_event(&request.id, &rule);
        // a claimed run's history takes it now; a fresh run's when it parks (if it does)
        let noted = remembering.stored
            && rules
                .note_decision(&st.run_id, &event)
                .await
                .unwrap_or_else(|e| {
                    tracing::warn!(target: "toolnexus", error = %e, run = %st.run_id, "a rule's decision could not be noted in the run's history");
                    true
                });
        if !noted {
            st.decided.push(event);
        }
        Some(if allowed {
            Answer::ok(&request.id)
        } else {
            Answer::decline(&request.id, DeclineReason::Declined)
        })
    }

    /// Keeps the rule `answer` asks to remember for `call` of `tool` (the person approved
    /// `args`), when it asks and the run's store keeps rules; what cannot be remembered is
    /// logged, and the answer counts all the same.
    pub(super) async fn keep_rule(
        &self,
        call: &ToolCall,
        args: &Value,
        request: &Request,
        answer: &Answer,
        arrived: SystemTime,
    ) {
        if crate::remember::Remember::of_answer(answer).is_none() {
            return;
        }
        if request.is_expired_at(arrived) {
            tracing::warn!(target: "toolnexus", request = %request.id, "the answer came after the request expired: nothing is remembered");
            return;
        }
        let r = self.remembering.as_deref();
        let Some((r, rules)) = r.and_then(|r| Some((r, r.rules()?))) else {
            tracing::warn!(target: "toolnexus", request = %request.id, "the answer asks to be remembered, but the run has no store that keeps rules");
            return;
        };
        // the rule covers the run's principal's runs, and names who really answered
        let answered_by = r
            .answered_by_request
            .iter()
            .find(|(id, _)| *id == request.id)
            .map(|(_, by)| by.as_str())
            .or(r.answered_by.as_deref());
        let rule = rule_of_answer(
            request,
            answer,
            &call.name,
            args,
            &self.id,
            r.conversation.as_deref(),
            r.principal.as_deref(),
            answered_by,
        );
        match rule {
            Ok(Some(rule)) => match rules.put_rule(&rule).await {
                Ok(()) => {}
                // kept by an earlier resume of this answer (its worker died in the call)
                Err(crate::store::StoreError::Conflict(_)) => {
                    tracing::debug!(target: "toolnexus", request = %request.id, rule = %rule.id, "the remembered rule is kept already");
                }
                Err(e) => {
                    tracing::warn!(target: "toolnexus", error = %e, request = %request.id, "the remembered rule could not be kept");
                }
            },
            Ok(None) => {}
            Err(why) => {
                tracing::warn!(target: "toolnexus", request = %request.id, why = %why, "the answer's remember was not kept");
            }
        }
    }
}
