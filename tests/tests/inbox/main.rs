//! The inbox (the answer page), one module per way of driving it: the router without a
//! browser, through tower (`html`; the desk's history and who is asking: `desk`; remembered
//! decisions: `remember`, and whose they are: `rule_owners`; where the page meets the store
//! and the boundary: `seams`; who takes an answer up: `pickup`), and in
//! headless Chromium over WebDriver (`browser`).
//!
//! The `browser` tests need Chromium and chromedriver (`scripts/chromium.sh`): without them
//! they print a notice and pass, except under `CI=true`, where they fail.
//! `cargo test -p toolnexus-tests --test inbox -- browser::` runs only them.
//!
//! The email notifier's tests (`email`) are built with the feature `email` only
//! (`cargo test -p toolnexus-tests --features email --test inbox -- email::`; they need an
//! SMTP server, `scripts/smtp.sh`).

mod browser;
mod desk;
#[cfg(feature = "email")]
mod email;
mod governed_rules;
mod groups;
mod html;
mod html_api;
mod html_approvals;
mod html_forms;
mod pickup;
mod remember;
mod rule_owners;
mod seams;
mod seen;
mod votes;

// last: what this binary skipped (its tests that need a missing component pass without running)
toolnexus_tests::skip_summary!();
