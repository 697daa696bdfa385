//! A turn's questions together on the page: under the request shown, the other questions of
//! its turn still waiting, each with its own form (its own action and CSRF token), answerable
//! in any order.

use maud::{Markup, PreEscaped, html};

/// Each other question set apart from the one above it.
const CSS: &str = ".together article.question{border-top:1px solid #ddd;margin-top:1.5rem;padding-top:.3rem}.together article.question h2{font-size:1.15rem}";

use super::pages::{FormPage, form_markup};

/// The other questions of the turn of the request `p` shows (nothing for a run that waits on
/// one request).
pub(crate) fn also(p: &FormPage<'_>) -> Markup {
    if p.also.is_empty() {
        return html! {};
    }
    html! {
        style { (PreEscaped(CSS)) }
        section.together aria-label="The other questions of this turn" {
            h2 { "Also asked in this turn (" (p.also.len()) ")" }
            p.muted { "Answer them in any order; the assistant continues once every question is answered." }
            @for other in &p.also {
                article.question id=(format!("q-{}", other.request.id)) { (form_markup(other, true)) }
            }
        }
    }
}
