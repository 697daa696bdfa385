//! The credential-name check of the trust boundary, at compile time.
//!
//! The runtime has the same rule in `toolnexus::is_credential_field` (this crate cannot depend
//! on the runtime); `toolnexus/tests/ui/suspend/form_credential_fields.rs` pins what this side
//! refuses, `toolnexus/tests/suspend_form.rs` the runtime side, on the same names.

const CREDENTIAL_WORDS: &[&[&str]] = &[
    &["password"],
    &["passwd"],
    &["secret"],
    &["token"],
    &["api", "key"],
    &["apikey"],
    &["private", "key"],
    &["privatekey"],
    &["pin"],
    &["cvv"],
    &["card", "number"],
    &["cardnumber"],
    &["ssn"],
];

fn words(name: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut cur = String::new();
    let mut prev_lower = false;
    for c in name.chars() {
        if !c.is_alphanumeric() {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            prev_lower = false;
            continue;
        }
        if c.is_uppercase() && prev_lower && !cur.is_empty() {
            out.push(std::mem::take(&mut cur));
        }
        prev_lower = c.is_lowercase() || c.is_ascii_digit();
        cur.extend(c.to_lowercase());
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
}

/// Whether a field name collects a credential (same rule as the runtime's).
pub(crate) fn is_credential_field(name: &str) -> bool {
    let words = words(name);
    CREDENTIAL_WORDS.iter().any(|seq| {
        words
            .windows(seq.len())
            .any(|w| w.iter().zip(*seq).all(|(a, b)| a == b))
    })
}
