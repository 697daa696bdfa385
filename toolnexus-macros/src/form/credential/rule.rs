//! The credential rule over a name or text: how it splits into words, and which word of a list
//! it contains. One source for both crates: this file is `toolnexus-macros`'s
//! `form::credential::rule`, and the hidden `__credential_rule!()` macro emits it, read as
//! tokens, as the runtime's `toolnexus::boundary::words::rule`. So it uses `std` only, and
//! the runtime folds Unicode confusables before it calls in (this crate cannot: it depends on
//! syn/quote/proc-macro2 only).

/// The lowercase words of a name or text: split at anything not a letter or digit, at
/// camelCase humps (`newPassword`), before the last capital of an acronym (`APIToken`) and
/// where digits follow letters (`password1`).
pub(crate) fn split(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = text.chars().peekable();
    let mut prev: Option<char> = None;
    while let Some(c) = chars.next() {
        if !c.is_alphanumeric() {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            prev = None;
            continue;
        }
        if let Some(p) = prev {
            let hump = p.is_lowercase() && c.is_uppercase();
            let acronym_end = p.is_uppercase()
                && c.is_uppercase()
                && chars.peek().is_some_and(|n| n.is_lowercase());
            let digits = p.is_alphabetic() && c.is_numeric();
            if (hump || acronym_end || digits) && !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
        }
        cur.extend(c.to_lowercase());
        prev = Some(c);
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// `candidate` is `word` or its plural; `tokens` alone is no plural here: in this library's
/// world it counts model tokens (`max_tokens`, `tokens_used`).
fn is_word(candidate: &str, word: &str) -> bool {
    candidate == word
        || (word != "token"
            && (candidate.strip_suffix('s') == Some(word)
                || candidate.strip_suffix("es") == Some(word)))
}

/// The word of `list` (normalised words) that `words` contain, if any: a whole word (also as
/// the plural); one of five or more letters also as two or three adjacent words of two or more
/// letters joined (`api key`, `session_id`); one of eight or more letters also inside a word
/// (`NEWPASSWORD`).
pub(crate) fn among_words(words: &[String], list: &[&'static str]) -> Option<&'static str> {
    let mut joined = String::new();
    for (i, first) in words.iter().enumerate() {
        for &w in list {
            if is_word(first, w) || (w.len() >= 8 && first.contains(w)) {
                return Some(w);
            }
        }
        if first.len() < 2 {
            continue;
        }
        joined.clear();
        joined.push_str(first);
        for next in words.iter().skip(i + 1).take(2) {
            if next.len() < 2 {
                break;
            }
            joined.push_str(next);
            if let Some(&w) = list.iter().find(|w| w.len() >= 5 && is_word(&joined, w)) {
                return Some(w);
            }
        }
    }
    None
}

/// The word of `list` that `text` contains, if any: among its words ([`split`],
/// [`among_words`]), or among its separator-delimited chunks read whole, so a stray capital
/// (`sEcret`) splits nothing. (A chunk without a capital splits only where digits follow
/// letters, which no listed word has, so its words already tell.)
pub(crate) fn find(text: &str, list: &[&'static str]) -> Option<&'static str> {
    among_words(&split(text), list).or_else(|| {
        text.split(|c: char| !c.is_alphanumeric())
            .filter(|chunk| chunk.chars().any(char::is_uppercase))
            .find_map(|chunk| {
                let chunk = chunk.to_lowercase();
                list.iter()
                    .find(|&&w| is_word(&chunk, w) || (w.len() >= 8 && chunk.contains(w)))
                    .copied()
            })
    })
}
