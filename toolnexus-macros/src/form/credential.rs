//! The credential words of the trust boundary, and the compile-time check of form field names.
//!
//! This file owns the word list: the runtime (`toolnexus::boundary`) reads it through the
//! hidden `__credential_words!()` macro, so both sides refuse the same words. Both also test
//! against the same cases, `credential_cases.txt` beside this file (the runtime reads it
//! through `__credential_cases!()`). The rule itself, how a name splits into words and which
//! word it contains, is one file, `credential/rule.rs`: a module here, and emitted as the
//! runtime's module by the hidden `__credential_rule!()` macro. The runtime additionally folds
//! Unicode confusables first (this crate depends on syn/quote/proc-macro2 only), so here
//! non-ASCII names are not folded.

mod rule;

use proc_macro2::TokenStream;
use quote::quote;

/// The credential words, normalised: lowercase letters and digits, no separators.
///
/// A word matches a whole word of a name (also as a plural in `s`/`es`); one of five or more
/// letters also matches two or three adjacent words of two or more letters joined (`api key`,
/// `session_id`, `aws_access_key_id`, `ccNum`); one of eight or more letters also matches
/// inside a word (`NEWPASSWORD`, `passwordless`). `tokens` is no plural of `token` (it counts
/// model tokens: `tokens_used`), but `access_tokens` is one of `accesstoken`.
///
/// Left out on purpose, as too common in innocent names: `key`, `pass`, `code`, `id`,
/// `session`, `mfa` alone; `secret` and `token` match only as whole words (`secretary` and
/// `tokenizer` are innocent); `auth` and `authorization` are [`NAME_WORDS`], refused as names
/// but not in prose.
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
    "privkey",
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
    "ccnum",
    "ccnumber",
    "accountnumber",
    "iban",
    "ssn",
    "socialsecurity",
    "routingnumber",
    // sessions
    "sessionid",
    "sessionkey",
    "cookie",
];

/// Words refused in names only (property names, field names, titles, headers, `format`), by
/// the same rule as [`CREDENTIAL_WORDS`]: a field called `auth` or `Authorization` collects
/// what an HTTP `Authorization` header carries, while a prompt may well mention an
/// authorization in prose.
pub(crate) const NAME_WORDS: &[&str] = &["auth", "authorization"];

/// The cases both crates test the rule against: `refuse <name>` or `allow <name>` per line.
pub(crate) const CASES: &str = include_str!("credential_cases.txt");

/// `__credential_words!()`: the word list as a `&[&str]` literal.
pub(crate) fn words_literal() -> TokenStream {
    let words = CREDENTIAL_WORDS;
    quote!(&[#(#words),*])
}

/// `__credential_name_words!()`: [`NAME_WORDS`] as a `&[&str]` literal.
pub(crate) fn name_words_literal() -> TokenStream {
    let words = NAME_WORDS;
    quote!(&[#(#words),*])
}

/// `__credential_cases!()`: the shared cases as a `&[(&str, bool)]` literal (`true`: refuse).
pub(crate) fn cases_literal() -> TokenStream {
    let (names, refuse): (Vec<&str>, Vec<bool>) = cases().unzip();
    quote!(&[#((#names, #refuse)),*])
}

/// The source of [`rule`], for the runtime.
const RULE: &str = include_str!("credential/rule.rs");

/// `__credential_rule!()`: the module `rule { .. }`, from the same source as this crate's
/// [`rule`].
pub(crate) fn rule_module() -> TokenStream {
    // the file is this crate's own module, so it always parses
    match RULE.parse::<TokenStream>() {
        Ok(body) => quote!(mod rule { #body }),
        Err(e) => {
            let message = format!("`credential/rule.rs` does not parse: {e}");
            quote!(::core::compile_error!(#message);)
        }
    }
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

/// Whether a field name collects a credential (the runtime's rule, without confusable folding):
/// it contains one of [`CREDENTIAL_WORDS`] or [`NAME_WORDS`].
pub(crate) fn is_credential_field(name: &str) -> bool {
    rule::find(name, CREDENTIAL_WORDS)
        .or_else(|| rule::find(name, NAME_WORDS))
        .is_some()
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
        for w in CREDENTIAL_WORDS.iter().chain(NAME_WORDS) {
            assert!(
                w.chars()
                    .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit()),
                "{w}"
            );
        }
    }
}
