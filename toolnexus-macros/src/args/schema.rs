//! The schema as JSON text written now: one literal when every part is known now (fields of the
//! types the macro knows, descriptions in `///`, literal defaults), else pieces around the parts
//! other types write (or a description or a default only known once compiled or running),
//! assembled once per process into a cache of the type's own.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{Expr, Lit, UnOp};

use super::expand::{default_value, field_type};
use super::parse::{Field, FieldDefault};
use crate::docs::{Description, doc_text};
use crate::tool::known::{is_option, json_string, known};

/// Schema text in pieces: literal text, and calls that write another type's part (or a
/// description, or a default, only known once compiled or running).
#[derive(Default)]
pub(super) struct Pieces(Vec<Piece>);

enum Piece {
    Text(String),
    Call(TokenStream),
}

impl Pieces {
    pub(super) fn text(&mut self, s: &str) {
        if let Some(Piece::Text(t)) = self.0.last_mut() {
            t.push_str(s);
        } else {
            self.0.push(Piece::Text(s.to_owned()));
        }
    }

    pub(super) fn call(&mut self, tokens: TokenStream) {
        self.0.push(Piece::Call(tokens));
    }

    /// A `"description":"..",` member (text known now or once compiled).
    pub(super) fn description(&mut self, docs: Option<&Description>, rt: &TokenStream) {
        match docs {
            None => {}
            Some(Description::Text(t)) => {
                self.text(&format!(r#""description":{},"#, json_string(t)));
            }
            Some(Description::Tokens(t)) => {
                self.call(quote!(#rt::description_member(__toolnexus_out, #t);));
            }
        }
    }

    /// The body of a schema writer: `{`, the description (the one given, else the type's own:
    /// `own`), then the pieces. Text alone is written as it is; pieces are assembled once per
    /// process into a cache of the type's own.
    pub(super) fn writer(self, own: &TokenStream, rt: &TokenStream) -> TokenStream {
        let mut parts = self.0;
        if parts.len() <= 1 {
            let text = match parts.pop() {
                Some(Piece::Text(t)) => t,
                Some(Piece::Call(c)) => return cached(&[Piece::Call(c)], own, rt),
                None => String::new(),
            };
            return quote!(#rt::write_schema(__toolnexus_out, __toolnexus_description, #own, #text););
        }
        cached(&parts, own, rt)
    }
}

fn cached(parts: &[Piece], own: &TokenStream, rt: &TokenStream) -> TokenStream {
    let steps = parts.iter().map(|p| match p {
        Piece::Text(t) => quote!(__toolnexus_out.push_str(#t);),
        Piece::Call(c) => c.clone(),
    });
    quote! {
        static __TOOLNEXUS_SCHEMA: #rt::OnceLock<#rt::String> = #rt::OnceLock::new();
        #rt::cached_schema(
            __toolnexus_out,
            __toolnexus_description,
            #own,
            &__TOOLNEXUS_SCHEMA,
            |__toolnexus_out: &mut #rt::String| { #(#steps)* },
        );
    }
}

pub(super) fn option_str(d: Option<&Description>, rt: &TokenStream) -> TokenStream {
    match d {
        None => quote!(#rt::None),
        Some(d) => quote!(#rt::Some(#d)),
    }
}

/// The JSON of a default known now: a literal number, `bool` or `char` (a field of a type the
/// macro knows, so the literal has the field's type), or `null` for `Option`'s own default.
fn literal_default(f: &Field<'_>) -> Option<String> {
    match f.default.as_ref()? {
        FieldDefault::Expr(e) => literal_json(e),
        FieldDefault::Trait if is_option(f.ty) => Some("null".to_owned()),
        _ => None,
    }
}

fn literal_json(e: &Expr) -> Option<String> {
    match e {
        Expr::Lit(l) => match &l.lit {
            Lit::Int(i) => Some(i.base10_digits().to_owned()),
            Lit::Float(f) => {
                let v: f64 = f.base10_parse().ok()?;
                v.is_finite().then(|| format!("{v:?}"))
            }
            Lit::Bool(b) => Some(b.value.to_string()),
            Lit::Char(c) => Some(json_string(&c.value().to_string())),
            _ => None,
        },
        Expr::Unary(u) if matches!(u.op, UnOp::Neg(_)) => match &*u.expr {
            inner @ Expr::Lit(l) if matches!(l.lit, Lit::Int(_) | Lit::Float(_)) => {
                literal_json(inner).map(|j| format!("-{j}"))
            }
            _ => None,
        },
        Expr::Paren(p) => literal_json(&p.expr),
        Expr::Group(g) => literal_json(&g.expr),
        _ => None,
    }
}

/// `"key":<schema>` for one field, its description and its default in it.
fn property(p: &mut Pieces, f: &Field<'_>, rt: &TokenStream) {
    p.text(&format!("{}:", json_string(&f.key)));
    let docs = doc_text(&f.docs);
    let ty = f.ty;
    let literal = literal_default(f);
    let known_text = known(ty).filter(|_| f.default.is_none() || literal.is_some());
    if let (Some(k), None | Some(Description::Text(_))) = (&known_text, &docs) {
        let description = match &docs {
            Some(Description::Text(d)) => format!(r#""description":{},"#, json_string(d)),
            _ => String::new(),
        };
        let default = literal
            .map(|d| format!(r#","default":{d}"#))
            .unwrap_or_default();
        p.text(&format!("{{{description}{}{default}}}", &k[1..k.len() - 1]));
    } else {
        let desc = option_str(docs.as_ref(), rt);
        let ops = field_type(ty, rt);
        if f.default.is_some() {
            let value = default_value(f);
            p.call(quote!(#ops.schema_default(__toolnexus_out, #desc, &#value);));
        } else {
            p.call(quote!(#ops.schema(__toolnexus_out, #desc);));
        }
    }
}

/// `"type":"object","properties":{..},"required":[..],"additionalProperties":false}`, with a
/// tag property first when `tag` is given.
pub(super) fn object(
    p: &mut Pieces,
    fields: &[Field<'_>],
    tag: Option<(&str, &str)>,
    rt: &TokenStream,
) {
    p.text(r#""type":"object","properties":{"#);
    let mut required = Vec::new();
    let mut first = true;
    if let Some((tag, name)) = tag {
        p.text(&format!(
            r#"{}:{{"type":"string","const":{}}}"#,
            json_string(tag),
            json_string(name)
        ));
        required.push(json_string(tag));
        first = false;
    }
    for f in fields.iter().filter(|f| !f.skip) {
        if !first {
            p.text(",");
        }
        first = false;
        property(p, f, rt);
        if f.default.is_none() && !is_option(f.ty) {
            required.push(json_string(&f.key));
        }
    }
    p.text("}");
    if !required.is_empty() {
        p.text(&format!(r#","required":[{}]"#, required.join(",")));
    }
    p.text(r#","additionalProperties":false}"#);
}
