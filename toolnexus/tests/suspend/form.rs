//! `#[derive(Form)]`: the restricted schema it emits, serde renames, string enums, and the
//! credential rule (which must agree with the runtime's `is_credential_field`).

use serde_json::json;
use toolnexus::{Form, form::FormField, form::answer_schema_for, form::is_credential_field};

/// A form.
#[derive(Form, serde::Deserialize)]
#[allow(dead_code)] // only its schema is used
struct Booking {
    /// The city to fly to.
    ///
    /// Any airport city.
    city: String,
    /// How many nights
    /// (at most 30).
    nights: u32,
    price_limit: f64,
    window: bool,
    seat: Seat,
    meal: Option<Meal>,
    #[serde(default)]
    note: String,
    #[serde(skip)]
    internal: Vec<String>,
    #[serde(rename = "fullName")]
    full_name: Option<String>,
    r#type: char,
}

#[derive(Form, serde::Deserialize)]
#[allow(dead_code)] // only its schema is used
enum Seat {
    Aisle,
    Window,
    #[serde(rename = "middle-seat")]
    Middle,
}

#[derive(Form, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
#[allow(dead_code)] // only its schema is used
enum Meal {
    Vegetarian,
    GlutenFree,
}

#[test]
fn the_restricted_schema_golden() {
    assert_eq!(
        Booking::answer_schema(),
        json!({
            "type": "object",
            "properties": {
                "city": {"type": "string", "description": "The city to fly to.\n\nAny airport city."},
                "nights": {"type": "integer", "description": "How many nights (at most 30)."},
                "price_limit": {"type": "number"},
                "window": {"type": "boolean"},
                "seat": {"type": "string", "enum": ["Aisle", "Window", "middle-seat"]},
                "meal": {"type": "string", "enum": ["vegetarian", "gluten_free"]},
                "note": {"type": "string"},
                "fullName": {"type": "string"},
                "type": {"type": "string"}
            },
            "required": ["city", "nights", "price_limit", "window", "seat", "type"]
        })
    );
    // key order is part of the wire form
    assert_eq!(
        Booking::answer_schema().to_string().get(..60).unwrap(),
        r#"{"properties":{"city":{"description":"The city to fly to.\n\"#
    );
    // a form shows the required fields in declaration order (`required`), then the rest
    assert_eq!(
        toolnexus::form::field_order(&Booking::answer_schema()),
        [
            "city",
            "nights",
            "price_limit",
            "window",
            "seat",
            "type",
            "fullName",
            "meal",
            "note"
        ]
    );
}

#[test]
fn rename_all_on_a_struct_and_no_required_when_all_optional() {
    #[derive(Form)]
    #[serde(rename_all = "camelCase")]
    #[allow(dead_code)] // only its schema is used
    struct Prefs {
        home_city: Option<String>,
        max_stops: Option<u8>,
    }
    #[derive(serde::Deserialize)]
    #[serde(rename_all = "camelCase")]
    #[allow(dead_code)] // proves the names agree with what serde accepts
    struct PrefsDe {
        home_city: Option<String>,
        max_stops: Option<u8>,
    }
    assert_eq!(
        Prefs::answer_schema().to_string(),
        r#"{"properties":{"homeCity":{"type":"string"},"maxStops":{"type":"integer"}},"type":"object"}"#
    );
}

#[test]
fn an_enum_is_a_form_field() {
    assert_eq!(
        serde_json::Value::Object(Seat::field_schema()),
        json!({"type": "string", "enum": ["Aisle", "Window", "middle-seat"]})
    );
    assert_eq!(
        [
            <Seat as FormField>::REQUIRED,
            <Option<Seat> as FormField>::REQUIRED
        ],
        [true, false]
    );
}

#[test]
fn answers_to_a_form_deserialize() {
    let a = toolnexus::Answer::accept(
        "r1",
        json!({"city": "Oslo", "nights": 2, "price_limit": 99.5, "window": true,
               "seat": "middle-seat", "meal": "gluten_free", "fullName": "Ada", "type": "x"}),
    );
    let b: Booking = a.data_as().unwrap();
    assert_eq!(b.city, "Oslo");
    assert!(matches!(b.seat, Seat::Middle));
    assert!(matches!(b.meal, Some(Meal::GlutenFree)));
}

#[test]
fn answer_schema_for_a_json_schema_type() {
    #[derive(schemars::JsonSchema)]
    #[allow(dead_code)] // only its schema is used
    struct Flat {
        /// Name.
        name: String,
        age: Option<u8>,
        ok: bool,
    }
    assert_eq!(
        answer_schema_for::<Flat>().unwrap().to_string(),
        r#"{"properties":{"age":{"type":"integer"},"name":{"description":"Name.","type":"string"},"ok":{"type":"boolean"}},"required":["name","ok"],"type":"object"}"#
    );
    assert_eq!(
        answer_schema_for::<Vec<String>>().unwrap_err().to_string(),
        "invalid suspension: the answer schema of `Array_of_string` is not a flat form: the root is not an object with named fields"
    );
}

#[test]
fn credential_names_runtime_rule() {
    // the cases the macro crate's compile-time check is tested against too
    let cases: &[(&str, bool)] = toolnexus_macros::__credential_cases!();
    for &(name, refused) in cases {
        assert_eq!(is_credential_field(name), refused, "{name}");
    }
}

/// A runtime reached by another path, as a crate that re-exports toolnexus would give it.
/// Its `form_object` shadows the glob, so the schema shows which path the derive took.
mod runtime {
    pub(crate) mod __private {
        pub(crate) use toolnexus::__private::*;

        pub(crate) fn form_object(
            props: Vec<(String, serde_json::Map<String, serde_json::Value>, bool)>,
        ) -> serde_json::Value {
            let mut schema = toolnexus::__private::form_object(props);
            schema["x-reached-through"] = "runtime".into();
            schema
        }
    }
}

#[derive(Form, serde::Deserialize)]
#[form(crate = crate::suspend::form::runtime)]
#[allow(dead_code)] // only its schema is used
struct Routed {
    city: String,
}

#[test]
fn form_crate_names_the_path_generated_code_reaches_the_runtime_by() {
    assert_eq!(
        Routed::answer_schema(),
        json!({
            "type": "object",
            "properties": {"city": {"type": "string"}},
            "required": ["city"],
            "x-reached-through": "runtime"
        })
    );
}
