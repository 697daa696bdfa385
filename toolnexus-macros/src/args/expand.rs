//! Code generation from a checked [`Input`]; nothing here can fail. The schema is JSON text
//! written now: one literal when every part is known now (fields of the types the macro knows,
//! descriptions in `///`, literal defaults), else pieces around the parts other types write,
//! assembled once per process. The decoder matches each key of the object to its field and
//! decodes the value at once; the encoder (a default shown in a schema) writes what the decoder
//! reads back.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Expr, Lit, UnOp};

use super::parse::{Field, FieldDefault, Input, Shape, Variant, VariantKind};
use crate::docs::{Description, doc_text};
use crate::runtime::Runtime;
use crate::tool::known::{is_option, json_string, known};

/// Schema text in pieces: literal text, and calls that write another type's part (or a
/// description, or a default, only known once compiled or running).
#[derive(Default)]
struct Pieces(Vec<Piece>);

enum Piece {
    Text(String),
    Call(TokenStream),
}

impl Pieces {
    fn text(&mut self, s: &str) {
        if let Some(Piece::Text(t)) = self.0.last_mut() {
            t.push_str(s);
        } else {
            self.0.push(Piece::Text(s.to_owned()));
        }
    }

    fn call(&mut self, tokens: TokenStream) {
        self.0.push(Piece::Call(tokens));
    }

    /// A `"description":"..",` member (text known now or once compiled).
    fn description(&mut self, docs: Option<&Description>, rt: &TokenStream) {
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
    fn writer(self, own: &TokenStream, rt: &TokenStream) -> TokenStream {
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

fn option_str(d: Option<&Description>, rt: &TokenStream) -> TokenStream {
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
    match (known_text, &docs) {
        (Some(k), None | Some(Description::Text(_))) => {
            let mut text = String::from("{");
            if let Some(Description::Text(d)) = &docs {
                text.push_str(&format!(r#""description":{},"#, json_string(d)));
            }
            text.push_str(&k[1..k.len() - 1]);
            if let Some(default) = &literal {
                text.push_str(&format!(r#","default":{default}"#));
            }
            text.push('}');
            p.text(&text);
        }
        _ => {
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
}

/// `"type":"object","properties":{..},"required":[..],"additionalProperties":false}`, with a
/// tag property first when `tag` is given.
fn object(p: &mut Pieces, fields: &[Field<'_>], tag: Option<(&str, &str)>, rt: &TokenStream) {
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

/// `Ok(<ctor> { field: .., .. })` from the map in `map`: each key matched to its field and its
/// value decoded at once; then each field's value, its default, or its absent value.
fn decode_fields(
    fields: &[Field<'_>],
    map: &TokenStream,
    ctor: &TokenStream,
    rt: &TokenStream,
) -> TokenStream {
    let taken: Vec<&Field<'_>> = fields.iter().filter(|f| !f.skip).collect();
    let keys: Vec<&str> = taken.iter().map(|f| f.key.as_str()).collect();
    let mut vars = Vec::new();
    let mut arms = Vec::new();
    let mut inits = Vec::new();
    let mut index = 0usize;
    for f in fields {
        let ident = f.ident;
        if f.skip {
            let value = default_value(f);
            inits.push(quote!(#ident: #value));
            continue;
        }
        let var = format_ident!("__toolnexus_v{}", index);
        index += 1;
        let key = &f.key;
        let ops = field_type(f.ty, rt);
        if f.default.is_none() {
            arms.push(quote!(#key => #var = #rt::Some(#ops.decode(__toolnexus_value, #key)?),));
            inits.push(quote!(#ident: #ops.present(#var, #key)?));
        } else {
            arms.push(quote!(#key => #var = #ops.decode_or_null(__toolnexus_value, #key)?,));
            let value = default_value(f);
            inits.push(quote!(#ident: match #var {
                #rt::Some(__toolnexus_set) => __toolnexus_set,
                #rt::None => #value,
            }));
        }
        vars.push(var);
    }
    if taken.is_empty() {
        return quote! {
            #rt::slots::<0>(#map, &[])?;
            #rt::Ok(#ctor { #(#inits),* })
        };
    }
    quote! {
        #(let mut #vars = #rt::None;)*
        for (__toolnexus_key, __toolnexus_value) in #map {
            match __toolnexus_key.as_str() {
                #(#arms)*
                _ => return #rt::Err(#rt::ArgError::unknown_field(&__toolnexus_key, &[#(#keys),*])),
            }
        }
        #rt::Ok(#ctor { #(#inits),* })
    }
}

/// `put(..)?;` for each field bound to `value_of(field)`, into `__toolnexus_map`.
fn encode_fields(
    fields: &[Field<'_>],
    value_of: impl Fn(usize, &Field<'_>) -> TokenStream,
    rt: &TokenStream,
) -> TokenStream {
    let puts = fields.iter().enumerate().filter(|(_, f)| !f.skip).map(|(i, f)| {
        let key = &f.key;
        let ops = field_type(f.ty, rt);
        let value = value_of(i, f);
        quote!(#rt::put(&mut __toolnexus_map, #key, #ops.json(#value))?;)
    });
    quote!(#(#puts)*)
}

/// `FieldType<ty>`: how a field of type `ty` is described and decoded. Every use of a field's
/// type goes through this one call, spanned on the type, so a type that is no argument type
/// gives one error.
fn field_type(ty: &syn::Type, rt: &TokenStream) -> TokenStream {
    quote_spanned!(ty.span()=> #rt::field_type::<#ty>())
}

fn default_value(f: &Field<'_>) -> TokenStream {
    let ty = f.ty;
    match &f.default {
        None | Some(FieldDefault::Trait) => {
            quote_spanned!(ty.span()=> <#ty as ::core::default::Default>::default())
        }
        Some(FieldDefault::Expr(e)) => quote!(#e),
        Some(FieldDefault::Path(p)) => quote!(#p()),
        Some(FieldDefault::Container) => {
            let ident = f.ident;
            quote!(<Self as ::core::default::Default>::default().#ident)
        }
    }
}

/// A pattern for a variant that binds nothing.
fn any_of(v: &Variant<'_>) -> TokenStream {
    let ident = v.ident;
    match v.kind {
        VariantKind::Unit => quote!(Self::#ident),
        VariantKind::Struct(_) => quote!(Self::#ident { .. }),
        VariantKind::Newtype(_) | VariantKind::Tuple(_) => quote!(Self::#ident(..)),
    }
}

/// A struct variant's pattern binding its fields to `__toolnexus_f<i>`.
fn bind_fields(v: &Variant<'_>, fields: &[Field<'_>]) -> TokenStream {
    let vident = v.ident;
    let binds = fields
        .iter()
        .enumerate()
        .filter(|(_, f)| !f.skip)
        .map(|(i, f)| {
            let ident = f.ident;
            let var = format_ident!("__toolnexus_f{}", i);
            quote!(#ident: #var)
        });
    quote!(Self::#vident { #(#binds,)* .. })
}

/// The parts of one generated impl.
struct Impl {
    schema: TokenStream,
    nullable: Option<TokenStream>,
    decode: TokenStream,
    json: TokenStream,
    /// Items beside the impl (the content decoders of adjacently tagged struct variants).
    extra: TokenStream,
}

#[allow(clippy::too_many_lines)] // a struct, string enums and tagged enums, each whole
fn shape(input: &Input<'_>, rt: &TokenStream) -> Option<Impl> {
    let ident = input.ident;
    let name = ident.to_string();
    let own_doc = doc_text(&input.docs);
    let own = option_str(own_doc.as_ref(), rt);
    match &input.shape {
        Shape::Struct(fields) => {
            let mut p = Pieces::default();
            object(&mut p, fields, None, rt);
            let expected = format!("struct {name}");
            let map = quote!(#rt::object(__toolnexus_value, #expected)?);
            let puts = encode_fields(fields, |_, f| {
                let ident = f.ident;
                quote!(&self.#ident)
            }, rt);
            Some(Impl {
                schema: p.writer(&own, rt),
                nullable: None,
                decode: decode_fields(fields, &map, &quote!(Self), rt),
                json: quote! {
                    #[allow(unused_mut)]
                    let mut __toolnexus_map = #rt::JsonMap::new();
                    #puts
                    #rt::Some(#rt::JsonValue::Object(__toolnexus_map))
                },
                extra: TokenStream::new(),
            })
        }
        Shape::Strings(variants) => {
            let taken: Vec<&Variant<'_>> = variants.iter().filter(|v| !v.skip).collect();
            let names: Vec<String> = taken.iter().map(|v| json_string(&v.name)).collect();
            let described = taken.iter().any(|v| doc_text(&v.docs).is_some());
            let (schema, nullable) = if described {
                // one branch per variant, so each can say what it means
                let branches = |p: &mut Pieces| {
                    p.text(r#""oneOf":["#);
                    for (i, v) in taken.iter().enumerate() {
                        if i > 0 {
                            p.text(",");
                        }
                        p.text("{");
                        p.description(doc_text(&v.docs).as_ref(), rt);
                        p.text(&format!(
                            r#""type":"string","const":{}}}"#,
                            json_string(&v.name)
                        ));
                    }
                };
                let mut p = Pieces::default();
                branches(&mut p);
                p.text("]}");
                let mut n = Pieces::default();
                branches(&mut n);
                n.text(r#",{"type":"null"}]}"#);
                (p.writer(&own, rt), n.writer(&own, rt))
            } else {
                let schema = format!(r#""type":"string","enum":[{}]}}"#, names.join(","));
                let nullable = format!(
                    r#""type":["string","null"],"enum":[{},null]}}"#,
                    names.join(",")
                );
                (
                    quote!(#rt::write_schema(__toolnexus_out, __toolnexus_description, #own, #schema);),
                    quote!(#rt::write_schema(__toolnexus_out, __toolnexus_description, #own, #nullable);),
                )
            };
            let strs: Vec<&str> = taken.iter().map(|v| v.name.as_str()).collect();
            let idents = taken.iter().map(|v| v.ident);
            let expected = format!("enum {name}");
            let decode = quote! {
                match #rt::variant_name(__toolnexus_value, #expected)?.as_str() {
                    #(#strs => #rt::Ok(Self::#idents),)*
                    __toolnexus_other => #rt::Err(#rt::ArgError::unknown_variant(__toolnexus_other, &[#(#strs),*])),
                }
            };
            let arms = variants.iter().map(|v| {
                let pat = any_of(v);
                if v.skip {
                    quote!(#pat => #rt::None,)
                } else {
                    let name = &v.name;
                    quote!(#pat => #rt::name_json(#name),)
                }
            });
            Some(Impl {
                schema,
                nullable: Some(nullable),
                decode,
                json: quote!(match self { #(#arms)* }),
                extra: TokenStream::new(),
            })
        }
        Shape::Tagged {
            tag,
            content,
            variants,
        } => Some(tagged(input, tag, content.as_deref(), variants, &own, rt)),
        Shape::External(_) | Shape::Refused => None,
    }
}

#[allow(clippy::too_many_lines)] // schema, decoder and encoder of both tagged forms, in order
fn tagged(
    input: &Input<'_>,
    tag: &str,
    content: Option<&str>,
    variants: &[Variant<'_>],
    own: &TokenStream,
    rt: &TokenStream,
) -> Impl {
    let ident = input.ident;
    let name = ident.to_string();
    let taken: Vec<&Variant<'_>> = variants.iter().filter(|v| !v.skip).collect();
    let mut p = Pieces::default();
    p.text(r#""oneOf":["#);
    for (i, v) in taken.iter().enumerate() {
        if i > 0 {
            p.text(",");
        }
        p.text("{");
        p.description(doc_text(&v.docs).as_ref(), rt);
        match (content, &v.kind) {
            (None, VariantKind::Struct(fields)) => {
                object(&mut p, fields, Some((tag, &v.name)), rt);
            }
            (_, VariantKind::Unit) => object(&mut p, &[], Some((tag, &v.name)), rt),
            (Some(c), kind) => {
                p.text(&format!(
                    r#""type":"object","properties":{{{}:{{"type":"string","const":{}}},{}:"#,
                    json_string(tag),
                    json_string(&v.name),
                    json_string(c)
                ));
                match kind {
                    VariantKind::Struct(fields) => {
                        p.text("{");
                        object(&mut p, fields, None, rt);
                    }
                    VariantKind::Newtype(ty) => {
                        let ops = field_type(ty, rt);
                        p.call(quote!(#ops.schema(__toolnexus_out, #rt::None);));
                    }
                    VariantKind::Unit | VariantKind::Tuple(_) => {}
                }
                p.text(&format!(
                    r#"}},"required":[{},{}],"additionalProperties":false}}"#,
                    json_string(tag),
                    json_string(c)
                ));
            }
            (None, VariantKind::Newtype(_) | VariantKind::Tuple(_)) => {}
        }
    }
    p.text("]}");

    let names: Vec<&str> = taken.iter().map(|v| v.name.as_str()).collect();
    let mut extra = TokenStream::new();
    let mut arms = Vec::new();
    for (i, v) in taken.iter().enumerate() {
        let vident = v.ident;
        let vname = &v.name;
        let arm = match (content, &v.kind) {
            (None, VariantKind::Unit) => quote! {
                #rt::slots::<0>(__toolnexus_map, &[])?;
                #rt::Ok(Self::#vident)
            },
            (None, VariantKind::Struct(fields)) => decode_fields(
                fields,
                &quote!(__toolnexus_map),
                &quote!(Self::#vident),
                rt,
            ),
            (Some(c), VariantKind::Unit) => quote! {
                #rt::no_content(__toolnexus_content.as_ref(), #c, &[#tag])?;
                #rt::Ok(Self::#vident)
            },
            (Some(c), VariantKind::Newtype(ty)) => {
                let ops = field_type(ty, rt);
                quote!(#rt::Ok(Self::#vident(#ops.field(__toolnexus_content, #c)?)))
            }
            (Some(c), VariantKind::Struct(fields)) => {
                let helper = format_ident!("__toolnexus_content_{}", i);
                let body = decode_fields(
                    fields,
                    &quote!(__toolnexus_map),
                    &quote!(#ident::#vident),
                    rt,
                );
                extra.extend(quote! {
                    fn #helper(
                        __toolnexus_map: #rt::JsonMap,
                    ) -> #rt::Result<#ident, #rt::ArgError> {
                        #body
                    }
                });
                let expected = format!("struct variant {name}::{vident}");
                quote!(#rt::content(__toolnexus_content, #c, #expected, #helper))
            }
            _ => quote!(::core::unreachable!()),
        };
        arms.push(quote!(#vname => { #arm }));
    }
    let unknown = quote! {
        __toolnexus_other => #rt::Err(
            #rt::ArgError::unknown_variant(__toolnexus_other, &[#(#names),*]).at_key(#tag),
        ),
    };
    let decode = match content {
        None => {
            let expected = format!("internally tagged enum {name}");
            quote! {
                let mut __toolnexus_map = #rt::object(__toolnexus_value, #expected)?;
                let __toolnexus_tag = #rt::tag(&mut __toolnexus_map, #tag)?;
                match __toolnexus_tag.as_str() {
                    #(#arms)*
                    #unknown
                }
            }
        }
        Some(c) => {
            let expected = format!("adjacently tagged enum {name}");
            quote! {
                let [__toolnexus_tag, __toolnexus_content] =
                    #rt::slots(#rt::object(__toolnexus_value, #expected)?, &[#tag, #c])?;
                let __toolnexus_tag = #rt::tag_value(__toolnexus_tag, #tag)?;
                match __toolnexus_tag.as_str() {
                    #(#arms)*
                    #unknown
                }
            }
        }
    };

    // the encoder: the tag, then the fields (internally tagged) or the content
    let json_arms = variants.iter().map(|v| {
        if v.skip {
            let pat = any_of(v);
            return quote!(#pat => #rt::None,);
        }
        let vname = &v.name;
        let start = quote! {
            let mut __toolnexus_map = #rt::JsonMap::new();
            #rt::put(&mut __toolnexus_map, #tag, #rt::name_json(#vname))?;
        };
        let field_value = |i: usize, _: &Field<'_>| {
            let var = format_ident!("__toolnexus_f{}", i);
            quote!(#var)
        };
        // `pre` computes the content before the object is started
        let (pat, pre, body) = match (content, &v.kind) {
            (_, VariantKind::Unit) => (any_of(v), TokenStream::new(), TokenStream::new()),
            (None, VariantKind::Struct(fields)) => (
                bind_fields(v, fields),
                TokenStream::new(),
                encode_fields(fields, field_value, rt),
            ),
            (Some(c), VariantKind::Struct(fields)) => {
                let puts = encode_fields(fields, field_value, rt);
                (
                    bind_fields(v, fields),
                    quote! {
                        let __toolnexus_content = {
                            #[allow(unused_mut)]
                            let mut __toolnexus_map = #rt::JsonMap::new();
                            #puts
                            #rt::JsonValue::Object(__toolnexus_map)
                        };
                    },
                    quote!(#rt::put(&mut __toolnexus_map, #c, #rt::Some(__toolnexus_content))?;),
                )
            }
            (Some(c), VariantKind::Newtype(ty)) => {
                let vident = v.ident;
                let ops = field_type(ty, rt);
                (
                    quote!(Self::#vident(__toolnexus_f0)),
                    TokenStream::new(),
                    quote!(#rt::put(&mut __toolnexus_map, #c, #ops.json(__toolnexus_f0))?;),
                )
            }
            // refused in `validate`
            (None, VariantKind::Newtype(_)) | (_, VariantKind::Tuple(_)) => {
                let pat = any_of(v);
                return quote!(#pat => #rt::None,);
            }
        };
        quote!(#pat => {
            #pre
            #start
            #body
            #rt::Some(#rt::JsonValue::Object(__toolnexus_map))
        })
    });
    Impl {
        schema: p.writer(own, rt),
        nullable: None,
        decode,
        json: quote!(match self { #(#json_arms)* }),
        extra,
    }
}

pub(crate) fn derive(input: &Input<'_>) -> TokenStream {
    let (rt, use_rt) = Runtime::new(input.krate.as_ref()).alias();
    let ident = input.ident;
    let Some(Impl {
        schema,
        nullable,
        decode,
        json,
        extra,
    }) = shape(input, &rt)
    else {
        return stub(input);
    };
    let nullable = nullable.map(|body| {
        quote! {
            fn __toolnexus_nullable(
                __toolnexus_out: &mut #rt::String,
                __toolnexus_description: #rt::Option<&str>,
            ) {
                #body
            }
        }
    });
    quote! {
        const _: () = {
            #use_rt
            #extra

            #[automatically_derived]
            impl #rt::ArgType for #ident {
                fn __toolnexus_schema(
                    __toolnexus_out: &mut #rt::String,
                    __toolnexus_description: #rt::Option<&str>,
                ) {
                    #schema
                }

                #nullable

                fn __toolnexus_decode(
                    __toolnexus_value: #rt::JsonValue,
                ) -> #rt::Result<Self, #rt::ArgError> {
                    #decode
                }

                fn __toolnexus_json(&self) -> #rt::Option<#rt::JsonValue> {
                    #json
                }
            }
        };
    }
}

/// What a derive with a compile error still emits: its impl, never reached (the crate does not
/// compile), so uses of the type give no second error.
pub(crate) fn stub(input: &Input<'_>) -> TokenStream {
    if has_unsized_field(input) {
        // an argument type is sized: the stub would only add errors about that
        return TokenStream::new();
    }
    let (rt, use_rt) = Runtime::new(input.krate.as_ref()).alias();
    let ident = input.ident;
    let (impl_generics, ty_generics, where_clause) = input.generics.split_for_impl();
    let never = quote!(::core::unreachable!(
        "`#[derive(Args)]` reported a compile error"
    ));
    quote! {
        const _: () = {
            #use_rt
            #[automatically_derived]
            impl #impl_generics #rt::ArgType for #ident #ty_generics #where_clause {
                fn __toolnexus_schema(_: &mut #rt::String, _: #rt::Option<&str>) {
                    #never
                }

                fn __toolnexus_decode(_: #rt::JsonValue) -> #rt::Result<Self, #rt::ArgError> {
                    #never
                }
            }
        };
    }
}

/// Whether a field's type is `dyn Trait` (or `impl Trait`), refused in `validate`.
fn has_unsized_field(input: &Input<'_>) -> bool {
    let unsized_type = |f: &Field<'_>| {
        let mut ty = f.ty;
        while let syn::Type::Paren(syn::TypeParen { elem, .. })
        | syn::Type::Group(syn::TypeGroup { elem, .. }) = ty
        {
            ty = elem;
        }
        matches!(ty, syn::Type::TraitObject(_) | syn::Type::ImplTrait(_))
    };
    match &input.shape {
        Shape::Struct(fields) => fields.iter().any(unsized_type),
        Shape::Tagged { variants, .. } | Shape::Strings(variants) => {
            variants.iter().any(|v| match &v.kind {
                VariantKind::Struct(fields) => fields.iter().any(unsized_type),
                _ => false,
            })
        }
        Shape::External(_) | Shape::Refused => false,
    }
}
