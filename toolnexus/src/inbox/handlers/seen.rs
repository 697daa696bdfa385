//! The desk's "new since you last looked": a cookie holding when this browser (or API client
//! keeping cookies) last read the list; the list marks the requests made after it as new and
//! moves the cookie to now.

use std::time::SystemTime;

use axum::http::request::Parts;
use axum::http::{HeaderValue, header};
use axum::response::Response;

use crate::store::{from_millis, millis};

/// The cookie: `toolnexus_seen=<unix ms>`.
const SEEN: &str = "toolnexus_seen";

/// The values of the request's cookies named `name`, in order.
pub(super) fn cookies<'a>(parts: &'a Parts, name: &'a str) -> impl Iterator<Item = &'a str> {
    parts
        .headers
        .get_all(header::COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(';'))
        .filter_map(|c| c.trim().split_once('='))
        .filter(move |(k, _)| *k == name)
        .map(|(_, v)| v)
}

/// When the caller last looked at the list (`None`: never, so everything is new).
pub(super) fn last_seen(parts: &Parts) -> Option<SystemTime> {
    cookies(parts, SEEN)
        .next()
        .and_then(|v| v.parse::<i64>().ok())
        .filter(|ms| *ms >= 0)
        .map(from_millis)
}

/// Whether a request made at `created_at` is new to a caller who last looked at `seen`.
pub(super) fn is_new(seen: Option<SystemTime>, created_at: SystemTime) -> bool {
    seen.is_none_or(|seen| created_at > seen)
}

/// Remembers, in the response, that the caller looked at the list at `now` (the cookie scoped
/// to the inbox's mount point `prefix`).
pub(super) fn looked(mut response: Response, prefix: &str, now: SystemTime) -> Response {
    let path = if prefix.is_empty() { "/" } else { prefix };
    let cookie = format!(
        "{SEEN}={}; Path={path}; HttpOnly; SameSite=Strict; Max-Age=31536000",
        millis(now)
    );
    if let Ok(v) = HeaderValue::from_str(&cookie) {
        response.headers_mut().append(header::SET_COOKIE, v);
    }
    response
}
