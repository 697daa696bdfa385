//! Code generation from a checked [`Input`]; nothing here can fail. The schema is JSON text
//! written now: one literal when every field's type is one the macro knows (strings, numbers,
//! booleans, and `Option`/`Vec` of those), else literal pieces around the parts other types
//! write. The decoder matches keys into slots and decodes each field by its type.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use super::parse::{Field, FieldDefault, Input, Shape, Variant, VariantKind};
use crate::docs::{Description, doc_text};
use crate::runtime::Runtime;
use crate::tool::known::{is_option, json_string, known};

/// Schema text in pieces: literal text, and calls that write another type's part.
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

    /// The body of a schema writer whose first piece opens the object (after `{` and the
    /// description, which `write_schema`/`open_schema` write).
    fn writer(self, own: &TokenStream, rt: &TokenStream) -> TokenStream {
        let mut parts = self.0.into_iter();
        let first = match parts.next() {
            Some(Piece::Text(t)) => t,
            Some(Piece::Call(c)) => {
                // never: every schema starts with text
                return quote!(#rt::open_schema(__toolnexus_out, __toolnexus_description, #own, ""); #c);
            }
            None => String::new(),
        };
        let rest: Vec<TokenStream> = parts
            .map(|p| match p {
                Piece::Text(t) => quote!(__toolnexus_out.push_str(#t);),
                Piece::Call(c) => c,
            })
            .collect();
        if rest.is_empty() {
            quote!(#rt::write_schema(__toolnexus_out, __toolnexus_description, #own, #first);)
        } else {
            quote! {
                #rt::open_schema(__toolnexus_out, __toolnexus_description, #own, #first);
                #(#rest)*
            }
        }
    }
}

fn option_str(d: Option<&Description>, rt: &TokenStream) -> TokenStream {
    match d {
        None => quote!(#rt::None),
        Some(d) => quote!(#rt::Some(#d)),
    }
}

/// `"key":<schema>` for one field.
fn property(p: &mut Pieces, f: &Field<'_>, rt: &TokenStream) {
    p.text(&format!("{}:", json_string(&f.key)));
    let docs = doc_text(&f.docs);
    let ty = f.ty;
    match (known(ty), &docs) {
        (Some(k), None) => p.text(&k),
        (Some(k), Some(Description::Text(d))) => {
            p.text(&format!(
                r#"{{"description":{},{}"#,
                json_string(d),
                &k[1..]
            ));
        }
        _ => {
            let desc = option_str(docs.as_ref(), rt);
            let ops = field_type(ty, rt);
            p.call(quote!(#ops.schema(__toolnexus_out, #desc);));
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

/// `Ok(<ctor> { field: .., .. })` from the map in `map`: the keys into slots, each field
/// decoded by its type (or its default).
fn decode_fields(
    fields: &[Field<'_>],
    map: &TokenStream,
    ctor: &TokenStream,
    rt: &TokenStream,
) -> TokenStream {
    let taken: Vec<&Field<'_>> = fields.iter().filter(|f| !f.skip).collect();
    let keys: Vec<&str> = taken.iter().map(|f| f.key.as_str()).collect();
    let slots: Vec<syn::Ident> = (0..taken.len())
        .map(|i| format_ident!("__toolnexus_v{}", i))
        .collect();
    let mut inits = Vec::new();
    let mut slot = slots.iter();
    for f in fields {
        let ident = f.ident;
        let ty = f.ty;
        if f.skip {
            let value = default_value(f, rt);
            inits.push(quote!(#ident: #value));
            continue;
        }
        let Some(v) = slot.next() else { continue };
        let key = &f.key;
        let ops = field_type(ty, rt);
        let value = if f.default.is_none() {
            quote!(#ops.field(#v, #key)?)
        } else {
            let value = default_value(f, rt);
            quote!(#ops.field_or(#v, #key, || #value)?)
        };
        inits.push(quote!(#ident: #value));
    }
    quote! {
        let [#(#slots),*] = #rt::slots(#map, &[#(#keys),*])?;
        #rt::Ok(#ctor { #(#inits),* })
    }
}

/// `FieldType<ty>`: how a field of type `ty` is described and decoded. Every use of a field's
/// type goes through this one call, spanned on the type, so a type that is no argument type
/// gives one error.
fn field_type(ty: &syn::Type, rt: &TokenStream) -> TokenStream {
    quote_spanned!(ty.span()=> #rt::field_type::<#ty>())
}

fn default_value(f: &Field<'_>, rt: &TokenStream) -> TokenStream {
    let ty = f.ty;
    match &f.default {
        None | Some(FieldDefault::Trait) => {
            quote_spanned!(ty.span()=> <#ty as ::core::default::Default>::default())
        }
        Some(FieldDefault::Expr(e)) => quote!(#e),
        Some(FieldDefault::Path(p)) => quote!(#p()),
        Some(FieldDefault::Container) => {
            let ident = f.ident;
            let _ = rt;
            quote!(<Self as ::core::default::Default>::default().#ident)
        }
    }
}

#[allow(clippy::too_many_lines)] // one impl per shape, the tagged enums' schema and decoder in order
pub(crate) fn derive(input: &Input<'_>) -> TokenStream {
    let (rt, use_rt) = Runtime::new(input.krate.as_ref()).alias();
    let ident = input.ident;
    let name = ident.to_string();
    let own_doc = doc_text(&input.docs);
    let own = option_str(own_doc.as_ref(), &rt);
    let mut extra = TokenStream::new();
    let (schema, nullable, decode) = match &input.shape {
        Shape::Struct(fields) => {
            let mut p = Pieces::default();
            object(&mut p, fields, None, &rt);
            let expected = format!("struct {name}");
            let map = quote!(#rt::object(__toolnexus_value, #expected)?);
            let decode = decode_fields(fields, &map, &quote!(Self), &rt);
            (p.writer(&own, &rt), None, decode)
        }
        Shape::Strings(variants) => {
            let taken: Vec<&Variant<'_>> = variants.iter().filter(|v| !v.skip).collect();
            let names: Vec<String> = taken.iter().map(|v| json_string(&v.name)).collect();
            let schema = format!(r#""type":"string","enum":[{}]}}"#, names.join(","));
            let nullable = format!(
                r#""type":["string","null"],"enum":[{},null]}}"#,
                names.join(",")
            );
            let strs: Vec<&str> = taken.iter().map(|v| v.name.as_str()).collect();
            let idents = taken.iter().map(|v| v.ident);
            let expected = format!("enum {name}");
            let decode = quote! {
                match #rt::variant_name(__toolnexus_value, #expected)?.as_str() {
                    #(#strs => #rt::Ok(Self::#idents),)*
                    __toolnexus_other => #rt::Err(#rt::ArgError::unknown_variant(__toolnexus_other, &[#(#strs),*])),
                }
            };
            (
                quote!(#rt::write_schema(__toolnexus_out, __toolnexus_description, #own, #schema);),
                Some(
                    quote!(#rt::write_schema(__toolnexus_out, __toolnexus_description, #own, #nullable);),
                ),
                decode,
            )
        }
        Shape::Tagged {
            tag,
            content,
            variants,
        } => {
            let taken: Vec<&Variant<'_>> = variants.iter().filter(|v| !v.skip).collect();
            let mut p = Pieces::default();
            p.text(r#""oneOf":["#);
            for (i, v) in taken.iter().enumerate() {
                if i > 0 {
                    p.text(",");
                }
                p.text("{");
                p.description(doc_text(&v.docs).as_ref(), &rt);
                match (content, &v.kind) {
                    (None, VariantKind::Struct(fields)) => {
                        object(&mut p, fields, Some((tag, &v.name)), &rt);
                    }
                    (_, VariantKind::Unit) => object(&mut p, &[], Some((tag, &v.name)), &rt),
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
                                object(&mut p, fields, None, &rt);
                            }
                            VariantKind::Newtype(ty) => {
                                let ops = field_type(ty, &rt);
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
                        &rt,
                    ),
                    (Some(c), VariantKind::Unit) => quote! {
                        #rt::no_content(__toolnexus_content.as_ref(), #c, &[#tag])?;
                        #rt::Ok(Self::#vident)
                    },
                    (Some(c), VariantKind::Newtype(ty)) => {
                        let ops = field_type(ty, &rt);
                        quote!(#rt::Ok(Self::#vident(#ops.field(__toolnexus_content, #c)?)))
                    }
                    (Some(c), VariantKind::Struct(fields)) => {
                        let helper = format_ident!("__toolnexus_content_{}", i);
                        let body = decode_fields(
                            fields,
                            &quote!(__toolnexus_map),
                            &quote!(#ident::#vident),
                            &rt,
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
            let decode = match content {
                None => {
                    let expected = format!("internally tagged enum {name}");
                    quote! {
                        let mut __toolnexus_map = #rt::object(__toolnexus_value, #expected)?;
                        let __toolnexus_tag = #rt::tag(&mut __toolnexus_map, #tag)?;
                        match __toolnexus_tag.as_str() {
                            #(#arms)*
                            __toolnexus_other => #rt::Err(
                                #rt::ArgError::unknown_variant(__toolnexus_other, &[#(#names),*])
                                    .at_key(#tag),
                            ),
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
                            __toolnexus_other => #rt::Err(
                                #rt::ArgError::unknown_variant(__toolnexus_other, &[#(#names),*])
                                    .at_key(#tag),
                            ),
                        }
                    }
                }
            };
            (p.writer(&own, &rt), None, decode)
        }
        Shape::External(_) | Shape::Refused => return stub(input),
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
            }
        };
    }
}

/// What a derive with a compile error still emits: its impl, never reached (the crate does not
/// compile), so uses of the type give no second error.
pub(crate) fn stub(input: &Input<'_>) -> TokenStream {
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
