//! The mapping between toolnexus suspensions and MCP elicitations, both directions
//! (CONTRACT section 8).

use rmcp::model::{
    ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationSchema, MetaObject,
    RequestMetaObject,
};
use serde_json::{Map, Value, json};

use crate::boundary::{BoundaryError, check_request};
use crate::request::{
    Answer, DeclineReason, KIND_APPROVAL, KIND_AUTHORIZATION, KIND_INPUT, KIND_QUESTION, Request,
};

/// The property an `input` request without `data.schema` asks for: `output`, the free-text
/// answer convention (`{"output": "<text>"}` reads as that text).
pub const FREE_TEXT_FIELD: &str = "output";

/// The `data` key under which a consumed server's URL elicitation keeps its MCP elicitation id.
pub const ELICITATION_ID_KEY: &str = "elicitationId";

/// The `data` key under which a consumed server's request names the server that asked.
pub const SERVER_KEY: &str = "mcpServer";

/// The `_meta` key that carries a suspension's [`Request`] (CONTRACT section 8): in every
/// elicitation a toolnexus server sends (form or URL, `elicitation/create` or inside an
/// `input_required` result), and in the error result of a client that cannot be asked. A host
/// on another toolnexus port reads the request's kind, id and `expiresAt` from it; a
/// toolnexus client takes the request's kind from it.
pub const PENDING_META_KEY: &str = "toolnexus/pending";

/// The `_meta` key of the decline a consumed server gets when its elicitation asked for a
/// credential: the trust boundary's message (see [`check_request`]).
pub const REFUSED_META_KEY: &str = "toolnexus/refused";

/// Which elicitation mode a suspension needs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Mode {
    Form,
    Url,
}

/// The elicitation a suspension becomes when served over MCP, or `None` when it has no MCP
/// form (an authorization without `url`, a schema that is not a flat MCP form): then the text
/// fallback applies.
///
/// - `input`: a form whose `requestedSchema` is `data.schema`, or one string field
///   [`FREE_TEXT_FIELD`] when absent;
/// - `approval`: a form with no fields (accept = approve);
/// - `question`: one field per question of `data.questions`, keyed by the question's text
///   (a string enum for its options, an array of that enum when `multiple`);
/// - `authorization`: a URL-mode elicitation with the request's `url`, whose elicitation id
///   is the request id;
/// - any other kind: a form from `data.schema`; without one, a form with no fields (accept or
///   decline, like an approval), so every kind reaches the client's human.
///
/// The message is the request's prompt; the request itself travels under
/// `_meta["toolnexus/pending"]` ([`PENDING_META_KEY`]), as in the text fallback. The request must have passed the trust boundary
/// first: [`checked_elicitation_for`] is the door serving goes through.
fn elicitation_for(request: &Request) -> Option<(Mode, ElicitRequestParams)> {
    let data_schema = request.data.as_ref().and_then(|d| d.get("schema"));
    let schema = match request.kind.as_str() {
        KIND_AUTHORIZATION => {
            let url = request.url.clone()?;
            return Some((
                Mode::Url,
                ElicitRequestParams::UrlElicitationParams {
                    meta: Some(pending_meta(request)),
                    message: request.prompt.clone(),
                    url,
                    elicitation_id: request.id.clone(),
                },
            ));
        }
        KIND_INPUT => data_schema.cloned().unwrap_or_else(|| {
            json!({
                "type": "object",
                "properties": {FREE_TEXT_FIELD: {"type": "string"}},
                "required": [FREE_TEXT_FIELD]
            })
        }),
        KIND_APPROVAL => no_fields(),
        KIND_QUESTION => match data_schema {
            Some(schema) => schema.clone(),
            None => question_schema(request.data.as_ref()?.get("questions")?)?,
        },
        _ => data_schema.cloned().unwrap_or_else(no_fields),
    };
    let requested_schema: ElicitationSchema = serde_json::from_value(schema).ok()?;
    Some((
        Mode::Form,
        ElicitRequestParams::FormElicitationParams {
            meta: Some(pending_meta(request)),
            message: request.prompt.clone(),
            requested_schema,
        },
    ))
}

/// A form without fields: accept or decline.
fn no_fields() -> Value {
    json!({"type": "object", "properties": {}})
}

/// `_meta` with the request under [`PENDING_META_KEY`].
fn pending_meta(request: &Request) -> RequestMetaObject {
    let mut meta = RequestMetaObject::new();
    meta.insert(
        PENDING_META_KEY.to_owned(),
        serde_json::to_value(request).unwrap_or(Value::Null),
    );
    meta
}

/// The request a toolnexus server sent under `_meta["toolnexus/pending"]`, if it sent one
/// that reads as a [`Request`].
pub(crate) fn pending_in(meta: &Map<String, Value>) -> Option<Request> {
    serde_json::from_value(meta.get(PENDING_META_KEY)?.clone()).ok()
}

/// The elicitation a suspension becomes when served over MCP ([`elicitation_for`]), once the
/// request has passed the trust boundary ([`check_request`]): no elicitation leaves that asks
/// for a credential, whatever the request's kind.
pub(crate) fn checked_elicitation_for(
    request: &Request,
) -> Result<Option<(Mode, ElicitRequestParams)>, BoundaryError> {
    check_request(request)?;
    Ok(elicitation_for(request))
}

/// What a consumed server's elicitation becomes for the host.
#[derive(Debug)]
pub(crate) enum Incoming {
    /// A request for the host's handler; it passed the trust boundary.
    Ask(Request),
    /// The elicitation asks for a credential: declined to the server
    /// ([`refused_result`]), never shown to the host.
    Refused(BoundaryError),
    /// A mode this crate does not know.
    Unknown,
}

/// A consumed server's elicitation, mapped ([`request_from_elicitation`]) and checked
/// against the trust boundary before any host sees it.
pub(crate) fn incoming(
    server: &str,
    params: &ElicitRequestParams,
    meta: Option<&Map<String, Value>>,
) -> Incoming {
    match request_from_elicitation(server, params, meta) {
        None => Incoming::Unknown,
        Some(request) => match check_request(&request) {
            Ok(()) => Incoming::Ask(request),
            Err(e) => Incoming::Refused(e),
        },
    }
}

/// The decline a consumed server gets for an elicitation the trust boundary refused, with
/// the reason under `_meta["toolnexus/refused"]`.
pub(crate) fn refused_result(why: &BoundaryError) -> ElicitResult {
    let mut meta = Map::new();
    meta.insert(REFUSED_META_KEY.to_owned(), Value::String(why.to_string()));
    let mut result = ElicitResult::new(ElicitationAction::Decline);
    result.meta = Some(MetaObject(meta));
    result
}

/// One form field per question: `{"type":"string"}`, with `enum` for options (an array of
/// that enum when `multiple`), `title` from `header`; every question required.
fn question_schema(questions: &Value) -> Option<Value> {
    let mut properties = Map::new();
    let mut required = Vec::new();
    for q in questions.as_array()? {
        let text = q.get("question")?.as_str()?;
        let options = q
            .get("options")
            .and_then(Value::as_array)
            .filter(|o| !o.is_empty());
        let multiple = q.get("multiple").and_then(Value::as_bool).unwrap_or(false);
        let mut field = match options {
            Some(options) if multiple => json!({
                "type": "array",
                "items": {"type": "string", "enum": options}
            }),
            Some(options) => json!({"type": "string", "enum": options}),
            None => json!({"type": "string"}),
        };
        if let Some(header) = q.get("header").and_then(Value::as_str) {
            field["title"] = Value::String(header.to_owned());
        }
        properties.insert(text.to_owned(), field);
        required.push(Value::String(text.to_owned()));
    }
    Some(json!({"type": "object", "properties": properties, "required": required}))
}

/// The [`Answer`] an elicitation result gives `request`: accept -> `ok:true` with the content
/// as `data`; decline -> `ok:false`, reason `declined`; cancel -> reason `cancelled`.
///
/// Two shapes read as the tool expects them: an empty (or absent) content gives no `data`
/// (an approval's form has no fields, so `ask!(ctx, approval ..)` reads `()`), and the
/// `{"output": "<text>"}` of an `input` request asked without a schema gives the text itself
/// (the free-text convention of CONTRACT section 2).
pub(crate) fn answer_from_result(request: &Request, result: &ElicitResult) -> Answer {
    match result.action {
        ElicitationAction::Accept => match &result.content {
            Some(Value::Object(o)) if o.is_empty() => Answer::ok(request.id.clone()),
            Some(Value::Object(o)) if asks_free_text(request) && o.len() == 1 => {
                match o.get(FREE_TEXT_FIELD) {
                    Some(text @ Value::String(_)) => Answer::accept(request.id.clone(), text),
                    _ => Answer::accept(request.id.clone(), o),
                }
            }
            Some(content) => Answer::accept(request.id.clone(), content),
            None => Answer::ok(request.id.clone()),
        },
        ElicitationAction::Decline => Answer::decline(request.id.clone(), DeclineReason::Declined),
        _ => Answer::decline(request.id.clone(), DeclineReason::Cancelled),
    }
}

/// The one property of a request's `data.schema` when it has exactly one, of type string.
fn one_string_field(request: &Request) -> Option<String> {
    let properties = request
        .data
        .as_ref()?
        .get("schema")?
        .get("properties")?
        .as_object()?;
    match properties.iter().next() {
        Some((name, p)) if properties.len() == 1 && p.get("type")? == "string" => {
            Some(name.clone())
        }
        _ => None,
    }
}

/// An `input` request without `data.schema`: asked as the one field [`FREE_TEXT_FIELD`].
fn asks_free_text(request: &Request) -> bool {
    request.kind == KIND_INPUT
        && request
            .data
            .as_ref()
            .and_then(|d| d.get("schema"))
            .is_none()
}

/// The [`Request`] a consumed server's elicitation becomes (unchecked: [`incoming`] checks
/// it): a form -> `input` with `data.schema` = `requestedSchema`; URL mode -> `authorization`
/// with the `url` and the MCP elicitation id in `data.elicitationId`. The prompt is the
/// elicitation's message; `data` also names the server (`data.mcpServer`). `None` for a mode
/// this crate does not know.
///
/// A toolnexus server sends its request under `_meta["toolnexus/pending"]`: then the request
/// keeps that kind, id, `data` and `expiresAt` (an approval stays an approval), a form's
/// fields still taken from `requestedSchema` (a form without fields adds no schema). A form
/// never becomes an `authorization`.
fn request_from_elicitation(
    server: &str,
    params: &ElicitRequestParams,
    meta: Option<&Map<String, Value>>,
) -> Option<Request> {
    let sent = meta.and_then(pending_in);
    Some(match params {
        ElicitRequestParams::FormElicitationParams {
            message,
            requested_schema,
            ..
        } => {
            let schema = serde_json::to_value(requested_schema).unwrap_or(Value::Null);
            let has_fields = schema
                .get("properties")
                .and_then(Value::as_object)
                .is_some_and(|p| !p.is_empty());
            let request = match sent {
                Some(sent) if sent.kind != KIND_AUTHORIZATION => {
                    let request = sent.with_prompt(message.clone());
                    if has_fields {
                        request.with_data_entry("schema", schema)
                    } else {
                        request
                    }
                }
                _ => Request::input(message.clone()).with_data_entry("schema", schema),
            };
            request.with_data_entry(SERVER_KEY, Value::String(server.to_owned()))
        }
        ElicitRequestParams::UrlElicitationParams {
            message,
            url,
            elicitation_id,
            ..
        } => {
            let mut request = Request::authorization(url.clone()).with_prompt(message.clone());
            if let Some(sent) = sent.filter(|s| s.kind == KIND_AUTHORIZATION) {
                request.id = sent.id;
                request.expires_at = sent.expires_at;
            }
            request
                .with_data_entry(ELICITATION_ID_KEY, Value::String(elicitation_id.clone()))
                .with_data_entry(SERVER_KEY, Value::String(server.to_owned()))
        }
        _ => return None,
    })
}

/// The elicitation result an [`Answer`] to `request` gives back: `ok` -> accept (with `data`
/// as the content when it is an object; a text answer to a form of one string field, the
/// free-text convention, as that field); reason `declined` -> decline; any other refusal ->
/// cancel.
pub(crate) fn result_from_answer(request: &Request, answer: &Answer) -> ElicitResult {
    if answer.ok {
        let result = ElicitResult::new(ElicitationAction::Accept);
        match &answer.data {
            Some(data @ Value::Object(_)) => result.with_content(data.clone()),
            Some(text @ Value::String(_)) => match one_string_field(request) {
                Some(field) => result.with_content(json!({ field: text })),
                None => result,
            },
            _ => result,
        }
    } else if answer.reason == Some(DeclineReason::Declined) {
        ElicitResult::new(ElicitationAction::Decline)
    } else {
        ElicitResult::new(ElicitationAction::Cancel)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rmcp::model::RequestParamsMeta;

    fn wire(params: &ElicitRequestParams) -> String {
        serde_json::to_string(params).unwrap()
    }

    #[test]
    fn input_without_schema_asks_for_one_string_field() {
        let (mode, params) = elicitation_for(&Request::input("Which city?").with_id("r1")).unwrap();
        assert_eq!(mode, Mode::Form);
        assert_eq!(
            wire(&params),
            r#"{"mode":"form","_meta":{"toolnexus/pending":{"id":"r1","kind":"input","prompt":"Which city?"}},"message":"Which city?","requestedSchema":{"type":"object","properties":{"output":{"type":"string"}},"required":["output"]}}"#
        );
    }

    #[test]
    fn approval_is_a_form_without_fields() {
        let (_, params) = elicitation_for(&Request::approval("Delete x?").with_id("r2")).unwrap();
        assert_eq!(
            wire(&params),
            r#"{"mode":"form","_meta":{"toolnexus/pending":{"id":"r2","kind":"approval","prompt":"Delete x?"}},"message":"Delete x?","requestedSchema":{"type":"object","properties":{}}}"#
        );
    }

    #[test]
    fn question_has_one_field_per_question() {
        let r = Request::question("Seat?").with_data_entry(
            "questions",
            json!([
                {"question": "Seat?", "header": "Seat", "options": ["aisle", "window"]},
                {"question": "Meals?", "options": ["veg", "fish"], "multiple": true},
                {"question": "Note?"}
            ]),
        );
        let (_, params) = elicitation_for(&r).unwrap();
        let mut wire = serde_json::to_value(&params).unwrap();
        assert_eq!(
            wire["_meta"]["toolnexus/pending"],
            serde_json::to_value(&r).unwrap()
        );
        wire.as_object_mut().unwrap().shift_remove("_meta");
        assert_eq!(
            wire.to_string(),
            r#"{"mode":"form","message":"Seat?","requestedSchema":{"type":"object","properties":{"Seat?":{"type":"string","title":"Seat","enum":["aisle","window"]},"Meals?":{"type":"array","items":{"type":"string","enum":["veg","fish"]}},"Note?":{"type":"string"}},"required":["Seat?","Meals?","Note?"]}}"#
        );
    }

    #[test]
    fn authorization_is_url_mode_with_the_request_id() {
        let r = Request::authorization("https://x/login").with_id("r9");
        let (mode, params) = elicitation_for(&r).unwrap();
        assert_eq!(mode, Mode::Url);
        assert_eq!(
            wire(&params),
            r#"{"mode":"url","_meta":{"toolnexus/pending":{"id":"r9","kind":"authorization","prompt":"Login required: https://x/login","url":"https://x/login"}},"message":"Login required: https://x/login","url":"https://x/login","elicitationId":"r9"}"#
        );
    }

    #[test]
    fn a_schema_that_is_no_flat_form_has_no_elicitation() {
        let nested = Request::input("p").with_data_entry(
            "schema",
            json!({"type": "object", "properties": {"a": {"type": "object"}}}),
        );
        assert!(elicitation_for(&nested).is_none());
        assert!(elicitation_for(&Request::new("authorization", "no url")).is_none());
    }

    #[test]
    fn a_custom_kind_without_a_schema_is_an_accept_or_decline_form() {
        let expires = "2030-01-01T00:00:00Z";
        let mut wire_money = Request::custom("wire", "Wire 5 EUR?").with_id("r-wire");
        wire_money.expires_at = Some(expires.to_owned());
        let (mode, params) = elicitation_for(&wire_money).unwrap();
        assert_eq!(mode, Mode::Form);
        assert_eq!(
            wire(&params),
            r#"{"mode":"form","_meta":{"toolnexus/pending":{"id":"r-wire","kind":"wire","prompt":"Wire 5 EUR?","expiresAt":"2030-01-01T00:00:00Z"}},"message":"Wire 5 EUR?","requestedSchema":{"type":"object","properties":{}}}"#
        );
        // accept reads as a plain yes, decline as declined
        let yes = ElicitResult::new(ElicitationAction::Accept).with_content(json!({}));
        assert_eq!(answer_from_result(&wire_money, &yes), Answer::ok("r-wire"));
        let r = Request::custom("pay", "Pay?")
            .with_id("r-pay")
            .with_data_entry(
                "schema",
                json!({"type": "object", "properties": {"ok": {"type": "boolean"}}}),
            );
        let (_, params) = elicitation_for(&r).unwrap();
        assert_eq!(
            wire(&params),
            r#"{"mode":"form","_meta":{"toolnexus/pending":{"id":"r-pay","kind":"pay","prompt":"Pay?","data":{"schema":{"type":"object","properties":{"ok":{"type":"boolean"}}}}}},"message":"Pay?","requestedSchema":{"type":"object","properties":{"ok":{"type":"boolean"}}}}"#
        );
    }

    #[test]
    fn a_request_sent_in_meta_keeps_its_kind_id_and_expiry_on_the_consuming_side() {
        let mut sent = Request::approval("Delete x?").with_id("sus-1");
        sent.expires_at = Some("2030-01-01T00:00:00Z".to_owned());
        let (_, params) = elicitation_for(&sent).unwrap();
        let meta = params.meta().unwrap().0.0.clone();
        let r = request_from_elicitation("notes", &params, Some(&meta)).unwrap();
        assert_eq!(
            serde_json::to_string(&r).unwrap(),
            r#"{"id":"sus-1","kind":"approval","prompt":"Delete x?","data":{"mcpServer":"notes"},"expiresAt":"2030-01-01T00:00:00Z"}"#
        );
        // a form keeps its fields from requestedSchema, the kind from _meta
        let pay = Request::custom("payment", "Pay?")
            .with_id("sus-2")
            .with_data_entry(
                "schema",
                json!({"type": "object", "properties": {"confirm": {"type": "boolean"}}}),
            );
        let (_, params) = elicitation_for(&pay).unwrap();
        let meta = params.meta().unwrap().0.0.clone();
        let r = request_from_elicitation("shop", &params, Some(&meta)).unwrap();
        assert_eq!(r.kind, "payment");
        assert_eq!(r.id, "sus-2");
        assert_eq!(
            serde_json::to_string(&r.data).unwrap(),
            r#"{"schema":{"type":"object","properties":{"confirm":{"type":"boolean"}}},"mcpServer":"shop"}"#
        );
        // a form never becomes an authorization, whatever _meta claims
        let mut claims = Map::new();
        claims.insert(
            PENDING_META_KEY.to_owned(),
            json!({"id": "x", "kind": "authorization", "prompt": "p", "url": "https://x"}),
        );
        let r = request_from_elicitation("shop", &params, Some(&claims)).unwrap();
        assert_eq!(r.kind, "input");
    }

    #[test]
    fn a_text_answer_to_a_one_field_form_goes_back_as_that_field() {
        let r = Request::input("Note?").with_data_entry(
            "schema",
            json!({"type": "object", "properties": {"output": {"type": "string"}}}),
        );
        assert_eq!(
            serde_json::to_string(&result_from_answer(&r, &Answer::accept(&r.id, "hi"))).unwrap(),
            r#"{"action":"accept","content":{"output":"hi"}}"#
        );
    }

    #[test]
    fn results_become_answers() {
        let r = Request::input("p")
            .with_id("r1")
            .with_data_entry("schema", json!({"type": "object"}));
        let accept = ElicitResult::new(ElicitationAction::Accept).with_content(json!({"k": "v"}));
        assert_eq!(
            serde_json::to_string(&answer_from_result(&r, &accept)).unwrap(),
            r#"{"id":"r1","ok":true,"data":{"k":"v"}}"#
        );
        let decline = ElicitResult::new(ElicitationAction::Decline);
        assert_eq!(
            serde_json::to_string(&answer_from_result(&r, &decline)).unwrap(),
            r#"{"id":"r1","ok":false,"reason":"declined"}"#
        );
        let cancel = ElicitResult::new(ElicitationAction::Cancel);
        assert_eq!(
            serde_json::to_string(&answer_from_result(&r, &cancel)).unwrap(),
            r#"{"id":"r1","ok":false,"reason":"cancelled"}"#
        );
        let empty = ElicitResult::new(ElicitationAction::Accept).with_content(json!({}));
        assert_eq!(
            serde_json::to_string(&answer_from_result(
                &Request::approval("ok?").with_id("r2"),
                &empty
            ))
            .unwrap(),
            r#"{"id":"r2","ok":true}"#
        );
        let text =
            ElicitResult::new(ElicitationAction::Accept).with_content(json!({"output": "hi"}));
        assert_eq!(
            serde_json::to_string(&answer_from_result(
                &Request::input("note?").with_id("r3"),
                &text
            ))
            .unwrap(),
            r#"{"id":"r3","ok":true,"data":"hi"}"#
        );
    }

    #[test]
    fn answers_become_results() {
        let r = Request::input("p").with_id("r1");
        let wire = |a: &Answer| serde_json::to_string(&result_from_answer(&r, a)).unwrap();
        assert_eq!(
            wire(&Answer::accept("r1", json!({"city": "Oslo"}))),
            r#"{"action":"accept","content":{"city":"Oslo"}}"#
        );
        assert_eq!(wire(&Answer::ok("r1")), r#"{"action":"accept"}"#);
        assert_eq!(
            wire(&Answer::decline("r1", DeclineReason::Declined)),
            r#"{"action":"decline"}"#
        );
        assert_eq!(
            wire(&Answer::decline("r1", DeclineReason::Cancelled)),
            r#"{"action":"cancel"}"#
        );
        assert_eq!(
            wire(&Answer::decline("r1", DeclineReason::Expired)),
            r#"{"action":"cancel"}"#
        );
    }

    #[test]
    fn no_elicitation_leaves_that_asks_for_a_credential_whatever_the_kind() {
        let login = Request::custom("login", "Online banking").with_data_entry(
            "schema",
            json!({"type": "object", "properties": {
                "p": {"type": "string", "title": "Online-banking password"}
            }}),
        );
        let err = checked_elicitation_for(&login).expect_err("refused");
        assert_eq!(err.path(), "data.schema.properties.p.title");
        let fine = Request::custom("login", "Online banking").with_data_entry(
            "schema",
            json!({"type": "object", "properties": {"user": {"type": "string"}}}),
        );
        assert!(matches!(
            checked_elicitation_for(&fine),
            Ok(Some((Mode::Form, _)))
        ));
    }

    #[test]
    fn an_incoming_elicitation_asking_for_a_password_is_declined_with_the_reason() {
        let form = |schema: Value| ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: "Sign in to continue".into(),
            requested_schema: serde_json::from_value(schema).unwrap(),
        };
        for (schema, path) in [
            (
                json!({"type": "object", "properties": {"password": {"type": "string"}}}),
                "data.schema.properties.password",
            ),
            (
                json!({"type": "object", "properties": {"p": {"type": "string", "description": "Your online-banking password"}}}),
                "data.schema.properties.p.description",
            ),
            (
                json!({"type": "object", "properties": {"p": {"type": "string", "title": "Bank PIN"}}}),
                "data.schema.properties.p.title",
            ),
        ] {
            let Incoming::Refused(err) = incoming("bank", &form(schema), None) else {
                panic!("refused: {path}");
            };
            assert_eq!(err.path(), path);
            let result = refused_result(&err);
            let wire = serde_json::to_value(&result).unwrap();
            assert_eq!(wire["action"], "decline");
            assert_eq!(wire["_meta"]["toolnexus/refused"], err.to_string());
            assert!(wire.get("content").is_none());
        }
        let city = form(json!({"type": "object", "properties": {"city": {"type": "string"}}}));
        assert!(matches!(incoming("bank", &city, None), Incoming::Ask(r) if r.kind == "input"));
        // the way to a secret: a URL elicitation
        let url = ElicitRequestParams::UrlElicitationParams {
            meta: None,
            message: "Enter your password at the bank".into(),
            url: "https://bank.example/login".into(),
            elicitation_id: "e-1".into(),
        };
        assert!(
            matches!(incoming("bank", &url, None), Incoming::Ask(r) if r.kind == "authorization")
        );
    }

    #[test]
    fn elicitations_become_requests() {
        let form = ElicitRequestParams::FormElicitationParams {
            meta: None,
            message: "Which city?".into(),
            requested_schema: serde_json::from_value(json!({
                "type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]
            }))
            .unwrap(),
        };
        let r = request_from_elicitation("travel", &form, None).unwrap();
        assert_eq!(r.kind, "input");
        assert_eq!(r.prompt, "Which city?");
        assert_eq!(
            serde_json::to_string(&r.data).unwrap(),
            r#"{"schema":{"type":"object","properties":{"city":{"type":"string"}},"required":["city"]},"mcpServer":"travel"}"#
        );
        let url = ElicitRequestParams::UrlElicitationParams {
            meta: None,
            message: "Log in".into(),
            url: "https://x/login".into(),
            elicitation_id: "e-7".into(),
        };
        let r = request_from_elicitation("travel", &url, None).unwrap();
        assert_eq!(r.kind, "authorization");
        assert_eq!(r.prompt, "Log in");
        assert_eq!(r.url.as_deref(), Some("https://x/login"));
        assert_eq!(
            serde_json::to_string(&r.data).unwrap(),
            r#"{"elicitationId":"e-7","mcpServer":"travel"}"#
        );
    }
}
