//! Internally and adjacently tagged enums: the schema (a `oneOf` of closed objects, each with
//! its tag as a `const`), the decoder (the tag chooses the variant) and the encoder.

use proc_macro2::TokenStream;
use quote::{format_ident, quote};

use super::expand::{Impl, any_of, bind_fields, decode_fields, encode_fields, field_type};
use super::parse::{Field, Input, Variant, VariantKind};
use super::schema::{Pieces, object};
use crate::docs::doc_text;
use crate::tool::known::json_string;

#[allow(clippy::too_many_lines)] // schema, decoder and encoder of both tagged forms, in order
pub(super) fn tagged(
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
            (None, VariantKind::Struct(fields)) => {
                decode_fields(fields, &quote!(__toolnexus_map), &quote!(Self::#vident), rt)
            }
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
            #rt::ArgError::unknown_variant(__toolnexus_other, &[#(#names),*]).at_field(#tag),
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
        let field_value = |i: usize, _: &Field<'_>| {
            let var = format_ident!("__toolnexus_f{}", i);
            quote!(#var)
        };
        let (pat, json) = match (content, &v.kind) {
            (_, VariantKind::Unit) => (any_of(v), quote!(#rt::tagged_json(#tag, #vname, []))),
            (None, VariantKind::Struct(fields)) => {
                let members = encode_fields(fields, field_value, rt);
                (
                    bind_fields(v, fields),
                    quote!(#rt::tagged_json(#tag, #vname, #members)),
                )
            }
            (Some(c), VariantKind::Struct(fields)) => {
                let members = encode_fields(fields, field_value, rt);
                (
                    bind_fields(v, fields),
                    quote!(#rt::adjacent_json(#tag, #vname, #c, #rt::object_json(#members))),
                )
            }
            (Some(c), VariantKind::Newtype(ty)) => {
                let vident = v.ident;
                let ops = field_type(ty, rt);
                (
                    quote!(Self::#vident(__toolnexus_f0)),
                    quote!(#rt::adjacent_json(#tag, #vname, #c, #ops.json(__toolnexus_f0))),
                )
            }
            // refused in `validate`
            (None, VariantKind::Newtype(_)) | (_, VariantKind::Tuple(_)) => {
                (any_of(v), quote!(#rt::None))
            }
        };
        quote!(#pat => #json,)
    });
    Impl {
        schema: p.writer(own, rt),
        nullable: None,
        decode,
        json: quote!(match self { #(#json_arms)* }),
        extra,
    }
}
