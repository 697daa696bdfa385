//! Prints request and run ids made by one process, for the cross-process uniqueness test
//! (`tests/tests/durable/ids.rs`, in the `store` binary): `request_ids <count> <start at, unix epoch ms>` waits until
//! the start instant (so that concurrent processes make their ids in the same milliseconds),
//! then prints `count` ids of `toolnexus::request::new_request_id`, one a line.

use std::time::{Duration, SystemTime, UNIX_EPOCH};

pub(crate) fn main() {
    let mut args = std::env::args().skip(2);
    let count: usize = args
        .next()
        .and_then(|a| a.parse().ok())
        .expect("usage: request_ids <count> <start at ms>");
    let start: u128 = args
        .next()
        .and_then(|a| a.parse().ok())
        .expect("usage: request_ids <count> <start at ms>");
    let now = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .expect("clock after 1970")
        .as_millis();
    if let Some(wait) = start.checked_sub(now) {
        std::thread::sleep(Duration::from_millis(u64::try_from(wait).unwrap_or(0)));
    }
    let ids: Vec<String> = (0..count)
        .map(|_| toolnexus::request::new_request_id())
        .collect();
    println!("{}", ids.join("\n"));
}
