//! Answers recorded apart from resuming, and the workers' side of the store: `submit` and
//! `claim` (one statement each), expiry, `take_over` and `claim_next` (`FOR UPDATE SKIP
//! LOCKED`, one statement), `release`, `next_due`, and the work channel's `NOTIFY`.

use tokio_postgres::types::ToSql;

use super::rows::{raw, raw_at, raw_info};
use super::{PostgresStore, pg, runs};
use crate::request::Answer;
use crate::store::engine::Answered;
use crate::store::lifecycle::{self, Answering, Change};
use crate::store::sql::{
    COLUMNS, ChangeSql, Dialect, PLAIN_ANSWER, SqlParam, append_history, change_sql,
};
use crate::store::{Claim, RawRow, RunEvent, RunEventKind, StoreResult, lease_ms, now_ms};

/// Parameter n of a statement.
pub(super) fn placeholder(n: usize) -> String {
    Dialect::Postgres.placeholder(n)
}

/// The parameters of a statement the shared SQL module made, as the driver takes them.
pub(super) fn pg_params(params: &[SqlParam]) -> Vec<&(dyn ToSql + Sync)> {
    params
        .iter()
        .map(|p| match p {
            SqlParam::Text(s) => s as &(dyn ToSql + Sync),
            SqlParam::Int(i) => i as &(dyn ToSql + Sync),
            SqlParam::MaybeText(s) => s as &(dyn ToSql + Sync),
            SqlParam::MaybeInt(i) => i as &(dyn ToSql + Sync),
        })
        .collect()
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

    /// An answer's effect on its run after `claim`'s checks, in one `UPDATE` of the parked
    /// row (concurrent answers queue on the row lock, and all but the first find the row no
    /// longer parked): claimed for `owner` (with the claim), or recorded as answered by `by`.
    /// `plain`: only a run whose request is plain ([`PLAIN_ANSWER`]), `None` when none is
    /// answerable (nothing refused); else the refusal when the row changed nothing.
    pub(super) async fn answer_now(
        &self,
        answer: &Answer,
        how: &Answering,
        plain: bool,
    ) -> StoreResult<Option<Answered>> {
        let mut client = self.client().await?;
        let now = now_ms();
        let work = match how {
            Answering::Claim { .. } => String::new(),
            // the workers are told in the same statement
            Answering::Submit { .. } => format!(", {}", self.work_expr()),
        };
        let change = lifecycle::answer(answer, how, &self.seal, now);
        let mut sql = change_sql(&change, placeholder);
        if plain {
            sql.guard.push_str(" AND ");
            sql.guard.push_str(PLAIN_ANSWER);
        }
        let Some(row) = self.update_row(&client, &sql, &work).await? else {
            if plain {
                return Ok(None);
            }
            return self.refuse(&mut client, answer, now).await;
        };
        match lifecycle::answered(&row, answer, how, &self.seal, now) {
            Ok(claim) => {
                if claim.is_none() {
                    self.work.notify();
                }
                Ok(Some((row, claim)))
            }
            Err(corrupt) => {
                // an unreadable record: hand the run back, parked as it was
                let history = history_without(&row.history, &change.events);
                let before = row.claims - i64::from(change.set.claimed);
                client
                    .execute(
                        "UPDATE runs SET state = 'parked', lease_owner = NULL,
                             lease_until = NULL, answer = NULL, claims = $3, history = $4,
                             version = version + 1
                         WHERE run_id = $1 AND state IN ('claimed', 'answered') AND claims = $2",
                        &[&row.run_id, &row.claims, &before, &history],
                    )
                    .await
                    .map_err(|e| pg(&e))?;
                Err(corrupt)
            }
        }
    }

    /// A vote's change in one `UPDATE` guarded by the row's version: the row as it became
    /// (waiters on the run told in the same statement), or `None` when the guard failed.
    pub(super) async fn apply_vote_now(&self, change: Change) -> StoreResult<Option<RawRow>> {
        let client = self.client().await?;
        self.update_row(&client, &change_sql(&change, placeholder), "")
            .await
    }

    /// Runs the change `sql`, reading back the row as it became ([`COLUMNS`]) and telling
    /// the run's waiters (and `work`: more SQL expressions) in the same statement; `None`
    /// when its guard did not hold.
    async fn update_row(
        &self,
        client: &deadpool_postgres::Object,
        sql: &ChangeSql,
        work: &str,
    ) -> StoreResult<Option<RawRow>> {
        let text = if work.is_empty() {
            sql.update(&self.returning.row)
        } else {
            sql.update(&format!("{}{work}", self.returning.row))
        };
        let stmt = client.prepare_cached(&text).await.map_err(|e| pg(&e))?;
        let changed = client
            .query_opt(&stmt, &pg_params(&sql.params))
            .await
            .map_err(|e| pg(&e))?;
        Ok(changed.map(|row| raw(&row)))
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
        let current = tx
            .query_opt(&runs().refused, &[&answer.id])
            .await
            .map_err(|e| pg(&e))?
            .map(|row| raw_info(&row));
        let past = match current {
            Some(_) => None,
            // an earlier request of a run that went on, or none at all
            None => tx
                .query_opt(&runs().past, &[&answer.id])
                .await
                .map_err(|e| pg(&e))?
                .map(|row| raw_info(&row)),
        };
        let (refused, expiry) =
            lifecycle::refuse_answer(current.as_ref(), past.as_ref(), &answer.id, &self.seal, now);
        if let Some(expiry) = expiry {
            self.apply_expiry(&tx, &expiry).await?;
            tx.commit().await.map_err(|e| pg(&e))?;
            self.work.notify();
        }
        Err(refused)
    }

    /// Applies an expiry (the run's answer becomes `declined/expired`), notifying its
    /// waiters and the workers.
    pub(super) async fn apply_expiry(
        &self,
        tx: &deadpool_postgres::Transaction<'_>,
        expiry: &Change,
    ) -> StoreResult<()> {
        let sql = change_sql(expiry, placeholder);
        let stmt = tx
            .prepare_cached(&format!(
                "WITH u AS ({}) SELECT {}, {} FROM u",
                sql.update("runs.run_id"),
                self.notify_expr("u.run_id"),
                self.work_expr()
            ))
            .await
            .map_err(|e| pg(&e))?;
        tx.execute(&stmt, &pg_params(&sql.params))
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
        let mut due = tx
            .query(&runs().due, &[&now_ms()])
            .await
            .map_err(|e| pg(&e))?;
        due.sort_unstable_by(|a, b| a.get::<_, &str>(0).cmp(b.get::<_, &str>(0)));
        if due.is_empty() {
            return Ok(Vec::new());
        }
        let now = now_ms();
        let mut ids = Vec::with_capacity(due.len());
        let mut answers = Vec::with_capacity(due.len());
        let mut events = Vec::with_capacity(due.len());
        let mut escalated = 0usize;
        for row in &due {
            let (run_id, request_id): (String, String) = (row.get(0), row.get(1));
            let (approvers, escalate): (Option<String>, Option<String>) = (row.get(3), row.get(4));
            let due = lifecycle::Due {
                run_id: &run_id,
                request_id: &request_id,
                version: row.get(2),
                approvers: approvers.as_deref(),
                escalate: escalate.as_deref(),
            };
            let expiry = lifecycle::at_deadline(&due, &self.seal, now);
            if let Some(step) = &expiry.set.escalate {
                // the row is locked (`FOR UPDATE`): its version guard holds
                self.apply(&tx, &expiry).await?;
                let rows = self
                    .outbox
                    .escalation_rows(&run_id, &request_id, step.step, now);
                super::outbox::insert_rows(&tx, rows).await?;
                tx.execute(&self.notify_sql(), &[&run_id])
                    .await
                    .map_err(|e| pg(&e))?;
                escalated += 1;
                continue;
            }
            answers.push(expiry.set.answer.unwrap_or_default());
            events.push(expiry.events);
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
        if escalated > 0 {
            self.outbox.parked();
        }
        Ok(expired)
    }

    /// Claims one run for `owner` in one statement: the first of `pick` ([`TAKE_OVER`] or
    /// [`CLAIM_NEXT`]: a `SELECT run_id, state` with `FOR UPDATE SKIP LOCKED`, whose `$1` is
    /// now), so concurrent workers never wait on each other. A row that cannot be read is
    /// marked damaged at once (logged), so it never blocks the others.
    pub(super) async fn claim_picked(&self, owner: &str, pick: &str) -> StoreResult<Option<Claim>> {
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
        let mut claim = match lifecycle::takeover_claim(&raw, &self.seal, owner, until, true) {
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
                            &lifecycle::damage(&raw, &e, owner, now).events,
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

    /// Applies `change` in one statement in `tx`, without telling anyone.
    async fn apply(
        &self,
        tx: &deadpool_postgres::Transaction<'_>,
        change: &Change,
    ) -> StoreResult<()> {
        let sql = change_sql(change, placeholder);
        tx.execute(&sql.update(""), &pg_params(&sql.params))
            .await
            .map_err(|e| pg(&e))?;
        Ok(())
    }
}

/// The pick of a worker's claim at `$1`: a few candidates of each kind, each from its own
/// partial index (expired, lapsed, and `$answered`), then the first of them not locked by
/// another worker, takeovers before answered runs; the outer condition (with `$or`) is
/// re-checked on rows another worker changed meanwhile.
macro_rules! pick {
    ($answered:literal, $or:literal) => {
        concat!(
            "SELECT run_id, state FROM runs
             WHERE run_id IN (
                 (SELECT run_id FROM runs WHERE state = 'expired'
                     ORDER BY created_at, run_id LIMIT 8)
                 UNION ALL
                 (SELECT run_id FROM runs WHERE state = 'claimed' AND lease_until <= $1
                     ORDER BY lease_until LIMIT 8)",
            $answered,
            ")
               AND (state = 'expired' OR (state = 'claimed' AND lease_until <= $1)",
            $or,
            ")
             ORDER BY state = 'answered', created_at, run_id
             LIMIT 1 FOR UPDATE SKIP LOCKED"
        )
    };
}

/// [`RunStore::take_over`](crate::store::RunStore::take_over)'s pick: expired and lapsed runs.
pub(super) const TAKE_OVER: &str = pick!("", "");

/// [`RunStore::claim_next`](crate::store::RunStore::claim_next)'s pick: expired and lapsed
/// runs, then answered ones.
pub(super) const CLAIM_NEXT: &str = pick!(
    "
                 UNION ALL
                 (SELECT run_id FROM runs WHERE state = 'answered'
                     ORDER BY created_at, run_id LIMIT 8)",
    " OR state = 'answered'"
);

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
