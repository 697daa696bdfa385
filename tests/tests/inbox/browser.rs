//! The inbox in a real browser: headless Chromium, driven over WebDriver (chromedriver +
//! fantoccini), against the router served on 127.0.0.1, at a phone's width and a desktop's:
//! the list with who is asking, each kind of request, an empty required choice refused next to
//! its field, an edited approval, and the history of answered requests. Screenshots of every
//! page go to `target/inbox-screenshots/`.
//!
//! Needs Debian's `chromium` and `chromium-driver` (`scripts/chromium.sh` installs them; or set
//! `TOOLNEXUS_CHROMIUM` / `TOOLNEXUS_CHROMEDRIVER`). Without them the test prints a notice and
//! passes, except under `CI=true`, where it fails.

use std::time::Duration;

use fantoccini::{Client as Browser, Locator};
use serde_json::json;
use toolnexus::store::RunState;
use toolnexus_tests::inbox_support::{Fixture, approval_args, trip_args};

// a reconcile request and the page's words when no worker runs: `browser::reconcile::`
// who may answer: `browser::groups::`
#[path = "browser_groups.rs"]
mod groups;
#[path = "browser_reconcile.rs"]
mod reconcile;
#[path = "browser_support.rs"]
mod support;
// a request with one of two approvals: `browser::votes::`
#[path = "browser_votes.rs"]
mod votes;
// a turn's questions together on one page: `browser::together::`
#[path = "browser_together.rs"]
mod together;

use support::{browser_tools, serve_inbox, shot, start_browser};

/// One browser session against the served inbox.
struct Session<'a> {
    browser: &'a Browser,
    fx: &'a Fixture,
    inbox: &'a toolnexus::inbox::Inbox,
    base: String,
}

impl Session<'_> {
    async fn goto(&self, path: &str) {
        let url = format!("{}{path}", self.base);
        self.browser
            .goto(&url)
            .await
            .unwrap_or_else(|e| panic!("open {url}: {e}"));
    }

    async fn goto_request(&self, id: &str) {
        let link = self
            .inbox
            .link(id, Duration::from_secs(600))
            .expect("signed links");
        self.goto(&format!("/inbox{link}")).await;
    }

    async fn find(&self, css: &str) -> fantoccini::elements::Element {
        self.browser
            .find(Locator::Css(css))
            .await
            .unwrap_or_else(|e| panic!("{css}: {e}"))
    }

    async fn text(&self, css: &str) -> String {
        self.find(css).await.text().await.expect("text")
    }

    async fn click(&self, css: &str) {
        self.find(css)
            .await
            .click()
            .await
            .unwrap_or_else(|e| panic!("click {css}: {e}"));
    }

    async fn type_into(&self, css: &str, text: &str) {
        let field = self.find(css).await;
        field.clear().await.expect("clear");
        field.send_keys(text).await.expect("type");
    }

    /// After an answer: the page says it is recorded at once; its status page shows the
    /// outcome once the worker resumed the run (reloading itself until then).
    ///
    /// The recorded page reloads itself into the status page after 2 s: on a loaded machine
    /// the browser may be there before this looks, which is the page working as meant.
    async fn outcome(&self) -> String {
        if let Ok(recorded) = self.browser.find(Locator::Css("#recorded")).await {
            if let Ok(text) = recorded.text().await {
                assert_eq!(text, "Recorded. The assistant is continuing.");
            }
            if let Ok(link) = self
                .browser
                .find(Locator::LinkText("See how it goes"))
                .await
            {
                // the page may reload between finding the link and clicking it
                let _ = link.click().await;
            }
        }
        self.browser
            .wait()
            .at_most(Duration::from_secs(15))
            .for_element(Locator::Css("#outcome"))
            .await
            .expect("the outcome shows once the run moved on")
            .text()
            .await
            .expect("text")
    }

    async fn has_form(&self) -> bool {
        self.browser.find(Locator::Css("form")).await.is_ok()
    }

    async fn list(&self) {
        self.goto("/inbox?admin=yes").await;
        shot(self.browser, "01-list").await;
        let rows = self.text("tbody").await;
        let at = |s: &str| {
            rows.find(s)
                .unwrap_or_else(|| panic!("{s} not listed: {rows}"))
        };
        assert!(
            at("Plan the trip") < at("Lunch?") && at("Lunch?") < at("Deploy build 42"),
            "newest first: {rows}"
        );
        assert!(
            !rows.contains("Restart the old cluster"),
            "the expired one went on without an answer: {rows}"
        );
        // who is asking, under each request
        assert!(
            rows.contains("Deploy build 42 to production?\nexpense-bot · conversation c-42"),
            "{rows}"
        );
    }

    async fn input(&self) {
        // from its link on the list
        self.browser
            .find(Locator::LinkText("Plan the trip to the conference"))
            .await
            .expect("the input's link")
            .click()
            .await
            .expect("click");
        shot(self.browser, "02-input").await;
        assert_eq!(
            self.text(".prompt").await,
            "Plan the trip to the conference"
        );
        assert_eq!(
            self.text("#i-f\\.city-help").await,
            "The city you fly to; the airport nearest to it is booked for you."
        );

        // a wrong value: the message, nothing resumed
        self.type_into("#i-f\\.city", "Oslo").await;
        self.type_into("#i-f\\.nights", "three").await;
        self.click("button[value=accept]").await;
        shot(self.browser, "03-input-wrong-value").await;
        assert_eq!(
            self.text(".error").await,
            "How many nights: must be a whole number, not `three`"
        );
        assert_eq!(self.fx.retries(), 0);

        // the right value: the run's final text
        self.type_into("#i-f\\.nights", "3").await;
        self.click("#i-f\\.seat option[value=window]").await;
        self.click("#i-f\\.bags").await;
        self.click("button[value=accept]").await;
        shot(self.browser, "04-input-recorded").await;
        assert_eq!(
            self.outcome().await,
            r#"final: answered: {"bags":true,"city":"Oslo","nights":3,"seat":"window"}"#
        );
        shot(self.browser, "04-input-done").await;
        assert_eq!(self.fx.retries(), 1);
    }

    /// The approval's form offers to remember the decision, in the run's conversation (the
    /// fixture's inbox names nobody: no choice for a principal), starting at "just this once".
    async fn remember_control(&self, id: &str) {
        self.goto_request(id).await;
        let choices = self.text("#remember").await;
        assert_eq!(
            choices,
            "No, just this once\nYes: this exact call, in this conversation\nYes: every call of this tool, in this conversation"
        );
        let chosen = self
            .find("#remember")
            .await
            .prop("value")
            .await
            .expect("value");
        assert_eq!(chosen.as_deref(), Some(""));
        assert_eq!(
            self.text("label[for=remember]").await,
            "The same answer from now on"
        );
        assert!(
            self.find("#remember")
                .await
                .is_displayed()
                .await
                .expect("displayed")
        );
        shot(self.browser, "05-approval-remember").await;
    }

    async fn approval(&self, id: &str) {
        self.goto_request(id).await;
        shot(self.browser, "05-approval").await;
        // the desk: the kind in words, and what will run
        assert_eq!(self.text("h1").await, "Needs your approval");
        assert_eq!(
            self.text("#who").await,
            "Asked by expense-bot, in conversation c-42."
        );
        let will_run = self.text("section.run").await;
        assert!(
            will_run.starts_with("What will run: Ask ask\n"),
            "{will_run}"
        );
        assert!(
            will_run.contains("\nPrompt Deploy build 42 to production?\n"),
            "{will_run}"
        );
        // and at a desktop width
        self.browser
            .set_window_size(1280, 900)
            .await
            .expect("resize");
        shot(self.browser, "05-approval-desktop").await;
        self.browser
            .set_window_size(420, 900)
            .await
            .expect("resize");
        self.click("button[value=accept]").await;
        assert_eq!(self.outcome().await, "final: answered: null");
        shot(self.browser, "06-approval-done").await;
        let run = self
            .fx
            .store
            .get_by_request(id)
            .await
            .expect("store")
            .expect("run");
        assert_eq!(run.info.state, RunState::Finished);
    }

    async fn expired(&self, id: &str) {
        self.goto_request(id).await;
        shot(self.browser, "07-expired").await;
        assert_eq!(self.text("h1").await, "Expired");
        assert_eq!(
            self.text(".notice").await,
            "This request has expired; it can no longer be answered."
        );
        assert!(!self.has_form().await, "no form on an expired request");
    }

    async fn question(&self, id: &str) {
        self.goto_request(id).await;
        shot(self.browser, "09-question").await;
        self.click("#i-q\\.0-1").await;
        self.click("#i-q\\.1-0").await;
        self.click("#i-q\\.1-2").await;
        self.click("button[value=accept]").await;
        assert_eq!(
            self.outcome().await,
            r#"final: answered: {"Drinks?":["water","coffee"],"Lunch?":"salad"}"#
        );
        shot(self.browser, "10-question-done").await;
    }

    /// A required choice starts empty; submitting it so is refused next to the field.
    async fn choice(&self, id: &str) {
        self.goto_request(id).await;
        shot(self.browser, "11-choice").await;
        let retries = self.fx.retries();
        assert_eq!(
            self.text("#i-f\\.cost_center option:checked").await,
            "Choose…"
        );
        self.click("button[value=accept]").await;
        shot(self.browser, "12-choice-refused").await;
        assert_eq!(
            self.text("#i-f\\.cost_center-error").await,
            "Cost center: choose one"
        );
        assert_eq!(self.fx.retries(), retries, "nothing ran");
        self.click("#i-f\\.cost_center option[value=lab]").await;
        self.click("button[value=accept]").await;
        assert_eq!(
            self.outcome().await,
            r#"final: answered: {"cost_center":"lab"}"#
        );
    }

    /// An editable approval: the arguments are typed fields (the input forms' renderer)
    /// filled with the proposal; a change that does not fit the tool is refused next to its
    /// field and nothing runs; the changed arguments run once approved.
    async fn edit(&self, id: &str) {
        self.goto_request(id).await;
        shot(self.browser, "13-edit").await;
        assert_eq!(self.text("h1").await, "Needs your approval");
        let will_run = self.text("section.run").await;
        assert!(
            will_run.starts_with("What will run: Pay pay\n"),
            "{will_run}"
        );
        assert!(will_run.contains("\nAmount 40\nTo Ada\n"), "{will_run}");
        // no JSON to write: one field per argument, with the proposed value in it
        assert!(
            self.browser.find(Locator::Css("textarea")).await.is_err(),
            "no JSON textarea for arguments a form can express"
        );
        assert_eq!(self.text("#args legend").await, "Arguments");
        let value = |css: &'static str| async move {
            self.find(css)
                .await
                .prop("value")
                .await
                .expect("value")
                .expect("a value")
        };
        assert_eq!(value("#i-f\\.amount").await, "40");
        assert_eq!(value("#i-f\\.to").await, "Ada");
        assert_eq!(
            self.find("#i-f\\.amount")
                .await
                .attr("inputmode")
                .await
                .expect("attr")
                .as_deref(),
            Some("numeric"),
            "a whole number gets the phone's number pad"
        );
        self.browser
            .set_window_size(1280, 900)
            .await
            .expect("resize");
        shot(self.browser, "13-edit-desktop").await;
        self.browser
            .set_window_size(420, 900)
            .await
            .expect("resize");
        let retries = self.fx.retries();
        self.type_into("#i-f\\.amount", "0").await;
        self.click("button[value=accept]").await;
        shot(self.browser, "14-edit-refused").await;
        let refused = self.text("#i-f\\.amount-error").await;
        assert!(refused.starts_with("Amount: "), "{refused}");
        assert_eq!(self.fx.retries(), retries, "nothing ran");
        // the page keeps what was typed, and the other field's proposal
        assert_eq!(value("#i-f\\.to").await, "Ada");
        self.type_into("#i-f\\.amount", "35").await;
        self.click("button[value=accept]").await;
        assert_eq!(self.outcome().await, "final: paid 35 EUR to Ada");
        shot(self.browser, "15-edit-done").await;
    }

    /// The history: each answered request, newest first, with who answered and what, at a
    /// phone's width and a desktop's.
    async fn history(&self, newest_first: &[&str]) {
        self.goto("/inbox?admin=yes").await;
        self.click("#history-link").await;
        shot(self.browser, "16-history").await;
        assert_eq!(self.text("h1").await, "History");
        let mut lines = Vec::new();
        for e in self
            .browser
            .find_all(Locator::Css("ol.history li .decision"))
            .await
            .expect("entries")
        {
            lines.push(e.text().await.expect("text"));
        }
        assert_eq!(lines.len(), newest_first.len(), "{lines:?}");
        for (line, start) in lines.iter().zip(newest_first) {
            assert!(line.starts_with(start), "{start}: {lines:?}");
        }
        let first = self.text("ol.history li").await;
        assert!(first.contains("From expense-bot"), "{first}");
        assert!(first.contains("Finished."), "{first}");
        self.browser
            .set_window_size(1280, 900)
            .await
            .expect("resize");
        shot(self.browser, "16-history-desktop").await;
        self.browser
            .set_window_size(420, 900)
            .await
            .expect("resize");
    }

    async fn forged(&self, id: &str) {
        let good = self
            .inbox
            .link(id, Duration::from_secs(600))
            .expect("signed links");
        let forged = format!("{}0000", &good[..good.len() - 4]);
        assert_ne!(forged, good);
        self.goto(&format!("/inbox{forged}")).await;
        shot(self.browser, "08-forged-link").await;
        assert_eq!(
            self.text(".error").await,
            "This link is not valid: its signature does not match."
        );
        assert!(!self.has_form().await, "no form behind a forged link");
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_inbox_in_headless_chromium() {
    let Some((chromium, driver)) = browser_tools() else {
        return;
    };
    let fx = Fixture::new().await;
    let expired = fx
        .park(json!({"kind": "approval", "prompt": "Restart the old cluster?", "expired": true}))
        .await;
    let approval = fx
        .park_in("c-42", approval_args("Deploy build 42 to production?"))
        .await;
    let question = fx
        .park(
            json!({"kind": "question", "prompt": "Lunch?", "questions": [
                {"question": "Lunch?", "options": ["pasta", "salad"]},
                {"question": "Drinks?", "options": ["water", "juice", "coffee"], "multiple": true}
            ]}),
        )
        .await;
    let expense = fx
        .park(json!({
            "kind": "expense", "prompt": "Book the taxi to the airport",
            "schema": {"type": "object", "properties": {
                "cost_center": {"type": "string", "enum": ["sales", "lab"]}
            }, "required": ["cost_center"]}
        }))
        .await;
    let pay = fx
        .park(json!({"tool": "pay", "args": {"amount": 40, "to": "Ada"}}))
        .await;
    let input = fx.park(trip_args("Plan the trip to the conference")).await;
    // the fixture's worker expires the expired request at once: its run goes on with
    // `declined/expired`
    let expired_run = fx
        .store
        .get_by_request(&expired.id)
        .await
        .expect("store")
        .expect("run")
        .info
        .run_id;
    let resumed = fx
        .store
        .wait_finished(&expired_run, Duration::from_secs(10))
        .await
        .expect("store")
        .expect("the worker resumes the expired run");
    assert_eq!(
        resumed.result.expect("result").text,
        "final: declined/expired: Restart the old cluster?"
    );
    let inbox = fx.inbox();

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0")
        .await
        .expect("bind");
    let base = format!("http://{}", listener.local_addr().expect("addr"));
    let app = axum::Router::new().nest("/inbox", inbox.router());
    let server = tokio::spawn(async move { axum::serve(listener, app).await });

    let (browser, _driver) = start_browser(&chromium, &driver).await;
    let session = Session {
        browser: &browser,
        fx: &fx,
        inbox: &inbox,
        base,
    };
    // the cases run inside a task so that a failed assertion still closes the browser
    let cases = async {
        session.list().await;
        session.input().await;
        session.remember_control(&approval.id).await;
        session.approval(&approval.id).await;
        session.expired(&expired.id).await;
        session.question(&question.id).await;
        session.choice(&expense.id).await;
        session.forged(&input.id).await;
        session.edit(&pay.id).await;
        // newest request first: input, pay, expense, question, approval, expired
        session
            .history(&[
                "Answered by signed link, ",
                "Approved with changes by signed link, ",
                "Answered by signed link, ",
                "Answered by signed link, ",
                "Approved by signed link, ",
                "Expired unanswered, ",
            ])
            .await;
    };
    let outcome = futures_util::FutureExt::catch_unwind(std::panic::AssertUnwindSafe(cases)).await;
    let _ = browser.close().await;
    server.abort();
    if let Err(panic) = outcome {
        std::panic::resume_unwind(panic);
    }
}
