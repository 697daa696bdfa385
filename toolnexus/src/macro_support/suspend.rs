//! Support for `suspend!`, `ask!`, `assert_pending!` and `#[derive(Form)]`.

use std::borrow::Borrow;
use std::marker::PhantomData;
use std::time::Duration;

use serde::Serialize;
use serde::de::DeserializeOwned;
use serde_json::{Map, Value};

use crate::context::Context;
use crate::request::{DeclineReason, KIND_AUTHORIZATION, Request};
use crate::result::ToolResult;
pub use crate::suspend::SuspensionIsNotText;
use crate::suspend::{SuspendError, Suspension};
use crate::util::json_kind;

pub use crate::form::{Form, FormChoice, FormField};
pub use toolnexus_macros::{
    ask as ask_impl, assert_pending as assert_pending_impl, suspend as suspend_impl,
};

/// What `suspend!` expands to: collects the parts, reports the first run-time error.
#[derive(Debug)]
pub struct SuspendBuilder {
    kind: &'static str,
    prompt: Option<String>,
    url: Option<String>,
    data: Option<Result<Map<String, Value>, SuspendError>>,
    schema: Option<Result<Value, SuspendError>>,
    expires_in: Option<Duration>,
    id: Option<String>,
}

impl SuspendBuilder {
    /// Starts a request of `kind`.
    pub fn new(kind: &'static str) -> Self {
        Self {
            kind,
            prompt: None,
            url: None,
            data: None,
            schema: None,
            expires_in: None,
            id: None,
        }
    }

    /// The prompt.
    #[must_use]
    pub fn prompt(mut self, prompt: impl Into<String>) -> Self {
        self.prompt = Some(prompt.into());
        self
    }

    /// `url = ..`.
    #[must_use]
    pub fn url(mut self, url: impl Into<String>) -> Self {
        self.url = Some(url.into());
        self
    }

    /// `data = ..`: must serialize to an object.
    #[must_use]
    pub fn data<T: Serialize + ?Sized>(mut self, data: &T) -> Self {
        self.data = Some(match serde_json::to_value(data) {
            Ok(Value::Object(map)) => Ok(map),
            Ok(other) => Err(SuspendError::DataNotObject {
                found: json_kind(&other),
            }),
            Err(e) => Err(SuspendError::DataNotSerializable(e.to_string())),
        });
        self
    }

    /// `schema = T`, already resolved (see [`SchemaProbe`]).
    #[must_use]
    pub fn schema(mut self, schema: Result<Value, SuspendError>) -> Self {
        self.schema = Some(schema);
        self
    }

    /// `expires_in = ..`.
    #[must_use]
    pub fn expires_in(mut self, ttl: Duration) -> Self {
        self.expires_in = Some(ttl);
        self
    }

    /// `id = ..`.
    #[must_use]
    pub fn id(mut self, id: impl Into<String>) -> Self {
        self.id = Some(id.into());
        self
    }

    /// The suspension, or a failed one saying what went wrong.
    pub fn build(self) -> Suspension {
        match self.try_build() {
            Ok(request) => Suspension::new(request),
            Err(e) => Suspension::failed(e),
        }
    }

    fn try_build(self) -> Result<Request, SuspendError> {
        let mut request = match (self.kind, self.prompt, self.url) {
            (KIND_AUTHORIZATION, None, Some(url)) => Request::authorization(url),
            (kind, prompt, url) => {
                let mut r = Request::new(kind, prompt.unwrap_or_default());
                r.url = url;
                r
            }
        };
        let mut data = self.data.transpose()?;
        if let Some(schema) = self.schema {
            let schema = schema?;
            let data = data.get_or_insert_with(Map::new);
            if data.contains_key("schema") {
                return Err(SuspendError::SchemaConflict);
            }
            data.insert("schema".to_owned(), schema);
        }
        request.data = data.map(Box::new);
        if let Some(ttl) = self.expires_in {
            request = request.expires_in(ttl);
        }
        if let Some(id) = self.id {
            request.id = id;
        }
        Ok(request)
    }
}

/// Resolves `schema = T`: a [`Form`] type's schema (checked at compile time) if `T` derives
/// `Form`, else the checked schemars schema. Autoref specialization: generated code calls
/// `(&&SchemaProbe::<T>::new()).pick().answer_schema()` with both pick traits in scope.
#[derive(Debug)]
pub struct SchemaProbe<T: ?Sized>(PhantomData<fn() -> Box<T>>);

impl<T: ?Sized> SchemaProbe<T> {
    /// A probe for `T`.
    pub fn new() -> Self {
        Self(PhantomData)
    }
}

impl<T: ?Sized> Default for SchemaProbe<T> {
    fn default() -> Self {
        Self::new()
    }
}

/// `T` derives [`Form`].
#[derive(Debug)]
pub struct ViaForm<T: ?Sized>(PhantomData<fn() -> Box<T>>);

/// `T` does not derive [`Form`]; it needs [`AnswerSchemaSource`].
#[derive(Debug)]
pub struct ViaJsonSchema<T: ?Sized>(PhantomData<fn() -> Box<T>>);

/// First choice of the probe.
pub trait PickForm {
    /// What was picked.
    type Picked;
    /// Picks.
    fn pick(&self) -> Self::Picked;
}

/// Fallback of the probe.
pub trait PickJsonSchema {
    /// What was picked.
    type Picked;
    /// Picks.
    fn pick(&self) -> Self::Picked;
}

impl<T: Form + ?Sized> PickForm for &SchemaProbe<T> {
    type Picked = ViaForm<T>;
    fn pick(&self) -> ViaForm<T> {
        ViaForm(PhantomData)
    }
}

impl<T: ?Sized> PickJsonSchema for SchemaProbe<T> {
    type Picked = ViaJsonSchema<T>;
    fn pick(&self) -> ViaJsonSchema<T> {
        ViaJsonSchema(PhantomData)
    }
}

impl<T: Form + ?Sized> ViaForm<T> {
    /// The form's schema.
    pub fn answer_schema(self) -> Result<Value, SuspendError> {
        Ok(T::answer_schema())
    }
}

impl<T: ?Sized> ViaJsonSchema<T> {
    /// The checked schemars schema.
    pub fn answer_schema(self) -> Result<Value, SuspendError>
    where
        T: AnswerSchemaSource,
    {
        T::restricted_schema()
    }
}

/// A type `schema = T` accepts without `#[derive(Form)]`: any `schemars::JsonSchema`.
#[diagnostic::on_unimplemented(
    message = "`{Self}` cannot describe an answer form",
    label = "used as `schema = ..` here",
    note = "derive `toolnexus::Form` on it (flat fields, checked at compile time), or derive `schemars::JsonSchema` (checked when the request is built)"
)]
pub trait AnswerSchemaSource {
    /// The restricted schema, or why there is none.
    fn restricted_schema() -> Result<Value, SuspendError>;
}

impl<T: schemars::JsonSchema> AnswerSchemaSource for T {
    fn restricted_schema() -> Result<Value, SuspendError> {
        crate::form::answer_schema_for::<T>()
    }
}

/// What `ask!` expands to: the accepted answer's data as `T`, or the suspension to return
/// (a fresh one without an answer, a failed one for a declined answer or bad data).
pub fn ask<T, C>(ctx: &C, build: impl FnOnce() -> Suspension) -> Result<T, Suspension>
where
    T: DeserializeOwned,
    C: Borrow<Context> + ?Sized,
{
    let ctx = ctx.borrow();
    match ctx.answer() {
        None => Err(build()),
        Some(answer) if answer.ok => answer
            .data_as::<T>()
            .map_err(|e| Suspension::failed(SuspendError::AnswerData(e))),
        Some(answer) => {
            let suspension = build();
            Err(match suspension.request() {
                Some(request) => Suspension::failed(SuspendError::Declined {
                    reason: answer.reason.clone().unwrap_or(DeclineReason::Declined),
                    prompt: request.prompt.clone(),
                }),
                None => suspension,
            })
        }
    }
}

/// How `ask!` returns a suspension from the enclosing function: the return types it supports.
#[diagnostic::on_unimplemented(
    message = "`ask!` cannot return a suspension from a function returning `{Self}`",
    label = "`ask!` returns early from here",
    note = "`ask!` works in functions returning `ToolResult`, `Suspension`, or `Result<_, E>` where `E: From<Suspension>` (`Suspension`, `Box<dyn Error + Send + Sync>`, ...)"
)]
pub trait AskReturn {
    /// Converts the suspension into the return value.
    fn from_suspension(s: Suspension) -> Self;
}

impl AskReturn for ToolResult {
    fn from_suspension(s: Suspension) -> Self {
        s.into()
    }
}

impl AskReturn for Suspension {
    fn from_suspension(s: Suspension) -> Self {
        s
    }
}

impl<T, E: AskError> AskReturn for Result<T, E> {
    fn from_suspension(s: Suspension) -> Self {
        Err(E::from_suspension(s))
    }
}

/// The error types `ask!` can return a suspension as: any `E: From<Suspension>`.
#[diagnostic::on_unimplemented(
    message = "`ask!` cannot return a suspension as the error type `{Self}`",
    label = "`ask!` returns `Err(..)` early from here",
    note = "the error type of the enclosing function must implement `From<toolnexus::Suspension>`: use `Suspension` or `Box<dyn Error + Send + Sync>`, or add a variant with `From<Suspension>` to your error type"
)]
pub trait AskError {
    /// Converts the suspension into the error.
    fn from_suspension(s: Suspension) -> Self;
}

impl<E: From<Suspension>> AskError for E {
    fn from_suspension(s: Suspension) -> Self {
        E::from(s)
    }
}

/// One property of a `#[derive(Form)]` struct.
pub fn form_property<T: FormField + ?Sized>(
    name: &str,
    title: Option<&str>,
    description: Option<&str>,
    has_default: bool,
) -> (String, Map<String, Value>, bool) {
    (
        name.to_owned(),
        crate::form::property(T::field_schema(), title, description),
        T::REQUIRED && !has_default,
    )
}

/// The schema of a `#[derive(Form)]` struct.
pub fn form_object(props: Vec<(String, Map<String, Value>, bool)>) -> Value {
    crate::form::object_schema(props)
}

/// The schema of a `#[derive(Form)]` enum.
pub fn form_enum(values: &[&str]) -> Map<String, Value> {
    crate::form::enum_schema(values)
}

/// The schema of a `#[derive(Form)]` enum with titled options.
pub fn form_titled_enum(options: &[(&str, &str)]) -> Map<String, Value> {
    crate::form::titled_enum_schema(options)
}

/// A `#[derive(Form)]` property with its `#[form(default = ..)]`.
pub fn form_default(
    mut property: (String, Map<String, Value>, bool),
    default: Value,
) -> (String, Map<String, Value>, bool) {
    property.1.insert("default".to_owned(), default);
    property
}
