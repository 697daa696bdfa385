//! The credential words of the trust boundary, and the compile-time check of form field names.
//!
//! This file owns the word list: the runtime (`toolnexus::boundary`) reads it through the
//! hidden `__credential_words!()` macro, so both sides refuse the same words. Both also test
//! against the same cases, `credential_cases.txt` beside this file (the runtime reads it
//! through `__credential_cases!()`). The runtime additionally folds Unicode confusables
//! (this crate depends on syn/quote/proc-macro2 only), so here non-ASCII names are not folded.

use proc_macro2::TokenStream;
use quote::quote;

/// The credential words, normalised: lowercase letters and digits, no separators.
///
/// A word matches a whole word of a name (also as a plural in `s`/`es`); one of six or more
/// letters also matches two or three adjacent words of two or more letters joined (`api key`,
/// `session_id`, `aws_access_key_id`); one of eight or more letters also matches inside a
/// word (`NEWPASSWORD`, `passwordless`). `tokens` is no plural of `token` (it counts model
/// tokens: `tokens_used`), but `access_tokens` is one of `accesstoken`.
///
/// Left out on purpose, as too common in innocent names: `key`, `pass`, `code`, `auth`, `id`,
/// `session`, `mfa` alone; `secret` and `token` match only as whole words (`secretary` and
/// `tokenizer` are innocent).
pub(crate) const CREDENTIAL_WORDS: &[&str] = &[
    // passwords, in a few languages
    "password",
    "passwd",
    "pwd",
    "passcode",
    "passphrase",
    "passwort",
    "kennwort",
    "contrasena",
    "motdepasse",
    "credential",
    // secrets, keys and tokens
    "secret",
    "token",
    "bearer",
    "jwt",
    "apikey",
    "apitoken",
    "accesstoken",
    "refreshtoken",
    "idtoken",
    "accesskey",
    "secretkey",
    "privatekey",
    "sshkey",
    "signingkey",
    "encryptionkey",
    "masterkey",
    "authtoken",
    "authcode",
    "authkey",
    "seedphrase",
    "recoveryphrase",
    // one-time and second-factor codes
    "otp",
    "totp",
    "hotp",
    "2fa",
    "mfacode",
    "mfatoken",
    "verificationcode",
    "securitycode",
    "recoverycode",
    "backupcode",
    "onetimecode",
    "smscode",
    // cards, banks, identity
    "pin",
    "pincode",
    "cvv",
    "cvc",
    "cardnumber",
    "creditcard",
    "debitcard",
    "cardno",
    "iban",
    "ssn",
    "socialsecurity",
    "routingnumber",
    // sessions
    "sessionid",
    "sessionkey",
    "cookie",
];

/// The cases both crates test the rule against: `refuse <name>` or `allow <name>` per line.
pub(crate) const CASES: &str = include_str!("credential_cases.txt");

/// `__credential_words!()`: the word list as a `&[&str]` literal.
pub(crate) fn words_literal() -> TokenStream {
    let words = CREDENTIAL_WORDS;
    quote!(&[#(#words),*])
}

/// `__credential_cases!()`: the shared cases as a `&[(&str, bool)]` literal (`true`: refuse).
pub(crate) fn cases_literal() -> TokenStream {
    let (names, refuse): (Vec<&str>, Vec<bool>) = cases().unzip();
    quote!(&[#((#names, #refuse)),*])
}

/// The shared cases: `(name, refused)`.
fn cases() -> impl Iterator<Item = (&'static str, bool)> {
    CASES.lines().filter_map(|line| {
        let line = line.trim();
        if let Some(name) = line.strip_prefix("refuse ") {
            Some((name, true))
        } else {
            line.strip_prefix("allow ").map(|name| (name, false))
        }
    })
}

/// The lowercase words of a name: split at anything not a letter or digit, at camelCase humps,
/// before the last capital of an acronym (`APIToken`) and where digits follow letters.
fn words(name: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut chars = name.chars().peekable();
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

/// Whether a field name collects a credential (the runtime's rule, without confusable folding).
pub(crate) fn is_credential_field(name: &str) -> bool {
    // each separator-delimited chunk read whole too, so a stray capital (`sEcret`) splits nothing
    let chunk_matches = name.split(|c: char| !c.is_alphanumeric()).any(|chunk| {
        let chunk = chunk.to_lowercase();
        CREDENTIAL_WORDS
            .iter()
            .any(|w| is_word(&chunk, w) || (w.len() >= 8 && chunk.contains(w)))
    });
    if chunk_matches {
        return true;
    }
    let words = words(name);
    words.iter().enumerate().any(|(i, first)| {
        CREDENTIAL_WORDS
            .iter()
            .any(|w| is_word(first, w) || (w.len() >= 8 && first.contains(w)))
            || (first.len() >= 2 && {
                let mut joined = first.clone();
                words.iter().skip(i + 1).take(2).any(|next| {
                    if next.len() < 2 {
                        return false;
                    }
                    joined.push_str(next);
                    CREDENTIAL_WORDS
                        .iter()
                        .any(|w| w.len() >= 6 && is_word(&joined, w))
                })
            })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_shared_cases_hold_for_ascii_names() {
        let mut checked = 0;
        for (name, refuse) in cases().filter(|(name, _)| name.is_ascii()) {
            assert_eq!(is_credential_field(name), refuse, "{name}");
            checked += 1;
        }
        assert!(checked >= 60, "only {checked} cases");
    }

    #[test]
    fn words_are_normalised() {
        for w in CREDENTIAL_WORDS {
            assert!(
                w.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit()),
                "{w}"
            );
        }
    }
}
