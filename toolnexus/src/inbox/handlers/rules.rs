//! [Remembered decisions](crate::remember) on the answer page: the "remember" choices of an
//! approval's form (what they offer, and the `data.remember` a posted choice becomes), and
//! the rules page (`GET /rules`, `POST /rules/{id}/revoke`, `GET /api/rules`).

use std::time::{Duration, SystemTime};

use axum::body::{Body, to_bytes};
use axum::extract::{Request as HttpRequest, State};
use axum::http::StatusCode;
use axum::http::request::Parts;
use axum::response::Response;
use maud::{Markup, html as markup};
use serde_json::{Value, json};

use super::api::rfc3339;
use super::html::{session, session_or_fresh, set_session_cookie};
use super::{
    BODY_LIMIT, Inbox, denied, html, json_err, json_out, last_segment, msg, prefix, query,
    too_large,
};
use crate::inbox::fields::{self, Invalid};
use crate::inbox::pages::{self, layout};
use crate::inbox::{Access, Shared, Target};
use crate::remember::{Effect, Remember, Rule, RulePage, Scope, Within};
use crate::request::Answer;
use crate::request::{KIND_APPROVAL, Request};
use crate::store::StoreError;

/// The form field of the remember choice (`<scope>:<within>`, empty: just this once).
pub(crate) const REMEMBER: &str = "remember";
/// The form field of how long a remembered choice holds (`1h`, `1d`, `7d`, `30d`; empty:
/// until revoked).
pub(crate) const REMEMBER_FOR: &str = "remember_for";

use crate::inbox::RULES_PAGE;

/// What an approval's form may offer to remember, to this answerer: in the run's
/// conversation (when the run is a conversation's turn), for the run's principal; each only
/// when the answerer may make it (the run's principal themselves, or granted by the host; a
/// conversation rule of a run for nobody, anyone who may answer).
#[derive(Clone, Debug, Default)]
pub(crate) struct Choices {
    pub(crate) conversation: Option<String>,
    pub(crate) principal: Option<String>,
    /// The run's principal, when the run has one and the answerer may not make its rules.
    pub(crate) refused_for: Option<String>,
    /// Whether a rule made here is the host's grant (the answerer is not the principal).
    pub(crate) granted: bool,
}

impl Choices {
    /// The choices for an approval of a run in `conversation`, started for `principal`,
    /// answered by the caller of `parts`.
    pub(crate) fn of(
        shared: &Shared,
        parts: &Parts,
        conversation: Option<&str>,
        principal: Option<&str>,
    ) -> Self {
        let Some(principal) = principal else {
            return Self {
                conversation: conversation.map(str::to_owned),
                ..Self::default()
            };
        };
        match shared.may_remember_for(parts, principal) {
            Some(granted) => Self {
                conversation: conversation.map(str::to_owned),
                principal: Some(principal.to_owned()),
                refused_for: None,
                granted,
            },
            None => Self {
                refused_for: Some(principal.to_owned()),
                ..Self::default()
            },
        }
    }

    /// Why `within` is not offered here.
    pub(crate) fn not_offered(&self, within: Within) -> String {
        match (&self.refused_for, within) {
            (Some(owner), _) => format!(
                "You may not remember decisions for the runs of {owner}: only {owner}, or someone allowed to grant for {owner}, may."
            ),
            (None, Within::Conversation) => {
                "This request is no conversation's turn: nothing can be remembered in its conversation.".to_owned()
            }
            (None, Within::Principal) => {
                "This request's run was started for nobody: nothing can be remembered for its principal.".to_owned()
            }
        }
    }

    fn any(&self) -> bool {
        self.conversation.is_some() || self.principal.is_some()
    }

    /// The `<option>`s: value and words.
    fn options(&self) -> Vec<(&'static str, String)> {
        let mut out = Vec::new();
        if self.conversation.is_some() {
            out.push((
                "args:conversation",
                "Yes: this exact call, in this conversation".to_owned(),
            ));
            out.push((
                "tool:conversation",
                "Yes: every call of this tool, in this conversation".to_owned(),
            ));
        }
        if let Some(who) = &self.principal {
            out.push(("args:principal", format!("Yes: this exact call, for {who}")));
            out.push((
                "tool:principal",
                format!("Yes: every call of this tool, for {who}"),
            ));
        }
        out
    }
}

/// The "remember this decision" part of an approval's form: nothing when nothing can be
/// remembered.
pub(crate) fn choices_markup(choices: &Choices, submitted: pages::Submitted<'_>) -> Markup {
    let picked = |key: &str| {
        submitted
            .and_then(|pairs| pairs.iter().find(|(k, _)| k == key))
            .map_or("", |(_, v)| v.as_str())
    };
    let (chosen, lasting) = (picked(REMEMBER), picked(REMEMBER_FOR));
    let lasts = [
        ("", "until revoked"),
        ("1h", "for 1 hour"),
        ("1d", "for 1 day"),
        ("7d", "for 7 days"),
        ("30d", "for 30 days"),
    ];
    markup! {
        @if choices.any() {
            fieldset.remember {
                legend { "Remember this decision?" }
                label for="remember" { "The same answer from now on" }
                select id="remember" name=(REMEMBER) aria-describedby="remember-help" {
                    option value="" selected[chosen.is_empty()] { "No, just this once" }
                    @for (value, words) in choices.options() {
                        option value=(value) selected[chosen == value] { (words) }
                    }
                }
                label for="remember_for" { "How long" }
                select id="remember_for" name=(REMEMBER_FOR) {
                    @for (value, words) in lasts {
                        option value=(value) selected[lasting == value] { (words) }
                    }
                }
                p.help id="remember-help" {
                    "Approve remembers an approval, Decline a refusal: a matching call is then answered without asking. An edited call is remembered for its own arguments only. Revoke it on the rules page."
                }
            }
        }
    }
}

/// The remember choice a posted approval form carries, added to `answer` (`data.remember`);
/// unchanged without one. `edited`: the answer runs arguments the person changed.
///
/// # Errors
///
/// A choice the form did not offer, or one that would remember an edit for the whole tool.
pub(crate) fn with_remember(
    answer: Answer,
    choices: &Choices,
    pairs: &fields::Pairs,
    edited: bool,
) -> Result<Answer, Invalid> {
    let get = |key: &str| {
        pairs
            .iter()
            .find(|(k, _)| k == key)
            .map_or("", |(_, v)| v.as_str())
    };
    let chosen = get(REMEMBER);
    if chosen.is_empty() {
        return Ok(answer);
    }
    let wrong = |message: &str| Invalid {
        field: REMEMBER.to_owned(),
        message: message.to_owned(),
    };
    let (scope, within) = match chosen {
        "args:conversation" => (Scope::Args, Within::Conversation),
        "tool:conversation" => (Scope::Tool, Within::Conversation),
        "args:principal" => (Scope::Args, Within::Principal),
        "tool:principal" => (Scope::Tool, Within::Principal),
        _ => return Err(wrong("Choose one of the offered ways to remember.")),
    };
    let offered = match within {
        Within::Conversation => choices.conversation.is_some(),
        Within::Principal => choices.principal.is_some(),
    };
    if !offered {
        return Err(wrong(&choices.not_offered(within)));
    }
    if edited && answer.ok && scope == Scope::Tool {
        return Err(wrong(
            "You changed the arguments: this decision can be remembered for this exact call only, not every call of the tool.",
        ));
    }
    let mut remember = Remember::new(scope, within);
    let hours = match get(REMEMBER_FOR) {
        "" => None,
        "1h" => Some(1),
        "1d" => Some(24),
        "7d" => Some(24 * 7),
        "30d" => Some(24 * 30),
        _ => {
            return Err(Invalid {
                field: REMEMBER_FOR.to_owned(),
                message: "Choose one of the offered durations.".to_owned(),
            });
        }
    };
    if let Some(hours) = hours {
        remember = remember.until(SystemTime::now() + Duration::from_secs(hours * 3600));
    }
    Ok(answer.remember(remember))
}

fn words(rule: &Rule) -> String {
    let what = match rule.scope {
        Scope::Args => "this exact call of",
        Scope::Tool => "every call of",
    };
    let decision = match rule.effect {
        Effect::Allow => "Approve",
        Effect::Deny => "Decline",
    };
    let within = match rule.within {
        Within::Conversation => format!("in conversation {}", rule.holder),
        Within::Principal => format!("for {}", rule.holder),
    };
    format!("{decision} {what} {} {within}", fields::words(&rule.tool))
}

/// The rules page; `prefix`: where the router is mounted, `q`: the caller's own query
/// (`?..` or empty), kept on every link and form.
fn rules_page(shared: &Shared, sess: &str, page: &RulePage, prefix: &str, q: &str) -> String {
    let rules = &page.rules;
    let older = page.next.as_ref().map(|next| {
        let mut query: Vec<(String, String)> =
            form_urlencoded::parse(q.trim_start_matches('?').as_bytes())
                .into_owned()
                .filter(|(k, _)| k != "after")
                .collect();
        query.push(("after".to_owned(), next.clone()));
        let query = form_urlencoded::Serializer::new(String::new())
            .extend_pairs(query)
            .finish();
        format!("{prefix}/rules?{query}")
    });
    let now = SystemTime::now();
    let back = if prefix.is_empty() {
        format!("/{q}")
    } else {
        format!("{prefix}{q}")
    };
    layout(
        "Remembered decisions",
        &markup! {
            p { a href=(back) { "← all requests" } }
            h1 { "Remembered decisions" }
            p.muted { "Each answers a matching approval without asking. Revoke one to be asked again." }
            @if !page.damaged.is_empty() {
                div.notice role="status" {
                    p { "These remembered decisions cannot be read (a damaged row); they decide nothing until repaired or revoked by id:" }
                    ul.damaged {
                        @for d in &page.damaged {
                            li data-damaged-rule=(d.id) { code { (d.id) } ": " (d.reason) }
                        }
                    }
                }
            }
            @if rules.is_empty() {
                p.empty { "Nothing is remembered." }
            } @else {
                ol.history.rules {
                    @for rule in rules {
                        li data-rule=(rule.id) {
                            div.decision { (words(rule)) }
                            @if let Some(args) = &rule.args {
                                div { "With " code { (args.to_string()) } }
                            }
                            div.muted {
                                "Since " (rfc3339(rule.created_at))
                                @if let Some(by) = &rule.answered_by { ", by " (by) }
                                @match rule.until {
                                    Some(until) if until <= now => { ", ended " (rfc3339(until)) }
                                    Some(until) => { ", until " (rfc3339(until)) }
                                    None => { ", until revoked" }
                                }
                                "."
                            }
                            form method="post" action=(format!("{prefix}/rules/{}/revoke{q}", crate::inbox::path_segment(&rule.id))) {
                                input type="hidden" name="csrf" value=(shared.csrf_token(sess, &rule_target(&rule.id)));
                                button.secondary type="submit" { "Revoke" }
                            }
                        }
                    }
                }
            }
            @if let Some(older) = &older {
                p { a href=(older) rel="next" id="older-rules" { "Older decisions →" } }
            }
        },
    )
}

/// What a revoke form's CSRF token is bound to.
fn rule_target(id: &str) -> String {
    format!("rule\0{id}")
}

/// The page for a store that keeps no rules; `back` leads to the page it came from.
fn no_rules(back: Option<&str>) -> Response {
    msg(
        StatusCode::NOT_FOUND,
        "No rules",
        "notice",
        "This store keeps no remembered decisions.",
        back,
    )
}

/// Where the router is mounted, and the caller's own query (`?..` or empty: it may carry
/// what `authorize` checks).
fn mount_and_query(parts: &Parts) -> (String, String) {
    let q = parts
        .uri
        .query()
        .map(|q| format!("?{q}"))
        .unwrap_or_default();
    (prefix(parts), q)
}

pub(super) async fn page(State(shared): Inbox, req: HttpRequest) -> Response {
    let (parts, _) = req.into_parts();
    let access = shared.access(&parts, Target::Rules, &query(&parts));
    if access != Access::Granted {
        return denied(access);
    }
    let Some(rules) = shared.store.rules() else {
        return no_rules(None);
    };
    let after = query(&parts)
        .into_iter()
        .find(|(k, _)| k == "after")
        .map(|(_, v)| v);
    let list = match rules.list_rules_page(after.as_deref(), RULES_PAGE).await {
        Ok(l) => l,
        Err(StoreError::Invalid(why)) => {
            return msg(StatusCode::BAD_REQUEST, "Not a page", "error", &why, None);
        }
        Err(e) => {
            return msg(
                StatusCode::INTERNAL_SERVER_ERROR,
                "Error",
                "error",
                &format!("the run store failed: {e}"),
                None,
            );
        }
    };
    let (sess, fresh) = session_or_fresh(&parts);
    let (mount, q) = mount_and_query(&parts);
    let mut r = html(
        StatusCode::OK,
        rules_page(&shared, &sess, &list, &mount, &q),
    );
    if fresh {
        set_session_cookie(&mut r, &parts, &sess);
    }
    r
}

/// The rule id of `/rules/{id}/revoke`, decoded.
fn rule_id(parts: &Parts) -> String {
    let path = parts.uri.path();
    last_segment(path.strip_suffix("/revoke").unwrap_or(path))
}

pub(super) async fn revoke(State(shared): Inbox, req: HttpRequest) -> Response {
    let (parts, body) = req.into_parts();
    let access = shared.access(&parts, Target::Rules, &query(&parts));
    if access != Access::Granted {
        return denied(access);
    }
    let (mount, q) = mount_and_query(&parts);
    let here = format!("{mount}/rules{q}");
    let Ok(bytes) = to_bytes(Body::new(body), BODY_LIMIT).await else {
        return too_large(&here);
    };
    let id = rule_id(&parts);
    let token = form_urlencoded::parse(&bytes)
        .into_owned()
        .find(|(k, _)| k == "csrf")
        .map(|(_, v)| v)
        .unwrap_or_default();
    if !session(&parts).is_some_and(|s| shared.csrf_ok(&s, &rule_target(&id), &token)) {
        return msg(
            StatusCode::FORBIDDEN,
            "Not allowed",
            "error",
            "This form is stale or was not sent from this page (its CSRF token does not match). Open the rules page again.",
            Some(&here),
        );
    }
    let Some(rules) = shared.store.rules() else {
        return no_rules(Some(&here));
    };
    match rules.revoke_rule(&id).await {
        Ok(true) => msg(
            StatusCode::OK,
            "Revoked",
            "ok",
            "Revoked: a matching call asks again.",
            Some(&here),
        ),
        Ok(false) => msg(
            StatusCode::NOT_FOUND,
            "Not found",
            "notice",
            "This decision is no longer remembered.",
            Some(&here),
        ),
        Err(e) => msg(
            StatusCode::INTERNAL_SERVER_ERROR,
            "Error",
            "error",
            &format!("the run store failed: {e}"),
            Some(&here),
        ),
    }
}

/// A rule as the JSON API shows it.
fn rule_json(rule: &Rule) -> Value {
    json!({
        "id": rule.id,
        "effect": rule.effect.as_str(),
        "tool": rule.tool,
        "scope": rule.scope.as_str(),
        "args": rule.args,
        "within": rule.within.as_str(),
        "holder": rule.holder,
        "until": rule.until.map(rfc3339),
        "createdAt": rfc3339(rule.created_at),
        "answeredBy": rule.answered_by,
        "requestId": rule.request_id,
        "runId": rule.run_id,
    })
}

pub(super) async fn json(State(shared): Inbox, req: HttpRequest) -> Response {
    let (parts, _) = req.into_parts();
    if shared.access(&parts, Target::Rules, &query(&parts)) != Access::Granted {
        return json_err(StatusCode::FORBIDDEN, "not allowed");
    }
    let Some(rules) = shared.store.rules() else {
        return json_out(
            StatusCode::OK,
            &json!({ "rules": [], "damaged": [], "next": null }),
        );
    };
    let after = query(&parts)
        .into_iter()
        .find(|(k, _)| k == "after")
        .map(|(_, v)| v);
    match rules.list_rules_page(after.as_deref(), RULES_PAGE).await {
        Ok(page) => json_out(
            StatusCode::OK,
            &json!({
                "rules": page.rules.iter().map(rule_json).collect::<Vec<_>>(),
                "damaged": page.damaged.iter().map(|d| json!({"id": d.id, "reason": d.reason})).collect::<Vec<_>>(),
                "next": page.next,
            }),
        ),
        Err(StoreError::Invalid(why)) => json_err(StatusCode::BAD_REQUEST, &why),
        Err(e) => json_err(
            StatusCode::INTERNAL_SERVER_ERROR,
            &format!("the run store failed: {e}"),
        ),
    }
}

/// The remember choice of a JSON answer (`data.remember`), checked like the form's and added
/// to `answer`; unchanged without one.
///
/// # Errors
///
/// With the status to answer: `403` for a rule this answerer may not make (the run is
/// another principal's and the host grants nothing); `422` for a remember on a request that is
/// not an approval, one that does not read, one not offered here for another reason (no
/// conversation, nobody named), or an edit remembered for the whole tool.
pub(crate) fn with_json_remember(
    answer: Answer,
    request: &Request,
    choices: &Choices,
    body: &Value,
) -> Result<Answer, (StatusCode, Invalid)> {
    let Some(value) = body.get("data").and_then(|d| d.get("remember")) else {
        return Ok(answer);
    };
    let wrong = |message: String| {
        (
            StatusCode::UNPROCESSABLE_ENTITY,
            Invalid {
                field: REMEMBER.to_owned(),
                message,
            },
        )
    };
    if request.kind != KIND_APPROVAL {
        return Err(wrong("only approvals are remembered".to_owned()));
    }
    let carrier = Answer::accept(&request.id, json!({ REMEMBER: value }));
    let remember = match Remember::of_answer(&carrier) {
        Some(Ok(r)) => r,
        Some(Err(why)) => return Err(wrong(why)),
        None => return Ok(answer),
    };
    let offered = match remember.within {
        Within::Conversation => choices.conversation.is_some(),
        Within::Principal => choices.principal.is_some(),
    };
    if !offered {
        let (status, invalid) = wrong(format!(
            "`within: {}` is not offered for this request: {}",
            remember.within.as_str(),
            choices.not_offered(remember.within)
        ));
        // a rule this answerer may not make is forbidden, not malformed
        let status = if choices.refused_for.is_some() {
            StatusCode::FORBIDDEN
        } else {
            status
        };
        return Err((status, invalid));
    }
    let edited = answer.ok && answer.data.as_ref().and_then(|d| d.get("args")).is_some();
    if edited && remember.scope == Scope::Tool {
        return Err(wrong(
            "an edited approval is remembered for its own arguments only (scope `args`)".to_owned(),
        ));
    }
    Ok(answer.remember(remember))
}
