//! The engine's side of a vote ([`lifecycle::votes`]): the row read, the vote decided, its
//! change applied under the row's version, and on a lost race the row read again and the vote
//! decided afresh, so racing votes all count.

use super::engine::Driver;
use super::lifecycle::votes::{Ballot, vote};
use super::lifecycle::{self, Answering, Key};
use super::{Claim, RawRow, StoreError, StoreResult, now_ms};
use crate::request::Answer;

/// How many times a vote that lost a race reads the row again before giving up.
const RETRIES: usize = 64;

/// What a governed answer did.
pub(crate) enum Voted {
    /// Not a vote: the ordinary answer applies.
    Answer,
    /// The vote is kept (or was given before) and the run waits: the row as it is.
    Waits {
        row: RawRow,
        given: u32,
        required: u32,
    },
    /// The vote reached the count: the row as it became, and the claim (a claim's answer).
    Reached(RawRow, Option<Box<Claim>>),
}

/// The answer `answer` by `by` (`how`: a claim or a submit) as a vote, when its request is
/// governed.
pub(crate) async fn cast<D: Driver + ?Sized>(
    driver: &D,
    answer: &Answer,
    how: &Answering,
    by: &str,
) -> StoreResult<Voted> {
    for _ in 0..RETRIES {
        let Some(row) = driver.row(Key::Request(answer.id.clone())).await? else {
            return Ok(Voted::Answer);
        };
        let now = now_ms();
        match vote(&row, answer, how, by, driver.seal(), now)? {
            Ballot::Answer => return Ok(Voted::Answer),
            Ballot::Again { given, required } => {
                return Ok(Voted::Waits {
                    row,
                    given,
                    required,
                });
            }
            Ballot::Wait {
                change,
                given,
                required,
            } => {
                if let Some(row) = driver.apply_vote(change).await? {
                    return Ok(Voted::Waits {
                        row,
                        given,
                        required,
                    });
                }
            }
            Ballot::Reached(change) => {
                if let Some(row) = driver.apply_vote(change).await? {
                    let claim = match how {
                        Answering::Claim { owner, until } => {
                            Some(Box::new(lifecycle::answer_claim(
                                &row,
                                answer,
                                driver.seal(),
                                owner,
                                *until,
                                now,
                            )?))
                        }
                        Answering::Submit { .. } => {
                            driver.wake_workers().await?;
                            None
                        }
                    };
                    return Ok(Voted::Reached(row, claim));
                }
            }
        }
    }
    Err(StoreError::Backend(format!(
        "the vote on `{}` lost {RETRIES} races in a row; try again",
        crate::limits::excerpt(&answer.id)
    )))
}
