//! Code generation from a validated [`ToolFn`]. Nothing here can fail: every user mistake was
//! reported by `parse` or `validate` before this runs.

use proc_macro2::{Span, TokenStream};
use quote::{format_ident, quote, quote_spanned};
use syn::spanned::Spanned;
use syn::{Ident, ReturnType, Type};

use super::approval_gate::{approval, approval_edits};
use super::known::{is_option, is_scalar, json_string, known};
use super::parse::{Hint, ParamKind, Plain, ToolFn};
use super::validate::tool_name;
use crate::docs::{Description, doc_text};
use crate::ident::unraw;

/// How the generated `execute` reaches the function.
pub(crate) enum Target<'a> {
    /// A free function.
    Free,
    /// A method of `#[toolset] impl SelfTy`; the tool struct holds an `Arc<SelfTy>` in `.0`.
    Method(&'a Type),
}

/// The PascalCase name of a free function's tool: `book_flight` -> `BookFlight`.
pub(crate) fn struct_name(ident: &Ident) -> Ident {
    let name = unraw(ident);
    let mut out = String::with_capacity(name.len());
    for part in name.split('_').filter(|p| !p.is_empty()) {
        let mut chars = part.chars();
        if let Some(first) = chars.next() {
            out.extend(first.to_uppercase());
            out.push_str(chars.as_str());
        }
    }
    if out.is_empty() || out.starts_with(|c: char| c.is_ascii_digit()) {
        out.insert_str(0, "Tool");
    }
    Ident::new(&out, ident.span())
}

/// The schema static and `impl Tool for #strukt`; `rt` is the path the runtime is reached by
/// inside the generated `const _` block, `index` tells tools of one block apart.
pub(crate) fn tool_items(
    tool: &ToolFn,
    target: &Target<'_>,
    rt: &TokenStream,
    strukt: &TokenStream,
    index: usize,
) -> TokenStream {
    let name = tool_name(tool);
    let description = match &tool.attr.description {
        Some(e) => quote!(#e),
        None => match doc_text(&tool.docs) {
            Some(Description::Text(t)) => quote!(#t),
            Some(Description::Tokens(t)) => t,
            None => quote!(""),
        },
    };
    let Schema { ty, init, field } = schema(tool, rt);
    let schema_static = format_ident!("__TOOLNEXUS_SCHEMA_{}", index);
    let execute = execute(tool, target, &name, rt, &schema_static);
    let annotations = annotations(tool, rt);
    let edits = approval_edits(tool);
    let methods = Methods {
        name: quote!(#name),
        description,
        input_schema: quote!(&#schema_static #field),
        rest: quote!(#annotations #edits #execute),
    };
    let tool_impl = impl_tool(rt, strukt, methods);
    quote! {
        static #schema_static: #rt::LazyLock<#ty> = #rt::LazyLock::new(|| #init);

        #tool_impl
    }
}

/// The bodies of an `impl Tool`'s required accessors, and its further methods (`rest`).
struct Methods {
    name: TokenStream,
    description: TokenStream,
    input_schema: TokenStream,
    rest: TokenStream,
}

/// `impl Tool for #strukt`, for a tool and for the stub of a failed one.
fn impl_tool(rt: &TokenStream, strukt: &TokenStream, methods: Methods) -> TokenStream {
    let Methods {
        name,
        description,
        input_schema,
        rest,
    } = methods;
    quote! {
        #[automatically_derived]
        impl #rt::Tool for #strukt {
            fn name(&self) -> &str {
                #name
            }

            fn description(&self) -> &str {
                #description
            }

            fn input_schema(&self) -> &#rt::JsonValue {
                #input_schema
            }

            #rest
        }
    }
}

/// `fn annotations` when the attribute states any hint (else the trait's default, none).
fn annotations(tool: &ToolFn, rt: &TokenStream) -> TokenStream {
    let attr = &tool.attr;
    let hints = [
        (quote!(read_only), attr.read_only),
        (quote!(destructive), attr.destructive),
        (quote!(idempotent), attr.idempotent),
        (quote!(open_world), attr.open_world),
    ];
    let set: Vec<TokenStream> = hints
        .iter()
        .filter_map(|(method, hint)| {
            let Hint { value, .. } = (*hint)?;
            Some(quote!(.#method(#value)))
        })
        .collect();
    if set.is_empty() {
        return TokenStream::new();
    }
    quote! {
        fn annotations(&self) -> #rt::ToolAnnotations {
            #rt::ToolAnnotations::new() #(#set)*
        }
    }
}

/// What a `#[tool]` with a compile error still emits for its struct: an `impl Tool` whose
/// methods are never reached (the crate does not compile), so uses of the struct give no
/// second error.
pub(crate) fn stub_tool(rt: &TokenStream, strukt: &TokenStream) -> TokenStream {
    let never = quote!(::core::unreachable!("`#[tool]` reported a compile error"));
    let methods = Methods {
        name: never.clone(),
        description: never.clone(),
        input_schema: never.clone(),
        rest: quote! {
            fn execute<'a>(
                &'a self,
                _: #rt::Args,
                _: &'a #rt::Context,
            ) -> #rt::BoxFuture<'a, #rt::ToolResult> {
                #never
            }
        },
    };
    impl_tool(rt, strukt, methods)
}

/// What a `#[toolset]` with a compile error still emits: its `tools()` constructor, never
/// reached.
pub(crate) fn stub_tools(rt: &TokenStream, self_ty: &Type) -> TokenStream {
    quote! {
        impl #self_ty {
            /// The tools of this `#[toolset]` (which has a compile error).
            #[must_use]
            pub fn tools(self: #rt::Arc<Self>) -> #rt::Vec<#rt::SharedTool> {
                ::core::unreachable!("`#[toolset]` reported a compile error")
            }
        }
    }
}

/// The generated schema static: its type, its initializer and how to reach the `Value`.
struct Schema {
    ty: TokenStream,
    init: TokenStream,
    field: TokenStream,
}

#[allow(clippy::too_many_lines)] // the literal, then the builder with each parameter's way
fn schema(tool: &ToolFn, rt: &TokenStream) -> Schema {
    if let Some(args) = tool
        .params
        .iter()
        .find(|p| matches!(p.kind, ParamKind::Args))
    {
        let ty = &args.ty;
        let way = way(rt, ty);
        let init = quote_spanned!(ty.span()=> #way.struct_schema());
        return Schema {
            ty: quote!(#rt::StructSchema),
            init,
            field: quote!(.schema),
        };
    }
    let plains: Vec<&Plain> = tool
        .params
        .iter()
        .filter_map(|p| match &p.kind {
            ParamKind::Plain(pl) => Some(&**pl),
            _ => None,
        })
        .collect();
    let required: Vec<&str> = plains
        .iter()
        .filter(|p| p.default.is_none() && !is_option(&p.stored))
        .map(|p| p.key.as_str())
        .collect();

    // everything known and described now: one literal
    let literal: Option<Vec<String>> = plains
        .iter()
        .map(|p| {
            if p.default.is_some() {
                return None;
            }
            let k = known(&p.stored)?;
            let json = match doc_text(&p.docs) {
                None => k,
                Some(Description::Text(d)) => {
                    format!(r#"{{"description":{},{}"#, json_string(&d), &k[1..])
                }
                Some(Description::Tokens(_)) => return None,
            };
            Some(format!("{}:{json}", json_string(&p.key)))
        })
        .collect();
    if let Some(props) = literal {
        let mut json = format!(r#"{{"type":"object","properties":{{{}}}"#, props.join(","));
        if !required.is_empty() {
            let req: Vec<String> = required.iter().map(|r| json_string(r)).collect();
            json.push_str(r#","required":["#);
            json.push_str(&req.join(","));
            json.push(']');
        }
        json.push_str(r#","additionalProperties":false}"#);
        return Schema {
            ty: quote!(#rt::JsonValue),
            init: quote!(#rt::schema_literal(#json)),
            field: TokenStream::new(),
        };
    }

    let mut steps = Vec::new();
    for p in &plains {
        let key = &p.key;
        let desc = match doc_text(&p.docs) {
            None => quote!(#rt::None),
            Some(Description::Text(d)) => quote!(#rt::Some(#d)),
            Some(Description::Tokens(t)) => quote!(#rt::Some(#t)),
        };
        let stored = &p.stored;
        if let Some(json) = known(stored) {
            steps.push(quote!(__toolnexus_schema.known(#key, #json, #desc);));
        } else {
            let way = way(rt, stored);
            steps.push(quote_spanned!(stored.span()=>
                #way.schema(&mut __toolnexus_schema, #key, #desc);
            ));
        }
        if let Some(default) = &p.default {
            steps.push(quote! {
                {
                    #[allow(unused_imports)]
                    use #rt::{DefaultArg as _, DefaultOpaque as _, DefaultSerialize as _};
                    let __toolnexus_default: #stored = #default;
                    __toolnexus_schema.default_value(
                        #key,
                        (&&&#rt::DefaultProbe(&__toolnexus_default)).__toolnexus_default(),
                    );
                }
            });
        }
    }
    Schema {
        ty: quote!(#rt::JsonValue),
        init: quote!({
            let mut __toolnexus_schema = #rt::SchemaBuilder::new();
            #(#steps)*
            __toolnexus_schema.finish(&[#(#required),*])
        }),
        field: TokenStream::new(),
    }
}

#[allow(clippy::too_many_lines)] // the whole `execute` body, decoding to return mapping
fn execute(
    tool: &ToolFn,
    target: &Target<'_>,
    name: &str,
    rt: &TokenStream,
    schema_static: &Ident,
) -> TokenStream {
    let mut decode = Vec::new();
    let mut call_args = Vec::new();
    let plains: Vec<(usize, &Plain)> = tool
        .params
        .iter()
        .filter_map(|p| match &p.kind {
            ParamKind::Plain(pl) => Some(&**pl),
            _ => None,
        })
        .enumerate()
        .collect();

    if !plains.is_empty() {
        let slots: Vec<Ident> = plains
            .iter()
            .map(|(i, _)| format_ident!("__toolnexus_v{}", i))
            .collect();
        let keys: Vec<&str> = plains.iter().map(|(_, p)| p.key.as_str()).collect();
        decode.push(quote! {
            #(let mut #slots = #rt::None;)*
            for (__toolnexus_key, __toolnexus_value) in __toolnexus_args {
                match __toolnexus_key.as_str() {
                    #(#keys => #slots = #rt::Some(__toolnexus_value),)*
                    _ => return #rt::unknown_field(#name, &__toolnexus_key, &[#(#keys),*]),
                }
            }
        });
    } else if !tool
        .params
        .iter()
        .any(|p| matches!(p.kind, ParamKind::Args))
    {
        decode.push(quote! {
            if let #rt::Some(__toolnexus_key) = __toolnexus_args.keys().next() {
                return #rt::unknown_field(#name, __toolnexus_key, &[]);
            }
        });
    }

    let mut plain_index = 0usize;
    for p in &tool.params {
        match &p.kind {
            ParamKind::Context { by_ref: true } => call_args.push(quote!(__toolnexus_ctx)),
            ParamKind::Context { by_ref: false } => {
                call_args.push(quote!(#rt::Context::clone(__toolnexus_ctx)));
            }
            ParamKind::Args => {
                let ty = &p.ty;
                let way = way(rt, ty);
                let decoded = quote_spanned!(ty.span()=>
                    #way.struct_args(#name, __toolnexus_args, &#schema_static)
                );
                decode.push(quote! {
                    let __toolnexus_struct = match #decoded {
                        #rt::Ok(v) => v,
                        #rt::Err(e) => return e,
                    };
                });
                call_args.push(quote!(__toolnexus_struct));
            }
            ParamKind::Plain(pl) => {
                let slot = format_ident!("__toolnexus_v{}", plain_index);
                let var = format_ident!("__toolnexus_a{}", plain_index);
                plain_index += 1;
                let key = &pl.key;
                let stored = &pl.stored;
                // a type the macro knows decodes with serde; any other through its derive
                // (`#[derive(Args)]`) or, failing that, its `Deserialize`
                let known_type = known(stored).is_some();
                let decode_fn = if is_scalar(stored) {
                    quote!(#rt::scalar::<#stored>)
                } else if known_type {
                    quote!(#rt::arg::<#stored>)
                } else {
                    let way = way(rt, stored);
                    quote_spanned!(stored.span()=> #way.decode)
                };
                let value = match &pl.default {
                    None => quote_spanned!(stored.span()=>
                        match #decode_fn(#name, #key, #slot) {
                            #rt::Ok(v) => v,
                            #rt::Err(e) => return e,
                        }
                    ),
                    Some(default) => {
                        let decode_value = if known_type {
                            quote!(#rt::arg_value::<#stored>)
                        } else {
                            let way = way(rt, stored);
                            quote_spanned!(stored.span()=> #way.decode_value)
                        };
                        let decoded = quote_spanned!(stored.span()=>
                            #decode_value(#name, #key, v)
                        );
                        // `null` reads as absent: OpenAI strict schemas make models send
                        // `null` for every optional argument
                        quote! {
                            match #slot.filter(|v| !v.is_null()) {
                                #rt::Some(v) => match #decoded {
                                    #rt::Ok(v) => v,
                                    #rt::Err(e) => return e,
                                },
                                #rt::None => #default,
                            }
                        }
                    }
                };
                decode.push(quote!(let #var: #stored = #value;));
                if pl.by_ref {
                    call_args.push(quote!(&#var));
                } else {
                    call_args.push(quote!(#var));
                }
            }
        }
    }

    let ident = &tool.ident;
    let call = match target {
        Target::Free => quote!(#ident(#(#call_args),*)),
        Target::Method(self_ty) => {
            if tool.receiver.is_some() {
                // by path, not `self.0.method()`: a method named like one of `Arc`'s (`clone`)
                // must still reach the user's type
                quote!(<#self_ty>::#ident(&self.0, #(#call_args),*))
            } else {
                quote!(<#self_ty>::#ident(#(#call_args),*))
            }
        }
    };
    let call = if tool.is_async {
        quote!(#call.await)
    } else {
        call
    };
    let (prompt, gate) = approval(tool, rt);
    let ret_span = return_span(tool);
    let convert = quote_spanned! {ret_span=>
        {
            #[allow(unused_imports)]
            use #rt::{
                IntoKind as _, JsonKind as _, ResultErrorJsonKind as _, ResultErrorKind as _,
                ResultJsonKind as _, StrKind as _, UnsupportedKind as _,
            };
            let __toolnexus_kind = (&&&&&&&#rt::probe(&__toolnexus_ret)).__toolnexus_kind();
            __toolnexus_kind.convert(__toolnexus_ret)
        }
    };
    if tool.is_async {
        return quote! {
            fn execute<'a>(
                &'a self,
                __toolnexus_args: #rt::Args,
                __toolnexus_ctx: &'a #rt::Context,
            ) -> #rt::BoxFuture<'a, #rt::ToolResult> {
                #rt::Box::pin(async move {
                    #prompt
                    #(#decode)*
                    #gate
                    let __toolnexus_ret = #call;
                    #convert
                })
            }
        };
    }
    // a plain `fn` runs at once: `execute_now` holds the body, `execute` polls it
    quote! {
        fn execute<'a>(
            &'a self,
            __toolnexus_args: #rt::Args,
            __toolnexus_ctx: &'a #rt::Context,
        ) -> #rt::BoxFuture<'a, #rt::ToolResult> {
            #rt::Box::pin(async move {
                #rt::now_or_failure(
                    #name,
                    <Self as #rt::Tool>::execute_now(self, __toolnexus_args, __toolnexus_ctx),
                )
            })
        }

        // the closure gives the body's early `return`s a `ToolResult` to return
        #[allow(clippy::redundant_closure_call)]
        fn execute_now(
            &self,
            __toolnexus_args: #rt::Args,
            __toolnexus_ctx: &#rt::Context,
        ) -> #rt::Result<#rt::ToolResult, #rt::Args> {
            #rt::Ok((move || -> #rt::ToolResult {
                #prompt
                #(#decode)*
                #gate
                let __toolnexus_ret = #call;
                #convert
            })())
        }
    }
}

/// How a parameter of type `ty` is described and decoded: `#[derive(Args)]` when the type
/// derives it, else `Deserialize + JsonSchema` (`DeriveWay` or `SerdeWay`, picked by autoref).
fn way(rt: &TokenStream, ty: &Type) -> TokenStream {
    quote_spanned! {ty.span()=>
        {
            #[allow(unused_imports)]
            use #rt::{ProbeDerive as _, ProbeSerde as _};
            (&&#rt::ParamProbe::<#ty>::new()).__toolnexus_way()
        }
    }
}

fn return_span(tool: &ToolFn) -> Span {
    match &tool.output {
        ReturnType::Type(_, ty) => ty.span(),
        ReturnType::Default => tool.ident.span(),
    }
}

#[cfg(test)]
mod tests {
    use super::struct_name;

    #[test]
    fn struct_names_are_pascal_case() {
        let name = |s: &str| struct_name(&syn::parse_str(s).unwrap()).to_string();
        assert_eq!(name("book_flight"), "BookFlight");
        assert_eq!(name("r#type"), "Type");
        assert_eq!(name("_private_thing"), "PrivateThing");
        assert_eq!(name("get_v2_status"), "GetV2Status");
        assert_eq!(name("already"), "Already");
    }
}
