//! Whose runs a rule covers, and who may make it: the ownership check of a remembered
//! decision, at the store's `submit` (before anything is recorded) and in the loop (before a
//! rule is kept).
//!
//! A rule covers the runs of the answered run's principal ([`Client::for_principal`](crate::Client::for_principal)):
//! `within: principal` all of them, `within: conversation` those of the run's conversation.
//! Only that principal answering their own run, or an answerer the host allows to grant for
//! that principal ([`RunStore::submit_granting`](crate::store::RunStore::submit_granting),
//! the inbox's `InboxBuilder::grants` check), may make it. A run for
//! nobody has no principal's rules (`within: principal` is refused); its conversation's rules
//! may be made by whoever may answer it.

use std::borrow::Cow;

use serde_json::Value;

use super::{DATA_REMEMBER, Remember, Within};
use crate::ledger::{StoreError, StoreResult};
use crate::request::Answer;

/// The wire key of `data.remember` naming whose runs the rule covers (the run's principal);
/// the store writes it when it records an answer it checked.
pub const REMEMBER_FOR: &str = "for";

/// The principal `data.remember.for` names, when the answer carries one.
pub(crate) fn stated_for(answer: &Answer) -> Option<&str> {
    answer
        .data
        .as_ref()?
        .get(DATA_REMEMBER)?
        .get(REMEMBER_FOR)?
        .as_str()
}

/// Whose runs a rule made `within` a run for `principal` covers: `Ok(None)` for a
/// conversation's rule of a run for nobody.
///
/// # Errors
///
/// `within: principal` for a run for nobody.
pub(crate) fn covers(within: Within, principal: Option<&str>) -> Result<Option<&str>, String> {
    match (within, principal) {
        (Within::Principal, None) => Err(
            "`within: principal` for a run started for nobody: a principal's rule covers the runs of the answered run's principal (start runs with `Client::for_principal`)"
                .to_owned(),
        ),
        (_, principal) => Ok(principal),
    }
}

/// Why `by` may not make a rule covering `owner`'s runs.
pub(crate) fn not_allowed(by: &str, owner: &str) -> String {
    format!(
        "`{}` may not make a rule covering the runs of `{}`: a remembered decision is made by the run's principal answering their own run, or by an answerer the host allows to grant for them",
        crate::limits::excerpt(by),
        crate::limits::excerpt(owner)
    )
}

/// The answer a store records for a submit of `answer` by `by` to a run for `principal`
/// (`granted`: the host allows `by` to grant for that principal): unchanged without a
/// remember choice, else with `remember.for` naming whose runs its rule covers.
///
/// # Errors
///
/// [`StoreError::Invalid`] for a remember that does not read;
/// [`StoreError::NotAllowed`] for one `by` may not make (nothing is recorded).
pub(crate) fn answer_to_record<'a>(
    answer: &'a Answer,
    principal: Option<&str>,
    by: &str,
    granted: bool,
) -> StoreResult<Cow<'a, Answer>> {
    let Some(remember) = Remember::of_answer(answer) else {
        return Ok(Cow::Borrowed(answer));
    };
    let refused = |why: String| {
        format!(
            "the answer to `{}` is refused, nothing was recorded: {why}",
            crate::limits::excerpt(&answer.id)
        )
    };
    let remember = remember.map_err(|why| StoreError::Invalid(refused(why)))?;
    let owner =
        covers(remember.within, principal).map_err(|why| StoreError::NotAllowed(refused(why)))?;
    let stated = stated_for(answer);
    let Some(owner) = owner else {
        return match stated {
            Some(named) => Err(StoreError::NotAllowed(refused(format!(
                "`remember.for` names `{}`, but the run was started for nobody",
                crate::limits::excerpt(named)
            )))),
            None => Ok(Cow::Borrowed(answer)),
        };
    };
    if let Some(named) = stated.filter(|named| *named != owner) {
        return Err(StoreError::NotAllowed(refused(format!(
            "`remember.for` names `{}`, but the run is `{}`'s",
            crate::limits::excerpt(named),
            crate::limits::excerpt(owner)
        ))));
    }
    if by != owner && !granted {
        return Err(StoreError::NotAllowed(refused(not_allowed(by, owner))));
    }
    let mut recorded = answer.clone();
    if let Some(Value::Object(remember)) = recorded
        .data
        .as_mut()
        .and_then(|d| d.get_mut(DATA_REMEMBER))
    {
        remember.insert(REMEMBER_FOR.to_owned(), Value::from(owner));
    }
    Ok(Cow::Owned(recorded))
}
