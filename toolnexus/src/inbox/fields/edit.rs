//! An editable approval's arguments on the page: typed fields from the tool's schema when a
//! form can express them (the renderer of input forms), else JSON; and the check of what
//! comes back, as the loop checks it.

use serde_json::Value;

use super::{ARGS, Control, Field, Invalid, Pairs, from_form, schema_form};
use crate::request::Request;

/// An editable approval's proposed arguments and the schema an edit must fit.
#[derive(Clone, Debug)]
pub(crate) struct Edit {
    pub(crate) proposed: Value,
    pub(crate) schema: Value,
    /// The arguments as typed fields (the renderer of input forms), when the schema is a flat
    /// form and every proposed argument fits one of its fields; else `None`, and the page
    /// shows the arguments as JSON.
    pub(crate) fields: Option<Vec<Field>>,
}

impl Edit {
    /// The edit of `proposed` under `schema`, with typed fields when a form can express it.
    pub(crate) fn new(proposed: Value, schema: Value) -> Self {
        let fields = schema_form(&schema).ok().filter(|fields| {
            !fields.is_empty()
                && proposed.as_object().is_some_and(|args| {
                    args.iter().all(|(k, v)| {
                        fields
                            .iter()
                            .find(|f| &f.key == k)
                            .is_some_and(|f| shown(f, v).is_some())
                    })
                })
        });
        Self {
            proposed,
            schema,
            fields,
        }
    }

    /// The form's values the page starts with: the proposed arguments, as the fields show
    /// them (a checkbox that is off sends nothing).
    pub(crate) fn defaults(&self) -> Vec<(String, String)> {
        let (Some(fields), Some(args)) = (&self.fields, self.proposed.as_object()) else {
            return Vec::new();
        };
        fields
            .iter()
            .filter_map(|f| match shown(f, args.get(&f.key)?)? {
                Shown::Text(text) => Some((f.name.clone(), text)),
                Shown::Unticked => None,
            })
            .collect()
    }

    /// The arguments the typed fields say: the proposed ones with each field's value over
    /// them (an unchanged number keeps its proposed spelling, `40` stays `40`; an unticked box
    /// for an argument the call did not set stays unset; an emptied optional field is
    /// removed).
    pub(crate) fn args_of_fields(&self, fields: &[Field], pairs: &Pairs) -> Result<Value, Invalid> {
        let form = from_form(fields, pairs)?;
        let mut args = self.proposed.as_object().cloned().unwrap_or_default();
        for f in fields {
            let proposed = args.get(&f.key);
            match form.get(&f.key) {
                None => {
                    args.remove(&f.key);
                }
                Some(Value::Bool(false)) if proposed.is_none() => {}
                Some(Value::Number(n))
                    if proposed
                        .and_then(Value::as_f64)
                        .is_some_and(|p| n.as_f64() == Some(p)) => {}
                Some(v) => {
                    args.insert(f.key.clone(), v.clone());
                }
            }
        }
        Ok(Value::Object(args))
    }

    /// The answer to an editable approval: `edited` (JSON text or a value) checked at the
    /// door, as the loop checks it again (`data.args` only when it differs from the
    /// proposal).
    pub(crate) fn answer(
        &self,
        request: &Request,
        edited: Option<Value>,
    ) -> Result<crate::request::Answer, Invalid> {
        match edited {
            None => Ok(crate::request::Answer::ok(&request.id)),
            Some(args) if args == self.proposed => Ok(crate::request::Answer::ok(&request.id)),
            Some(args) => {
                if !args.is_object() {
                    return Err(Invalid::new(ARGS, "Arguments: must be a JSON object"));
                }
                crate::tool::conforms(&self.schema, &args)
                    .map_err(|why| Invalid::new(ARGS, format!("Arguments: {why}")))?;
                // a person never types a secret here (the loop refuses it too)
                super::boundary_checked(request, request.approve_with(args))
            }
        }
    }

    /// Reads the page's arguments field (JSON text).
    pub(crate) fn parse(text: &str) -> Result<Option<Value>, Invalid> {
        if text.trim().is_empty() {
            return Ok(None);
        }
        crate::limits::parse_checked(text)
            .map(Some)
            .map_err(|e| Invalid::new(ARGS, format!("Arguments: not valid JSON ({e})")))
    }
}

/// What a field shows for a value.
enum Shown {
    /// The control's text (a ticked box: `on`).
    Text(String),
    /// A box left unticked: the form sends nothing.
    Unticked,
}

/// What `f` shows for the value `v`; `None` when the field cannot hold it (another type, a
/// value outside its options).
fn shown(f: &Field, v: &Value) -> Option<Shown> {
    match (&f.control, v) {
        (Control::Text, Value::String(s)) => Some(Shown::Text(s.clone())),
        (Control::Select(options), Value::String(s)) if options.contains(s) => {
            Some(Shown::Text(s.clone()))
        }
        (Control::Number, Value::Number(n)) => Some(Shown::Text(n.to_string())),
        (Control::Integer, Value::Number(n)) if n.is_i64() || n.is_u64() => {
            Some(Shown::Text(n.to_string()))
        }
        (Control::Checkbox, Value::Bool(true)) => Some(Shown::Text("on".to_owned())),
        (Control::Checkbox, Value::Bool(false)) => Some(Shown::Unticked),
        _ => None,
    }
}
