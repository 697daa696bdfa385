//! Answer forms: the *restricted* schema a suspension puts in `data.schema` ([`Form`],
//! [`FormField`], [`answer_schema_for`]) and the trust boundary that keeps credentials out of
//! answer data ([`is_credential_field`]).
//!
//! A restricted schema is the shape MCP elicitation uses, so a generic UI can render a form:
//!
//! ```json
//! {"type":"object","properties":{"city":{"type":"string","description":"The city."}},"required":["city"]}
//! ```
//!
//! Each property is `{"type", "enum"?, "title"?, "description"?, "default"?}` with `type` one
//! of `string`, `number`, `integer`, `boolean` (`enum`, or `oneOf` of titled `{"const","title"}`
//! options, only on strings), or `array` for a multi-select of a choice's options
//! ([`FormChoice`], SEP-1330); `default` is a field's `#[form(default = ..)]` (SEP-1034);
//! `required` lists the fields that are neither `Option` nor `#[serde(default)]` and is
//! omitted when empty.
//!
//! # Field order
//!
//! A schema's `properties` is a JSON object, and toolnexus writes objects with sorted keys in
//! every build (it turns on none of serde_json's features, so a `Value`'s map is sorted). The
//! order a form shows its fields in is carried by the one array JSON Schema has for them:
//! `required`, which [`Form`], `#[tool]`, `#[derive(Args)]` and [`answer_schema_for`] write in
//! declaration order. The answer page and MCP elicitation forms show the required fields in
//! `required`'s order, then the optional ones in `properties`' order ([`field_order`]). Declare
//! the fields a person must fill first; an optional field goes after them, sorted by name.

use serde_json::{Map, Value};

use crate::suspend::SuspendError;

/// A type whose fields make a flat answer form: what `schema = T` in `suspend!`/`ask!` puts in
/// `data.schema`. Implemented by `#[derive(toolnexus::Form)]` on a struct with named fields,
/// which checks at compile time that every field is a flat primitive ([`FormField`]) and that
/// none collects a credential; field doc comments become descriptions.
///
/// ```
/// use toolnexus::Form;
///
/// #[derive(Form, serde::Deserialize)]
/// struct Trip {
///     /// Where to.
///     city: String,
///     nights: u8,
///     window_seat: Option<bool>,
/// }
///
/// assert_eq!(
///     Trip::answer_schema().to_string(),
///     r#"{"properties":{"city":{"description":"Where to.","type":"string"},"nights":{"type":"integer"},"window_seat":{"type":"boolean"}},"required":["city","nights"],"type":"object"}"#
/// );
/// ```
///
/// A page or an MCP client shows a field by its label: the field's `#[form(label = "..")]`
/// (the schema's `title`), else its doc comment when that is one short line; the code name
/// (`cost_center`) is a last resort that the answer page (feature `inbox`) turns into words
/// ("Cost center"). A label is checked for credentials like the field's name.
///
/// ```
/// use toolnexus::Form;
///
/// #[derive(Form, serde::Deserialize)]
/// struct Expense {
///     /// The department that pays; ask finance when unsure.
///     #[form(label = "Cost center")]
///     cost_center: String,
/// }
///
/// assert_eq!(
///     Expense::answer_schema()["properties"]["cost_center"].to_string(),
///     r#"{"description":"The department that pays; ask finance when unsure.","title":"Cost center","type":"string"}"#
/// );
/// ```
///
/// The generated impl names the runtime as `::toolnexus`. A crate that re-exports toolnexus
/// (or renames it in `Cargo.toml`) says where it is with `#[form(crate = path)]`, as
/// `#[tool(crate = path)]` does; `suspend!`, `ask!` and `assert_pending!` find it on their
/// own.
///
/// ```
/// mod rt {
///     pub use toolnexus::*;
/// }
///
/// #[derive(toolnexus::Form, serde::Deserialize)]
/// #[form(crate = rt)]
/// struct Trip {
///     city: String,
/// }
///
/// use rt::Form as _;
/// assert_eq!(Trip::answer_schema()["required"], serde_json::json!(["city"]));
/// ```
pub trait Form {
    /// The restricted schema of the form.
    fn answer_schema() -> Value;
}

/// A flat value an answer form can hold: a string, number, integer, boolean or string enum
/// (`#[derive(toolnexus::Form)]` on an enum of unit variants implements it). `Option<T>` makes
/// the field optional.
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a flat answer-form field",
    label = "not a string, number, integer, boolean or string enum",
    note = "answer forms hold flat primitives only (the shape MCP elicitation uses): derive `toolnexus::Form` on an enum of unit variants for a choice, and ask for nested data in a separate request"
)]
pub trait FormField {
    /// Whether the field must be present (false for `Option`).
    const REQUIRED: bool = true;

    /// The property schema: `{"type", "enum"?}` (the description is added by the form).
    fn field_schema() -> Map<String, Value>;
}

fn type_schema(ty: &str) -> Map<String, Value> {
    let mut m = Map::new();
    m.insert("type".to_owned(), Value::String(ty.to_owned()));
    m
}

macro_rules! form_fields {
    ($ty:literal: $($t:ty),*) => {$(
        impl FormField for $t {
            fn field_schema() -> Map<String, Value> {
                type_schema($ty)
            }
        }
    )*};
}
form_fields!("string": String, char, std::borrow::Cow<'static, str>, Box<str>);
form_fields!("boolean": bool);
form_fields!("integer": i8, i16, i32, i64, i128, isize, u8, u16, u32, u64, u128, usize);
form_fields!("number": f32, f64);

/// A string choice: `#[derive(toolnexus::Form)]` on an enum of unit variants implements it,
/// and a `Vec` of it is a multi-select field (`{"type":"array","items":{..}}`, SEP-1330): the
/// options untitled (`items.enum`), or titled (`items.anyOf` of `{"const","title"}`) when a
/// variant has a `#[form(title = "..")]`.
///
/// ```
/// use toolnexus::Form;
///
/// #[derive(Form, serde::Deserialize)]
/// #[serde(rename_all = "lowercase")]
/// enum Meal {
///     #[form(title = "Vegetarian")]
///     Veg,
///     Fish,
/// }
///
/// #[derive(Form, serde::Deserialize)]
/// struct Order {
///     /// How many.
///     #[form(default = 1)]
///     seats: u8,
///     #[form(default = "veg")]
///     meal: Meal,
///     extras: Vec<Meal>,
/// }
///
/// let schema = Order::answer_schema();
/// assert_eq!(schema["properties"]["seats"]["default"], 1);
/// assert_eq!(
///     schema["properties"]["meal"].to_string(),
///     r#"{"default":"veg","oneOf":[{"const":"veg","title":"Vegetarian"},{"const":"fish","title":"fish"}],"type":"string"}"#
/// );
/// assert_eq!(
///     schema["properties"]["extras"].to_string(),
///     r#"{"items":{"anyOf":[{"const":"veg","title":"Vegetarian"},{"const":"fish","title":"fish"}]},"type":"array"}"#
/// );
/// ```
#[diagnostic::on_unimplemented(
    message = "`{Self}` is not a choice a multi-select can list",
    label = "not a `#[derive(Form)]` enum",
    note = "a `Vec` in an answer form is a multi-select of an enum's options: derive `toolnexus::Form` on an enum of unit variants and use `Vec<ThatEnum>`"
)]
pub trait FormChoice: FormField {}

impl<T: FormChoice> FormField for Vec<T> {
    fn field_schema() -> Map<String, Value> {
        let mut options = T::field_schema();
        let items = match options.remove("oneOf") {
            Some(titled) => {
                let mut items = Map::new();
                items.insert("anyOf".to_owned(), titled);
                items
            }
            None => options,
        };
        let mut m = type_schema("array");
        m.insert("items".to_owned(), Value::Object(items));
        m
    }
}

/// The schema of a string enum whose options have titles:
/// `{"type":"string","oneOf":[{"const","title"}..]}`.
pub(crate) fn titled_enum_schema(options: &[(&str, &str)]) -> Map<String, Value> {
    let mut m = type_schema("string");
    m.insert(
        "oneOf".to_owned(),
        Value::Array(
            options
                .iter()
                .map(|(value, title)| {
                    let mut o = Map::new();
                    o.insert("const".to_owned(), Value::String((*value).to_owned()));
                    o.insert("title".to_owned(), Value::String((*title).to_owned()));
                    Value::Object(o)
                })
                .collect(),
        ),
    );
    m
}

impl<T: FormField> FormField for Option<T> {
    const REQUIRED: bool = false;

    fn field_schema() -> Map<String, Value> {
        T::field_schema()
    }
}

/// The schema of a string enum: `{"type":"string","enum":[..]}`.
pub(crate) fn enum_schema(values: &[&str]) -> Map<String, Value> {
    let mut m = type_schema("string");
    m.insert(
        "enum".to_owned(),
        Value::Array(
            values
                .iter()
                .map(|v| Value::String((*v).to_owned()))
                .collect(),
        ),
    );
    m
}

/// The order a form shows the fields of the object schema `schema` in: the names in its
/// `required` array that are properties, in that order, then the other properties in the
/// order of its `properties` object. See [the module docs](self#field-order).
///
/// ```
/// use toolnexus::form::field_order;
///
/// let schema = toolnexus::json!({
///     "type": "object",
///     "properties": {"a_note": {"type": "string"}, "city": {"type": "string"}, "b_flag": {"type": "boolean"}, "nights": {"type": "integer"}},
///     "required": ["nights", "city"]
/// });
/// assert_eq!(field_order(&schema), ["nights", "city", "a_note", "b_flag"]);
/// ```
#[must_use]
pub fn field_order(schema: &Value) -> Vec<&str> {
    let Some(obj) = schema.as_object() else {
        return Vec::new();
    };
    let Some(props) = obj.get("properties").and_then(Value::as_object) else {
        return Vec::new();
    };
    let mut order: Vec<&str> = Vec::with_capacity(props.len());
    for name in crate::schema::required_names(obj) {
        if props.contains_key(name) && !order.contains(&name) {
            order.push(name);
        }
    }
    for name in props.keys() {
        if !order.contains(&name.as_str()) {
            order.push(name);
        }
    }
    order
}

/// One property of a form: name, schema (with the description appended), whether required.
pub(crate) fn property(
    mut schema: Map<String, Value>,
    title: Option<&str>,
    description: Option<&str>,
) -> Map<String, Value> {
    if let Some(t) = title.filter(|t| !t.is_empty()) {
        schema.insert("title".to_owned(), Value::String(t.to_owned()));
    }
    if let Some(d) = description.filter(|d| !d.is_empty()) {
        schema.insert("description".to_owned(), Value::String(d.to_owned()));
    }
    schema
}

/// Assembles a restricted object schema from its properties, in order.
pub(crate) fn object_schema(props: Vec<(String, Map<String, Value>, bool)>) -> Value {
    let mut properties = Map::new();
    let mut required = Vec::new();
    for (name, schema, req) in props {
        if req {
            required.push(Value::String(name.clone()));
        }
        properties.insert(name, Value::Object(schema));
    }
    let mut root = Map::new();
    root.insert("type".to_owned(), Value::String("object".to_owned()));
    root.insert("properties".to_owned(), Value::Object(properties));
    if !required.is_empty() {
        root.insert("required".to_owned(), Value::Array(required));
    }
    let mut schema = Value::Object(root);
    // keys sorted in every build (the order every schema toolnexus writes has)
    schema.sort_all_objects();
    schema
}

/// The restricted answer schema of a type that implements [`schemars::JsonSchema`] (for types
/// that do not derive [`Form`]): schemars' schema, checked and reduced to the restricted shape
/// (`type`, `enum` and `description` of each property; `Option` fields are not required).
///
/// # Errors
///
/// [`SuspendError::SchemaNotRestricted`] when the root is not an object or a field is not a
/// flat primitive (an object, an array, a reference, a union of types), naming the field.
///
/// ```
/// #[derive(schemars::JsonSchema)]
/// struct Stop { city: String, address: Address }
/// #[derive(schemars::JsonSchema)]
/// struct Address { street: String }
///
/// let err = toolnexus::form::answer_schema_for::<Stop>().unwrap_err();
/// assert_eq!(
///     err.to_string(),
///     "invalid suspension: the answer schema of `Stop` is not a flat form: field `address` is an object; answer forms hold flat primitives only (string, number, integer, boolean, string enum)"
/// );
/// ```
pub fn answer_schema_for<T: schemars::JsonSchema>() -> Result<Value, SuspendError> {
    let schema = crate::schema::input_schema_for::<T>();
    restrict(&schema).map_err(|reason| SuspendError::SchemaNotRestricted {
        ty: T::schema_name().into_owned(),
        reason,
    })
}

/// Reduces a schemars schema to the restricted shape, or says which field is not flat.
fn restrict(schema: &Value) -> Result<Value, String> {
    let root = schema
        .as_object()
        .filter(|o| o.get("type").and_then(Value::as_str) == Some("object"))
        .ok_or_else(|| "the root is not an object with named fields".to_owned())?;
    let required: Vec<&str> = crate::schema::required_names(root).collect();
    let mut props = Vec::new();
    if let Some(properties) = root.get("properties").and_then(Value::as_object) {
        // in the form's order, so `required` keeps the order schemars wrote it in
        for name in field_order(schema) {
            let Some(prop) = properties.get(name) else {
                continue;
            };
            let name = name.to_owned();
            let flat = flat_property(prop).map_err(|what| {
                format!(
                    "field `{name}` is {what}; answer forms hold flat primitives only (string, number, integer, boolean, string enum)"
                )
            })?;
            let title = prop.get("title").and_then(Value::as_str);
            let description = prop.get("description").and_then(Value::as_str);
            props.push((
                name.clone(),
                property(flat, title, description),
                required.contains(&name.as_str()),
            ));
        }
    }
    Ok(object_schema(props))
}

/// The `{"type", "enum"?}` of one flat property, or what it is instead.
fn flat_property(prop: &Value) -> Result<Map<String, Value>, &'static str> {
    let Some(obj) = prop.as_object() else {
        return Err("not a schema object");
    };
    if obj.contains_key("$ref") {
        return Err("a reference to another type");
    }
    let enum_values = |values: &Vec<Value>| -> Result<Vec<String>, &'static str> {
        values
            .iter()
            .filter(|v| !v.is_null())
            .map(|v| {
                v.as_str()
                    .map(str::to_owned)
                    .ok_or("an enum of non-strings")
            })
            .collect()
    };
    if let Some(values) = obj.get("enum").and_then(Value::as_array) {
        let values = enum_values(values)?;
        let refs: Vec<&str> = values.iter().map(String::as_str).collect();
        return Ok(enum_schema(&refs));
    }
    if let Some(variants) = obj
        .get("oneOf")
        .or_else(|| obj.get("anyOf"))
        .and_then(Value::as_array)
    {
        let non_null: Vec<&Value> = variants
            .iter()
            .filter(|v| v.get("type").and_then(Value::as_str) != Some("null"))
            .collect();
        let mut values = Vec::new();
        for v in &non_null {
            if let Some(c) = v.get("const") {
                values.push(c.as_str().ok_or("an enum of non-strings")?.to_owned());
            } else if let Some(e) = v.get("enum").and_then(Value::as_array) {
                values.extend(enum_values(e)?);
            } else if let [only] = non_null.as_slice() {
                // `Option<T>`: `anyOf: [T, null]`
                return flat_property(only);
            } else {
                return Err("a union of types");
            }
        }
        let refs: Vec<&str> = values.iter().map(String::as_str).collect();
        return Ok(enum_schema(&refs));
    }
    let ty: &str = match obj.get("type") {
        Some(Value::String(t)) => t.as_str(),
        Some(Value::Array(ts)) => {
            let mut non_null = ts.iter().filter_map(Value::as_str).filter(|t| *t != "null");
            match (non_null.next(), non_null.next()) {
                (Some(one), None) => one,
                _ => return Err("a union of types"),
            }
        }
        _ => return Err("of no single type"),
    };
    match ty {
        "string" | "number" | "integer" | "boolean" => Ok(type_schema(ty)),
        "object" => Err("an object"),
        "array" => Err("an array"),
        _ => Err("of no flat type"),
    }
}

/// Whether a field name collects a credential, by the trust boundary's rule
/// ([`boundary`](crate::boundary)): its words (split at separators, camelCase humps, acronyms
/// and digits, with Unicode confusables folded) contain a credential word, as a whole word, a
/// plural, a compound of adjacent words, or (for long words) inside a word.
///
/// ```
/// use toolnexus::form::is_credential_field;
///
/// assert!(is_credential_field("password"));
/// assert!(is_credential_field("API_KEY"));
/// assert!(is_credential_field("apiKey"));
/// assert!(is_credential_field("github-access-token"));
/// assert!(is_credential_field("NEWPASSWORD"));
/// assert!(is_credential_field("aws_access_key_id"));
/// assert!(is_credential_field("p\u{430}ssword")); // a Cyrillic `а`
/// assert!(!is_credential_field("city"));
/// assert!(!is_credential_field("shipping_address"));
/// assert!(!is_credential_field("spinner"));
/// assert!(!is_credential_field("tokenizer_name"));
/// ```
pub fn is_credential_field(name: &str) -> bool {
    crate::boundary::credential_name_in(name).is_some()
}
