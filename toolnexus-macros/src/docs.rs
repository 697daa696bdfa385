//! Doc comments: one reader for every macro, and the two renderings the runtime pins.
//!
//! [`doc_lines`] reads `///` and `#[doc = ..]` attributes (text, or a macro call such as
//! `include_str!(..)` whose value is only known once compiled). A tool's description and its
//! parameters' descriptions render them the way `schemars` does ([`doc_description`]), so a
//! `#[tool]` with plain parameters and one with an `#[args]` struct describe alike. An answer
//! form's field renders them as prose ([`doc_prose`]): an MCP elicitation form shows one line
//! per field, so a paragraph's lines are joined by a space.

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

/// Doc comment lines as one description, the way `schemars` reads them: one leading space
/// stripped per line, lines joined with `\n` (so a blank `///` line is a paragraph break),
/// the whole trimmed. `None` when there is no text.
pub(crate) fn doc_description(lines: &[DocLine]) -> Option<Description> {
    if lines.iter().all(|l| matches!(l, DocLine::Text(_))) {
        let mut text = String::new();
        for (i, line) in lines.iter().enumerate() {
            if let DocLine::Text(t) = line {
                if i > 0 {
                    text.push('\n');
                }
                text.push_str(t.strip_prefix(' ').unwrap_or(t));
            }
        }
        let text = text.trim();
        return (!text.is_empty()).then(|| Description::Text(text.to_owned()));
    }
    let mut parts = Vec::new();
    for (i, line) in lines.iter().enumerate() {
        if i > 0 {
            parts.push(quote!("\n"));
        }
        match line {
            DocLine::Text(t) => {
                let t = t.strip_prefix(' ').unwrap_or(t);
                parts.push(quote!(#t));
            }
            DocLine::Expr(e) => parts.push(quote!(#e)),
        }
    }
    Some(Description::Tokens(quote!(::core::concat!(#(#parts),*))))
}

/// Doc comment lines as prose: each line trimmed, a paragraph's lines joined by a space,
/// paragraphs by `\n\n`. `None` when there is no text. A `#[doc = include_str!(..)]` line
/// has no text yet and is skipped.
pub(crate) fn doc_prose(lines: &[DocLine]) -> Option<String> {
    let mut paragraphs: Vec<String> = Vec::new();
    let mut current = String::new();
    for line in lines {
        let DocLine::Text(line) = line else { continue };
        let line = line.trim();
        if line.is_empty() {
            if !current.is_empty() {
                paragraphs.push(std::mem::take(&mut current));
            }
        } else {
            if !current.is_empty() {
                current.push(' ');
            }
            current.push_str(line);
        }
    }
    if !current.is_empty() {
        paragraphs.push(current);
    }
    let text = paragraphs.join("\n\n");
    (!text.is_empty()).then_some(text)
}
