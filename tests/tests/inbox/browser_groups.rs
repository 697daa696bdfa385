//! Who may answer, in headless Chromium at a phone's width and a desktop's: a finance request
//! shown to a finance person (the page says whose it is) and answered; the same link refused
//! to someone outside finance with a clear message and no form. Screenshots `30-group-*`.

use std::sync::Arc;
use std::time::Duration;

use fantoccini::Locator;
use serde_json::json;
use toolnexus::inbox::{Inbox, Target};
use toolnexus::store::RunState;
use toolnexus_tests::inbox_support::{Fixture, LINK_KEY, approval_args};

use super::{browser_tools, serve_inbox, shot, start_browser};

/// The person, from the page's `who=` query (what a host's session would say; the form posts
/// back to the same address).
fn who(parts: &axum::http::request::Parts) -> Option<String> {
    parts
        .uri
        .query()?
        .split('&')
        .find_map(|p| p.strip_prefix("who="))
        .map(str::to_owned)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_finance_request_is_shown_to_finance_and_refused_to_others() {
    let Some((chromium, driver)) = browser_tools() else {
        return;
    };
    let fx = Fixture::without_worker().await;
    let mut args = approval_args("Pay invoice 7 (1,200 EUR) to Acme?");
    args["approvers"] = json!("finance");
    let request = fx.park(args).await;
    let inbox = Inbox::builder(Arc::clone(&fx.store))
        .signed_links(LINK_KEY.to_vec())
        .answered_by(who)
        .authorize(|parts, target| who(parts).is_some() && matches!(target, Target::List))
        .groups_of(|person| match person {
            "ann" => vec!["finance".to_owned()],
            _ => vec![],
        })
        .build()
        .unwrap();
    let (base, server) = serve_inbox(&inbox).await;
    let (browser, _driver) = start_browser(&chromium, &driver).await;
    let link = inbox.link(&request.id, Duration::from_secs(600)).unwrap();
    let url = format!("{base}/inbox{link}");
    let url = url.as_str();

    let cases = async {
        let b = &browser;
        let text = |css: &'static str| async move {
            b.find(Locator::Css(css))
                .await
                .unwrap_or_else(|e| panic!("{css}: {e}"))
                .text()
                .await
                .unwrap()
        };
        let as_person = |name: &'static str| async move {
            b.goto(&format!("{url}&who={name}")).await.unwrap();
        };
        let both_widths = |name: &'static str| async move {
            shot(b, name).await;
            b.set_window_size(1280, 900).await.unwrap();
            shot(b, &format!("{name}-desktop")).await;
            b.set_window_size(420, 900).await.unwrap();
        };
        as_person("bob").await;
        assert_eq!(text("h1").await, "Not your group");
        assert_eq!(
            text("div.error").await,
            "This request is for the finance group to answer; you are not in it, so it cannot be answered here."
        );
        assert!(
            b.find(Locator::Css("form")).await.is_err(),
            "no form for bob"
        );
        both_widths("30-group-refused").await;
        assert_eq!(
            fx.store
                .get_by_request(&request.id)
                .await
                .unwrap()
                .unwrap()
                .info
                .state,
            RunState::Parked
        );

        as_person("ann").await;
        assert_eq!(text("h1").await, "Needs your approval");
        assert_eq!(text("p.group").await, "For the finance group to answer.");
        both_widths("30-group-finance").await;
        b.find(Locator::Css("button[value=accept]"))
            .await
            .unwrap()
            .click()
            .await
            .unwrap();
        b.wait()
            .at_most(Duration::from_secs(15))
            .for_element(Locator::Css("#recorded"))
            .await
            .expect("the answer is recorded");
        shot(b, "30-group-answered").await;
        let run = fx.store.get_by_request(&request.id).await.unwrap().unwrap();
        assert_eq!(run.info.state, RunState::Answered);
        assert_eq!(run.info.answered_by(), Some("ann"));
    };
    let outcome = futures_util::FutureExt::catch_unwind(std::panic::AssertUnwindSafe(cases)).await;
    let _ = browser.close().await;
    server.abort();
    if let Err(panic) = outcome {
        std::panic::resume_unwind(panic);
    }
}
