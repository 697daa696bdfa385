//! One claimed run: resumed with the worker's client, its lease renewed while it runs, handed
//! back when shutdown's grace runs out.

use std::time::{Duration, SystemTime};

use tokio::sync::OwnedSemaphorePermit;
use tokio_util::sync::CancellationToken;
use tracing::Instrument;

use super::stats::bump;
use super::{MAX_RETRY_DELAY, Worker};
use crate::error::Error;
use crate::store::{Claim, RunStore, StoreError};

/// How long to sleep before renewing a lease that runs out at `until`: a third of what is left.
fn renew_in(until: SystemTime) -> Duration {
    let left = until.duration_since(SystemTime::now()).unwrap_or_default();
    (left / 3).max(Duration::from_millis(10))
}

/// Renews a claim's lease a third of the lease before it runs out, until the claim is lost.
/// The claim is copied (its record with it) only once a renewal is due: a run shorter than
/// that costs a timer, nothing more.
async fn keep_lease(store: &dyn RunStore, claim: &Claim) {
    tokio::time::sleep(renew_in(claim.lease.until)).await;
    let mut claim = claim.clone();
    loop {
        match store.renew(&mut claim).await {
            Ok(()) => {}
            Err(StoreError::LeaseLost { .. }) => {
                tracing::info!("worker: lease lost; the run is another worker's now");
                return;
            }
            Err(e) => {
                // try again sooner; the lease may still hold
                tracing::warn!(error = %e, "worker: cannot renew a lease");
                if claim.lease.until <= SystemTime::now() {
                    return;
                }
            }
        }
        tokio::time::sleep(renew_in(claim.lease.until)).await;
    }
}

/// Whether a resume's error says another worker has the run now.
fn lost(e: &Error) -> bool {
    match e {
        Error::Store(StoreError::LeaseLost { .. }) => true,
        Error::Interrupted { error, .. } => lost(error),
        _ => false,
    }
}

/// The wait before retrying an answer whose resume failed (or crashed) `failures` times (1 or
/// more): `first`, doubled per earlier failure, at most [`MAX_RETRY_DELAY`].
fn retry_delay(first: Duration, failures: u32) -> Duration {
    crate::util::doubling_delay(first, failures, MAX_RETRY_DELAY)
}

impl Worker {
    /// Records a failed resume of `claim`: to be retried after a while, or given up once it
    /// was the [`max_attempts`](super::WorkerBuilder::max_attempts)th attempt (failed or
    /// crashed).
    async fn failed(&self, claim: &Claim, error: &Error) {
        let inner = &*self.inner;
        bump(&inner.stats.failed);
        let failures = claim.attempt();
        let message = error.to_string();
        let retry_at = (failures < inner.config.max_attempts)
            .then(|| SystemTime::now() + retry_delay(inner.config.retry_delay, failures));
        match inner.store.fail(claim, &message, retry_at).await {
            Ok(()) if retry_at.is_some() => tracing::warn!(
                %error,
                attempt = failures,
                retry_in = ?retry_delay(inner.config.retry_delay, failures),
                "worker: the resume failed; it is retried"
            ),
            Ok(()) => {
                bump(&inner.stats.gave_up);
                tracing::error!(%error, attempts = failures, "worker: the resume failed again; the run is given up");
            }
            Err(StoreError::LeaseLost { .. }) => {
                tracing::info!(%error, "worker: the resume failed, and another worker has the run now");
            }
            Err(e) => tracing::warn!(
                %error,
                store_error = %e,
                "worker: the resume failed and cannot be recorded; it is retried once its lease runs out"
            ),
        }
    }

    /// Gives up, without resuming it, a run whose earlier attempts at this answer (failed or
    /// crashed their worker) reached [`max_attempts`](super::WorkerBuilder::max_attempts):
    /// a resume that kills its worker process every time never returns an error to record,
    /// so each takeover after a lapsed lease counts as an attempt, and the run ends
    /// [`Failed`](crate::store::RunState::Failed) instead of being taken over without end.
    /// Returns whether it was given up.
    async fn exhausted(&self, claim: &Claim) -> bool {
        let inner = &*self.inner;
        let tried = claim.attempt() - 1;
        if tried < inner.config.max_attempts {
            return false;
        }
        let reason = match (claim.crashes, claim.failures) {
            (0, failed) => {
                format!("the resume failed {failed} times; given up after {tried} attempts")
            }
            (crashed, 0) => format!(
                "the run crashed its worker {crashed} times (each resume ended with no outcome: \
                 the worker process died, or stalled past its lease); given up after {tried} attempts"
            ),
            (crashed, failed) => format!(
                "the run crashed its worker {crashed} times (each resume ended with no outcome: \
                 the worker process died, or stalled past its lease) and failed {failed} times; \
                 given up after {tried} attempts"
            ),
        };
        // this takeover is no attempt: the failure it records says so
        let mut giving_up = claim.clone();
        giving_up.gives_up = true;
        match inner.store.fail(&giving_up, &reason, None).await {
            Ok(()) => {
                bump(&inner.stats.gave_up);
                tracing::error!(
                    crashes = claim.crashes,
                    failures = claim.failures,
                    "worker: the run crashed its worker too often; it is given up"
                );
            }
            Err(StoreError::LeaseLost { .. }) => {
                tracing::info!("worker: another worker has the run now");
            }
            Err(e) => tracing::warn!(
                store_error = %e,
                "worker: cannot give up a run that crashed its worker too often; it is tried again once its lease runs out"
            ),
        }
        true
    }

    /// Resumes `claim`, then claims and resumes the next run that needs a worker, and so on
    /// until none is left or claiming stops (`claims`; the runs themselves are stopped by
    /// `runs`, which is cancelled only after `claims`); then gives its room back (`permit`). One task carries a slot's runs one after another: a
    /// run costs no task spawn and no wake-up of the claim loop, which only fills slots that
    /// are free. A failed `claim_next` ends the chain quietly: the claim loop, woken by its
    /// end, claims again and backs off if the store still fails.
    pub(super) async fn drive_chain(
        self,
        mut claim: Claim,
        permit: OwnedSemaphorePermit,
        claims: CancellationToken,
        runs: CancellationToken,
    ) {
        loop {
            self.drive(claim, &runs).await;
            if claims.is_cancelled() {
                break;
            }
            match self.inner.store.claim_next(&self.inner.config.name).await {
                Ok(Some(next)) => claim = next,
                Ok(None) => break,
                Err(e) => {
                    tracing::debug!(error = %e, "worker: cannot claim the next run; the claim loop retries");
                    break;
                }
            }
        }
        drop(permit);
    }

    /// Resumes `claim` to its outcome (or until `stop`), counting what happened.
    async fn drive(&self, claim: Claim, stop: &CancellationToken) {
        let inner = &*self.inner;
        let stats = &inner.stats;
        bump(&stats.claimed);
        if claim.taken_over {
            bump(&stats.taken_over);
        }
        if let Some(at) = claim.answered_at {
            stats.latency(SystemTime::now().duration_since(at).unwrap_or_default());
        }
        stats
            .in_flight
            .fetch_add(1, std::sync::atomic::Ordering::Relaxed);
        let span = tracing::info_span!(
            "toolnexus.worker.run",
            run_id = %claim.run_id,
            worker = %inner.config.name,
            taken_over = claim.taken_over,
            attempt = claim.attempt(),
        );
        async {
            if self.exhausted(&claim).await {
                return;
            }
            let store = inner.store.as_ref();
            let resume = inner.client.resume_claim(store, &claim, &inner.toolkit);
            // renews until the claim is lost, then waits: a lost claim ends the run at its next
            // checkpoint or finish (`LeaseLost`), never halfway through a tool
            let renewing = async {
                keep_lease(store, &claim).await;
                std::future::pending::<std::convert::Infallible>().await
            };
            tokio::select! {
                result = resume => match result {
                    Ok(result) => {
                        bump(&stats.finished);
                        tracing::info!(status = result.status.as_str(), "worker: run resumed");
                    }
                    Err(e) if lost(&e) => {
                        bump(&stats.lost);
                        tracing::info!("worker: another worker took the run over");
                    }
                    Err(e) => self.failed(&claim, &e).await,
                },
                never = renewing => match never {},
                () = stop.cancelled() => match store.release(&claim).await {
                    Ok(()) => {
                        bump(&stats.released);
                        tracing::info!("worker: run released at shutdown");
                    }
                    Err(e) => tracing::warn!(error = %e, "worker: cannot release a run"),
                },
            }
        }
        .instrument(span)
        .await;
        stats
            .in_flight
            .fetch_sub(1, std::sync::atomic::Ordering::Relaxed);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retry_delays_double_up_to_the_ceiling() {
        // the doubling is `util::doubling_delay`'s (tested there); here the worker's ceiling
        let s = Duration::from_secs;
        assert_eq!(retry_delay(s(1), 4), s(8));
        assert_eq!(retry_delay(s(100), 5), s(15 * 60));
    }
}
