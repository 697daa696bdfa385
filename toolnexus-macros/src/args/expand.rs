//! Code generation from a checked [`Input`]; nothing here can fail. The schema is JSON text
//! written now (see `schema`); the decoder matches each key of the object to its field and
//! decodes the value at once; the encoder (a default shown in a schema) writes what the decoder
//! reads back. Tagged enums are in `tagged`.

use proc_macro2::TokenStream;
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;

use super::parse::{Field, FieldDefault, Input, Shape, Variant, VariantKind};
use super::schema::{Pieces, object, option_str};
use super::tagged::tagged;
use crate::docs::doc_text;
use crate::runtime::Runtime;
use crate::tool::known::json_string;
/// `Ok(<ctor> { field: .., .. })` from the map in `map`: the runtime's `decode_object` reads
/// the object once, each key matched and its value decoded at once, over a list of the fields
/// (`(field, (field, (.., ())))`, generic code: nothing per field to check but the list); then
/// each field is its value, or its default. (A `match` on the keys in generated code decodes
/// about as fast and costs more to compile.)
pub(super) fn decode_fields(
    fields: &[Field<'_>],
    map: &TokenStream,
    ctor: &TokenStream,
    rt: &TokenStream,
) -> TokenStream {
    let taken: Vec<&Field<'_>> = fields.iter().filter(|f| !f.skip).collect();
    let keys: Vec<&str> = taken.iter().map(|f| f.key.as_str()).collect();
    let mut vars = Vec::new();
    let mut list = Vec::new();
    let mut inits = Vec::new();
    for f in fields {
        let ident = f.ident;
        if f.skip {
            let value = default_value(f);
            inits.push(quote!(#ident: #value));
            continue;
        }
        let var = format_ident!("__toolnexus_v{}", vars.len());
        let key = &f.key;
        let ops = field_type(f.ty, rt);
        if f.default.is_none() {
            list.push(quote!(#ops.required(#key)));
            inits.push(quote!(#ident: #var));
        } else {
            list.push(quote!(#ops.defaulted(#key)));
            let value = default_value(f);
            inits.push(quote!(#ident: match #var {
                #rt::Some(__toolnexus_set) => __toolnexus_set,
                #rt::None => #value,
            }));
        }
        vars.push(var);
    }
    // `(a, (b, (c, ())))`, for the values and for the fields
    let nest = |items: &[TokenStream]| {
        items
            .iter()
            .rev()
            .fold(quote!(()), |tail, item| quote!((#item, #tail)))
    };
    let pattern = nest(&vars.iter().map(|v| quote!(#v)).collect::<Vec<_>>());
    let list = nest(&list);
    quote! {
        let #pattern = #rt::decode_object(#map, &[#(#keys),*], &#list)?;
        #rt::Ok(#ctor { #(#inits),* })
    }
}

/// `[(key, json), ..]`: each field's key and its value's JSON (`value_of(field)`).
pub(super) fn encode_fields(
    fields: &[Field<'_>],
    value_of: impl Fn(usize, &Field<'_>) -> TokenStream,
    rt: &TokenStream,
) -> TokenStream {
    let members = fields
        .iter()
        .enumerate()
        .filter(|(_, f)| !f.skip)
        .map(|(i, f)| {
            let key = &f.key;
            let ops = field_type(f.ty, rt);
            let value = value_of(i, f);
            quote!((#key, #ops.json(#value)))
        });
    quote!([#(#members),*])
}

/// `FieldType<ty>`: how a field of type `ty` is described and decoded. Every use of a field's
/// type goes through this one call, spanned on the type, so a type that is no argument type
/// gives one error.
pub(super) fn field_type(ty: &syn::Type, rt: &TokenStream) -> TokenStream {
    quote_spanned!(ty.span()=> #rt::field_type::<#ty>())
}

pub(super) fn default_value(f: &Field<'_>) -> TokenStream {
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
pub(super) fn any_of(v: &Variant<'_>) -> TokenStream {
    let ident = v.ident;
    match v.kind {
        VariantKind::Unit => quote!(Self::#ident),
        VariantKind::Struct(_) => quote!(Self::#ident { .. }),
        VariantKind::Newtype(_) | VariantKind::Tuple(_) => quote!(Self::#ident(..)),
    }
}

/// A struct variant's pattern binding its fields to `__toolnexus_f<i>`.
pub(super) fn bind_fields(v: &Variant<'_>, fields: &[Field<'_>]) -> TokenStream {
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
pub(super) struct Impl {
    pub(super) schema: TokenStream,
    pub(super) nullable: Option<TokenStream>,
    pub(super) decode: TokenStream,
    pub(super) json: TokenStream,
    /// Items beside the impl (the content decoders of adjacently tagged struct variants).
    pub(super) extra: TokenStream,
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
            let members = encode_fields(
                fields,
                |_, f| {
                    let ident = f.ident;
                    quote!(&self.#ident)
                },
                rt,
            );
            Some(Impl {
                schema: p.writer(&own, rt),
                nullable: None,
                decode: decode_fields(fields, &map, &quote!(Self), rt),
                json: quote!(#rt::object_json(#members)),
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
