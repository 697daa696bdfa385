//! The client side of a session with a consumed server: it declares form and URL elicitation,
//! checks each incoming elicitation at the trust boundary, answers it through the host's
//! handler, and matches elicitations and progress to the call in flight they belong to.

use std::collections::HashMap;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, PoisonError};

use rmcp::model::{
    ClientCapabilities, ClientConfig, ElicitRequestParams, ElicitResult, ElicitationAction,
    ElicitationCapability, Extensions, FormElicitationCapability, Implementation,
    ProgressNotificationParam, ProgressToken, ProtocolVersion, RequestId, UrlElicitationCapability,
};
use rmcp::service::{InboundStreamOrigin, NotificationContext, RequestContext, RoleClient};
use rmcp::{ClientHandler, ErrorData};

use super::ElicitationHandler;
use crate::mcp::elicit::{Incoming, incoming, refused_result, result_from_answer};
use crate::request::{Answer, Request};

/// The client side of the session: declares form and URL elicitation, and answers them
/// through the host's handler.
#[derive(Clone)]
pub(super) struct Handler {
    pub(super) server: String,
    pub(super) host: Option<ElicitationHandler>,
    pub(super) in_flight: Arc<InFlight>,
}

/// What one call in flight learned while it waited: the server's elicitations that were
/// declined or cancelled on its behalf, whether a person is being asked for it, its progress.
#[derive(Default)]
pub(super) struct CallWatch {
    /// The messages of elicitations cancelled for want of a handler.
    pub(super) unanswered: Mutex<Vec<String>>,
    /// Why each elicitation the trust boundary refused was declined.
    pub(super) refused: Mutex<Vec<String>>,
    /// How many of its elicitations a person is answering right now (the call's timeout
    /// waits meanwhile: a person's time never times a call out).
    pub(super) asking: AtomicUsize,
    /// Woken by progress and by a person starting or finishing an answer.
    pub(super) touched: tokio::sync::Notify,
    pub(super) progress_token: Option<ProgressToken>,
}

impl CallWatch {
    pub(super) fn note(list: &Mutex<Vec<String>>, message: String) {
        list.lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(message);
    }

    pub(super) fn take(list: &Mutex<Vec<String>>) -> Vec<String> {
        std::mem::take(&mut *list.lock().unwrap_or_else(PoisonError::into_inner))
    }
}

/// The calls of one session waiting for their result, by request id.
#[derive(Default)]
pub(super) struct InFlight {
    pub(super) calls: Mutex<HashMap<RequestId, Arc<CallWatch>>>,
}

impl InFlight {
    pub(super) fn insert(&self, id: RequestId, watch: Arc<CallWatch>) {
        self.lock().insert(id, watch);
    }

    pub(super) fn remove(&self, id: &RequestId) {
        self.lock().remove(id);
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, HashMap<RequestId, Arc<CallWatch>>> {
        self.calls.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// The call a server's request belongs to, matched by id, never by order: the request id
    /// of the POST whose response stream carried it (streamable HTTP), or the one call in
    /// flight. With several calls in flight on a transport that cannot tell (stdio), `None`.
    pub(super) fn owner(&self, extensions: &Extensions) -> Option<Arc<CallWatch>> {
        let calls = self.lock();
        match extensions.get::<InboundStreamOrigin>() {
            Some(InboundStreamOrigin::OutboundRequest(id)) => calls.get(id).cloned(),
            _ if calls.len() == 1 => calls.values().next().cloned(),
            _ => None,
        }
    }

    /// The calls a person's time must not count against: the owner, or every call in flight
    /// when the owner cannot be told.
    pub(super) fn waiting_for(&self, owner: Option<&Arc<CallWatch>>) -> Vec<Arc<CallWatch>> {
        match owner {
            Some(watch) => vec![Arc::clone(watch)],
            None => self.lock().values().cloned().collect(),
        }
    }
}

/// While alive, the calls' timeouts wait for a person.
pub(super) struct Asking(Vec<Arc<CallWatch>>);

impl Asking {
    pub(super) fn start(calls: Vec<Arc<CallWatch>>) -> Self {
        for c in &calls {
            c.asking.fetch_add(1, Ordering::SeqCst);
            c.touched.notify_one();
        }
        Self(calls)
    }
}

impl Drop for Asking {
    fn drop(&mut self) {
        for c in &self.0 {
            c.asking.fetch_sub(1, Ordering::SeqCst);
            c.touched.notify_one();
        }
    }
}

impl ClientHandler for Handler {
    fn get_info(&self) -> ClientConfig {
        let mut elicitation = ElicitationCapability::new();
        elicitation.form = Some(FormElicitationCapability::new());
        elicitation.url = Some(UrlElicitationCapability::new());
        let mut caps = ClientCapabilities::default();
        caps.elicitation = Some(elicitation);
        // `initialize` announces the newest version that has it; the 2026-07-28 protocol
        // (multi-round-trip) is asked for with `server/discover` instead
        ClientConfig::new(
            caps,
            Implementation::new("toolnexus", env!("CARGO_PKG_VERSION")),
        )
        .with_protocol_version(ProtocolVersion::LATEST_WITH_INITIALIZE)
    }

    async fn create_elicitation(
        &self,
        request: ElicitRequestParams,
        context: RequestContext<RoleClient>,
    ) -> Result<ElicitResult, ErrorData> {
        let owner = self.in_flight.owner(&context.extensions);
        let req = match incoming(&self.server, &request, Some(&context.meta)) {
            Incoming::Ask(req) => Some(req),
            Incoming::Refused(why) => {
                if let Some(watch) = &owner {
                    CallWatch::note(&watch.refused, why.to_string());
                }
                return Ok(refused_result(&why));
            }
            Incoming::Unknown => None,
        };
        let (Some(host), Some(req)) = (&self.host, req) else {
            if let Some(watch) = &owner {
                CallWatch::note(&watch.unanswered, message_of(&request));
            }
            return Ok(ElicitResult::new(ElicitationAction::Cancel));
        };
        let _asking = Asking::start(self.in_flight.waiting_for(owner.as_ref()));
        let answer = host(req.clone()).await;
        Ok(answered(&req, &answer))
    }

    async fn on_progress(
        &self,
        params: ProgressNotificationParam,
        _context: NotificationContext<RoleClient>,
    ) {
        let calls = self.in_flight.lock();
        if let Some(watch) = calls
            .values()
            .find(|w| w.progress_token.as_ref() == Some(&params.progress_token))
        {
            watch.touched.notify_one();
        }
    }
}

pub(super) fn message_of(request: &ElicitRequestParams) -> String {
    match request {
        ElicitRequestParams::FormElicitationParams { message, .. }
        | ElicitRequestParams::UrlElicitationParams { message, .. } => message.clone(),
        _ => String::new(),
    }
}

/// The elicitation result the host's answer gives back to the server, with the form's
/// defaults (SEP-1034) filled in: an accepted form's fields that the answer leaves out and
/// `requestedSchema` gives a `default` are sent with it (a host that shows the form shows the
/// defaults; one that accepts without showing it accepts them).
pub(super) fn answered(request: &Request, answer: &Answer) -> ElicitResult {
    let mut result = result_from_answer(request, answer);
    if result.action != ElicitationAction::Accept || request.proposed_args().is_some() {
        return result;
    }
    let Some(serde_json::Value::Object(properties)) = request
        .data
        .as_ref()
        .and_then(|d| d.get("schema"))
        .and_then(|s| s.get("properties"))
    else {
        return result;
    };
    let mut content = match result.content.take() {
        Some(serde_json::Value::Object(content)) => content,
        None => serde_json::Map::new(),
        Some(other) => {
            result.content = Some(other);
            return result;
        }
    };
    for (name, property) in properties {
        if let Some(default) = property.get("default")
            && !content.contains_key(name)
        {
            content.insert(name.clone(), default.clone());
        }
    }
    if !content.is_empty() {
        result.content = Some(serde_json::Value::Object(content));
    }
    result
}

#[cfg(test)]
mod tests {
    use serde_json::json;

    use super::*;

    fn form() -> Request {
        Request::input("Your details")
            .with_id("r1")
            .with_data_entry(
                "schema",
                json!({"type": "object", "properties": {
                    "name": {"type": "string", "default": "John Doe"},
                    "age": {"type": "integer", "default": 30},
                    "nick": {"type": "string"}
                }}),
            )
    }

    #[test]
    fn an_accepted_form_gets_the_defaults_of_the_fields_it_leaves_out() {
        let result = answered(&form(), &Answer::accept("r1", json!({"age": 41})));
        assert_eq!(result.action, ElicitationAction::Accept);
        assert_eq!(result.content, Some(json!({"age": 41, "name": "John Doe"})));
        // accepted with nothing: every default
        let result = answered(&form(), &Answer::ok("r1"));
        assert_eq!(result.content, Some(json!({"age": 30, "name": "John Doe"})));
    }

    #[test]
    fn a_declined_form_sends_no_defaults() {
        let declined = Answer::decline("r1", crate::request::DeclineReason::Declined);
        let result = answered(&form(), &declined);
        assert_eq!(result.action, ElicitationAction::Decline);
        assert_eq!(result.content, None);
    }
}
