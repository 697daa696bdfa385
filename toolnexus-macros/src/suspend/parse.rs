//! Parsing of the shared grammar of `suspend!`, `ask!` and `assert_pending!`:
//! `kind prompt? (, option = value)*`.

use proc_macro2::Span;
use syn::parse::{Parse, ParseStream};
use syn::{Expr, Ident, LitStr, Token, Type};

/// The known kind keywords.
pub(crate) const KNOWN_KINDS: &[&str] = &["input", "approval", "authorization", "question"];

/// The kind of a request, as written.
pub(crate) enum Kind {
    /// `input`, `approval`, `authorization` or `question`.
    Known(Ident),
    /// A string literal: a custom kind.
    Custom(LitStr),
}

impl Kind {
    pub(crate) fn value(&self) -> String {
        match self {
            Kind::Known(i) => i.to_string(),
            Kind::Custom(l) => l.value(),
        }
    }

    pub(crate) fn span(&self) -> Span {
        match self {
            Kind::Known(i) => i.span(),
            Kind::Custom(l) => l.span(),
        }
    }
}

/// One `name = value` option, keeping the name for spans.
pub(crate) struct Opt<T> {
    pub(crate) name: Ident,
    pub(crate) value: T,
}

/// The parsed request description.
#[derive(Default)]
pub(crate) struct Spec {
    pub(crate) kind: Option<Kind>,
    pub(crate) prompt: Option<Expr>,
    pub(crate) url: Option<Opt<Expr>>,
    pub(crate) data: Option<Opt<Expr>>,
    pub(crate) schema: Option<Opt<Type>>,
    pub(crate) expires_in: Option<Opt<Expr>>,
    pub(crate) id: Option<Opt<Expr>>,
}

fn unknown_kind(ident: &Ident) -> syn::Error {
    syn::Error::new(
        ident.span(),
        format!(
            "unknown request kind `{ident}`: expected `input`, `approval`, `authorization`, `question`, or a string literal for a custom kind"
        ),
    )
}

impl Spec {
    /// Parses `kind prompt? (, option = value)* ,?`. The kind may be absent only when
    /// `kind_optional` (then the input may be empty or start with an option).
    pub(crate) fn parse(input: ParseStream<'_>, kind_optional: bool) -> syn::Result<Self> {
        let mut spec = Spec::default();
        if input.is_empty() {
            return Ok(spec);
        }
        let starts_with_option =
            input.peek(Ident) && input.peek2(Token![=]) && !input.peek2(Token![==]);
        if starts_with_option && !kind_optional {
            return Err(input.error(
                "expected a request kind before the options: `input`, `approval`, `authorization`, `question`, or a string literal for a custom kind",
            ));
        }
        if !starts_with_option {
            spec.kind = Some(parse_kind(input)?);
            if !input.is_empty() && !input.peek(Token![,]) {
                spec.prompt = Some(input.parse()?);
            }
            if input.is_empty() {
                return Ok(spec);
            }
            input.parse::<Token![,]>()?;
        }
        while !input.is_empty() {
            spec.parse_option(input)?;
            if input.is_empty() {
                break;
            }
            input.parse::<Token![,]>()?;
        }
        Ok(spec)
    }

    fn parse_option(&mut self, input: ParseStream<'_>) -> syn::Result<()> {
        let name: Ident = input.call(syn::ext::IdentExt::parse_any)?;
        let key = name.to_string();
        let duplicate = |name: &Ident| {
            syn::Error::new(
                name.span(),
                format!("duplicate option `{name}`: each option may be given once"),
            )
        };
        match key.as_str() {
            "url" | "data" | "expires_in" | "id" => {
                let slot = match key.as_str() {
                    "url" => &mut self.url,
                    "data" => &mut self.data,
                    "expires_in" => &mut self.expires_in,
                    _ => &mut self.id,
                };
                if slot.is_some() {
                    return Err(duplicate(&name));
                }
                input.parse::<Token![=]>()?;
                let value: Expr = input.parse()?;
                *slot = Some(Opt { name, value });
            }
            "schema" => {
                if self.schema.is_some() {
                    return Err(duplicate(&name));
                }
                input.parse::<Token![=]>()?;
                let value: Type = input.parse()?;
                self.schema = Some(Opt { name, value });
            }
            _ => {
                return Err(syn::Error::new(
                    name.span(),
                    format!(
                        "unknown option `{name}`: expected `url`, `data`, `schema`, `expires_in` or `id`"
                    ),
                ));
            }
        }
        Ok(())
    }
}

fn parse_kind(input: ParseStream<'_>) -> syn::Result<Kind> {
    if input.peek(LitStr) {
        return Ok(Kind::Custom(input.parse()?));
    }
    if input.peek(Ident) || input.peek(Token![type]) {
        let ident: Ident = input.call(syn::ext::IdentExt::parse_any)?;
        if KNOWN_KINDS.contains(&ident.to_string().as_str()) {
            return Ok(Kind::Known(ident));
        }
        return Err(unknown_kind(&ident));
    }
    Err(input.error(
        "expected a request kind: `input`, `approval`, `authorization`, `question`, or a string literal for a custom kind",
    ))
}

/// `suspend!(..)`'s input.
pub(crate) struct SuspendInput(pub(crate) Spec);

impl Parse for SuspendInput {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        if input.is_empty() {
            return Err(syn::Error::new(
                Span::call_site(),
                "`suspend!` needs a request kind and a prompt, e.g. `suspend!(input \"Which city?\")`",
            ));
        }
        Spec::parse(input, false).map(Self)
    }
}

/// `ask!(ctx, ..)`'s input.
pub(crate) struct AskInput {
    pub(crate) ctx: Expr,
    pub(crate) spec: Spec,
}

impl Parse for AskInput {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        if input.is_empty() {
            return Err(syn::Error::new(
                Span::call_site(),
                "`ask!` needs the context, a request kind and a prompt, e.g. `ask!(ctx, input \"Which city?\")`",
            ));
        }
        let ctx: Expr = input.parse()?;
        if let Some(kind) = missing_context(&ctx, input) {
            return Err(syn::Error::new_spanned(
                &ctx,
                format!(
                    "`ask!` needs the context first, then the request: `ask!(ctx, {kind} ..)`, where `ctx` is the tool's `&Context` (the answer is read from it)"
                ),
            ));
        }
        if input.is_empty() {
            return Err(syn::Error::new(
                Span::call_site(),
                "`ask!` needs a request kind and a prompt after the context, e.g. `ask!(ctx, input \"Which city?\")`",
            ));
        }
        if !input.peek(Token![,]) {
            return Err(
                input.error("expected `,` after the context: `ask!(ctx, <kind> <prompt>, ..)`")
            );
        }
        input.parse::<Token![,]>()?;
        let spec = Spec::parse(input, false)?;
        Ok(Self { ctx, spec })
    }
}

/// The request kind written where `ask!` expects the context, if `ctx` is one: a kind keyword
/// or string literal followed by a prompt (`ask!(input "Which city?")`) or by options
/// (`ask!(authorization, url = ..)`).
fn missing_context(ctx: &Expr, rest: ParseStream<'_>) -> Option<String> {
    let kind = match ctx {
        Expr::Path(p) if p.qself.is_none() && p.attrs.is_empty() => {
            let ident = p.path.get_ident()?.to_string();
            KNOWN_KINDS.contains(&ident.as_str()).then_some(ident)?
        }
        Expr::Lit(syn::ExprLit {
            lit: syn::Lit::Str(l),
            ..
        }) => format!("{:?}", l.value()),
        _ => return None,
    };
    let followed_by_prompt = !rest.is_empty() && !rest.peek(Token![,]);
    let fork = rest.fork();
    let followed_by_option = fork.parse::<Token![,]>().is_ok()
        && fork.peek(Ident)
        && fork.peek2(Token![=])
        && !fork.peek2(Token![==]);
    (followed_by_prompt || followed_by_option || rest.is_empty()).then_some(kind)
}

/// `assert_pending!(result, ..)`'s input.
pub(crate) struct AssertInput {
    pub(crate) result: Expr,
    pub(crate) spec: Spec,
}

impl Parse for AssertInput {
    fn parse(input: ParseStream<'_>) -> syn::Result<Self> {
        if input.is_empty() {
            return Err(syn::Error::new(
                Span::call_site(),
                "`assert_pending!` needs the result to check, e.g. `assert_pending!(result, input \"Which city?\")`",
            ));
        }
        let result: Expr = input.parse()?;
        if input.is_empty() {
            return Ok(Self {
                result,
                spec: Spec::default(),
            });
        }
        input.parse::<Token![,]>()?;
        let spec = Spec::parse(input, true)?;
        Ok(Self { result, spec })
    }
}
