//! One conformance suite for every [`RunStore`]: each store's test file calls
//! [`store_conformance!`](macro@crate::store_conformance) with a function that makes a fresh, empty
//! store (several handles onto the same data, so claims race across connections too).
//!
//! Every case and fixture here panics when the store misbehaves: that is how a test fails.
//!
//! The cases, one file per concept: the runs' life (`runs`), a takeover from the last
//! checkpoint (`takeover`), answers recorded apart from resuming and the workers' side of
//! the store (`answers`), the bounds on the strings a host hands in (`bounds`),
//! conversations (`conversations`), and the attacks on the rows of a store given seal keys
//! (`sealed`), forged rows in a store without keys (`forged`), damaged rows (`damaged`), the
//! history of answered runs (`history`), remembered decisions: the rules (`rules`), whose
//! they are (`rule_owners`), and their pages and lookups (`rule_pages`), the workers'
//! heartbeats (`workers`), and the notification outbox (`outbox`, on stores built with
//! notifiers: `store_conformance!(outbox: make)`).

// the panics are the assertions of a test suite, documented once above
#![allow(clippy::missing_panics_doc)]

use std::sync::Arc;
use std::time::{Duration, SystemTime};

use serde_json::json;
use toolnexus::store::RunStore;
use toolnexus::{
    Answer, BoxFuture, Client, FnModel, FnTool, ModelRequest, PendingRun, Reply, Request, Role,
    RunResult, RunStatus, ToolResult, Toolkit,
};

/// A store under test.
pub struct Subject {
    /// Handles onto one store's data (at least one; more for stores with connections, so
    /// concurrent claims come from different connections or processes' worth of state).
    pub handles: Vec<Arc<dyn RunStore>>,
    /// Replaces the stored record text of a run, as a damaged or older row would hold it.
    pub write_raw: Box<dyn Fn(String, String) -> BoxFuture<'static, ()> + Send + Sync>,
    /// Sets one column of a run's row (`run_id`, `column`, the text or `None` for `NULL`), as a
    /// damaged or forged row would hold it; resolves to whether the store's column could hold
    /// the value (a typed column refuses text in an integer column). Panics when the run is
    /// not stored.
    pub write_column: WriteColumn,
    /// Kept until the subject is dropped (temporary files, a schema to drop).
    pub guard: Option<Box<dyn std::any::Any + Send + Sync>>,
}

impl std::fmt::Debug for Subject {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Subject")
            .field("handles", &self.handles)
            .finish_non_exhaustive()
    }
}

impl Subject {
    /// The first handle.
    pub fn store(&self) -> &dyn RunStore {
        self.handles[0].as_ref()
    }
}

/// [`Subject::write_column`].
pub type WriteColumn =
    Box<dyn Fn(String, &'static str, Option<String>) -> BoxFuture<'static, bool> + Send + Sync>;

/// How a store test file builds its subjects: `make(lease)` gives a fresh, empty store, or
/// `None` when the store is not available here (the test then skips, saying why).
pub type Make = fn(Duration) -> BoxFuture<'static, Option<Subject>>;

/// The lease the suite runs with, except where a case sets its own.
pub const LEASE: Duration = Duration::from_secs(30);

/// Generates one `#[tokio::test]` per conformance case for the store `make` builds.
#[macro_export]
macro_rules! store_conformance {
    ($make:path) => {
        $crate::store_conformance!(@cases $make;
            park_get_claim_finish, park_twice_is_a_conflict, concurrent_claims_one_winner,
            lease_expiry_and_takeover, renewed_lease_is_kept, expiry, paging_and_filters,
            halts_again_after_its_claim, corrupt_rows_stay_local, older_record_version,
            submit_refuses_an_answered_by_over_the_limit,
            ask_refuses_a_conversation_id_over_the_limit, a_principal_over_the_limit_runs_nothing,
            wait_change_wakes_on_claim, takeover_resumes_from_the_last_checkpoint,
            conversation_turn_halts_and_the_answer_completes_it, conversation_list_trim_delete,
            conversation_settles_a_run_finished_elsewhere, submit_records_the_answer_and_who,
            claim_and_halt_again_keep_history, concurrent_submits_one_recorded,
            submit_checks_like_claim, claim_next_order_and_one_owner, release_hands_the_run_back,
            next_due_is_the_nearest_deadline, wait_for_work_wakes_on_submit,
            a_hundred_damaged_rows_never_block_a_good_one,
            a_damaged_claimed_row_leaves_the_takeover_set,
            a_run_that_keeps_crashing_its_worker_is_given_up,
            a_record_spliced_with_its_ids_rewritten_is_refused,
            a_run_whose_run_id_was_changed_is_refused,
            a_run_whose_request_id_was_changed_is_refused,
            a_damaged_answer_stays_local, a_damaged_checkpoint_stays_local,
            a_damaged_timestamp_column_stays_local, a_run_in_an_unknown_state_is_listed_damaged,
            answered_and_unknown_requests_are_told_apart,
            history_lists_answered_runs_newest_first, a_crash_cut_call_goes_to_a_person,
            an_edited_approval_cut_by_a_crash_asks_a_person_with_the_edited_args,
            an_edited_approval_cut_by_a_crash_reruns_with_the_edited_args,
            an_answer_recorded_in_time_counts_however_late_it_is_resumed,
            expiry_racing_submits_honours_every_accepted_answer,
            rules_keep_match_and_revoke,
            an_args_rule_without_its_fingerprint_is_refused_and_nothing_kept,
            a_remembered_approval_answers_the_next_call,
            deny_principal_and_expiry_through_the_loop, only_approvals_are_remembered,
            a_tools_own_approval_is_answered_by_a_rule,
            an_answerer_cannot_grant_a_standing_rule_for_another_principal,
            a_run_for_nobody_takes_no_principals_rule,
            rules_are_listed_newest_first_and_paged,
            the_approval_check_reads_only_the_calls_candidates,
            heartbeats_name_the_worker_seen_last, a_running_worker_records_its_heartbeat);
    };
    (sealed: $make:ident) => {
        /// The cases again, and the attacks on rows, on a store given seal keys
        /// ([`seal_key`](crate::store_conformance::seal_key) seals,
        /// [`retired_key`](crate::store_conformance::retired_key) still opens).
        mod sealed {
            $crate::store_conformance!(@cases super::$make;
                park_get_claim_finish, takeover_resumes_from_the_last_checkpoint,
                a_crash_cut_call_goes_to_a_person,
                an_edited_approval_cut_by_a_crash_asks_a_person_with_the_edited_args,
                halts_again_after_its_claim, lease_expiry_and_takeover, expiry,
                a_record_spliced_from_another_row_is_refused,
                an_unsealed_record_in_a_sealed_store_is_refused,
                an_edited_sealed_record_is_refused,
                a_record_sealed_with_an_unknown_key_is_refused,
                a_record_sealed_with_a_retired_key_opens,
                an_unsealed_answer_in_a_sealed_store_is_refused,
                a_damaged_answer_stays_local, a_damaged_checkpoint_stays_local);
        }
    };
    (votes: $make:ident) => {
        /// Governed approvals: several approvers, not by the requester.
        mod votes {
            $crate::store_conformance!(@cases super::$make;
                a_second_approval_runs_the_call_once, the_same_person_twice_counts_once,
                one_decline_declines, an_edit_is_a_new_call_the_others_approve_again,
                the_requester_is_refused_and_nothing_is_recorded, racing_votes_all_count);
        }
    };
    (votes_sealed: $make:ident) => {
        /// Governed approvals on a store given seal keys: the cases again, and votes edited
        /// at rest.
        mod votes_sealed {
            $crate::store_conformance!(@cases super::$make;
                a_second_approval_runs_the_call_once, an_edit_is_a_new_call_the_others_approve_again,
                a_vote_edited_at_rest_is_refused);
        }
    };
    (outbox: $make:ident) => {
        /// The notification outbox, on a store built with the notifiers
        /// [`NOTIFIERS`](crate::store_conformance::NOTIFIERS).
        mod outbox {
            $crate::store_conformance!(@cases super::$make;
                a_park_writes_one_notification_per_notifier,
                a_failing_receiver_gets_it_on_retry,
                a_deliverer_that_dies_mid_delivery_leaves_it_to_the_next,
                a_refused_or_exhausted_notification_is_given_up_visibly,
                a_notification_whose_deliverers_keep_dying_is_given_up,
                an_answered_request_is_not_notified,
                an_attempt_is_recorded_by_its_owner_once_even_after_its_run_is_deleted);
        }
    };
    (governed: $make:ident, $notifying:ident) => {
        /// Governed approvals: groups and escalation (`governed`), and the escalation's
        /// notifications on the store built with notifiers.
        mod governed {
            $crate::store_conformance!(@cases super::$make;
                a_group_lists_and_answers_only_its_own_requests,
                an_escalated_request_answered_in_time_runs_the_tool_once,
                the_last_steps_deadline_declines, two_sweeps_escalate_each_run_once,
                a_late_answer_before_the_sweep_does_not_skip_the_escalation);
            $crate::store_conformance!(@cases super::$notifying;
                an_escalation_notifies_each_notifier_once);
        }
    };
    (together: $make:ident) => {
        $crate::store_conformance!(together in together: $make);
    };
    (together in $module:ident: $make:ident) => {
        /// A turn's questions together: a run parked with every request of its turn.
        mod $module {
            $crate::store_conformance!(@cases super::$make;
                together_answers_in_any_order_and_the_run_is_answered_only_when_all_are,
                together_each_answer_is_checked_on_its_own,
                together_a_worker_resumes_it_once_with_every_answer,
                together_a_claim_before_the_last_answer_records_it_and_claims_nothing,
                together_a_request_another_run_holds_is_refused_and_nothing_of_the_turn_kept,
                together_a_first_answer_recorded_before_the_run_expires_still_counts,
                together_a_refused_park_leaves_no_run_to_answer,
                together_a_requesters_answer_to_a_governed_approval_in_the_turn_is_refused,
                together_a_groups_request_in_the_turn_is_answered_only_by_the_group,
                together_one_acceptance_does_not_answer_an_approval_needing_two_in_the_turn,
                together_an_escalated_first_request_takes_the_next_groups_answer_in_time,
                together_a_deleted_runs_requests_are_free_again,
                together_a_finish_parking_on_a_held_request_is_refused_and_changes_nothing);
        }
    };
    (@cases $make:path; $($case:ident),*) => {
        $(
            #[tokio::test(flavor = "multi_thread", worker_threads = 4)]
            async fn $case() {
                $crate::store_conformance::$case($make).await;
            }
        )*
    };
}

/// A scripted agent: the model calls `ask` until `halts` tool results are in the transcript,
/// then answers `done: <last tool result>`.
#[derive(Clone, Debug)]
pub struct Agent {
    /// How many times the run halts in all.
    pub halts: usize,
    /// The kind of the requests.
    pub kind: String,
    /// `expiresAt` relative to the halt, in ms (negative: already expired).
    pub expires_ms: Option<i64>,
}

impl Agent {
    /// An agent that halts once on an `input` request.
    pub fn once() -> Self {
        Self {
            halts: 1,
            kind: "input".to_owned(),
            expires_ms: None,
        }
    }

    /// The toolkit with the `ask` tool.
    pub fn toolkit() -> Toolkit {
        let ask = FnTool::builder("ask")
            .description("Asks the user a question.")
            .handler(|args, ctx| async move {
                if let Some(answer) = ctx.answer() {
                    let data = answer.data.clone().unwrap_or(json!(null));
                    return ToolResult::success(format!("hello {data}"));
                }
                let kind = args
                    .get("kind")
                    .and_then(serde_json::Value::as_str)
                    .unwrap_or("input")
                    .to_owned();
                let mut request = Request::new(kind, "What is your name?");
                if let Some(ms) = args.get("expires_ms").and_then(serde_json::Value::as_i64) {
                    let now = SystemTime::now();
                    let delta = Duration::from_millis(ms.unsigned_abs());
                    let at = if ms < 0 { now - delta } else { now + delta };
                    request = request.with_expires_at(at);
                }
                ToolResult::suspended(request)
            })
            .build()
            .expect("the ask tool builds");
        Toolkit::builder()
            .tool(ask)
            .build()
            .expect("the toolkit builds")
    }

    /// A client for this agent (no `wait_for`: a suspension halts the run).
    pub fn client(&self) -> Client {
        Client::builder(self.model())
            .model_name("conformance")
            .build()
            .expect("the client builds")
    }

    /// The agent's model: stateless, it decides from the transcript alone.
    pub fn model(&self) -> FnModel {
        let (halts, kind, expires_ms) = (self.halts, self.kind.clone(), self.expires_ms);
        FnModel::new(move |req: ModelRequest| {
            let kind = kind.clone();
            async move {
                let results: Vec<_> = req
                    .messages
                    .iter()
                    .filter(|m| m.role == Role::Tool)
                    .collect();
                if results.len() < halts {
                    Reply::tool_call("ask", json!({"kind": kind, "expires_ms": expires_ms}))
                } else {
                    let last = results
                        .last()
                        .and_then(|m| m.content.clone())
                        .unwrap_or_default();
                    Reply::text(format!("done: {last}"))
                }
            }
        })
    }

    /// Runs the agent until it halts; returns the parked record.
    pub async fn halt(&self) -> PendingRun {
        let result = self
            .client()
            .run("Greet me.", &Self::toolkit())
            .await
            .expect("the run halts");
        assert_eq!(result.status, RunStatus::Pending, "{result:?}");
        PendingRun::try_from(result).expect("a halted run makes a record")
    }

    /// Resumes a claimed record with its answer.
    pub async fn resume(&self, record: &PendingRun, answer: Answer) -> RunResult {
        self.client()
            .resume(record.clone(), answer, &Self::toolkit())
            .await
            .expect("the resume runs")
    }
}

pub(crate) async fn make_subject(make: Make, lease: Duration) -> Option<Subject> {
    make(lease).await
}

macro_rules! subject {
    ($make:expr) => {
        subject!($make, LEASE)
    };
    ($make:expr, $lease:expr) => {
        match make_subject($make, $lease).await {
            Some(s) => s,
            None => return,
        }
    };
}

mod answers;
mod bounds;
mod conversations;
mod damaged;
mod deadlines;
mod edited;
mod forged;
mod governed;
mod history;
mod outbox;
mod queue;
mod reconcile;
mod rows;
mod rule_owners;
mod rule_pages;
mod rules;
mod rules_loop;
mod runs;
mod sealed;
mod seams;
mod takeover;
mod together;
mod votes;
mod workers;

pub use answers::*;
pub use bounds::*;
pub use conversations::*;
pub use damaged::*;
pub use deadlines::*;
pub use edited::*;
pub use forged::*;
pub use governed::*;
pub use history::*;
pub use outbox::*;
pub use queue::*;
pub use reconcile::*;
pub use rows::*;
pub use rule_owners::*;
pub use rule_pages::*;
pub use rules::*;
pub use rules_loop::*;
pub use runs::*;
pub use sealed::*;
pub use seams::*;
pub use takeover::*;
pub use together::*;
pub use votes::*;
pub use workers::*;
