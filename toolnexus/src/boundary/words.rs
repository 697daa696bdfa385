//! Reading a name or a text as words, and finding a credential word among them.
//!
//! The word list and the rule over words belong to `toolnexus-macros` (its compile-time check
//! of form fields uses the same ones), which hands them over: the list as a literal
//! (`__credential_words!()`), the rule as the module `rule` (`__credential_rule!()`, from
//! `toolnexus-macros/src/form/credential/rule.rs`). What is added here is the folding of
//! Unicode confusables.

/// The credential words, normalised (lowercase letters and digits, no separators). A word
/// matches a whole word of a name, also as the plural (`s`/`es`); one of six or more letters
/// also matches two or three adjacent words joined (`api key`, `session_id`); one of eight or
/// more letters also matches inside a word (`NEWPASSWORD`).
pub(crate) const CREDENTIAL_WORDS: &[&str] = toolnexus_macros::__credential_words!();

/// What a character that is no letter or digit does in [`fold`] when it is invisible (a
/// format character such as a zero-width space, or a combining mark) or resembles a letter
/// (a symbol `decancer` reads as one): join the letters around it (`pass\u{200b}word` reads
/// as `password`) or separate them (`bearer\u{488}token` reads as `bearer`, `token` to a
/// reader who sees a break). The boundary looks for a credential word both ways.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Invisible {
    Joins,
    Separates,
}

/// Folds what can disguise a letter: every non-ASCII character becomes what `decancer` reads
/// it as (a Cyrillic `а` reads as `a`, a fullwidth `ｐ` as `p`, `ñ` as `n`). One that does not
/// read as a letter or digit becomes a space when a reader sees it (spaces, controls, symbols,
/// punctuation: `bearer→token`), and, when a reader cannot see it (format characters, marks),
/// nothing or a space as `invisible` says. With [`Invisible::Separates`] every non-ASCII
/// character that is no letter or digit becomes a space, whatever letter it resembles.
fn fold(text: &str, invisible: Invisible) -> std::borrow::Cow<'_, str> {
    use unicode_general_category::{GeneralCategory, get_general_category};
    if text.is_ascii() {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        if c.is_ascii() {
            out.push(c);
            continue;
        }
        if invisible == Invisible::Separates && !c.is_alphanumeric() {
            // read as what it is, not as the letter it resembles (`؈` is no `x` here)
            out.push(' ');
            continue;
        }
        match decancer::cure_char(c, decancer::Options::default()) {
            decancer::Translation::Character(t) if t.is_alphanumeric() => out.push(t),
            decancer::Translation::String(t) if t.chars().any(char::is_alphanumeric) => {
                out.extend(t.chars().filter(|t| t.is_alphanumeric()));
            }
            _ => match get_general_category(c) {
                GeneralCategory::Format
                | GeneralCategory::NonspacingMark
                | GeneralCategory::SpacingMark
                | GeneralCategory::EnclosingMark
                    if invisible == Invisible::Joins => {}
                _ => out.push(' '),
            },
        }
    }
    std::borrow::Cow::Owned(out)
}

toolnexus_macros::__credential_rule!();

/// The lowercase words of a name or text: split at anything not a letter or digit, at
/// camelCase humps (`newPassword`), before the last capital of an acronym (`APIToken`) and
/// where digits follow letters (`password1`), after folding confusables.
pub(crate) fn words(text: &str) -> Vec<String> {
    rule::split(&fold(text, Invisible::Joins))
}

/// The credential word a name or text contains, if any: among its words, or among its
/// separator-delimited chunks read whole (so a stray capital, `sEcret`, splits nothing), after
/// folding confusables, with invisible characters read as joining and as separating (see
/// [`CREDENTIAL_WORDS`] for the rule).
pub(crate) fn credential_in(text: &str) -> Option<&'static str> {
    let joined = fold(text, Invisible::Joins);
    rule::find(&joined, CREDENTIAL_WORDS).or_else(|| {
        let separated = fold(text, Invisible::Separates);
        (separated != joined)
            .then(|| rule::find(&separated, CREDENTIAL_WORDS))
            .flatten()
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn words_split_at_separators_humps_acronyms_and_digits() {
        assert_eq!(words("apiKey"), ["api", "key"]);
        assert_eq!(words("APIToken"), ["api", "token"]);
        assert_eq!(words("API_KEY"), ["api", "key"]);
        assert_eq!(words("NEWPASSWORD"), ["newpassword"]);
        assert_eq!(words("password1"), ["password", "1"]);
        assert_eq!(words("2fa-code"), ["2fa", "code"]);
        assert_eq!(words("pа\u{200b}ssword"), ["password"]);
        assert_eq!(words("Contraseña"), ["contrasena"]);
    }

    #[test]
    fn visible_non_letters_separate_words_and_invisible_ones_do_not() {
        // found by the `lowering` fuzz target: a C1 control between two words
        assert_eq!(words("bearer\u{88}uhreEiU"), ["bearer", "uhre", "ei", "u"]);
        assert_eq!(credential_in("bearer\u{88}uhreEiU"), Some("bearer"));
        assert_eq!(credential_in("api→key"), Some("apikey"));
        assert_eq!(words("bearer→token"), ["bearer", "token"]);
        // zero-width, format and combining characters join what they sit in...
        assert_eq!(words("pass\u{200b}\u{2060}wo\u{301}rd"), ["password"]);
        assert_eq!(credential_in("pass\u{feff}word"), Some("password"));
        // ...and are also read as a break, as a reader may see them (found by the fuzz target:
        // an enclosing mark after `bearer`)
        assert_eq!(credential_in("bearer\u{488}uhreEiU"), Some("bearer"));
        assert_eq!(credential_in("token\u{200b}s"), Some("token"));
        assert_eq!(credential_in("cafe\u{301} menu"), None);
        // a symbol that resembles a letter is also read as a break (the fuzz target again)
        assert_eq!(credential_in("&bearer\u{608}U"), Some("bearer"));
    }

    #[test]
    fn single_letters_do_not_join_into_a_word() {
        // "i" + "ban" is not an IBAN
        assert_eq!(credential_in("Should I ban this user?"), None);
        assert_eq!(credential_in("my iban"), Some("iban"));
    }
}
