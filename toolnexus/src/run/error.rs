//! [`RecordError`]: why a durable record is refused, or cannot be made. Folded into
//! [`Error`](crate::Error) by `From` (its variants become [`Error::Persist`](crate::Error::Persist),
//! [`Error::NotPending`](crate::Error::NotPending) and [`Error::Config`](crate::Error::Config),
//! with the same messages), so `?` carries it into a host's `toolnexus::Result`.

use super::result::RunStatus;

/// Why a [`PendingRun`](super::PendingRun), a sealed record or a checkpoint is refused, or
/// cannot be made. Messages are lowercase, name the field and both values, and say what to do.
///
/// ```
/// use toolnexus::PendingRun;
/// use toolnexus::run::RecordError;
///
/// let err = PendingRun::from_json("{}").unwrap_err();
/// assert!(matches!(err, RecordError::Invalid(_)));
/// assert_eq!(
///     err.to_string(),
///     "invalid persisted run: the record has no `version`: it was not written by `PendingRun::to_json`"
/// );
/// // `?` folds it into the crate's error, message unchanged
/// let folded = toolnexus::Error::from(err);
/// assert!(matches!(folded, toolnexus::Error::Persist(_)));
/// ```
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum RecordError {
    /// The record is not one, is of another version, disagrees with itself, was changed after
    /// it was sealed, or holds what a record cannot (becomes [`Error::Persist`](crate::Error::Persist)).
    #[error("invalid persisted run: {0}")]
    Invalid(String),
    /// A record was asked of a run that is not pending (becomes
    /// [`Error::NotPending`](crate::Error::NotPending)).
    #[error("the run is not pending (status `{status}`): there is nothing to resume")]
    NotPending {
        /// The run's status.
        status: RunStatus,
    },
    /// A [`SealKey`](super::SealKey) that cannot be made (becomes
    /// [`Error::Config`](crate::Error::Config)).
    #[error("{0}")]
    Key(String),
}

/// `Result<T, RecordError>`.
pub type RecordResult<T> = Result<T, RecordError>;

/// An [`RecordError::Invalid`] with `message`.
pub(crate) fn invalid<T>(message: String) -> RecordResult<T> {
    Err(RecordError::Invalid(message))
}
