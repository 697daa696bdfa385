//! The HTML pages (maud: every interpolated string is escaped).

use std::time::SystemTime;

use maud::{DOCTYPE, Markup, PreEscaped, html};

use serde_json::Value;

use super::fields::{ARGS, Control, Field, Invalid, Shape, words};
use super::handlers::Asker;
use super::when::expiry;
pub(crate) use super::when::{ago, seen_words};
use crate::request::Request;

const CSS: &str = "body{font:16px/1.5 system-ui,sans-serif;margin:0 auto;max-width:40rem;padding:1rem;color:#1b1b1b;background:#fafafa}\
h1{font-size:1.4rem}table{border-collapse:collapse;width:100%}td,th{padding:.4rem;border-bottom:1px solid #ddd;text-align:left;vertical-align:top}\
.kind{font-size:.8rem;background:#e7eefc;border-radius:.3rem;padding:.1rem .4rem}\
.prompt{white-space:pre-wrap;background:#fff;border:1px solid #ddd;border-radius:.4rem;padding:.8rem}\
label{display:block;font-weight:600;margin-top:1rem}.help{color:#555;font-size:.9rem;margin:.1rem 0;white-space:pre-line}\
input[type=text],input[type=number],select,textarea{box-sizing:border-box;width:100%;font:inherit;padding:.5rem;border:1px solid #aaa;border-radius:.3rem}\
.opt{display:block;font-weight:400}.req{color:#b00020}\
button,.button{font:inherit;padding:.6rem 1.2rem;margin:1rem .5rem 0 0;border-radius:.3rem;border:1px solid #1d4ed8;background:#1d4ed8;color:#fff;text-decoration:none;display:inline-block}\
button.secondary{background:#fff;color:#1d4ed8}\
.error{background:#fde8e8;border:1px solid #b00020;color:#7a0014;border-radius:.4rem;padding:.6rem}\
.notice{background:#fff7e0;border:1px solid #c99700;border-radius:.4rem;padding:.6rem}\
.done{background:#e6f6ea;border:1px solid #1b7f3b;border-radius:.4rem;padding:.6rem;white-space:pre-wrap}\
.muted{color:#666;font-size:.9rem}.when{white-space:nowrap;color:#444;font-size:.9rem}\
.run summary{cursor:pointer;font-weight:600}.run{background:#fff;border:1px solid #ddd;border-radius:.4rem;padding:.6rem .8rem;margin:1rem 0}.run h2{font-size:1rem;margin:0 0 .4rem}\
.run th{font-weight:600;width:35%}.run td{overflow-wrap:anywhere}code{font-size:.9em}\
p.error.field{margin:.3rem 0 0;padding:.3rem .5rem}\
.who{color:#444;font-size:.9rem}td .who{display:block;margin-top:.2rem}\
fieldset.remember,fieldset.args{border:1px solid #ddd;border-radius:.4rem;margin:1rem 0 0;padding:.4rem .8rem .8rem}fieldset.remember legend{font-weight:600;padding:0 .3rem}\
ol.history{list-style:none;padding:0}ol.history li{background:#fff;border:1px solid #ddd;border-radius:.4rem;padding:.6rem .8rem;margin:.6rem 0}\
ol.history li>div{margin:.15rem 0}.decision{font-weight:600}";

/// A request's kind in plain words, for the badge and the heading.
pub(crate) fn kind_words(kind: &str) -> &'static str {
    match kind {
        "approval" => "Needs your approval",
        "input" => "Needs information",
        "authorization" => "Sign-in needed",
        "question" => "A question for you",
        "reconcile" => "Needs a decision on an interrupted call",
        _ => "Needs your answer",
    }
}

pub(crate) fn layout(title: &str, body: &Markup) -> String {
    layout_refreshing(title, body, None)
}

/// A page that reloads `url` after `secs` seconds, when given.
fn layout_refreshing(title: &str, body: &Markup, refresh: Option<(u32, &str)>) -> String {
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                @if let Some((secs, url)) = refresh {
                    meta http-equiv="refresh" content=(format!("{secs};url={url}"));
                }
                meta name="viewport" content="width=device-width, initial-scale=1";
                meta name="referrer" content="no-referrer";
                title { (title) }
                style { (PreEscaped(CSS)) }
            }
            body { (*body) }
        }
    }
    .into_string()
}

/// One row of the list.
pub(crate) struct Row {
    pub(crate) href: String,
    pub(crate) kind: String,
    pub(crate) prompt: String,
    pub(crate) created_at: SystemTime,
    pub(crate) expires_at: Option<SystemTime>,
    /// Who is asking, as the run's record says.
    pub(crate) asker: Asker,
    /// Made since the viewer last looked at the list.
    pub(crate) new: bool,
}

pub(crate) fn list(
    title: &str,
    rows: &[Row],
    page: usize,
    (prev, next): (Option<String>, Option<String>),
    history: &str,
    rules: &str,
) -> String {
    let now = SystemTime::now();
    layout(
        title,
        &html! {
            h1 { (title) }
            @let fresh = rows.iter().filter(|r| r.new).count();
            @if fresh > 0 {
                p #new-count { (fresh) " new since you last looked" }
            }
            @if rows.is_empty() {
                p.muted { "Nothing is waiting for an answer." }
            } @else {
                table {
                    thead { tr { th { "Request" } th { "Age" } th { "Expires" } } }
                    tbody {
                        @for r in rows {
                            tr {
                                td {
                                    span.kind data-kind=(r.kind) { (kind_words(&r.kind)) } " "
                                    a href=(r.href) { (short(&r.prompt)) }
                                    @if let Some(who) = who_text(&r.asker) { span.who { (who) } }
                                    @if r.new { " " span.new { "new" } }
                                }
                                td.when { (ago(now, r.created_at)) }
                                td.when { (expiry(now, r.expires_at)) }
                            }
                        }
                    }
                }
            }
            p {
                @if let Some(prev) = prev { a href=(prev) rel="prev" { "← newer" } " " }
                span.muted { "page " (page) }
                @if let Some(next) = next { " " a href=(next) rel="next" { "older →" } }
            }
            p { a href=(history) id="history-link" { "History: the requests answered so far →" } }
            p { a href=(rules) id="rules-link" { "Remembered decisions: what is answered without asking →" } }
        },
    )
}

/// Who is asking, in one short line for a list: `expense-bot · conversation c-42`.
pub(crate) fn who_text(asker: &Asker) -> Option<String> {
    match (&asker.agent, &asker.conversation) {
        (Some(a), Some(c)) => Some(format!("{a} · conversation {c}")),
        (Some(a), None) => Some(a.clone()),
        (None, Some(c)) => Some(format!("conversation {c}")),
        (None, None) => None,
    }
}

/// Who is asking, as a sentence for a request's page.
fn asked_by(asker: &Asker) -> Markup {
    html! {
        @if asker.agent.is_some() || asker.conversation.is_some() {
            p.who id="who" {
                "Asked by "
                @if let Some(a) = &asker.agent { strong { (a) } } @else { "the assistant" }
                @if let Some(c) = &asker.conversation { ", in conversation " code { (c) } }
                "."
            }
        }
    }
}

pub(crate) fn short(s: &str) -> String {
    // Markdown's marks (`code`, **strong**) are not what a person reads in one line
    let plain = s.replace("**", "").replace('`', "");
    let s = plain.as_str();
    let first = s.lines().next().unwrap_or("");
    if first.chars().count() > 120 || s.lines().nth(1).is_some() {
        format!("{}…", first.chars().take(120).collect::<String>())
    } else {
        first.to_owned()
    }
}

/// What the form was last submitted with, to show again beside an error.
pub(crate) type Submitted<'a> = Option<&'a [(String, String)]>;

pub(crate) struct FormPage<'a> {
    pub(crate) request: &'a Request,
    pub(crate) shape: &'a Shape,
    pub(crate) action: String,
    pub(crate) csrf: String,
    pub(crate) error: Option<&'a Invalid>,
    pub(crate) submitted: Submitted<'a>,
    pub(crate) back: String,
    /// The call that runs once the request is answered: its tool and arguments.
    pub(crate) call: Option<(&'a str, &'a Value)>,
    /// The run that asks.
    pub(crate) run_id: &'a str,
    /// Who is asking, as the run's record says.
    pub(crate) asker: Asker,
    /// What an approval may be remembered for (nothing for other kinds).
    pub(crate) remember: super::handlers::rules::Choices,
    /// The votes so far, for a request that needs several approvals.
    pub(crate) approvals: Option<Markup>,
    /// The other unanswered requests of a together turn, each with its own form.
    pub(crate) also: Vec<FormPage<'a>>,
}

pub(crate) fn form(p: &FormPage<'_>) -> String {
    let r = p.request;
    let title = format!("{}: {}", kind_words(&r.kind), short(&r.prompt));
    let also = super::together::also(p);
    let body = html! { p { a href=(p.back) { "← all requests" } } (form_markup(p, false)) (also) };
    layout(&title, &body)
}

/// One request's heading, prompt, call and form (`nested`: another question of its turn).
pub(crate) fn form_markup(p: &FormPage<'_>, nested: bool) -> Markup {
    let r = p.request;
    let now = SystemTime::now();
    // another question of the turn on the same page: its element ids apart from the first's
    let pre = if nested {
        format!("{}-", super::path_segment(&r.id))
    } else {
        String::new()
    };
    html! {
            @if nested { h2 data-kind=(r.kind) { (kind_words(&r.kind)) } } @else { h1 data-kind=(r.kind) { (kind_words(&r.kind)) } }
            div.prompt { (prompt_markup(&r.prompt)) }
            (asked_by(&p.asker))
            @if let Some(approvals) = &p.approvals { (approvals) }
            @if let Some((tool, args)) = p.call {
                // what a person approves is shown; for other kinds it is one click away
                @if r.kind == crate::reconcile::KIND_RECONCILE {
                    section.run aria-label="The call that was cut off" {
                        h2 { "The call that was cut off: " (words(tool)) " " code.muted { (tool) } }
                        p { (cut_off_words()) }
                        (will_run(args, p.run_id))
                    }
                } @else if r.kind == "approval" {
                    section.run aria-label="What will run" {
                        h2 { "What will run: " (words(tool)) " " code.muted { (tool) } }
                        (will_run(args, p.run_id))
                    }
                } @else {
                    details.run {
                        summary { "What will run: " (words(tool)) " " code.muted { (tool) } }
                        (will_run(args, p.run_id))
                    }
                }
            }
            @if let Some(group) = r.approvers() { p.muted.group { "For the " strong { (group) } " group to answer." } }
            @if r.expires_at.is_some() { p.muted { "Expires " (expiry(now, r.expires_at_time())) "." } }
            // an error on a field shows next to it; any other on top
            @if let Some(e) = p.error.filter(|e| !on_a_field(p.shape, e)) { p.error role="alert" { (e.message) } }
            // the server checks every value and says what is wrong next to the field, so the
            // browser's own checks (which would block the submit silently on some phones) are off
            form method="post" action=(p.action) novalidate {
                input type="hidden" name="csrf" value=(p.csrf);
                @match p.shape {
                    Shape::Fields(fields) => {
                        @for f in fields { (field(f, p.submitted, p.error, &pre)) }
                        button type="submit" name="action" value="accept" { "Submit" }
                        button.secondary type="submit" name="action" value="decline" formnovalidate { "Decline" }
                        @if r.kind == crate::reconcile::KIND_RECONCILE {
                            p.help id="decline-help" { "Decline: the call is not run again and fails as declined; the assistant reads that you declined." }
                        }
                    }
                    Shape::FreeText => {
                        label for=(format!("{pre}answer")) { "Your answer" span.req { " *" } }
                        textarea id=(format!("{pre}answer")) name="answer" rows="4" required { (value(p.submitted, "answer").unwrap_or_default()) }
                        button type="submit" name="action" value="accept" { "Submit" }
                        button.secondary type="submit" name="action" value="decline" formnovalidate { "Decline" }
                    }
                    Shape::Approval(edit) => {
                        @if let Some(edit) = edit {
                            @if let Some(fields) = &edit.fields {
                                fieldset.args id="args" aria-describedby="args-help" {
                                    legend { strong { "Arguments" } }
                                    input type="hidden" name=(super::fields::ARGS_FORM) value="fields";
                                    p.help id="args-help" { "You may change them before approving; what you approve is what runs." }
                                    @if let Some(e) = p.error.filter(|e| e.field == ARGS) { p.error.field id="args-error" role="alert" { (e.message) } }
                                    @let defaults = edit.defaults();
                                    @let shown = p.submitted.or(Some(defaults.as_slice()));
                                    @for f in fields { (field(f, shown, p.error, &pre)) }
                                }
                            } @else {
                                label for="args" { "Arguments" }
                                p.help id="args-help" { "You may change them before approving; what you approve is what runs. Write them as JSON (this tool's arguments do not fit a form)." }
                                @if let Some(e) = p.error.filter(|e| e.field == ARGS) { p.error.field id="args-error" role="alert" { (e.message) } }
                                textarea id="args" name="args" rows="8" spellcheck="false" aria-describedby="args-help" {
                                    (value(p.submitted, ARGS).map_or_else(|| pretty(&edit.proposed), str::to_owned))
                                }
                            }
                        }
                        (super::handlers::rules::choices_markup(&p.remember, p.submitted))
                        button type="submit" name="action" value="accept" { "Approve" }
                        button.secondary type="submit" name="action" value="decline" { "Decline" }
                    }
                    Shape::Authorization(url) => {
                        @match url.as_deref().filter(|u| u.starts_with("https://") || u.starts_with("http://")) {
                            Some(u) => p { a.button href=(u) target="_blank" rel="noopener noreferrer" { "Open the login page" } }
                            None => @if let Some(u) = url { p.notice { "Go to: " code { (u) } } }
                        }
                        p.muted { "When you have finished there, continue here." }
                        button type="submit" name="action" value="accept" { "Done, continue" }
                        button.secondary type="submit" name="action" value="decline" { "Decline" }
                    }
                    Shape::AcceptDecline => {
                        button type="submit" name="action" value="accept" { "Accept" }
                        button.secondary type="submit" name="action" value="decline" { "Decline" }
                    }
                }
            }
    }
}

/// Whether `error` names one of the form's fields (then it shows next to that field).
fn on_a_field(shape: &Shape, error: &Invalid) -> bool {
    match shape {
        Shape::Fields(fields) => fields.iter().any(|f| f.key == error.field),
        Shape::Approval(Some(edit)) => {
            error.field == ARGS
                || edit
                    .fields
                    .as_ref()
                    .is_some_and(|fields| fields.iter().any(|f| f.key == error.field))
        }
        _ => false,
    }
}

/// A prompt as a person reads it: Markdown's inline code (`` `pay` ``) and strong emphasis
/// (`**now**`) as what they mean, never their marks; any other text as it is (escaped).
pub(crate) fn prompt_markup(prompt: &str) -> Markup {
    // a mark without its pair is text, as written
    let paired = |text: &str, mark: &str| text.matches(mark).count().is_multiple_of(2);
    let strong = |text: &str| {
        html! {
            @if paired(text, "**") {
                @for (j, part) in text.split("**").enumerate() {
                    @if j % 2 == 1 { strong { (part) } } @else { (part) }
                }
            } @else {
                (text)
            }
        }
    };
    html! {
        @if paired(prompt, "`") {
            @for (i, part) in prompt.split('`').enumerate() {
                @if i % 2 == 1 { code { (part) } } @else { (strong(part)) }
            }
        } @else {
            (strong(prompt))
        }
    }
}

/// What a reconcile request says of its cut call, in words (the prompt above says when it
/// started).
fn cut_off_words() -> &'static str {
    "It was cut off before its result was recorded, so it may or may not have taken effect: check before you choose."
}

/// What runs once the request is answered: the call's arguments as a table, and the run.
fn will_run(args: &Value, run_id: &str) -> Markup {
    html! {
        @match args.as_object() {
            Some(map) if !map.is_empty() => table {
                tbody {
                    @for (k, v) in map {
                        tr { th scope="row" { (words(k)) } td { (arg_text(v)) } }
                    }
                }
            },
            Some(_) => p.muted { "No arguments." },
            None => p { code { (arg_text(args)) } },
        }
        p.muted { "Run " code { (run_id) } "." }
    }
}

/// A value as indented JSON, for a person to edit.
fn pretty(v: &Value) -> String {
    serde_json::to_string_pretty(v).unwrap_or_else(|_| v.to_string())
}

/// An argument as a person reads it: text as it is, anything else as compact JSON.
fn arg_text(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => "(none)".to_owned(),
        other => other.to_string(),
    }
}

fn value<'a>(submitted: Submitted<'a>, name: &str) -> Option<&'a str> {
    submitted?
        .iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

fn chosen(submitted: Submitted<'_>, name: &str, option: &str) -> bool {
    submitted.is_some_and(|s| s.iter().any(|(k, v)| k == name && v == option))
}

/// One field of a form; its element ids start with `pre` (empty but for another question of
/// the turn on the same page).
fn field(f: &Field, submitted: Submitted<'_>, error: Option<&Invalid>, pre: &str) -> Markup {
    let id = format!("{pre}i-{}", super::path_segment(&f.name));
    let invalid = error.is_some_and(|e| e.field == f.key);
    let help_id = format!("{id}-help");
    html! {
        @match &f.control {
            Control::Checkbox => {
                label.opt for=(id) {
                    input type="checkbox" id=(id) name=(f.name) checked[value(submitted, &f.name).is_some()];
                    " " strong { (f.label) }
                }
            }
            Control::Choice { options, multiple } => {
                fieldset {
                    legend { strong { (f.label) } @if f.required { span.req title="required" { " *" } } }
                    @for (i, o) in options.iter().enumerate() {
                        label.opt for=(format!("{id}-{i}")) {
                            input type=(if *multiple { "checkbox" } else { "radio" }) id=(format!("{id}-{i}")) name=(f.name) value=(o)
                                checked[chosen(submitted, &f.name, o)] required[f.required && !*multiple];
                            " " (o)
                        }
                    }
                }
            }
            _ => {
                label for=(id) { (f.label) @if f.required { span.req title="required" { " *" } } }
            }
        }
        @if let Some(h) = &f.help { p.help id=(help_id) { (h) } }
        @if let Some(e) = error.filter(|e| e.field == f.key) { p.error.field id=(format!("{id}-error")) role="alert" { (e.message) } }
        @match &f.control {
            Control::Text => input type="text" id=(id) name=(f.name) value=(value(submitted, &f.name).unwrap_or_default())
                required[f.required] aria-invalid=(invalid);
            Control::Number => input type="text" inputmode="decimal" id=(id) name=(f.name) value=(value(submitted, &f.name).unwrap_or_default())
                required[f.required] aria-invalid=(invalid);
            Control::Integer => input type="text" inputmode="numeric" id=(id) name=(f.name) value=(value(submitted, &f.name).unwrap_or_default())
                required[f.required] aria-invalid=(invalid);
            // nothing is chosen for the person: a required choice starts empty too
            Control::Select(options) => select id=(id) name=(f.name) required[f.required] aria-invalid=(invalid) {
                option value="" selected[!options.iter().any(|o| value(submitted, &f.name) == Some(o.as_str()))] {
                    @if f.required { "Choose…" } @else { "—" }
                }
                @for (i, o) in options.iter().enumerate() {
                    option value=(o) selected[value(submitted, &f.name) == Some(o.as_str())] {
                        (f.option_labels.as_ref().and_then(|l| l.get(i)).unwrap_or(o))
                    }
                }
            }
            _ => {}
        }
    }
}

/// A page with only a heading and a message (errors, refusals, expired, done).
pub(crate) fn message(title: &str, class: &str, text: &str, link: Option<(&str, &str)>) -> String {
    layout(
        title,
        &html! {
            h1 { (title) }
            div class=(class) { (text) }
            @if let Some((href, label)) = link { p { a href=(href) { (label) } } }
        },
    )
}

/// The run's outcome after an answer.
pub(crate) fn outcome(
    status: &str,
    text: &str,
    next: Option<(&str, &Request)>,
    back: &str,
) -> String {
    layout(
        "Answered",
        &html! {
            h1 { "Answered" }
            @match next {
                Some((href, req)) => {
                    p { "The run goes on and asks again:" }
                    div.prompt { span.kind data-kind=(req.kind) { (kind_words(&req.kind)) } " " (prompt_markup(&req.prompt)) }
                    p { a.button href=(href) { "Answer the next request" } }
                }
                None => {
                    p.muted { "The run is " (status) "." }
                    div.done id="outcome" { (text) }
                }
            }
            p { a href=(back) { "← all requests" } }
        },
    )
}

/// The text an answer page shows once the answer is recorded and a worker is running.
pub(crate) const RECORDED: &str = "Recorded. The assistant is continuing.";

/// The text an answer page shows once the answer is recorded while no worker is running.
pub(crate) const NO_WORKER: &str = "Answered; no worker has taken it up.";

/// Who will take a recorded answer up.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Pickup {
    /// A worker is running (or the run is claimed), or the store cannot tell.
    Continuing,
    /// No worker is running: the one seen last, when it was, or none ever.
    NoWorker(Option<std::time::SystemTime>),
}

impl Pickup {
    /// The page's words: [`RECORDED`], or [`NO_WORKER`] with when a worker was last seen.
    pub(crate) fn text(self) -> String {
        match self {
            Pickup::Continuing => RECORDED.to_owned(),
            Pickup::NoWorker(None) => format!("{NO_WORKER} No worker has been seen."),
            Pickup::NoWorker(Some(at)) => {
                format!("{NO_WORKER} A worker was last seen {}.", seen_words(at))
            }
        }
    }
}

/// The answer is recorded; a worker resumes the run (or none is running: `pickup` says so).
/// The page reloads the run's status page (`status`) until the run has moved on.
pub(crate) fn recorded(
    status: &str,
    answered_by: Option<&str>,
    back: &str,
    pickup: Pickup,
) -> String {
    let class = match pickup {
        Pickup::Continuing => "notice",
        Pickup::NoWorker(_) => "error",
    };
    layout_refreshing(
        "Recorded",
        &html! {
            h1 { "Recorded" }
            div class=(class) id="recorded" { (pickup.text()) }
            @if let Some(by) = answered_by { p.muted { "Answered by " (by) "." } }
            p { a href=(status) { "See how it goes" } }
            p { a href=(back) { "← all requests" } }
        },
        Some((2, status)),
    )
}

#[cfg(test)]
mod tests {
    use super::{prompt_markup, short};

    #[test]
    fn prompts_show_no_markdown_marks() {
        assert_eq!(
            prompt_markup("The call of `pay` **may** have run; `a` and `b`").into_string(),
            "The call of <code>pay</code> <strong>may</strong> have run; <code>a</code> and <code>b</code>"
        );
        // an odd mark is text, as written (and escaped)
        assert_eq!(prompt_markup("5 ` <b>").into_string(), "5 ` &lt;b&gt;");
        assert_eq!(short("Pay `Ada` **now**"), "Pay Ada now");
    }
}
