//! The conversation cases: turns, a halted turn and its answer, list, trim, delete, and a
//! run finished elsewhere.

use std::sync::Arc;

use serde_json::json;
use toolnexus::model::ToolCall;
use toolnexus::store::{Conversation, ConversationStore, RunState, RunStore, StoreError};
use toolnexus::{
    Client, FnModel, FnTool, Message, ModelRequest, Reply, Request, Role, ToolResult, Toolkit,
};

use super::{LEASE, Make, Subject, make_subject};

/// A chat agent: `book ...` calls `confirm` (which asks for approval), its result makes the
/// model answer `booked`; any other prompt is echoed with the number of user turns it saw.
fn chat_client(store: Arc<dyn RunStore>) -> (Client, Toolkit) {
    let confirm = FnTool::builder("confirm")
        .description("Asks for approval.")
        .handler(|_, ctx| async move {
            match ctx.answer() {
                Some(_) => ToolResult::success("approved"),
                None => ToolResult::suspended(Request::approval("Book it?")),
            }
        })
        .build()
        .expect("the tool builds");
    let model = FnModel::new(|req: ModelRequest| async move {
        let last = req.messages.last().expect("a transcript");
        let users = req.messages.iter().filter(|m| m.role == Role::User).count();
        match (last.role, last.content.as_deref().unwrap_or_default()) {
            (Role::Tool, output) => Reply::text(format!("booked ({output})")),
            (_, prompt) if prompt.starts_with("book") => Reply::tool_call("confirm", json!({})),
            (_, prompt) => Reply::text(format!("echo {prompt} after {users} turns")),
        }
    });
    let client = Client::builder(model)
        .model_name("conformance")
        .system("be brief")
        .store(store)
        .build()
        .expect("the client builds");
    let toolkit = Toolkit::builder()
        .tool(confirm)
        .build()
        .expect("the toolkit builds");
    (client, toolkit)
}

fn conversations(s: &Subject) -> &dyn ConversationStore {
    s.store()
        .conversations()
        .expect("the store keeps conversations")
}

/// `ask` saves each ended turn; a turn that halts leaves the conversation waiting on its run,
/// its transcript unchanged; asking again meanwhile is refused; the answer completes the turn.
pub async fn conversation_turn_halts_and_the_answer_completes_it(make: Make) {
    let s = subject!(make);
    let (client, toolkit) = chat_client(Arc::clone(&s.handles[0]));
    let first = client.ask("chat-1", "hi", &toolkit).await.unwrap();
    assert_eq!(first.text, "echo hi after 1 turns");
    let chat = conversations(&s)
        .get_conversation("chat-1")
        .await
        .unwrap()
        .expect("saved");
    assert_eq!(chat.messages, first.messages);
    assert_eq!(chat.messages[0], Message::system("be brief"));
    assert_eq!(chat.turns(), 1);
    assert_eq!(chat.version, 1);

    let halted = client.ask("chat-1", "book Oslo", &toolkit).await.unwrap();
    let request = halted.pending.clone().expect("the turn halts");
    let chat = conversations(&s)
        .get_conversation("chat-1")
        .await
        .unwrap()
        .unwrap();
    let waiting = chat.waiting.clone().expect("waiting on the run");
    assert_eq!(waiting.run_id, halted.run_id);
    assert_eq!(waiting.request_id, request.id);
    assert_eq!(chat.messages, first.messages, "no half turn is saved");
    let parked = s
        .store()
        .get_by_request(&request.id)
        .await
        .unwrap()
        .unwrap();
    assert_eq!(parked.info.state, RunState::Parked);

    let err = client.ask("chat-1", "hello?", &toolkit).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        format!(
            "conversation `chat-1` waits on request `{}`: answer it (`Client::answer`) before the next turn",
            request.id
        )
    );
    assert!(matches!(
        conversations(&s).trim_conversation("chat-1", 1).await,
        Err(StoreError::Conflict(_))
    ));

    let done = client.answer(request.accept(true), &toolkit).await.unwrap();
    assert_eq!(done.text, "booked (approved)");
    let chat = conversations(&s)
        .get_conversation("chat-1")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(chat.waiting, None);
    assert_eq!(chat.messages, done.messages);
    assert_eq!(chat.turns(), 2);
    let roles: Vec<Role> = chat.messages.iter().map(|m| m.role).collect();
    assert_eq!(
        roles,
        [
            Role::System,
            Role::User,
            Role::Assistant,
            Role::User,
            Role::Assistant,
            Role::Tool,
            Role::Assistant
        ]
    );

    let third = client.ask("chat-1", "thanks", &toolkit).await.unwrap();
    assert_eq!(third.text, "echo thanks after 3 turns");
    assert_eq!(
        conversations(&s)
            .get_conversation("chat-1")
            .await
            .unwrap()
            .unwrap()
            .turns(),
        3
    );
    // another conversation is independent
    let other = client.ask("chat-2", "hi", &toolkit).await.unwrap();
    assert_eq!(other.text, "echo hi after 1 turns");
}

fn chat_of(id: &str, turns: usize) -> Conversation {
    let mut chat = Conversation::new(id);
    chat.messages.push(Message::system("s"));
    for t in 0..turns {
        chat.messages.push(Message::user(format!("u{t}")));
        let call = ToolCall::new(format!("c{t}"), "confirm", json!({}));
        chat.messages
            .push(Message::assistant_tool_calls(None, vec![call]));
        chat.messages
            .push(Message::tool_result(format!("c{t}"), "approved", false));
        chat.messages.push(Message::assistant(format!("a{t}")));
    }
    chat
}

/// Conversations are listed in id order a page at a time; saves are compare-and-set; trim
/// keeps whole turns; an unbalanced transcript is refused; delete.
pub async fn conversation_list_trim_delete(make: Make) {
    let s = subject!(make);
    let store = conversations(&s);
    for i in [3, 0, 4, 1, 2] {
        let info = store
            .put_conversation(&chat_of(&format!("c{i}"), i + 1))
            .await
            .unwrap();
        assert_eq!(info.version, 1);
        assert_eq!(info.turns, i + 1);
        assert_eq!(info.messages, 1 + 4 * (i + 1));
    }
    let mut seen = Vec::new();
    let mut after: Option<String> = None;
    let mut pages = 0;
    loop {
        let page = store.list_conversations(after.as_deref(), 2).await.unwrap();
        pages += 1;
        seen.extend(page.conversations.iter().map(|c| (c.id.clone(), c.turns)));
        match page.next {
            Some(next) => after = Some(next),
            None => break,
        }
    }
    assert_eq!(pages, 3);
    assert_eq!(
        seen,
        [0, 1, 2, 3, 4].map(|i| (format!("c{i}"), i + 1)).to_vec()
    );

    // compare-and-set: a stale version, or a second new one, is refused
    let stored = store.get_conversation("c2").await.unwrap().unwrap();
    assert_eq!(stored.messages, chat_of("c2", 3).messages);
    let mut next = stored.clone();
    next.messages.push(Message::user("again"));
    next.messages.push(Message::assistant("ok"));
    assert_eq!(store.put_conversation(&next).await.unwrap().version, 2);
    assert_eq!(
        store.put_conversation(&next).await.unwrap_err().to_string(),
        "conversation `c2` changed since version 1 was read: another turn was saved first"
    );
    assert_eq!(
        store
            .put_conversation(&chat_of("c2", 1))
            .await
            .unwrap_err()
            .to_string(),
        "conversation `c2` is already stored: load it and save from its version"
    );
    let mut unbalanced = chat_of("c9", 1);
    unbalanced.messages.truncate(3);
    assert_eq!(
        store
            .put_conversation(&unbalanced)
            .await
            .unwrap_err()
            .to_string(),
        "conversation `c9`: the tool call `c0` has no result, the transcript would be unbalanced"
    );
    assert!(store.get_conversation("c9").await.unwrap().is_none());

    // trim keeps the system message and the last two turns, each with its tool results
    let trimmed = store.trim_conversation("c4", 2).await.unwrap();
    assert_eq!(
        (trimmed.turns, trimmed.messages, trimmed.version),
        (2, 9, 2)
    );
    let kept = store.get_conversation("c4").await.unwrap().unwrap();
    let mut expected = chat_of("c4", 5).messages;
    expected.drain(1..13);
    assert_eq!(kept.messages, expected);
    assert_eq!(kept.messages[1], Message::user("u3"));
    assert_eq!(
        store.trim_conversation("nope", 1).await.unwrap_err(),
        StoreError::NotFound {
            key: "nope".to_owned()
        }
    );

    assert!(store.delete_conversation("c4").await.unwrap());
    assert!(!store.delete_conversation("c4").await.unwrap());
    assert!(store.get_conversation("c4").await.unwrap().is_none());
    let page = store.list_conversations(None, 10).await.unwrap();
    assert_eq!(page.conversations.len(), 4);
    assert_eq!(page.next, None);
}

/// A worker that finished a conversation's run but died before saving the conversation: the
/// next `ask` takes the run's outcome first, so no turn is lost.
pub async fn conversation_settles_a_run_finished_elsewhere(make: Make) {
    let s = subject!(make);
    let (client, toolkit) = chat_client(Arc::clone(&s.handles[0]));
    let halted = client.ask("chat-3", "book Rome", &toolkit).await.unwrap();
    let request = halted.pending.clone().unwrap();
    // a bare worker: claims, resumes and finishes the run, never touching the conversation
    let claim = s
        .store()
        .claim(&request.accept(true), "worker-1")
        .await
        .unwrap();
    let (bare, _) = chat_client(Arc::new(toolnexus::store::MemoryStore::new()));
    let result = bare
        .resume(claim.record.clone(), claim.answer.clone(), &toolkit)
        .await
        .unwrap();
    s.store().finish(&claim, result.clone()).await.unwrap();
    let chat = conversations(&s)
        .get_conversation("chat-3")
        .await
        .unwrap()
        .unwrap();
    assert!(chat.waiting.is_some(), "not settled yet");

    let next = client.ask("chat-3", "thanks", &toolkit).await.unwrap();
    assert_eq!(next.text, "echo thanks after 2 turns");
    let chat = conversations(&s)
        .get_conversation("chat-3")
        .await
        .unwrap()
        .unwrap();
    assert_eq!(chat.waiting, None);
    assert_eq!(chat.messages[..result.messages.len()], result.messages[..]);
    assert_eq!(chat.messages, next.messages);
}
