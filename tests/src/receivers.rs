//! Real receivers of notifications on 127.0.0.1: an HTTP webhook receiver (a small HTTP/1.1
//! server on a tokio socket) that refuses or stalls its first deliveries, checks each
//! signature as the docs tell a receiver to, and drops duplicates by notification id.

// the panics are the assertions of a test suite
#![allow(clippy::missing_panics_doc)]

use std::collections::BTreeSet;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

/// The secret the receiver checks signatures with.
pub const SECRET: &[u8] = b"the receiver's shared secret";

/// What the receiver does with the next request.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Reply {
    /// `200 OK`.
    Ok,
    /// This status, no body.
    Status(u16),
    /// Reads the request and never answers (a receiver that hangs mid-delivery).
    Stall,
}

#[derive(Default)]
struct State {
    /// Replies for the first requests, in order; then `200`.
    script: Vec<Reply>,
    /// Every request: its parsed body and whether its signature checked.
    requests: Vec<(Value, bool)>,
    /// The notification ids handled (a duplicate is dropped).
    seen: BTreeSet<String>,
    /// The notifications handled, once each, in order.
    handled: Vec<Value>,
}

/// A webhook receiver on 127.0.0.1; stops when dropped.
#[derive(Clone)]
#[allow(missing_debug_implementations)] // its state is the test's to read, through methods
pub struct HttpReceiver {
    /// Its URL (`http://127.0.0.1:<port>/hook`).
    pub url: String,
    state: Arc<Mutex<State>>,
    task: Arc<tokio::task::JoinHandle<()>>,
}

impl Drop for HttpReceiver {
    fn drop(&mut self) {
        if Arc::strong_count(&self.task) == 1 {
            self.task.abort();
        }
    }
}

impl HttpReceiver {
    /// Starts a receiver replying `script` to its first requests, then `200`.
    pub async fn start(script: Vec<Reply>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let url = format!("http://{}/hook", listener.local_addr().expect("addr"));
        let state = Arc::new(Mutex::new(State {
            script,
            ..State::default()
        }));
        let task = tokio::spawn({
            let state = state.clone();
            async move {
                loop {
                    let Ok((socket, _)) = listener.accept().await else {
                        return;
                    };
                    tokio::spawn(serve(socket, state.clone()));
                }
            }
        });
        Self {
            url,
            state,
            task: Arc::new(task),
        }
    }

    /// Every request received (duplicates too), as `(body, signature checked)`.
    pub fn requests(&self) -> Vec<(Value, bool)> {
        self.state.lock().unwrap().requests.clone()
    }

    /// The notifications handled, each once (a duplicate id dropped).
    pub fn handled(&self) -> Vec<Value> {
        self.state.lock().unwrap().handled.clone()
    }

    /// Waits until `n` notifications were handled, at most `timeout`; returns them.
    pub async fn wait_handled(&self, n: usize, timeout: Duration) -> Vec<Value> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let handled = self.handled();
            if handled.len() >= n || tokio::time::Instant::now() >= deadline {
                return handled;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    }
}

/// The value of header `name` in `head` (case-insensitive).
fn header<'a>(head: &'a str, name: &str) -> Option<&'a str> {
    head.lines().find_map(|line| {
        let (k, v) = line.split_once(':')?;
        k.trim().eq_ignore_ascii_case(name).then(|| v.trim())
    })
}

async fn serve(mut socket: TcpStream, state: Arc<Mutex<State>>) {
    loop {
        let mut buf = Vec::new();
        let mut chunk = [0u8; 4096];
        let head_end = loop {
            if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
                break i + 4;
            }
            match socket.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        };
        let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
        let len: usize = header(&head, "content-length")
            .and_then(|v| v.parse().ok())
            .unwrap_or(0);
        while buf.len() < head_end + len {
            match socket.read(&mut chunk).await {
                Ok(0) | Err(_) => return,
                Ok(n) => buf.extend_from_slice(&chunk[..n]),
            }
        }
        let body = &buf[head_end..head_end + len];
        // the receiver's check, as the docs of `toolnexus::notify::sign` tell it
        let now = SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .unwrap()
            .as_secs();
        let signed = toolnexus::notify::verify(
            SECRET,
            header(&head, toolnexus::notify::TIMESTAMP_HEADER).unwrap_or(""),
            body,
            header(&head, toolnexus::notify::SIGNATURE_HEADER).unwrap_or(""),
            now,
            300,
        );
        let value: Value = serde_json::from_slice(body).unwrap_or(Value::Null);
        let reply = {
            let mut s = state.lock().unwrap();
            s.requests.push((value.clone(), signed));
            let reply = if s.script.is_empty() {
                Reply::Ok
            } else {
                s.script.remove(0)
            };
            if reply == Reply::Ok && signed {
                let id = value["notification"].as_str().unwrap_or("").to_owned();
                if s.seen.insert(id) {
                    s.handled.push(value);
                }
            }
            reply
        };
        let status = match reply {
            Reply::Ok if signed => "200 OK",
            Reply::Ok => "401 Unauthorized",
            Reply::Status(503) => "503 Service Unavailable",
            Reply::Status(400) => "400 Bad Request",
            Reply::Status(_) => "500 Internal Server Error",
            Reply::Stall => {
                // hold the connection open, answer nothing
                tokio::time::sleep(Duration::from_secs(3600)).await;
                return;
            }
        };
        let out = format!("HTTP/1.1 {status}\r\ncontent-length: 0\r\n\r\n");
        if socket.write_all(out.as_bytes()).await.is_err() {
            return;
        }
    }
}
