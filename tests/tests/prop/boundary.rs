//! The credential trust boundary's property: whenever `check_request` passes, no credential
//! word occurs anywhere in the request's human-facing text (prompt, every key and string of
//! `data`).

use proptest::prelude::*;
use serde_json::Value;
use toolnexus::Request;
use toolnexus::boundary::check_request;

// ---- the property: a request that passes shows no credential word to a human

/// Spellings of credentials a request must never carry in any human-facing text.
const SPELLINGS: &[&str] = &[
    "password",
    "passwd",
    "pwd",
    "passcode",
    "passphrase",
    "password1",
    "passwords",
    "Passwort",
    "Kennwort",
    "p\u{430}ssword",
    "secret",
    "secrets",
    "token",
    "access_tokens",
    "bearer",
    "jwt",
    "apikey",
    "api_key",
    "apiKey",
    "apiKeys",
    "APIToken",
    "access_key",
    "accessKey",
    "secret_key",
    "private_key",
    "privateKey",
    "ssh_key",
    "signing_key",
    "encryption_key",
    "master_key",
    "auth_token",
    "auth_code",
    "seed_phrase",
    "recovery_phrase",
    "otp",
    "totp",
    "hotp",
    "2fa",
    "mfa_code",
    "mfaCode",
    "verification_code",
    "security_code",
    "recovery_code",
    "backup_codes",
    "one_time_code",
    "sms_code",
    "pin",
    "pin_code",
    "cvv",
    "cvv2",
    "cvc",
    "card_number",
    "cardNumber",
    "credit_card",
    "creditCard",
    "debit_card",
    "iban",
    "ssn",
    "social_security",
    "routing_number",
    "session_id",
    "sessionId",
    "session_key",
    "cookie",
    "cookies",
    "credentials",
    "NEWPASSWORD",
    "aws_access_key_id",
];

const INNOCENT: &[&str] = &[
    "city",
    "passenger",
    "compass",
    "author",
    "keyboard",
    "pinyin",
    "spinner",
    "tokenizer",
    "secretary",
    "nights",
    "seat",
    "address",
    "code",
    "session",
    "key",
    "id",
    "the",
    "your",
];

/// A fragment is a spelling or an innocent word; a text joins fragments with a separator.
fn text() -> impl Strategy<Value = String> {
    let fragment = prop_oneof![
        prop::sample::select(SPELLINGS).prop_map(str::to_owned),
        prop::sample::select(INNOCENT).prop_map(str::to_owned),
        "[a-z]{1,8}",
    ];
    (
        prop::collection::vec(fragment, 1..4),
        prop::sample::select(&[" ", "_", "-", ".", ": "][..]),
    )
        .prop_map(|(parts, sep)| parts.join(sep))
}

fn data_value() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        text().prop_map(Value::String),
        any::<i32>().prop_map(Value::from),
        Just(Value::Bool(true))
    ];
    leaf.prop_recursive(4, 32, 4, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..4).prop_map(Value::Array),
            prop::collection::vec((text(), inner), 0..4)
                .prop_map(|kv| Value::Object(kv.into_iter().collect())),
        ]
    })
}

/// Every text a human reads in a request: the prompt, every key and every string of `data`.
fn human_texts(req: &Request) -> Vec<String> {
    fn walk(v: &Value, out: &mut Vec<String>) {
        match v {
            Value::String(s) => out.push(s.clone()),
            Value::Array(a) => a.iter().for_each(|v| walk(v, out)),
            Value::Object(o) => o.iter().for_each(|(k, v)| {
                out.push(k.clone());
                walk(v, out);
            }),
            _ => {}
        }
    }
    let mut out = vec![req.prompt.clone()];
    for (k, v) in req.data.iter().flat_map(|data| data.iter()) {
        out.push(k.clone());
        walk(v, &mut out);
    }
    out
}

/// Whether `spelling` occurs in `text` as a token (between separators), case-insensitively.
fn occurs(text: &str, spelling: &str) -> bool {
    let lower = text.to_lowercase();
    let s = spelling.to_lowercase();
    lower.match_indices(&s).any(|(i, m)| {
        let before = lower[..i].chars().next_back();
        let after = lower[i + m.len()..].chars().next();
        !before.is_some_and(char::is_alphanumeric) && !after.is_some_and(char::is_alphanumeric)
    })
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn a_request_that_passes_shows_no_credential_word(
        kind in prop::sample::select(&["input", "Input", "QUESTION", "question"][..]),
        prompt in text(),
        data in prop::collection::vec((text(), data_value()), 0..4),
    ) {
        let req = Request::custom(kind, prompt).with_data(data.into_iter().collect());
        if check_request(&req).is_ok() {
            for t in human_texts(&req) {
                for s in SPELLINGS {
                    prop_assert!(!occurs(&t, s), "{s:?} in {t:?} passed");
                }
            }
        }
    }
}
