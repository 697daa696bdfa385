//! Answers recorded apart from resuming, and the workers' side of the store: `submit` and
//! `claim` (one `IMMEDIATE` transaction each), expiry, `claim_next` (takeovers first, then
//! answered runs), `release` and `next_due`.

use std::time::{Duration, SystemTime};

use rusqlite::{Connection, OptionalExtension, TransactionBehavior, params};

use super::{SqliteStore, past_row, raw, row_where};
use crate::request::Answer;
use crate::store::sql::{COLUMNS, append_history, backend};
use crate::store::{
    Claim, RawRow, RunEvent, RunEventKind, RunState, Seal, StoreError, StoreResult, events_json,
    expired_answer, from_millis, lease_ms, now_ms, past_refusal, refusal, token_i64,
};

/// What an answer does to a parked run: claims it for a worker, or records it for one.
pub(super) enum Answering {
    Claim { owner: String, lease: Duration },
    Submit { by: String },
}

/// The answer's effect on its run, after `claim`'s checks, in one `IMMEDIATE` transaction:
/// the run claimed (with the claim), or recorded as answered (without).
pub(super) fn answer_blocking(
    conn: &mut Connection,
    seal: &Seal,
    answer: &Answer,
    how: &Answering,
) -> StoreResult<(RawRow, Option<Claim>)> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(backend)?;
    let now = now_ms();
    let answered = RunEvent::new(RunEventKind::Answered, now).request(&answer.id);
    let changed = match how {
        Answering::Claim { owner, lease } => {
            let owner = owner.as_str();
            let until = now.saturating_add(lease_ms(*lease));
            let events = events_json(&[
                answered.by(owner),
                RunEvent::new(RunEventKind::Claimed, now).by(owner),
            ]);
            tx.prepare_cached(&format!(
                "UPDATE runs SET state = 'claimed', lease_owner = ?2, lease_until = ?3, answer = ?4,
                     claims = claims + 1, version = version + 1, {}
                 WHERE request_id = ?1 AND state = 'parked' AND (expires_at IS NULL OR expires_at > ?5)
                 RETURNING {COLUMNS}",
                append_history("?6")
            ))
            .map_err(backend)?
            .query_row(
                params![answer.id, owner, until, seal.answer(answer), now, events],
                raw,
            )
            .optional()
            .map_err(backend)?
            .map(|mut row| {
                // the row as it was before this claim counted
                row.claims -= 1;
                // decoded before committing: a corrupt record rolls the claim back (the run
                // stays parked)
                let mut claim = row.claim(seal, owner, until, answer.clone(), false, true)?;
                claim.answered_at = Some(from_millis(now));
                Ok::<_, StoreError>((row, Some(claim)))
            })
            .transpose()?
        }
        Answering::Submit { by } => tx
            .prepare_cached(&format!(
                "UPDATE runs SET state = 'answered', answer = ?2, version = version + 1, {}
                 WHERE request_id = ?1 AND state = 'parked' AND (expires_at IS NULL OR expires_at > ?3)
                 RETURNING {COLUMNS}",
                append_history("?4")
            ))
            .map_err(backend)?
            .query_row(
                params![answer.id, seal.answer(answer), now, answered.by(by).json()],
                raw,
            )
            .optional()
            .map_err(backend)?
            .map(|row| {
                // read before committing: a corrupt record rolls the answer back
                row.record(seal)?;
                Ok::<_, StoreError>((row, None))
            })
            .transpose()?,
    };
    if let Some(done) = changed {
        tx.commit().map_err(backend)?;
        return Ok(done);
    }
    let Some(row) = row_where(&tx, "request_id", &answer.id)? else {
        // an earlier request of a run that went on, or none at all
        return Err(match past_row(&tx, &answer.id)? {
            Some(run) => past_refusal(&run, &answer.id),
            None => StoreError::NotFound {
                key: answer.id.clone(),
            },
        });
    };
    let state = row.info()?.state;
    if state != RunState::Parked {
        return Err(refusal(&row.run_id, &answer.id, state));
    }
    // parked but past `expiresAt`: the answer becomes declined/expired
    mark_expired(&tx, seal, &row.run_id, &row.request_id, now)?;
    tx.commit().map_err(backend)?;
    Err(StoreError::Expired { run_id: row.run_id })
}

/// Marks a parked run expired: its answer becomes `declined/expired`.
pub(super) fn mark_expired(
    conn: &Connection,
    seal: &Seal,
    run_id: &str,
    request_id: &str,
    now: i64,
) -> StoreResult<()> {
    conn.prepare_cached(&format!(
        "UPDATE runs SET state = 'expired', answer = ?2, version = version + 1, {}
         WHERE run_id = ?1 AND state = 'parked'",
        append_history("?3")
    ))
    .and_then(|mut stmt| {
        stmt.execute(params![
            run_id,
            expired_answer(seal, request_id),
            RunEvent::new(RunEventKind::Expired, now)
                .request(request_id)
                .json()
        ])
    })
    .map_err(backend)?;
    Ok(())
}

/// Marks `row` (found unreadable by `owner`: `error`) damaged, unless it changed meanwhile.
fn mark_damaged(
    conn: &Connection,
    row: &RawRow,
    error: &StoreError,
    owner: &str,
    now: i64,
) -> StoreResult<()> {
    conn.prepare_cached(&format!(
        "UPDATE runs SET state = 'damaged', lease_owner = NULL, lease_until = NULL,
             version = version + 1, {}
         WHERE run_id = ?1 AND version = ?2",
        append_history("?3")
    ))
    .and_then(|mut stmt| {
        stmt.execute(params![
            row.run_id,
            row.version,
            crate::store::damaged_event(row, error, owner, now)
        ])
    })
    .map_err(backend)?;
    Ok(())
}

/// Claims the first readable row of `candidates` for `owner` (in the caller's transaction,
/// which it commits), with the history event `event` of each row's state.
fn claim_first(
    tx: rusqlite::Transaction<'_>,
    seal: &Seal,
    candidates: Vec<RawRow>,
    owner: &str,
    until: i64,
    now: i64,
) -> StoreResult<Option<Claim>> {
    for row in candidates {
        // a run whose row cannot be read leaves the claimable set (damaged, with why); the
        // others are taken over as usual
        let mut claim = match crate::store::takeover_claim(&row, seal, owner, until, false) {
            Ok(claim) => claim,
            Err(e) => {
                mark_damaged(&tx, &row, &e, owner, now)?;
                continue;
            }
        };
        if row.state == RunState::Answered.as_str() {
            claim.taken_over = false;
        }
        let event = crate::store::takeover_event(&row.state, &claim, owner, now);
        tx.prepare_cached(&format!(
            "UPDATE runs SET state = 'claimed', lease_owner = ?2, lease_until = ?3,
                 claims = claims + 1, version = version + 1, {}
             WHERE run_id = ?1 AND claims = ?4",
            append_history("?5")
        ))
        .and_then(|mut stmt| stmt.execute(params![row.run_id, owner, until, row.claims, event]))
        .map_err(backend)?;
        tx.commit().map_err(backend)?;
        return Ok(Some(claim));
    }
    // keeps the rows marked damaged
    tx.commit().map_err(backend)?;
    Ok(None)
}

pub(super) fn take_over_blocking(
    conn: &mut Connection,
    seal: &Seal,
    owner: &str,
    lease: Duration,
    answered_too: bool,
) -> StoreResult<Option<Claim>> {
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(backend)?;
    let now = now_ms();
    let read = |sql: &str, params: &[&dyn rusqlite::ToSql]| {
        let mut stmt = tx.prepare_cached(sql).map_err(backend)?;
        stmt.query_map(params, raw)
            .map_err(backend)?
            .collect::<rusqlite::Result<Vec<_>>>()
            .map_err(backend)
    };
    let mut candidates = read(
        &format!(
            // two searches of the two partial indexes (an OR of them would scan the table)
            "SELECT * FROM (
                 SELECT {COLUMNS} FROM runs WHERE state = 'expired'
                 UNION ALL
                 SELECT {COLUMNS} FROM runs WHERE state = 'claimed' AND lease_until <= ?1
             ) ORDER BY created_at, run_id LIMIT 64"
        ),
        &[&now],
    )?;
    if candidates.is_empty() && answered_too {
        candidates = read(
            &format!(
                "SELECT {COLUMNS} FROM runs WHERE state = 'answered'
                 ORDER BY created_at, run_id LIMIT 16"
            ),
            &[],
        )?;
    }
    let until = now.saturating_add(lease_ms(lease));
    claim_first(tx, seal, candidates, owner, until, now)
}

impl SqliteStore {
    /// The body of [`RunStore::release`](crate::store::RunStore::release).
    /// The body of [`RunStore::fail`](crate::store::RunStore::fail).
    pub(super) async fn fail_now(
        &self,
        claim: &Claim,
        error: &str,
        retry_at: Option<std::time::SystemTime>,
    ) -> StoreResult<()> {
        let (run_id, token) = (claim.run_id.clone(), token_i64(claim));
        let (event, state) = crate::store::failed_event(claim, error, retry_at.is_some());
        let until = retry_at.map(crate::store::row::millis);
        self.call(move |conn| {
            let changed = conn
                .prepare_cached(&format!(
                    // a retry keeps the claim until `until`; giving up clears it
                    "UPDATE runs SET state = ?4, lease_until = ?5,
                         lease_owner = CASE WHEN ?5 IS NULL THEN NULL ELSE lease_owner END,
                         version = version + 1, {}
                     WHERE run_id = ?1 AND state = 'claimed' AND claims = ?2",
                    append_history("?3")
                ))
                .and_then(|mut stmt| {
                    stmt.execute(params![run_id, token, event, state.as_str(), until])
                })
                .map_err(backend)?;
            if changed == 1 {
                Ok(())
            } else {
                Err(StoreError::LeaseLost {
                    run_id: run_id.clone(),
                })
            }
        })
        .await
    }

    pub(super) async fn release_now(&self, claim: &Claim) -> StoreResult<()> {
        let (run_id, token) = (claim.run_id.clone(), token_i64(claim));
        let event = RunEvent::new(RunEventKind::Released, now_ms())
            .by(&claim.lease.owner)
            .json();
        let state = crate::store::released_state(claim).as_str();
        self.call(move |conn| {
            let changed = conn
                .prepare_cached(&format!(
                    "UPDATE runs SET state = ?4, lease_owner = NULL,
                         lease_until = NULL, version = version + 1, {}
                     WHERE run_id = ?1 AND state = 'claimed' AND claims = ?2",
                    append_history("?3")
                ))
                .and_then(|mut stmt| stmt.execute(params![run_id, token, event, state]))
                .map_err(backend)?;
            if changed == 1 {
                Ok(())
            } else {
                Err(StoreError::LeaseLost {
                    run_id: run_id.clone(),
                })
            }
        })
        .await?;
        self.shared.work.notify();
        Ok(())
    }

    /// The body of [`RunStore::next_due`](crate::store::RunStore::next_due).
    pub(super) async fn next_due_now(&self) -> StoreResult<Option<SystemTime>> {
        self.call(|conn| {
            conn.prepare_cached(
                // two searches of two partial indexes
                "SELECT min(at) FROM (
                     SELECT min(expires_at) AS at FROM runs
                         WHERE state = 'parked' AND expires_at IS NOT NULL
                     UNION ALL
                     SELECT min(lease_until) FROM runs WHERE state = 'claimed'
                 )",
            )
            .and_then(|mut stmt| stmt.query_row([], |r| r.get::<_, Option<i64>>(0)))
            .map(|at| at.map(from_millis))
            .map_err(backend)
        })
        .await
    }
}
