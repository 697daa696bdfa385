//! Answers recorded apart from resuming, and the workers' side of the store: `submit` and
//! `claim` (one statement each), expiry, `claim_next` (`FOR UPDATE SKIP LOCKED`, one
//! statement), `release`, `next_due`, and the work channel's `NOTIFY`.

use std::time::SystemTime;

use tokio_postgres::types::ToSql;

use super::rows::{raw, raw_at, raw_info};
use super::{PostgresStore, pg};
use crate::request::Answer;
use crate::store::sql::{COLUMNS, INFO_COLUMNS, append_history};
use crate::store::{
    Claim, RawRow, RunEvent, RunEventKind, RunState, StoreError, StoreResult, events_json,
    expired_answer, from_millis, lease_ms, now_ms, past_refusal, refusal, takeover_claim,
    takeover_event,
};

/// What an answer does to a parked run: claims it for a worker, or records it (by whom).
#[derive(Clone, Copy)]
pub(super) enum Answering<'a> {
    Claim(&'a str),
    Submit(&'a str),
}

/// A history without the events `fragment` just appended to it.
fn history_without(history: &str, fragment: &str) -> String {
    let kept = history
        .strip_suffix(']')
        .and_then(|h| h.strip_suffix(fragment))
        .map_or("[", |h| h.strip_suffix(',').unwrap_or(h));
    format!("{kept}]")
}

impl PostgresStore {
    /// Tells the workers of every process that a run may need one (a `NOTIFY` of the work
    /// channel, and this process's wake-up).
    pub(super) async fn tell_workers(&self, client: &deadpool_postgres::Object) -> StoreResult<()> {
        self.work.notify();
        client
            .execute(&format!("SELECT {}", self.work_expr()), &[])
            .await
            .map_err(|e| pg(&e))?;
        Ok(())
    }

    /// Tells the workers of every process that a run may need one: the `NOTIFY` of the work
    /// channel (an SQL expression), and this process's own wake-up.
    fn work_expr(&self) -> String {
        format!("pg_notify('{}', '')", self.work_channel)
    }

    /// The statement of an answer: one `UPDATE` of the parked row (concurrent answers queue
    /// on the row lock, and all but the first find the row no longer parked). Parameters:
    /// `$1` request id, `$2` answer, `$3` now, `$4` the history's new events, and for a
    /// claim `$5` owner, `$6` lease end.
    fn answer_sql(&self, how: Answering<'_>) -> String {
        let (set, work) = match how {
            Answering::Claim(_) => (
                "state = 'claimed', lease_owner = $5, lease_until = $6, claims = claims + 1",
                String::new(),
            ),
            Answering::Submit(_) => ("state = 'answered'", format!(", {}", self.work_expr())),
        };
        format!(
            "UPDATE runs SET {set}, answer = $2, version = version + 1, {}
             WHERE request_id = $1 AND state = 'parked'
               AND (expires_at IS NULL OR expires_at > $3)
             RETURNING {COLUMNS}, {}{work}",
            append_history("$4"),
            self.notify_expr("runs.run_id")
        )
    }

    /// An answer's effect on its run after `claim`'s checks: claimed for `owner` (with the
    /// claim), or recorded as answered by `by`.
    pub(super) async fn answer_now(
        &self,
        answer: &Answer,
        how: Answering<'_>,
    ) -> StoreResult<(RawRow, Option<Claim>)> {
        let mut client = self.client().await?;
        let now = now_ms();
        let until = now.saturating_add(lease_ms(self.lease));
        let answered = RunEvent::new(RunEventKind::Answered, now).request(&answer.id);
        let fragment = match how {
            Answering::Claim(owner) => events_json(&[
                answered.by(owner),
                RunEvent::new(RunEventKind::Claimed, now).by(owner),
            ]),
            Answering::Submit(by) => answered.by(by).json(),
        };
        let stmt = client
            .prepare_cached(&self.answer_sql(how))
            .await
            .map_err(|e| pg(&e))?;
        let json = self.seal.answer(answer);
        let changed = match how {
            Answering::Claim(owner) => {
                let params: [&(dyn ToSql + Sync); 6] =
                    [&answer.id, &json, &now, &fragment, &owner, &until];
                client.query_opt(&stmt, &params).await
            }
            Answering::Submit(_) => {
                client
                    .query_opt(&stmt, &[&answer.id, &json, &now, &fragment])
                    .await
            }
        }
        .map_err(|e| pg(&e))?;
        let Some(row) = changed else {
            return self.refuse(&mut client, answer, now).await;
        };
        let mut row = raw(&row);
        let stored_claims = row.claims;
        let read = match how {
            Answering::Claim(owner) => {
                // the row as it was before this claim counted
                row.claims -= 1;
                row.claim(&self.seal, owner, until, answer.clone(), false, true)
                    .map(|mut claim| {
                        claim.answered_at = Some(from_millis(now));
                        Some(claim)
                    })
            }
            Answering::Submit(_) => row.record(&self.seal).map(|_| None),
        };
        match read {
            Ok(claim) => {
                if claim.is_none() {
                    self.work.notify();
                }
                Ok((row, claim))
            }
            Err(corrupt) => {
                // an unreadable record: hand the run back, parked as it was
                let history = history_without(&row.history, &fragment);
                client
                    .execute(
                        "UPDATE runs SET state = 'parked', lease_owner = NULL,
                             lease_until = NULL, answer = NULL, claims = $3, history = $4,
                             version = version + 1
                         WHERE run_id = $1 AND state IN ('claimed', 'answered') AND claims = $2",
                        &[&row.run_id, &stored_claims, &row.claims, &history],
                    )
                    .await
                    .map_err(|e| pg(&e))?;
                Err(corrupt)
            }
        }
    }

    /// Why an answer changed nothing: no such request, answered already, or expired (which
    /// it marks).
    async fn refuse<T>(
        &self,
        client: &mut deadpool_postgres::Object,
        answer: &Answer,
        now: i64,
    ) -> StoreResult<T> {
        let tx = client.transaction().await.map_err(|e| pg(&e))?;
        let Some(current) = tx
            .query_opt(
                "SELECT run_id, state, expires_at FROM runs WHERE request_id = $1 FOR UPDATE",
                &[&answer.id],
            )
            .await
            .map_err(|e| pg(&e))?
        else {
            // an earlier request of a run that went on, or none at all
            let past = tx
                .query_opt(
                    &format!(
                        "SELECT {INFO_COLUMNS} FROM runs
                         WHERE run_id = (SELECT run_id FROM past_requests WHERE request_id = $1)"
                    ),
                    &[&answer.id],
                )
                .await
                .map_err(|e| pg(&e))?;
            return Err(match past {
                Some(run) => past_refusal(&raw_info(&run), &answer.id),
                None => StoreError::NotFound {
                    key: answer.id.clone(),
                },
            });
        };
        let run_id: String = current.get(0);
        let state_text: String = current.get(1);
        let state = RunState::parse(&state_text).ok_or_else(|| StoreError::Corrupt {
            run_id: run_id.clone(),
            message: format!("unknown state `{state_text}`"),
        })?;
        if state == RunState::Parked {
            // parked but past `expiresAt`: the answer becomes declined/expired
            self.mark_expired(&tx, &run_id, &answer.id, now).await?;
            tx.commit().await.map_err(|e| pg(&e))?;
            self.work.notify();
            return Err(StoreError::Expired { run_id });
        }
        Err(refusal(&run_id, &answer.id, state))
    }

    /// Marks a parked run expired (its answer becomes `declined/expired`), notifying its
    /// waiters and the workers.
    pub(super) async fn mark_expired(
        &self,
        tx: &deadpool_postgres::Transaction<'_>,
        run_id: &str,
        request_id: &str,
        now: i64,
    ) -> StoreResult<()> {
        let stmt = tx
            .prepare_cached(&format!(
                "WITH u AS (UPDATE runs SET state = 'expired', answer = $2,
                     version = version + 1, {}
                 WHERE run_id = $1 AND state = 'parked' RETURNING run_id)
                 SELECT {}, {} FROM u",
                append_history("$3"),
                self.notify_expr("u.run_id"),
                self.work_expr()
            ))
            .await
            .map_err(|e| pg(&e))?;
        let event = RunEvent::new(RunEventKind::Expired, now)
            .request(request_id)
            .json();
        tx.execute(
            &stmt,
            &[&run_id, &expired_answer(&self.seal, request_id), &event],
        )
        .await
        .map_err(|e| pg(&e))?;
        Ok(())
    }

    /// The body of [`RunStore::expire`](crate::store::RunStore::expire): the due rows, then
    /// one `UPDATE` of them all (their answers and history events made here, passed as
    /// arrays), so a burst of expiries costs three round trips rather than one per run.
    pub(super) async fn expire_now(&self) -> StoreResult<Vec<String>> {
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(|e| pg(&e))?;
        let due = tx
            .query(
                "SELECT run_id, request_id FROM runs
                 WHERE state = 'parked' AND expires_at <= $1
                 ORDER BY run_id FOR UPDATE SKIP LOCKED",
                &[&now_ms()],
            )
            .await
            .map_err(|e| pg(&e))?;
        if due.is_empty() {
            return Ok(Vec::new());
        }
        let now = now_ms();
        let mut ids = Vec::with_capacity(due.len());
        let mut answers = Vec::with_capacity(due.len());
        let mut events = Vec::with_capacity(due.len());
        for row in &due {
            let (run_id, request_id): (String, String) = (row.get(0), row.get(1));
            answers.push(expired_answer(&self.seal, &request_id));
            events.push(
                RunEvent::new(RunEventKind::Expired, now)
                    .request(&request_id)
                    .json(),
            );
            ids.push(run_id);
        }
        let stmt = tx
            .prepare_cached(&format!(
                "WITH u AS (UPDATE runs SET state = 'expired', answer = x.answer,
                     version = version + 1, {}
                 FROM unnest($1::text[], $2::text[], $3::text[]) AS x(run_id, answer, event)
                 WHERE runs.run_id = x.run_id AND runs.state = 'parked'
                 RETURNING runs.run_id)
                 SELECT u.run_id, {}, {} FROM u",
                append_history("x.event"),
                self.notify_expr("u.run_id"),
                self.work_expr()
            ))
            .await
            .map_err(|e| pg(&e))?;
        let mut expired: Vec<String> = tx
            .query(&stmt, &[&ids, &answers, &events])
            .await
            .map_err(|e| pg(&e))?
            .iter()
            .map(|r| r.get(0))
            .collect();
        tx.commit().await.map_err(|e| pg(&e))?;
        expired.sort_unstable();
        if !expired.is_empty() {
            self.work.notify();
        }
        Ok(expired)
    }

    /// Claims one run for `owner` in one statement: the first of `pick` (a `SELECT run_id`
    /// with `FOR UPDATE SKIP LOCKED`, whose `$1` is now), so concurrent workers never wait on
    /// each other. A row that cannot be read is marked damaged at once (logged), so it
    /// never blocks the others.
    async fn claim_picked(&self, owner: &str, pick: &str) -> StoreResult<Option<Claim>> {
        loop {
            match self.claim_picked_once(owner, pick).await? {
                Picked::Claim(claim) => return Ok(Some(*claim)),
                // marked damaged: pick again
                Picked::Damaged => {}
                Picked::Nothing => return Ok(None),
            }
        }
    }

    /// One pick of [`claim_picked`](Self::claim_picked).
    async fn claim_picked_once(&self, owner: &str, pick: &str) -> StoreResult<Picked> {
        let client = self.client().await?;
        let now = now_ms();
        let until = now.saturating_add(lease_ms(self.lease));
        let stmt = client
            .prepare_cached(&format!(
                "WITH p AS ({pick}),
                 u AS (UPDATE runs SET state = 'claimed', lease_owner = $2, lease_until = $3,
                     claims = claims + 1, version = version + 1, {}
                 FROM p WHERE runs.run_id = p.run_id
                 RETURNING p.state AS was, {})
                 SELECT u.*, {} FROM u",
                append_history(&format!(
                    "(CASE WHEN p.state = 'claimed'
                         THEN left($4::text, -1) || ',\"attempt\":' || {}::text || '}}'
                         ELSE $5::text END)",
                    attempt_expr("runs.history")
                )),
                COLUMNS
                    .split(", ")
                    .map(|c| format!("runs.{c}"))
                    .collect::<Vec<_>>()
                    .join(", "),
                self.notify_expr("u.run_id")
            ))
            .await
            .map_err(|e| pg(&e))?;
        let taken = RunEvent::new(RunEventKind::TakenOver, now).by(owner).json();
        let claimed = RunEvent::new(RunEventKind::Claimed, now).by(owner).json();
        let Some(row) = client
            .query_opt(&stmt, &[&now, &owner, &until, &taken, &claimed])
            .await
            .map_err(|e| pg(&e))?
        else {
            return Ok(Picked::Nothing);
        };
        let was: String = row.get(0);
        let mut raw = raw_at(&row, 1);
        raw.claims -= 1;
        // the history ends with this claim's event
        let mut claim = match takeover_claim(&raw, &self.seal, owner, until, true) {
            Ok(claim) => claim,
            Err(e) => {
                // out of the claimable set at once (not held until its lease runs out)
                let claims = raw.claims + 1;
                client
                    .execute(
                        &damaged_sql("claims = $2"),
                        &[
                            &raw.run_id,
                            &claims,
                            &crate::store::damaged_event(&raw, &e, owner, now),
                        ],
                    )
                    .await
                    .map_err(|e| pg(&e))?;
                return Ok(Picked::Damaged);
            }
        };
        claim.taken_over = was != "answered";
        Ok(Picked::Claim(Box::new(claim)))
    }

    pub(super) async fn take_over_now(&self, owner: &str) -> StoreResult<Option<Claim>> {
        let mut client = self.client().await?;
        let tx = client.transaction().await.map_err(|e| pg(&e))?;
        let now = now_ms();
        let rows = tx
            .query(
                &format!(
                    "SELECT {COLUMNS} FROM runs
                     WHERE state = 'expired' OR (state = 'claimed' AND lease_until <= $1)
                     ORDER BY created_at, run_id LIMIT 16 FOR UPDATE SKIP LOCKED"
                ),
                &[&now],
            )
            .await
            .map_err(|e| pg(&e))?;
        let until = now.saturating_add(lease_ms(self.lease));
        for row in rows {
            let row = raw(&row);
            let claim = match takeover_claim(&row, &self.seal, owner, until, false) {
                Ok(claim) => claim,
                Err(e) => {
                    tx.execute(
                        &damaged_sql("version = $2"),
                        &[
                            &row.run_id,
                            &row.version,
                            &crate::store::damaged_event(&row, &e, owner, now),
                        ],
                    )
                    .await
                    .map_err(|e| pg(&e))?;
                    continue;
                }
            };
            let event = takeover_event(&row.state, &claim, owner, now);
            tx.execute(
                &format!(
                    "UPDATE runs SET state = 'claimed', lease_owner = $2, lease_until = $3,
                         claims = claims + 1, version = version + 1, {}
                     WHERE run_id = $1",
                    append_history("$4")
                ),
                &[&row.run_id, &owner, &until, &event],
            )
            .await
            .map_err(|e| pg(&e))?;
            tx.execute(&self.notify_sql(), &[&row.run_id])
                .await
                .map_err(|e| pg(&e))?;
            tx.commit().await.map_err(|e| pg(&e))?;
            return Ok(Some(claim));
        }
        // keeps the rows marked damaged
        tx.commit().await.map_err(|e| pg(&e))?;
        Ok(None)
    }

    /// The body of [`RunStore::claim_next`]: the takeover pick, then the answered pick.
    pub(super) async fn claim_next_now(&self, owner: &str) -> StoreResult<Option<Claim>> {
        // one statement: a few candidates of each kind, each from its own partial index
        // (expired, lapsed, answered), then the first of them not locked by another worker,
        // takeovers before answered runs; the outer condition is re-checked on rows another
        // worker changed meanwhile
        self.claim_picked(
            owner,
            "SELECT run_id, state FROM runs
             WHERE run_id IN (
                 (SELECT run_id FROM runs WHERE state = 'expired'
                     ORDER BY created_at, run_id LIMIT 8)
                 UNION ALL
                 (SELECT run_id FROM runs WHERE state = 'claimed' AND lease_until <= $1
                     ORDER BY lease_until LIMIT 8)
                 UNION ALL
                 (SELECT run_id FROM runs WHERE state = 'answered'
                     ORDER BY created_at, run_id LIMIT 8))
               AND (state IN ('expired', 'answered')
                    OR (state = 'claimed' AND lease_until <= $1))
             ORDER BY state = 'answered', created_at, run_id
             LIMIT 1 FOR UPDATE SKIP LOCKED",
        )
        .await
    }

    /// The body of [`RunStore::release`].
    pub(super) async fn release_now(&self, claim: &Claim) -> StoreResult<()> {
        let event = RunEvent::new(RunEventKind::Released, now_ms())
            .by(&claim.lease.owner)
            .json();
        self.with_claim(
            claim,
            &format!(
                "state = $4, lease_owner = NULL, lease_until = NULL, {}",
                append_history("$3")
            ),
            &[&event, &crate::store::released_state(claim).as_str()],
        )
        .await?;
        self.tell_workers(&self.client().await?).await
    }

    /// The body of [`RunStore::fail`](crate::store::RunStore::fail): one statement.
    pub(super) async fn fail_now(
        &self,
        claim: &Claim,
        error: &str,
        retry_at: Option<SystemTime>,
    ) -> StoreResult<()> {
        let (event, state) = crate::store::failed_event(claim, error, retry_at.is_some());
        let until = retry_at.map(crate::store::row::millis);
        self.with_claim(
            claim,
            &format!(
                // a retry keeps the claim until `until`; giving up clears it
                "state = $4, lease_until = $5,
                 lease_owner = CASE WHEN $5::bigint IS NULL THEN NULL ELSE lease_owner END, {}",
                append_history("$3")
            ),
            &[&event, &state.as_str(), &until],
        )
        .await
        .map(drop)
    }

    /// The body of [`RunStore::next_due`].
    pub(super) async fn next_due_now(&self) -> StoreResult<Option<SystemTime>> {
        let client = self.client().await?;
        let stmt = client
            .prepare_cached(
                // two searches of two partial indexes
                "SELECT LEAST(
                         (SELECT min(expires_at) FROM runs
                             WHERE state = 'parked' AND expires_at IS NOT NULL),
                         (SELECT min(lease_until) FROM runs WHERE state = 'claimed'))",
            )
            .await
            .map_err(|e| pg(&e))?;
        let at: Option<i64> = client
            .query_one(&stmt, &[])
            .await
            .map_err(|e| pg(&e))?
            .get(0);
        Ok(at.map(from_millis))
    }
}

/// The SQL expression of the attempt number a takeover of a run with the history `history`
/// (an SQL text expression, before the takeover's event) records: one more than the claims
/// (claimed, taken over) since the last answered or expired event, less the releases, as
/// `attempts_since_answer` counts them. It reads the history as the text the stores write
/// (compact JSON, `"event"` first, so a kind's pattern never occurs inside a string, where
/// quotes are escaped) rather than as `jsonb`, so a history that is not JSON costs a wrong
/// number in one event, never the statement that claims every run.
fn attempt_expr(history: &str) -> String {
    let count = |kind: &str| {
        let pattern = format!("\"event\":\"{kind}\"");
        format!(
            "(length(t) - length(replace(t, '{pattern}', ''))) / {}",
            pattern.len()
        )
    };
    let last = |kind: &str| {
        let reversed: String = format!("{{\"event\":\"{kind}\"").chars().rev().collect();
        format!("nullif(strpos(reverse({history}), '{reversed}'), 0)")
    };
    format!(
        "(SELECT 1 + {} + {} - {}
          FROM (SELECT right({history}, coalesce(least({}, {}), length({history}))) AS t) AS tail)",
        count("claimed"),
        count("taken_over"),
        count("released"),
        last("answered"),
        last("expired"),
    )
}

/// The statement that marks the run `$1` damaged (history event `$3`), when `condition`
/// (on `$2`) still holds.
fn damaged_sql(condition: &str) -> String {
    format!(
        "UPDATE runs SET state = 'damaged', lease_owner = NULL, lease_until = NULL,
             version = version + 1, {}
         WHERE run_id = $1 AND {condition}",
        append_history("$3")
    )
}

/// What one pick of a worker's claim found.
enum Picked {
    Claim(Box<Claim>),
    /// An unreadable row, now marked damaged.
    Damaged,
    Nothing,
}
