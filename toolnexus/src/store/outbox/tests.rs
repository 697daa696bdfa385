//! The outbox's decisions and its in-memory table, without a store.

use std::time::Duration;

use super::decide::{Claiming, Recording, due_at, listing_order};
use super::{Attempt, MemRows, Notification, NotificationState, OutboxState};
use crate::store::{StoreError, from_millis};

/// The park's notifications of request `r1` (run `run`) at `at` ms, for `names`.
fn parked(names: &[&str], at: i64) -> Vec<Notification> {
    OutboxState::of(names.iter().copied())
        .unwrap()
        .park_rows("run", "r1", at)
}

/// The notifier names `names`, owned.
fn names(names: &[&str]) -> Vec<String> {
    names.iter().map(|&s| s.to_owned()).collect()
}

/// A claim by `owner` of `limit` notifications for `names` at `now`, leased for 500 ms.
fn claiming<'c>(owner: &'c str, names: &'c [String], limit: usize, now: i64) -> Claiming<'c> {
    Claiming::new(owner, names, limit, Duration::from_millis(500), now)
}

fn ids(ns: &[Notification]) -> Vec<&str> {
    ns.iter().map(|n| n.id.as_str()).collect()
}

#[test]
fn a_claim_leases_until_now_plus_the_lease_and_saturates() {
    assert_eq!(claiming("w", &names(&["hook"]), 1, 1_000).until, 1_500);
    let huge = Claiming::new("w", &[], 1, Duration::MAX, i64::MAX - 10);
    assert_eq!(huge.until, i64::MAX);
    assert!(
        huge.takes_none(),
        "no notifier named: nothing to ask the store"
    );
    assert!(
        claiming("w", &names(&["hook"]), 0, 0).takes_none(),
        "a limit of 0"
    );
    assert!(!claiming("w", &names(&["hook"]), 1, 0).takes_none());
}

#[test]
fn a_claim_takes_only_pending_due_unleased_notifications_of_its_notifiers() {
    let hook = names(&["hook"]);
    let c = claiming("w", &hook, 10, 1_000);
    let [n] = parked(&["hook"], 1_000).try_into().unwrap();
    assert!(c.takes(&n, None), "due at its next_at");
    assert!(c.takes(&n, Some(999)), "its lease ran out");
    assert!(!c.takes(&n, Some(1_000)), "its lease ends now: still held");
    let mut later = n.clone();
    later.next_at = from_millis(1_001);
    assert!(!c.takes(&later, None), "not due yet");
    let mut other = n.clone();
    other.notifier = "email".to_owned();
    assert!(!c.takes(&other, None), "another notifier's");
    for state in [
        NotificationState::Delivered,
        NotificationState::GivenUp,
        NotificationState::Skipped,
    ] {
        let mut done = n.clone();
        done.state = state;
        assert!(!c.takes(&done, None), "{state:?} is not claimed again");
    }
}

#[test]
fn a_claim_counts_an_attempt_and_leases_to_its_owner() {
    let hook = names(&["hook"]);
    let c = claiming("deliverer-1", &hook, 10, 1_000);
    let [mut n] = parked(&["hook"], 1_000).try_into().unwrap();
    assert_eq!(c.take(&mut n), 1_500);
    assert_eq!(
        (n.attempts, n.lease_owner.as_deref()),
        (1, Some("deliverer-1"))
    );
    c.take(&mut n);
    assert_eq!(n.attempts, 2, "each claim begins one more attempt");
}

#[test]
fn a_claim_picks_the_oldest_due_first_up_to_its_limit() {
    let mut table = MemRows::default();
    let mut rows = parked(&["a", "b", "c"], 1_000);
    rows[0].next_at = from_millis(900); // a: due first
    rows[2].next_at = from_millis(2_000); // c: not due
    table.insert(rows);
    let took = table.claim(&claiming("w", &names(&["a", "b", "c"]), 1, 1_000));
    assert_eq!(ids(&took), ["r1.parked.a"]);
    let took = table.claim(&claiming("w", &names(&["a", "b", "c"]), 5, 1_000));
    assert_eq!(ids(&took), ["r1.parked.b"], "a is leased now; c not due");
    assert!(
        table
            .claim(&claiming("v", &names(&["a", "b", "c"]), 5, 1_400))
            .is_empty(),
        "leases hold until 1500"
    );
    let took = table.claim(&claiming("v", &names(&["a", "b", "c"]), 5, 2_000));
    assert_eq!(
        ids(&took),
        ["r1.parked.a", "r1.parked.b", "r1.parked.c"],
        "leases ran out: taken again, by next_at then id"
    );
    assert_eq!(
        took.iter().map(|n| n.attempts).collect::<Vec<_>>(),
        [2, 2, 1]
    );
}

#[test]
fn a_park_written_twice_keeps_the_first_rows() {
    let mut table = MemRows::default();
    table.insert(parked(&["hook"], 1_000));
    table.claim(&claiming("w", &names(&["hook"]), 1, 1_000));
    table.insert(parked(&["hook"], 5_000));
    let [n] = table.of_run("run").try_into().unwrap();
    assert_eq!((n.attempts, n.created_at), (1, from_millis(1_000)));
}

/// A notification claimed by `w` at 1000 and an attempt recorded at 1200.
fn claimed() -> (MemRows, Notification) {
    let mut table = MemRows::default();
    table.insert(parked(&["hook"], 1_000));
    let [n] = table
        .claim(&claiming("w", &names(&["hook"]), 1, 1_000))
        .try_into()
        .unwrap();
    (table, n)
}

#[test]
fn recording_a_retry_frees_the_row_for_later_and_keeps_the_error() {
    let (mut table, n) = claimed();
    let retry = Attempt::Retry {
        error: "503".to_owned(),
        at: from_millis(9_000),
    };
    let r = Recording::of(&n, "w", &retry, 1_200);
    assert_eq!(r.next_at(), Some(9_000));
    assert!(r.event.contains(r#""outcome":"retry""#), "{}", r.event);
    assert!(r.event.contains(r#""attempt":1"#), "{}", r.event);
    assert!(table.record(&r));
    let [row] = table.of_run("run").try_into().unwrap();
    assert_eq!(
        (row.state, row.next_at, row.lease_owner, row.attempts),
        (NotificationState::Pending, from_millis(9_000), None, 1)
    );
    assert_eq!(table.next_due(), Some(9_000), "due again at the retry");
}

#[test]
fn recording_delivered_clears_the_error_and_keeps_next_at() {
    let (mut table, n) = claimed();
    let r = Recording::of(&n, "w", &Attempt::Delivered, 1_200);
    assert_eq!(r.next_at(), None, "next_at kept");
    assert!(table.record(&r));
    let [row] = table.of_run("run").try_into().unwrap();
    assert_eq!(
        (row.state, row.next_at, row.last_error),
        (NotificationState::Delivered, from_millis(1_000), None)
    );
    assert_eq!(table.next_due(), None, "nothing pending");
}

#[test]
fn recording_is_refused_to_another_owner_a_stale_attempt_or_a_recorded_one() {
    let (mut table, n) = claimed();
    let gave_up = Attempt::GaveUp {
        error: "410".to_owned(),
    };
    let stranger = Recording::of(&n, "v", &gave_up, 1_200);
    assert!(!table.record(&stranger), "not v's lease");
    let mut stale = n.clone();
    stale.attempts = 0;
    assert!(!table.record(&Recording::of(&stale, "w", &gave_up, 1_200)));
    let mine = Recording::of(&n, "w", &gave_up, 1_200);
    assert!(table.record(&mine));
    assert!(!table.record(&mine), "recorded already: no longer pending");
    assert_eq!(
        mine.lost(),
        StoreError::LeaseLost {
            run_id: "run".to_owned()
        }
    );
    let mut gone = n;
    gone.id = "r9.parked.hook".to_owned();
    assert!(!table.record(&Recording::of(&gone, "w", &gave_up, 1_200)));
    let [row] = table.of_run("run").try_into().unwrap();
    assert_eq!(
        (row.state, row.last_error.as_deref()),
        (NotificationState::GivenUp, Some("410"))
    );
}

#[test]
fn a_skipped_attempt_records_why() {
    let (mut table, n) = claimed();
    let skipped = Attempt::Skipped {
        why: "answered".to_owned(),
    };
    let r = Recording::of(&n, "w", &skipped, 1_200);
    assert!(r.event.contains(r#""outcome":"skipped""#), "{}", r.event);
    assert!(table.record(&r));
    let [row] = table.of_run("run").try_into().unwrap();
    assert_eq!(
        (row.state, row.last_error.as_deref(), row.lease_owner),
        (NotificationState::Skipped, Some("answered"), None)
    );
}

#[test]
fn a_pending_notification_is_due_at_its_next_at_or_its_lease_end_whichever_is_later() {
    let [mut n] = parked(&["hook"], 1_000).try_into().unwrap();
    assert_eq!(due_at(&n, None), Some(1_000));
    assert_eq!(due_at(&n, Some(1_500)), Some(1_500));
    assert_eq!(due_at(&n, Some(500)), Some(1_000));
    n.state = NotificationState::Delivered;
    assert_eq!(due_at(&n, None), None);
}

#[test]
fn a_runs_notifications_list_oldest_first_then_by_id() {
    let mut table = MemRows::default();
    let mut later = OutboxState::of(["a"])
        .unwrap()
        .park_rows("run", "r2", 2_000);
    later.extend(parked(&["b", "a"], 1_000));
    later.extend(OutboxState::of(["a"]).unwrap().park_rows("other", "r3", 0));
    table.insert(later);
    let listed = table.of_run("run");
    assert_eq!(ids(&listed), ["r1.parked.a", "r1.parked.b", "r2.parked.a"]);
    assert!(
        listed
            .windows(2)
            .all(|w| listing_order(&w[0], &w[1]).is_lt())
    );
}
