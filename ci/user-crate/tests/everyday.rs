//! The everyday lines of a crate that depends on toolnexus (every feature on). Each must keep
//! compiling as written: none names a type that inference finds on its own today.
//! (`String + &String` and `String += &String` are `examples/string_add.rs`, built on their own
//! by ci/check-user-crate.sh.)

use std::collections::{BTreeMap, HashMap, HashSet};
use std::error::Error;

#[tokio::test]
async fn the_crate_uses_toolnexus() {
    let toolkit = toolnexus_user_crate::toolkit();
    let result = toolkit
        .execute(
            "greet",
            toolnexus::json!({"name": "Oslo"}),
            &toolnexus::Context::new(),
        )
        .await;
    assert_eq!(result.output, "hello Oslo");
}

#[test]
fn strings() {
    let name = String::from("Oslo");
    let from_str: String = "Oslo".into();
    let from_string_ref: String = (&name).into();
    let from_char: String = 'x'.into();
    let from_box: String = Box::<str>::from("b").into();
    let from_cow: String = std::borrow::Cow::Borrowed("c").into();
    assert_eq!(from_str, name);
    assert_eq!(from_string_ref, "Oslo");
    assert_eq!(from_char + from_box.as_str() + from_cow.as_str(), "xbc");
    let with_str = name.clone() + " and Pune";
    assert_eq!(with_str, "Oslo and Pune");
    let mut grown = String::new();
    grown += name.as_str();
    grown += "!";
    grown.push('?');
    assert_eq!(grown, "Oslo!?");
    assert!(name == "Oslo" && "Oslo" == name && name.as_str() == "Oslo");
    assert_eq!(format!("{name}-{}", 1), "Oslo-1");
}

#[test]
fn parsed_values_compare_to_literals() {
    let i: i8 = "-8".parse().unwrap();
    assert_eq!(i, -8);
    let i: i16 = "-16".parse().unwrap();
    assert_eq!(i, -16);
    let i: i32 = "-32".parse().unwrap();
    assert_eq!(i, -32);
    let i: i64 = "-64".parse().unwrap();
    assert_eq!(i, -64);
    let i: i128 = "-128".parse().unwrap();
    assert_eq!(i, -128);
    let i: isize = "-1".parse().unwrap();
    assert_eq!(i, -1);
    let u: u8 = "8".parse().unwrap();
    assert_eq!(u, 8);
    let u: u16 = "16".parse().unwrap();
    assert_eq!(u, 16);
    let u: u32 = "32".parse().unwrap();
    assert_eq!(u, 32);
    let u: u64 = "64".parse().unwrap();
    assert_eq!(u, 64);
    let u: u128 = "128".parse().unwrap();
    assert_eq!(u, 128);
    let u: usize = "1".parse().unwrap();
    assert_eq!(u, 1);
    let f: f32 = "0.5".parse().unwrap();
    assert_eq!(f, 0.5);
    let f: f64 = "2.5".parse().unwrap();
    assert_eq!(f, 2.5);
    let b: bool = "true".parse().unwrap();
    assert_eq!(b, true);
    let c: char = "c".parse().unwrap();
    assert_eq!(c, 'c');
    let s: String = "s".parse().unwrap();
    assert_eq!(s, "s");
    // the turbofish, compared both ways round
    assert_eq!("7".parse::<u32>().unwrap(), 7);
    assert!(7 == "7".parse::<i64>().unwrap());
    assert!("1.5".parse::<f64>().unwrap() > 1.0);
    // `assert_eq!(n, "5".parse().unwrap())` with nothing naming the parsed type is ambiguous in
    // every crate with serde_json in its build (its `PartialEq<Value>` impls on the number
    // types), so the README's Install says to name the type; no other dependency may add more
}

#[test]
fn sums_and_products() {
    let v = vec![1, 2, 3];
    let total: i32 = v.iter().sum();
    assert_eq!(total, 6);
    assert_eq!(v.iter().sum::<i32>(), 6);
    assert_eq!(v.iter().copied().product::<i32>(), 6);
    let range: u64 = (1..=4).sum();
    assert_eq!(range, 10);
    let floats: f64 = [0.5, 1.5].iter().sum();
    assert_eq!(floats, 2.0);
    let lengths: usize = ["ab", "c"].iter().map(|s| s.len()).sum();
    assert_eq!(lengths, 3);
}

#[test]
fn collections() {
    let s: String = vec!["a", "b"].into_iter().collect();
    assert_eq!(s, "ab");
    let reversed = "abc".chars().rev().collect::<String>();
    assert_eq!(reversed, "cba");
    let from_strings: String = vec![String::from("x"), String::from("y")].concat();
    assert_eq!(from_strings, "xy");
    let joined = ["a", "b"].join(",");
    assert_eq!(joined, "a,b");
    let doubled: Vec<_> = [1, 2].iter().map(|n| n * 2).collect();
    assert_eq!(doubled, [2, 4]);
    assert_eq!(doubled, vec![2, 4]);
    let words = "b a".split(' ').collect::<Vec<_>>();
    assert_eq!(words, ["b", "a"]);
    let map: HashMap<_, _> = [("a", 1), ("b", 2)].into_iter().collect();
    assert_eq!(map["a"], 1);
    let owned: HashMap<String, usize> = ["ab", "c"]
        .iter()
        .map(|s| (s.to_string(), s.len()))
        .collect();
    assert_eq!(owned.get("ab"), Some(&2));
    let sorted: BTreeMap<_, _> = map.iter().map(|(k, v)| (*v, *k)).collect();
    assert_eq!(sorted.values().collect::<Vec<_>>(), [&"a", &"b"]);
    let set: HashSet<char> = "aba".chars().collect();
    assert_eq!(set.len(), 2);
    let parsed: Result<Vec<i32>, _> = ["1", "2"].iter().map(|s| s.parse::<i32>()).collect();
    assert_eq!(parsed.unwrap(), [1, 2]);
    let maybe: Option<Vec<u8>> = [Some(1), Some(2)].into_iter().collect();
    assert_eq!(maybe, Some(vec![1, 2]));
}

fn question_marks(text: &str) -> Result<u32, Box<dyn Error>> {
    let n: u32 = text.parse()?;
    let value: serde_json::Value = serde_json::from_str("{\"k\":1}")?;
    let request: toolnexus::Request =
        serde_json::from_str(r#"{"id":"r","kind":"input","prompt":"p"}"#)?;
    std::fs::metadata(".")?;
    if request.id != "r" || value["k"] != 1 {
        return Err("unexpected".into());
    }
    Ok(n)
}

fn question_mark_to_string(text: &str) -> Result<u32, String> {
    let n = text.parse::<u32>().map_err(|e| e.to_string())?;
    if n == 0 {
        Err("zero")?;
    }
    Ok(n)
}

async fn question_mark_to_toolnexus() -> Result<(), toolnexus::Error> {
    let toolkit = toolnexus::Toolkit::builder().build()?;
    assert!(toolkit.specs().is_empty());
    Ok(())
}

#[tokio::test]
async fn question_mark_conversions() {
    assert_eq!(question_marks("3").unwrap(), 3);
    assert!(question_marks("x").is_err());
    assert_eq!(question_mark_to_string("4"), Ok(4));
    assert_eq!(question_mark_to_string("0"), Err("zero".to_owned()));
    question_mark_to_toolnexus().await.unwrap();
}

#[test]
fn serde_json_keeps_its_own_key_order() {
    // toolnexus turns on no serde_json feature: this crate's maps keep serde_json's default
    // order (sorted), whatever order they were written in
    let value = serde_json::json!({"b": 1, "a": {"d": 2, "c": [3]}});
    assert_eq!(
        serde_json::to_string(&value).unwrap(),
        r#"{"a":{"c":[3],"d":2},"b":1}"#
    );
}

#[tokio::test]
async fn what_root_methods_take_is_at_the_root() {
    use std::sync::{Arc, Mutex};
    use toolnexus::{
        Answer, BeforeTool, Client, DeclineReason, FnTool, Metric, PendingRun, Reply, Request,
        ScriptedModel, SealKey, ToolResult, Toolkit,
    };

    let ask = FnTool::builder("ask")
        .description("Asks.")
        .handler(|_, _| async { ToolResult::suspended(Request::input("Name?").with_id("r1")) })
        .build()
        .unwrap();
    let toolkit = Toolkit::builder().tool(ask).build().unwrap();
    let tools = Arc::new(Mutex::new(0));
    let seen = Arc::clone(&tools);
    let client = Client::builder(ScriptedModel::new([Reply::tool_call(
        "ask",
        serde_json::json!({}),
    )]))
    .model_name("m")
    .before_tool(|_| async { BeforeTool::Continue })
    .on_metric(move |m: &Metric| {
        if matches!(m, Metric::Tool { .. }) {
            *seen.lock().unwrap() += 1;
        }
    })
    .build()
    .unwrap();
    let halted = client.run("hi", &toolkit).await.unwrap();
    assert_eq!(*tools.lock().unwrap(), 1);

    let key = SealKey::new("k1", [7u8; 32]).unwrap();
    let sealed = PendingRun::try_from(&halted).unwrap().seal(&key);
    let record = PendingRun::open(&sealed, &key).unwrap();
    assert_eq!(record.pending().id, "r1");
    let declined: Answer = record.pending().decline(DeclineReason::Cancelled);
    assert!(!declined.ok);
}
