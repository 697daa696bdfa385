//! CONTRACT section 2: request ids are unique across processes (and machines), not only within
//! one process.

use std::collections::HashSet;
use std::process::{Command, Stdio};
use std::time::{SystemTime, UNIX_EPOCH};

const PROCESSES: usize = 50;
const IDS_EACH: usize = 200;

/// `sus-<ms>-<counter>-<16 lowercase hex digits>`.
fn well_formed(id: &str) -> bool {
    let parts: Vec<&str> = id.split('-').collect();
    parts.len() == 4
        && parts[0] == "sus"
        && parts[1].parse::<u64>().is_ok()
        && parts[2].parse::<u64>().is_ok_and(|n| n >= 1)
        && parts[3].len() == 16
        && parts[3]
            .bytes()
            .all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'))
}

#[test]
fn ids_made_by_50_concurrent_processes_are_all_distinct() {
    // all processes start making ids at the same instant, so their clocks and counters agree
    let start = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .unwrap()
        .as_millis()
        + 1500;
    let children: Vec<_> = (0..PROCESSES)
        .map(|_| {
            Command::new(env!("CARGO_BIN_EXE_helpers"))
                .args([
                    "request_ids".to_owned(),
                    IDS_EACH.to_string(),
                    start.to_string(),
                ])
                .stdout(Stdio::piped())
                .spawn()
                .expect("spawn request_ids")
        })
        .collect();
    let mut all = Vec::with_capacity(PROCESSES * IDS_EACH);
    for child in children {
        let out = child.wait_with_output().expect("request_ids ran");
        assert!(out.status.success(), "{:?}", out.status);
        let text = String::from_utf8(out.stdout).unwrap();
        let ids: Vec<String> = text.lines().map(str::to_owned).collect();
        assert_eq!(ids.len(), IDS_EACH);
        all.extend(ids);
    }
    let distinct: HashSet<&String> = all.iter().collect();
    assert_eq!(all.len() - distinct.len(), 0, "ids repeat across processes");
    for id in &all {
        assert!(well_formed(id), "malformed id {id:?}");
    }
    // the processes did make ids in the same milliseconds with the same counters: only the
    // random suffix tells them apart
    let prefixes: HashSet<&str> = all.iter().map(|id| &id[..id.rfind('-').unwrap()]).collect();
    assert!(
        prefixes.len() < all.len(),
        "no two processes shared a millisecond and a counter: the test proved nothing"
    );
}
