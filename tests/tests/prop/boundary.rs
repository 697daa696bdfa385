//! The credential trust boundary's properties: whenever `check_request` passes, no credential
//! word occurs anywhere in the request's human-facing text (prompt, every key and string of
//! `data`); and a credential spelled any way, in any place of a form (name, title, description,
//! format, nested), is refused whatever the request's kind.

use proptest::prelude::*;
use serde_json::{Value, json};
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
    // issue 22
    "privkey",
    "ssh_privkey",
    "ccnum",
    "ccNum",
    "account_number",
    "accountNumber",
];

/// Spellings refused as names only (a property name, title, header, `format`), not in prose.
const NAME_SPELLINGS: &[&str] = &[
    "auth",
    "Auth",
    "authorization",
    "Authorization",
    "auth_header",
];

/// Kinds of requests: the two that always collect, and others that collect when they carry a
/// form.
const KINDS: &[&str] = &[
    "input",
    "Input",
    "question",
    "QUESTION",
    "approval",
    "authorization",
    "login",
    "user_input",
    "deploy",
    "\u{ff2c}ogin",
];

/// The `data` keys that hold a form, as a tool might spell them.
const FORM_KEYS: &[&str] = &["schema", "fields", "form", "questions", "Schema", "FORM"];

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
    "tokens",
    "pinned",
    "account",
    "authored",
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
        kind in prop::sample::select(KINDS),
        form_key in prop::sample::select(FORM_KEYS),
        form in data_value(),
        prompt in text(),
        data in prop::collection::vec((text(), data_value()), 0..4),
    ) {
        let mut data: serde_json::Map<String, Value> = data.into_iter().collect();
        data.insert(form_key.to_owned(), form);
        let req = Request::custom(kind, prompt).with_data(data);
        if check_request(&req).is_ok() {
            for t in human_texts(&req) {
                for s in SPELLINGS {
                    prop_assert!(!occurs(&t, s), "{s:?} in {t:?} passed");
                }
            }
        }
    }
}

/// Where in a form a spelling goes.
#[derive(Clone, Copy, Debug)]
enum Place {
    /// a property name
    Name,
    /// a property's `title`
    Title,
    /// a property's `description`, in a sentence
    Description,
    /// a property's `format`
    Format,
    /// a property name two objects and one array down
    Nested,
}

const PLACES: &[Place] = &[
    Place::Name,
    Place::Title,
    Place::Description,
    Place::Format,
    Place::Nested,
];

/// A form with `word` at `place`, and the path the boundary must name.
fn form_with(word: &str, place: Place, key: &str) -> (Value, String) {
    let prop = |p: Value| json!({"type": "object", "properties": {"f": p}});
    match place {
        Place::Name => (
            json!({"type": "object", "properties": {word: {"type": "string"}}}),
            format!("data.{key}.properties.{word}"),
        ),
        Place::Title => (
            prop(json!({"type": "string", "title": word})),
            format!("data.{key}.properties.f.title"),
        ),
        Place::Description => (
            prop(
                json!({"type": "string", "description": format!("Please enter your {word} here")}),
            ),
            format!("data.{key}.properties.f.description"),
        ),
        Place::Format => (
            prop(json!({"type": "string", "format": word})),
            format!("data.{key}.properties.f"),
        ),
        Place::Nested => (
            json!({"type": "object", "properties": {"a": {"type": "array", "items": [
                {"type": "object", "properties": {word: {"type": "string"}}}
            ]}}}),
            format!("data.{key}.properties.a.items[0].properties.{word}"),
        ),
    }
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(512))]

    #[test]
    fn a_credential_in_any_place_of_a_form_is_refused_whatever_the_kind(
        kind in prop::sample::select(KINDS),
        key in prop::sample::select(FORM_KEYS),
        place in prop::sample::select(PLACES),
        (word, prose) in prop_oneof![
            prop::sample::select(SPELLINGS).prop_map(|w| (w, true)),
            prop::sample::select(NAME_SPELLINGS).prop_map(|w| (w, false)),
        ],
        prompt in prop::sample::select(&["Fill this in", "A few details", "Trip"][..]),
    ) {
        // a word refused in names only is no credential in a sentence
        prop_assume!(prose || !matches!(place, Place::Description));
        let (form, path) = form_with(word, place, key);
        let req = Request::custom(kind, prompt).with_data_entry(key, form);
        let err = check_request(&req).expect_err("refused");
        prop_assert_eq!(err.path(), path.as_str(), "{}", err);
        prop_assert_eq!(err.kind(), kind);
        prop_assert!(err.to_string().ends_with(
            "; secrets must never pass through answer data: use an `authorization` request with a `url` instead"
        ));
    }

    #[test]
    fn an_innocent_word_in_any_place_of_a_form_passes_whatever_the_kind(
        kind in prop::sample::select(KINDS),
        key in prop::sample::select(FORM_KEYS),
        place in prop::sample::select(PLACES),
        word in prop::sample::select(INNOCENT),
    ) {
        let (form, _) = form_with(word, place, key);
        let req = Request::custom(kind, "A few details").with_data_entry(key, form);
        prop_assert!(check_request(&req).is_ok(), "{:?}", check_request(&req));
    }
}

/// Only an `authorization` request with a `url` and no form is the way to a secret; with a
/// form it is checked like any other.
#[test]
fn only_an_authorization_without_a_form_may_mention_a_secret() {
    let bare = Request::authorization("https://bank.example/login")
        .with_prompt("Enter your online-banking password on the bank's page");
    assert!(check_request(&bare).is_ok());
    for key in FORM_KEYS {
        let (form, path) = form_with("password", Place::Name, key);
        let with_form = bare.clone().with_data_entry(*key, form);
        assert_eq!(check_request(&with_form).expect_err(key).path(), "prompt");
        let (form, _) = form_with("password", Place::Name, key);
        let quiet =
            Request::authorization("https://bank.example/login").with_data_entry(*key, form);
        assert_eq!(check_request(&quiet).expect_err(key).path(), path);
    }
}
