//! The mapping between toolnexus suspensions and MCP elicitations, both directions
//! (CONTRACT section 8).

use rmcp::model::{
    ElicitRequestParams, ElicitResult, ElicitationAction, ElicitationSchema, MetaObject,
    RequestMetaObject,
};
use serde_json::{Map, Value, json};

use crate::boundary::{BoundaryError, check_request};
use crate::request::{
    Answer, DATA_ARGS, DeclineReason, KIND_APPROVAL, KIND_AUTHORIZATION, KIND_INPUT, KIND_QUESTION,
    Request,
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
/// - `approval`: a form with no fields (accept = approve); an editable approval whose
///   arguments are all strings, numbers, integers or booleans is a form of those arguments,
///   filled in with the proposed values (an accepted change is the edit, `data.args`);
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
        KIND_APPROVAL => edit_form(request).unwrap_or_else(no_fields),
        KIND_QUESTION => match data_schema {
            Some(schema) => schema.clone(),
            None => question_schema(request.data.as_ref()?.get("questions")?)?,
        },
        _ => data_schema.cloned().unwrap_or_else(no_fields),
    };
    let mut requested_schema: ElicitationSchema = serde_json::from_value(schema.clone()).ok()?;
    // the fields in the form's order (required in declaration order, then the rest), not the
    // sorted order of the schema's map
    requested_schema.property_order = Some(
        crate::form::field_order(&schema)
            .into_iter()
            .map(str::to_owned)
            .collect(),
    );
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

/// The keywords of an argument's schema an edit form keeps (the restricted schema's own).
const EDIT_FIELD_KEYWORDS: [&str; 7] = [
    "title",
    "description",
    "enum",
    "minimum",
    "maximum",
    "minLength",
    "maxLength",
];

/// An editable approval ([`Request::editable_approval`]) as a form of its arguments, each
/// field filled in with the proposed value: accepting it unchanged approves what was shown,
/// a changed field approves the edit (which the loop checks like any edit before anything
/// runs). `None`, and the approval is a plain accept/decline form, unless every argument is
/// one the restricted schema can ask for (a string, number, integer or boolean) and the form
/// passes the trust boundary as an `input` form would (no field asks for a credential).
fn edit_form(request: &Request) -> Option<Value> {
    let args = request.proposed_args()?.as_object()?;
    let schema = request.args_schema()?;
    let properties = schema.get("properties")?.as_object()?;
    if properties.is_empty() {
        return None;
    }
    let mut fields = Map::new();
    for (name, property) in properties {
        let ty = property.get("type")?.as_str()?;
        if !matches!(ty, "string" | "number" | "integer" | "boolean") {
            return None;
        }
        let mut field = Map::new();
        field.insert("type".to_owned(), Value::String(ty.to_owned()));
        for keyword in EDIT_FIELD_KEYWORDS {
            if let Some(value) = property.get(keyword) {
                field.insert(keyword.to_owned(), value.clone());
            }
        }
        if let Some(proposed) = args.get(name) {
            field.insert("default".to_owned(), proposed.clone());
        }
        fields.insert(name.clone(), Value::Object(field));
    }
    let mut form = json!({"type": "object", "properties": fields.clone()});
    if let Some(required) = schema.get("required") {
        form["required"] = required.clone();
    }
    // the restricted schema reads it whole: no keyword dropped on the way (a string field's
    // `enum` of numbers, say, would be), else the form would ask less than the tool checks
    let read =
        serde_json::to_value(serde_json::from_value::<ElicitationSchema>(form.clone()).ok()?)
            .ok()?;
    for (name, field) in &fields {
        let kept = read.get("properties")?.get(name)?.as_object()?;
        if field.as_object()?.keys().any(|k| !kept.contains_key(k)) {
            return None;
        }
    }
    let as_input = Request::input(request.prompt.clone()).with_data_entry("schema", form.clone());
    check_request(&as_input).ok()?;
    Some(form)
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
            Some(Value::Object(o)) if request.proposed_args().is_some() => edited(request, o),
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

/// An editable approval accepted with the fields of its edit form: the proposed arguments
/// with the fields the person sent over them; unchanged, a plain approval of what was shown.
fn edited(request: &Request, fields: &Map<String, Value>) -> Answer {
    let Some(Value::Object(proposed)) = request.proposed_args() else {
        return Answer::ok(request.id.clone());
    };
    let mut args = proposed.clone();
    for (name, value) in fields {
        args.insert(name.clone(), value.clone());
    }
    if &args == proposed {
        Answer::ok(request.id.clone())
    } else {
        request.approve_with(Value::Object(args))
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
        // an edited approval goes back as the fields of its edit form
        if request.proposed_args().is_some()
            && let Some(args @ Value::Object(_)) =
                answer.data.as_ref().and_then(|d| d.get(DATA_ARGS))
        {
            return result.with_content(args.clone());
        }
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
mod tests;
