//! Doc comments: one reader and one rendering for every macro.
//!
//! [`doc_lines`] reads `///` and `#[doc = ..]` attributes (text, or a macro call such as
//! `include_str!(..)` whose value is only known once compiled). [`doc_text`] renders them the
//! way rustdoc reads markdown, for a tool's description, its parameters' descriptions and an
//! answer form's field help alike: a paragraph's lines make one line (an MCP elicitation form
//! shows one line per field), paragraphs stay apart.

use proc_macro2::TokenStream;
use quote::quote;
use syn::{Attribute, Expr, ExprLit, Lit, Meta};

/// One `#[doc = ..]` attribute.
pub(crate) enum DocLine {
    Text(String),
    Expr(Expr),
}

/// A description: text known now, or tokens of a `&'static str` expression.
pub(crate) enum Description {
    Text(String),
    Tokens(TokenStream),
}

impl quote::ToTokens for Description {
    fn to_tokens(&self, tokens: &mut TokenStream) {
        match self {
            Self::Text(t) => t.to_tokens(tokens),
            Self::Tokens(t) => t.to_tokens(tokens),
        }
    }
}

/// The doc attributes, in order.
pub(crate) fn doc_lines(attrs: &[Attribute]) -> Vec<DocLine> {
    attrs
        .iter()
        .filter(|a| a.path().is_ident("doc"))
        .filter_map(|a| match &a.meta {
            Meta::NameValue(nv) => Some(match &nv.value {
                Expr::Lit(ExprLit {
                    lit: Lit::Str(s), ..
                }) => DocLine::Text(s.value()),
                other => DocLine::Expr(other.clone()),
            }),
            _ => None,
        })
        .collect()
}

/// Doc comment lines as one text, with markdown's (and rustdoc's) reading: the lines of a
/// paragraph joined by a space (each trimmed), paragraphs (split at blank lines) joined by
/// `\n\n`, a fenced code block kept line for line (one leading space stripped from each), the
/// whole trimmed. A `#[doc = expr]` line (`include_str!(..)`) is a paragraph of its own, taken
/// as it is once compiled. `None` when there is no text.
pub(crate) fn doc_text(lines: &[DocLine]) -> Option<Description> {
    enum Part<'a> {
        Text(String),
        Expr(&'a Expr),
    }
    let mut parts: Vec<Part<'_>> = Vec::new();
    let mut current = String::new();
    let mut fence: Option<&str> = None;
    let end = |current: &mut String, parts: &mut Vec<Part<'_>>| {
        if !current.is_empty() {
            parts.push(Part::Text(std::mem::take(current)));
        }
    };
    for line in lines {
        let line = match line {
            DocLine::Text(t) => t,
            DocLine::Expr(e) => {
                end(&mut current, &mut parts);
                parts.push(Part::Expr(e));
                continue;
            }
        };
        let trimmed = line.trim();
        if let Some(open) = fence {
            current.push('\n');
            current.push_str(line.strip_prefix(' ').unwrap_or(line).trim_end());
            if trimmed.starts_with(open) {
                fence = None;
                end(&mut current, &mut parts);
            }
        } else if let Some(open) = ["```", "~~~"].into_iter().find(|f| trimmed.starts_with(f)) {
            end(&mut current, &mut parts);
            fence = Some(open);
            current.push_str(line.strip_prefix(' ').unwrap_or(line).trim_end());
        } else if trimmed.is_empty() {
            end(&mut current, &mut parts);
        } else {
            if !current.is_empty() {
                current.push(' ');
            }
            current.push_str(trimmed);
        }
    }
    end(&mut current, &mut parts);
    if parts.iter().all(|p| matches!(p, Part::Text(_))) {
        let text: Vec<&str> = parts
            .iter()
            .filter_map(|p| match p {
                Part::Text(t) => Some(t.as_str()),
                Part::Expr(_) => None,
            })
            .collect();
        return (!text.is_empty()).then(|| Description::Text(text.join("\n\n")));
    }
    let mut tokens = Vec::new();
    for (i, part) in parts.iter().enumerate() {
        if i > 0 {
            tokens.push(quote!("\n\n"));
        }
        tokens.push(match part {
            Part::Text(t) => quote!(#t),
            Part::Expr(e) => quote!(#e),
        });
    }
    Some(Description::Tokens(quote!(::core::concat!(#(#tokens),*))))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(attrs: &[Attribute]) -> Option<String> {
        match doc_text(&doc_lines(attrs))? {
            Description::Text(t) => Some(t),
            Description::Tokens(t) => Some(t.to_string()),
        }
    }

    #[test]
    fn paragraphs_join_their_lines_and_stay_apart() {
        let attrs: Vec<Attribute> = syn::parse_quote! {
            ///
            ///  Ship a parcel
            /// to a city.
            ///
            ///
            /// Second paragraph.
            ///
        };
        assert_eq!(
            text(&attrs).as_deref(),
            Some("Ship a parcel to a city.\n\nSecond paragraph.")
        );
        let blank: Vec<Attribute> = syn::parse_quote! {
            ///
            ///
        };
        assert_eq!(text(&blank), None);
    }

    #[test]
    fn a_fenced_block_keeps_its_lines() {
        let attrs: Vec<Attribute> = syn::parse_quote! {
            /// Runs a query:
            /// ```sql
            /// SELECT *
            ///   FROM t
            /// ```
            /// Then returns.
        };
        assert_eq!(
            text(&attrs).as_deref(),
            Some("Runs a query:\n\n```sql\nSELECT *\n  FROM t\n```\n\nThen returns.")
        );
    }

    #[test]
    fn an_expression_line_is_a_paragraph_of_its_own() {
        let attrs: Vec<Attribute> = syn::parse_quote! {
            /// Before
            /// it.
            #[doc = include_str!("x.md")]
            /// After.
        };
        assert_eq!(
            text(&attrs).as_deref(),
            Some(
                r#":: core :: concat ! ("Before it." , "\n\n" , include_str ! ("x.md") , "\n\n" , "After.")"#
            )
        );
    }
}
