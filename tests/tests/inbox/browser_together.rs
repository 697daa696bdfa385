//! A turn's questions together in headless Chromium, at a phone's width and a desktop's: a run
//! parked with three requests of one turn shows them on one page, each with its own form;
//! answered in any order (the last question first, the first last), each is recorded on its
//! own and leaves the page; an answered one opened again says so; the run is answered only
//! with the last. Screenshots `40-together*`.

use std::sync::Arc;
use std::time::Duration;

use fantoccini::Locator;
use serde_json::json;
use toolnexus::inbox::Inbox;
use toolnexus::store::{MemoryStore, RunState, RunStore};
use toolnexus::{Client, FnTool, PendingRun, Reply, Request, ScriptedModel, ToolResult, Toolkit};

use super::{browser_tools, serve_inbox, shot, start_browser};

/// A store with a run parked together on `ask` (city), `pay` (an approval) and `ask` (date).
async fn parked() -> (Arc<dyn RunStore>, PendingRun) {
    let ask = FnTool::builder("ask")
        .description("Asks.")
        .handler(|args, _| async move {
            ToolResult::suspended(Request::input(format!(
                "Which {}?",
                args["name"].as_str().unwrap_or("?")
            )))
        })
        .build()
        .unwrap();
    let pay = FnTool::builder("pay")
        .description("Pays.")
        .handler(|args, _| async move {
            ToolResult::suspended(Request::approval(format!(
                "Pay {} EUR to Ada?",
                args["eur"]
            )))
        })
        .build()
        .unwrap();
    let toolkit = Toolkit::builder().tool(ask).tool(pay).build().unwrap();
    let turn = Reply::tool_call("ask", json!({"name": "city"}))
        .with_call("pay", json!({"eur": 40}))
        .with_call("ask", json!({"name": "date"}));
    let client = Client::builder(ScriptedModel::new([turn]))
        .model_name("m")
        .questions_together(true)
        .build()
        .unwrap();
    let halted = client.run("Book the trip.", &toolkit).await.unwrap();
    let record = PendingRun::try_from(halted).unwrap();
    let store: Arc<dyn RunStore> = Arc::new(MemoryStore::new());
    store.park(record.clone()).await.unwrap();
    (store, record)
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turns_questions_show_together_and_are_answered_in_any_order() {
    let Some((chromium, driver)) = browser_tools() else {
        return;
    };
    let (store, record) = parked().await;
    let ids: Vec<String> = record.requests().iter().map(|r| r.id.clone()).collect();
    let inbox = Inbox::builder(Arc::clone(&store))
        .signed_links(toolnexus_tests::inbox_support::LINK_KEY.to_vec())
        .build()
        .unwrap();
    let (base, server) = serve_inbox(&inbox).await;
    let (browser, _driver) = start_browser(&chromium, &driver).await;
    let first = format!(
        "{base}/inbox{}",
        inbox.link(&ids[0], Duration::from_secs(600)).unwrap()
    );
    let date = format!(
        "{base}/inbox{}",
        inbox.link(&ids[2], Duration::from_secs(600)).unwrap()
    );

    let cases = async {
        look(&browser, &first).await;
        answer_in_any_order(&browser, &store, &record, &first, &date).await;
    };
    let outcome = futures_util::FutureExt::catch_unwind(std::panic::AssertUnwindSafe(cases)).await;
    let _ = browser.close().await;
    server.abort();
    if let Err(panic) = outcome {
        std::panic::resume_unwind(panic);
    }
}

/// The texts of the elements `css` finds, in page order.
async fn texts(b: &fantoccini::Client, css: &str) -> Vec<String> {
    let mut out = Vec::new();
    for e in b.find_all(Locator::Css(css)).await.unwrap() {
        out.push(e.text().await.unwrap());
    }
    out
}

/// The first request's page shows the turn's three questions, each with its own form.
async fn look(b: &fantoccini::Client, first: &str) {
    let texts = |css: &'static str| texts(b, css);
    b.goto(first).await.unwrap();
    shot(b, "40-together").await;
    assert_eq!(texts("h1").await, ["Needs information"]);
    assert_eq!(
        texts(".prompt").await,
        ["Which city?", "Pay 40 EUR to Ada?", "Which date?"]
    );
    assert_eq!(
        texts("section.together > h2").await,
        ["Also asked in this turn (2)"]
    );
    assert_eq!(texts("form").await.len(), 3, "one form per question");
    // the approval shows the call it runs, its own arguments
    let run = texts("section.together section.run").await;
    assert_eq!(run.len(), 1, "{run:?}");
    assert!(
        run[0].starts_with("What will run: Pay pay\nEur 40\n"),
        "{run:?}"
    );
    b.set_window_size(1280, 900).await.unwrap();
    shot(b, "40-together-desktop").await;
    b.set_window_size(420, 900).await.unwrap();
}

/// The last question first, then the approval, the first last: each recorded on its own.
async fn answer_in_any_order(
    b: &fantoccini::Client,
    store: &Arc<dyn RunStore>,
    record: &PendingRun,
    first: &str,
    date: &str,
) {
    let ids: Vec<String> = record.requests().iter().map(|r| r.id.clone()).collect();
    let texts = |css: &'static str| texts(b, css);
    // two free-text questions on one page: each answer box has an id of its own, its label's
    let mut boxes = Vec::new();
    for e in b
        .find_all(Locator::Css("textarea[name=answer]"))
        .await
        .unwrap()
    {
        boxes.push(e.attr("id").await.unwrap().unwrap_or_default());
    }
    assert_eq!(boxes.len(), 2, "{boxes:?}");
    assert_ne!(boxes[0], boxes[1], "{boxes:?}");
    for id in &boxes {
        b.find(Locator::Css(&format!("label[for='{id}']")))
            .await
            .unwrap_or_else(|_| panic!("a label for {id}"));
    }
    // the last question first: its own form, recorded on its own
    let last = format!("article[id='q-{}']", ids[2]);
    b.find(Locator::Css(&format!("{last} textarea[name=answer]")))
        .await
        .unwrap()
        .send_keys("May 1")
        .await
        .unwrap();
    b.find(Locator::Css(&format!("{last} button[value=accept]")))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    answered(store, record, &ids[2]).await;
    assert_eq!(
        store.info(record.run_id()).await.unwrap().unwrap().state,
        RunState::Parked,
        "two questions still wait"
    );
    // answered: it leaves the page, and opened again it says so
    b.goto(first).await.unwrap();
    assert_eq!(
        texts(".prompt").await,
        ["Which city?", "Pay 40 EUR to Ada?"]
    );
    shot(b, "40-together-one-answered").await;
    b.goto(date).await.unwrap();
    assert!(b.find(Locator::Css("form")).await.is_err());
    let page = b
        .find(Locator::Css("body"))
        .await
        .unwrap()
        .text()
        .await
        .unwrap();
    assert!(
        page.contains("This request was already answered."),
        "{page}"
    );

    // then the approval, from the first request's page
    b.goto(first).await.unwrap();
    b.find(Locator::Css(&format!(
        "article[id='q-{}'] button[value=accept]",
        ids[1]
    )))
    .await
    .unwrap()
    .click()
    .await
    .unwrap();
    answered(store, record, &ids[1]).await;
    // the first last: its page has no other question left
    b.goto(first).await.unwrap();
    assert!(b.find(Locator::Css("section.together")).await.is_err());
    b.find(Locator::Css("textarea[name=answer]"))
        .await
        .unwrap()
        .send_keys("Oslo")
        .await
        .unwrap();
    b.find(Locator::Css("button[value=accept]"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    answered(store, record, &ids[0]).await;
    assert_eq!(
        store.info(record.run_id()).await.unwrap().unwrap().state,
        RunState::Answered,
        "the last answer completes the turn"
    );
    let claim = store.claim_next("w").await.unwrap().expect("claimable");
    assert_eq!(claim.answer.data, Some(json!("Oslo")));
    assert_eq!(claim.other_answers.len(), 2);
    assert!(claim.other_answers[0].ok);
    assert_eq!(claim.other_answers[1].data, Some(json!("May 1")));
}

/// Waits (up to 10 s) until the store has recorded the answer to request `id` of `record`'s run.
async fn answered(store: &Arc<dyn RunStore>, record: &PendingRun, id: &str) {
    for _ in 0..200 {
        let history = store
            .get(record.run_id())
            .await
            .unwrap()
            .unwrap()
            .info
            .history;
        if history.iter().any(|e| {
            e.event == toolnexus::store::RunEventKind::Answered && e.request.as_deref() == Some(id)
        }) {
            return;
        }
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    panic!("the answer to {id} was not recorded");
}
