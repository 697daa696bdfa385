//! Code generation from a checked [`Form`]; nothing here can fail.

use proc_macro2::TokenStream;
use quote::{quote, quote_spanned};
use syn::spanned::Spanned;

use super::parse::{Form, Shape};
use crate::runtime::Runtime;

/// `impl Form` for a struct, `impl FormField` for an enum.
pub(crate) fn form(form: &Form<'_>) -> TokenStream {
    let rt = Runtime::new(form.krate.as_ref()).private();
    let ident = form.ident;
    match &form.shape {
        Shape::Struct(fields) => {
            let props = fields.iter().map(|f| {
                let ty = f.ty;
                let name = &f.name;
                let description = f.description.as_ref().map_or_else(
                    || quote!(::core::option::Option::None),
                    |d| quote!(::core::option::Option::Some(#d)),
                );
                let label = f.label.as_ref().map_or_else(
                    || quote!(::core::option::Option::None),
                    |l| quote!(::core::option::Option::Some(#l)),
                );
                let has_default = f.has_default;
                let call = quote_spanned! {ty.span()=> #rt::form_property::<#ty> };
                let property = quote!(#call(#name, #label, #description, #has_default));
                match &f.default {
                    Some(lit) => quote!(#rt::form_default(#property, #rt::serde_json::json!(#lit))),
                    None => property,
                }
            });
            quote! {
                #[automatically_derived]
                impl #rt::Form for #ident {
                    fn answer_schema() -> #rt::serde_json::Value {
                        static __TOOLNEXUS_SCHEMA: ::std::sync::OnceLock<#rt::serde_json::Value> =
                            ::std::sync::OnceLock::new();
                        ::core::clone::Clone::clone(__TOOLNEXUS_SCHEMA.get_or_init(|| {
                            #rt::form_object(::std::vec![#(#props),*])
                        }))
                    }
                }
            }
        }
        Shape::Enum(variants) => {
            let schema = if variants.iter().any(|v| v.title.is_some()) {
                let options = variants.iter().map(|v| {
                    let name = &v.name;
                    let title = v
                        .title
                        .as_ref()
                        .map_or_else(|| quote!(#name), |t| quote!(#t));
                    quote!((#name, #title))
                });
                quote!(#rt::form_titled_enum(&[#(#options),*]))
            } else {
                let values = variants.iter().map(|v| &v.name);
                quote!(#rt::form_enum(&[#(#values),*]))
            };
            quote! {
                #[automatically_derived]
                impl #rt::FormField for #ident {
                    fn field_schema() -> #rt::serde_json::Map<
                        ::std::string::String,
                        #rt::serde_json::Value,
                    > {
                        #schema
                    }
                }
                #[automatically_derived]
                impl #rt::FormChoice for #ident {}
            }
        }
        Shape::Refused => stub(form),
    }
}

/// What a form with a compile error still emits: its impl, never reached (the crate does not
/// compile), so a `schema = T` use of it gives no second error.
pub(crate) fn stub(form: &Form<'_>) -> TokenStream {
    let rt = Runtime::new(form.krate.as_ref()).private();
    let ident = form.ident;
    let (impl_generics, ty_generics, where_clause) = form.generics.split_for_impl();
    let never = quote!(::core::unreachable!(
        "`#[derive(Form)]` reported a compile error"
    ));
    let body = match &form.shape {
        Shape::Enum(_) => quote! {
            impl #impl_generics #rt::FormField for #ident #ty_generics #where_clause {
                fn field_schema() -> #rt::serde_json::Map<
                    ::std::string::String,
                    #rt::serde_json::Value,
                > {
                    #never
                }
            }
        },
        Shape::Struct(_) | Shape::Refused => quote! {
            impl #impl_generics #rt::Form for #ident #ty_generics #where_clause {
                fn answer_schema() -> #rt::serde_json::Value {
                    #never
                }
            }
        },
    };
    quote!(#[automatically_derived] #body)
}
