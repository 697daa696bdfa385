//! The form a request renders as, and the server-side check of what comes back.

use serde_json::{Map, Number, Value};

use crate::request::Request;

mod edit;

pub(crate) use edit::Edit;

/// What one control collects.
#[derive(Clone, Debug, PartialEq)]
pub(crate) enum Control {
    Text,
    Number,
    Integer,
    Checkbox,
    Select(Vec<String>),
    /// A question with options: radio buttons, or checkboxes when `multiple`.
    Choice {
        options: Vec<String>,
        multiple: bool,
    },
}

/// One control of a form: `name` is the form field, `key` the answer data's key.
#[derive(Clone, Debug)]
pub(crate) struct Field {
    pub(crate) name: String,
    pub(crate) key: String,
    pub(crate) label: String,
    pub(crate) help: Option<String>,
    pub(crate) required: bool,
    pub(crate) control: Control,
    /// What each option of a `Select` reads as on the page (the values stay the codes).
    pub(crate) option_labels: Option<Vec<String>>,
    min: Option<f64>,
    max: Option<f64>,
    min_len: Option<u64>,
    max_len: Option<u64>,
}

/// A wrong value: the field and what is wrong, shown next to the form.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Invalid {
    pub(crate) field: String,
    pub(crate) message: String,
}

impl Invalid {
    fn new(field: &str, message: impl Into<String>) -> Self {
        Self {
            field: field.to_owned(),
            message: message.into(),
        }
    }
}

/// How a request is answered on the page.
#[derive(Clone, Debug)]
pub(crate) enum Shape {
    /// Fields and a submit button (plus Decline); the answer's data is their values.
    Fields(Vec<Field>),
    /// One free-text answer (an `input` request without a schema); the data is the text.
    FreeText,
    /// Approve / Decline; for an editable approval, the proposed arguments (editable) and
    /// the tool's schema they must fit.
    Approval(Option<Box<Edit>>),
    /// A link to the url and a "done, continue" button.
    Authorization(Option<String>),
    /// Accept / Decline (another kind without a schema).
    AcceptDecline,
}

/// `answer`, once it passes the trust boundary's walk
/// ([`check_answer`](crate::boundary::check_answer)): no key of its data names a credential the
/// request did not ask for, at any depth; an edit keeps what the model proposed where a key
/// names one. The page checks every answer here before recording it.
pub(crate) fn boundary_checked(
    request: &Request,
    answer: crate::request::Answer,
) -> Result<crate::request::Answer, Invalid> {
    let Err(e) = crate::boundary::check_answer(request, &answer) else {
        return Ok(answer);
    };
    match crate::client::edit::in_args(&e).filter(|_| request.proposed_args().is_some()) {
        Some(at) => Err(Invalid::new(
            ARGS,
            format!(
                "Arguments: `{at}` holds a credential and cannot be changed here; secrets never pass through answers"
            ),
        )),
        None => Err(Invalid::new("data", e.to_string())),
    }
}

/// The form field (and JSON key) of an editable approval's arguments.
pub(crate) const ARGS: &str = "args";

/// The hidden field that says a page's typed argument fields were sent (a box left unticked
/// sends nothing, so the fields alone cannot say it).
pub(crate) const ARGS_FORM: &str = "args.form";

/// Why a request cannot be rendered here.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Refusal {
    /// A field collects a credential (the trust boundary).
    Credential(String),
    /// Its schema is not a flat form.
    Unsupported(String),
}

impl Shape {
    /// The shape of `request`, or why it is refused: first the trust boundary
    /// ([`check_request`](crate::boundary::check_request): every request that carries a form,
    /// whatever its kind), then whether its form is one the page can render.
    pub(crate) fn of(request: &Request) -> Result<Self, Refusal> {
        if let Err(e) = request.check_trust_boundary() {
            return Err(Refusal::Credential(e.to_string()));
        }
        let data = request.data.as_ref();
        let schema = data.and_then(|d| d.get("schema"));
        match request.kind.as_str() {
            "approval" => {
                let edit =
                    request
                        .proposed_args()
                        .zip(request.args_schema())
                        .map(|(proposed, schema)| {
                            Box::new(Edit::new(proposed.clone(), schema.clone()))
                        });
                return Ok(Self::Approval(edit));
            }
            "authorization" => return Ok(Self::Authorization(request.url.clone())),
            "question" => {
                if let Some(questions) = data.and_then(|d| d.get("questions")) {
                    return questions_form(questions).map(Self::Fields);
                }
            }
            _ => {}
        }
        match schema {
            // every kind with a form went through the whole boundary above
            Some(schema) if request.kind == crate::reconcile::KIND_RECONCILE => {
                schema_form(schema).map(|fields| Self::Fields(reconcile_words(fields)))
            }
            Some(schema) => schema_form(schema).map(Self::Fields),
            None if request.kind == "input" || request.kind == "question" => Ok(Self::FreeText),
            None => Ok(Self::AcceptDecline),
        }
    }
}

/// The reconcile form in plain words: each action says what it does, the output when it is
/// needed.
fn reconcile_words(mut fields: Vec<Field>) -> Vec<Field> {
    for f in &mut fields {
        match (f.key.as_str(), &f.control) {
            ("action", Control::Select(options)) => {
                "What to do".clone_into(&mut f.label);
                f.help = Some(
                    "Run it again: the call runs once more (choose it when it did not take effect).\n\
                     Record what happened: the call is not run again; what you write below is its result.\n\
                     Fail the call: the call is not run again; the assistant reads that it failed."
                        .to_owned(),
                );
                f.option_labels = Some(
                    options
                        .iter()
                        .map(|o| {
                            match o.as_str() {
                                "rerun" => "Run it again",
                                "record" => "Record what happened",
                                "fail" => "Fail the call",
                                other => other,
                            }
                            .to_owned()
                        })
                        .collect(),
                );
            }
            ("output", _) => {
                "What happened".clone_into(&mut f.label);
                f.help = Some(
                    "Needed for \u{201c}Record what happened\u{201d}: what the call returned, as the assistant will read it. \
                     For \u{201c}Fail the call\u{201d}: why, if you like."
                        .to_owned(),
                );
            }
            _ => {}
        }
    }
    fields
}

fn schema_form(schema: &Value) -> Result<Vec<Field>, Refusal> {
    let unsupported = |m: String| Err(Refusal::Unsupported(m));
    let Some(obj) = schema.as_object() else {
        return unsupported("its schema is not an object".to_owned());
    };
    if obj.get("type").and_then(Value::as_str) != Some("object") {
        return unsupported("its schema's type is not `object`".to_owned());
    }
    let required: Vec<&str> = crate::schema::required_names(obj).collect();
    let empty = Map::new();
    let props = obj
        .get("properties")
        .and_then(Value::as_object)
        .unwrap_or(&empty);
    let mut fields = Vec::with_capacity(props.len());
    // required fields in `required`'s order (declaration order), then the rest
    for key in crate::form::field_order(schema) {
        let Some(prop) = props.get(key) else {
            continue;
        };
        let key = key.to_owned();
        let ty = prop.get("type").and_then(Value::as_str).unwrap_or("");
        let control = match (ty, prop.get("enum").and_then(Value::as_array)) {
            ("string", Some(values)) => {
                let values: Option<Vec<String>> = values
                    .iter()
                    .map(|v| v.as_str().map(str::to_owned))
                    .collect();
                match values {
                    Some(v) if !v.is_empty() => Control::Select(v),
                    _ => {
                        return unsupported(format!(
                            "field `{key}` has an enum that is not strings"
                        ));
                    }
                }
            }
            ("string", None) => Control::Text,
            ("number", None) => Control::Number,
            ("integer", None) => Control::Integer,
            ("boolean", None) => Control::Checkbox,
            _ => {
                return unsupported(format!(
                    "field `{key}` is not a flat primitive (string, number, integer, boolean, string enum)"
                ));
            }
        };
        let num = |k: &str| prop.get(k).and_then(Value::as_f64);
        let len = |k: &str| prop.get(k).and_then(Value::as_u64);
        let (label, help) = label_of(
            &key,
            prop.get("title").and_then(Value::as_str),
            prop.get("description").and_then(Value::as_str),
        );
        fields.push(Field {
            name: format!("f.{key}"),
            key: key.clone(),
            label,
            help,
            required: required.contains(&key.as_str()),
            control,
            option_labels: None,
            min: num("minimum"),
            max: num("maximum"),
            min_len: len("minLength"),
            max_len: len("maxLength"),
        });
    }
    Ok(fields)
}

/// A field's label and help text: its `title`; else its description when that is one short
/// line (then no help); else its code name in words (`cost_center`, `costCenter` -> "Cost
/// center"), with the description as help. A person never reads the code name as it is.
fn label_of(key: &str, title: Option<&str>, description: Option<&str>) -> (String, Option<String>) {
    let title = title.map(str::trim).filter(|t| !t.is_empty());
    let description = description.map(str::trim).filter(|d| !d.is_empty());
    if let Some(t) = title {
        return (t.to_owned(), description.map(str::to_owned));
    }
    match description {
        Some(d) if !d.contains('\n') && d.chars().count() <= SHORT_LABEL => {
            (d.strip_suffix('.').unwrap_or(d).to_owned(), None)
        }
        _ => (words(key), description.map(str::to_owned)),
    }
}

/// The longest description that serves as a label.
const SHORT_LABEL: usize = 60;

/// A code name in words: `cost_center`, `costCenter`, `cost-center` -> "Cost center";
/// `vatID` -> "Vat id".
pub(crate) fn words(code: &str) -> String {
    let mut out = String::with_capacity(code.len() + 4);
    let mut prev: Option<char> = None;
    for c in code.chars() {
        let boundary = match prev {
            Some(p) => c.is_uppercase() && (p.is_lowercase() || p.is_ascii_digit()),
            None => false,
        };
        if c == '_' || c == '-' || c == '.' || c.is_whitespace() {
            if !out.is_empty() && !out.ends_with(' ') {
                out.push(' ');
            }
        } else {
            if boundary && !out.ends_with(' ') {
                out.push(' ');
            }
            out.extend(c.to_lowercase());
        }
        prev = Some(c);
    }
    let out = out.trim_end();
    let mut chars = out.chars();
    match chars.next() {
        Some(first) => first.to_uppercase().chain(chars).collect(),
        None => code.to_owned(),
    }
}

fn questions_form(questions: &Value) -> Result<Vec<Field>, Refusal> {
    let Some(list) = questions.as_array() else {
        return Err(Refusal::Unsupported(
            "its `questions` is not a list".to_owned(),
        ));
    };
    let mut fields = Vec::with_capacity(list.len());
    for (i, q) in list.iter().enumerate() {
        let Some(text) = q.get("question").and_then(Value::as_str) else {
            return Err(Refusal::Unsupported(format!(
                "question {} has no text",
                i + 1
            )));
        };
        let options: Vec<String> = q
            .get("options")
            .and_then(Value::as_array)
            .map(|a| {
                a.iter()
                    .filter_map(Value::as_str)
                    .map(str::to_owned)
                    .collect()
            })
            .unwrap_or_default();
        let multiple = q.get("multiple").and_then(Value::as_bool).unwrap_or(false);
        let control = if options.is_empty() {
            Control::Text
        } else {
            Control::Choice { options, multiple }
        };
        fields.push(Field {
            name: format!("q.{i}"),
            key: text.to_owned(),
            label: text.to_owned(),
            help: q.get("header").and_then(Value::as_str).map(str::to_owned),
            required: !multiple,
            control,
            option_labels: None,
            min: None,
            max: None,
            min_len: None,
            max_len: None,
        });
    }
    Ok(fields)
}

/// The submitted HTML form's values (every `name=value` pair, in order).
pub(crate) type Pairs = [(String, String)];

fn values<'a>(pairs: &'a Pairs, name: &'a str) -> impl Iterator<Item = &'a str> {
    pairs
        .iter()
        .filter(move |(k, _)| k == name)
        .map(|(_, v)| v.as_str())
}

/// A reconcile answer checked at the door as the loop checks it
/// ([`Reconcile::of`](crate::reconcile::Reconcile::of): `record` needs an output), the wrong
/// value named on the output field (`field`, its key); any other answer as it is.
pub(crate) fn reconcile_checked(
    request: &Request,
    answer: crate::request::Answer,
    field: &str,
) -> Result<crate::request::Answer, Invalid> {
    if request.kind != crate::reconcile::KIND_RECONCILE {
        return Ok(answer);
    }
    match crate::reconcile::Reconcile::of(&answer) {
        Ok(_) => Ok(answer),
        Err(e) => Err(Invalid::new(field, format!("Output: {e}"))),
    }
}

/// Reads the HTML form's values into the answer's data (one JSON value per field), checked.
pub(crate) fn from_form(fields: &[Field], pairs: &Pairs) -> Result<Map<String, Value>, Invalid> {
    let mut data = Map::new();
    for f in fields {
        let value = match &f.control {
            Control::Checkbox => {
                Value::Bool(values(pairs, &f.name).any(|v| v == "on" || v == "true"))
            }
            Control::Choice { multiple: true, .. } => Value::Array(
                values(pairs, &f.name)
                    .map(|v| Value::String(v.to_owned()))
                    .collect(),
            ),
            Control::Number | Control::Integer => {
                let raw = values(pairs, &f.name).next().unwrap_or("").trim();
                if raw.is_empty() {
                    check_missing(f)?;
                    continue;
                }
                parse_number(f, raw)?
            }
            _ => {
                let raw = values(pairs, &f.name).next().unwrap_or("");
                if raw.trim().is_empty() {
                    check_missing(f)?;
                    continue;
                }
                Value::String(raw.to_owned())
            }
        };
        check_value(f, &value)?;
        data.insert(f.key.clone(), value);
    }
    Ok(data)
}

/// Checks JSON answer data (from the JSON API) against the fields.
pub(crate) fn from_json(
    fields: &[Field],
    data: Option<&Value>,
) -> Result<Map<String, Value>, Invalid> {
    let empty = Map::new();
    let obj = match data {
        None | Some(Value::Null) => &empty,
        Some(Value::Object(o)) => o,
        Some(_) => return Err(Invalid::new("data", "the answer's data must be an object")),
    };
    if let Some(k) = obj.keys().find(|k| !fields.iter().any(|f| &f.key == *k)) {
        return Err(Invalid::new(
            k,
            format!("`{k}` is not a field of this form"),
        ));
    }
    let mut out = Map::new();
    for f in fields {
        match obj.get(&f.key) {
            None | Some(Value::Null) => check_missing(f)?,
            Some(v) => {
                check_value(f, v)?;
                out.insert(f.key.clone(), v.clone());
            }
        }
    }
    Ok(out)
}

fn check_missing(f: &Field) -> Result<(), Invalid> {
    if f.required {
        let what = match f.control {
            // a required choice starts empty: nothing is chosen for the person
            Control::Select(_) | Control::Choice { .. } => "choose one",
            _ => "required",
        };
        Err(Invalid::new(&f.key, format!("{}: {what}", f.label)))
    } else {
        Ok(())
    }
}

fn parse_number(f: &Field, raw: &str) -> Result<Value, Invalid> {
    if f.control == Control::Integer {
        raw.parse::<i64>().map(Value::from).map_err(|_| {
            Invalid::new(
                &f.key,
                format!("{}: must be a whole number, not `{raw}`", f.label),
            )
        })
    } else {
        raw.parse::<f64>()
            .ok()
            .and_then(Number::from_f64)
            .map(Value::Number)
            .ok_or_else(|| {
                Invalid::new(
                    &f.key,
                    format!("{}: must be a number, not `{raw}`", f.label),
                )
            })
    }
}

fn check_value(f: &Field, v: &Value) -> Result<(), Invalid> {
    let bad = |m: String| Err(Invalid::new(&f.key, m));
    match (&f.control, v) {
        (Control::Checkbox, Value::Bool(_)) => Ok(()),
        (Control::Checkbox, _) => bad(format!("{}: must be true or false", f.label)),
        (Control::Integer, Value::Number(n)) if n.is_i64() || n.is_u64() => {
            check_range(f, n.as_f64())
        }
        (Control::Integer, _) => bad(format!("{}: must be a whole number", f.label)),
        (Control::Number, Value::Number(n)) => check_range(f, n.as_f64()),
        (Control::Number, _) => bad(format!("{}: must be a number", f.label)),
        (
            Control::Select(options)
            | Control::Choice {
                options,
                multiple: false,
            },
            Value::String(s),
        ) => {
            if options.contains(s) {
                Ok(())
            } else {
                bad(format!(
                    "{}: must be one of: {}",
                    f.label,
                    options.join(", ")
                ))
            }
        }
        (
            Control::Choice {
                options,
                multiple: true,
            },
            Value::Array(chosen),
        ) => {
            for c in chosen {
                match c.as_str() {
                    Some(s) if options.iter().any(|o| o == s) => {}
                    _ => {
                        return bad(format!("{}: accepts only: {}", f.label, options.join(", ")));
                    }
                }
            }
            Ok(())
        }
        (Control::Choice { multiple: true, .. }, _) => {
            bad(format!("{}: must be a list of choices", f.label))
        }
        (Control::Text, Value::String(s)) => {
            let n = s.chars().count() as u64;
            if f.min_len.is_some_and(|m| n < m) {
                return bad(format!(
                    "{}: needs at least {} characters",
                    f.label,
                    f.min_len.unwrap_or(0)
                ));
            }
            if f.max_len.is_some_and(|m| n > m) {
                return bad(format!(
                    "{}: takes at most {} characters",
                    f.label,
                    f.max_len.unwrap_or(0)
                ));
            }
            Ok(())
        }
        _ => bad(format!("{}: must be text", f.label)),
    }
}

fn check_range(f: &Field, n: Option<f64>) -> Result<(), Invalid> {
    let n = n.unwrap_or(f64::NAN);
    if let Some(min) = f.min.filter(|m| n < *m) {
        return Err(Invalid::new(
            &f.key,
            format!("{}: must be at least {min}", f.label),
        ));
    }
    if let Some(max) = f.max.filter(|m| n > *m) {
        return Err(Invalid::new(
            &f.key,
            format!("{}: must be at most {max}", f.label),
        ));
    }
    Ok(())
}

#[cfg(test)]
mod tests;
