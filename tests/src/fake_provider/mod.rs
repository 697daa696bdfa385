//! A fake LLM provider: a real HTTP/1.1 server on `127.0.0.1` that speaks the OpenAI and
//! Anthropic wire formats (whole JSON replies and server-sent events), answers from a script,
//! and records every request (method, path, headers, body).
//!
//! ```ignore
//! use toolnexus_tests::fake_provider::{FakeProvider, FakeReply, openai};
//!
//! # tokio::runtime::Builder::new_current_thread().enable_all().build().unwrap().block_on(async {
//! let fake = FakeProvider::start().await;
//! fake.push(FakeReply::json(openai::text("hi", 3, 1)));
//! // point a provider at `fake.url()`, then inspect `fake.requests()`
//! assert!(fake.url().starts_with("http://127.0.0.1:"));
//! # });
//! ```

use std::collections::VecDeque;
use std::fmt::Write as _;
use std::net::SocketAddr;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};
use tokio::task::JoinHandle;
use toolnexus::{HttpProvider, providers::HttpProviderBuilder};

/// One request the fake received.
#[derive(Clone, Debug)]
pub struct RecordedRequest {
    /// `POST`, ...
    pub method: String,
    /// The request target, e.g. `/v1/chat/completions`.
    pub path: String,
    /// The headers in arrival order, names lowercased.
    pub headers: Vec<(String, String)>,
    /// The body as text.
    pub raw_body: String,
    /// The body as JSON (`Value::Null` when it is not JSON).
    pub body: Value,
    /// When the request was fully read.
    pub received_at: Instant,
}

impl RecordedRequest {
    /// The value of header `name` (case-insensitive), if sent.
    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers
            .iter()
            .find(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// The whole request as it came over the wire, head and body (to search for secrets).
    pub fn wire_text(&self) -> String {
        let mut text = format!("{} {}\n", self.method, self.path);
        for (k, v) in &self.headers {
            let _ = writeln!(text, "{k}: {v}");
        }
        text.push('\n');
        text.push_str(&self.raw_body);
        text
    }
}

/// One server-sent event.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SseEvent {
    /// The `event:` name, if any.
    pub event: Option<String>,
    /// The `data:` payload (one line).
    pub data: String,
}

impl SseEvent {
    /// An event with only `data:`.
    pub fn data(data: impl Into<String>) -> Self {
        Self {
            event: None,
            data: data.into(),
        }
    }

    /// An event with `event:` and `data:` (JSON).
    pub fn named(event: impl Into<String>, data: &Value) -> Self {
        Self {
            event: Some(event.into()),
            data: data.to_string(),
        }
    }

    fn wire(&self) -> String {
        match &self.event {
            Some(name) => format!("event: {name}\ndata: {}\n\n", self.data),
            None => format!("data: {}\n\n", self.data),
        }
    }
}

/// What the fake answers to one request.
#[derive(Clone, Debug)]
pub enum FakeReply {
    /// A whole JSON body.
    Json {
        /// The HTTP status.
        status: u16,
        /// Extra response headers.
        headers: Vec<(String, String)>,
        /// The body.
        body: Value,
    },
    /// `text/event-stream` with chunked transfer encoding, one chunk per event.
    Sse {
        /// The events.
        events: Vec<SseEvent>,
        /// Drop the connection after this many events, without ending the chunked body.
        break_after: Option<usize>,
        /// A pause after each event.
        delay: Duration,
    },
    /// A head, then a chunked body: `start`, then `piece` written `times` times (`None`:
    /// until the client goes away) with `pause` after each. For trickled, endless and
    /// very large bodies, and plain-text errors; the body is generated as it is written.
    Drip {
        /// The HTTP status.
        status: u16,
        /// The `content-type`.
        content_type: String,
        /// Written once, first.
        start: String,
        /// Written again and again.
        piece: String,
        /// How often `piece` is written (`None`: forever).
        times: Option<u64>,
        /// A pause after each piece.
        pause: Duration,
    },
    /// Read the request, then never answer (until the client goes away).
    Hang,
    /// Read the request, then close the connection without a response.
    Close,
}

impl FakeReply {
    /// `200` with a JSON body.
    pub fn json(body: Value) -> Self {
        Self::status(200, body)
    }

    /// A status with a JSON body.
    pub fn status(status: u16, body: Value) -> Self {
        Self::Json {
            status,
            headers: Vec::new(),
            body,
        }
    }

    /// A status with the `{"error":{"message"}}` body both styles use.
    pub fn error(status: u16, message: &str) -> Self {
        Self::status(
            status,
            serde_json::json!({"error": {"message": message, "type": "fake_error"}}),
        )
    }

    /// A stream of events.
    pub fn sse(events: Vec<SseEvent>) -> Self {
        Self::Sse {
            events,
            break_after: None,
            delay: Duration::ZERO,
        }
    }

    /// A whole plain-text body with a status.
    pub fn text(status: u16, body: &str) -> Self {
        Self::Drip {
            status,
            content_type: "text/plain".to_owned(),
            start: body.to_owned(),
            piece: String::new(),
            times: Some(0),
            pause: Duration::ZERO,
        }
    }

    /// A body of `content_type` made of `piece` repeated `times` times (`None`: forever),
    /// with `pause` after each piece.
    pub fn drip(
        status: u16,
        content_type: &str,
        piece: &str,
        times: Option<u64>,
        pause: Duration,
    ) -> Self {
        Self::Drip {
            status,
            content_type: content_type.to_owned(),
            start: String::new(),
            piece: piece.to_owned(),
            times,
            pause,
        }
    }

    /// The same reply with a response header (JSON replies only).
    #[must_use]
    pub fn with_header(mut self, name: &str, value: &str) -> Self {
        if let Self::Json { headers, .. } = &mut self {
            headers.push((name.to_owned(), value.to_owned()));
        }
        self
    }

    /// The same stream, broken after `n` events (streams only).
    #[must_use]
    pub fn break_after(mut self, n: usize) -> Self {
        if let Self::Sse { break_after, .. } = &mut self {
            *break_after = Some(n);
        }
        self
    }

    /// The same stream with a pause after each event (streams only).
    #[must_use]
    pub fn with_delay(mut self, pause: Duration) -> Self {
        if let Self::Sse { delay, .. } = &mut self {
            *delay = pause;
        }
        self
    }
}

#[derive(Default)]
struct Shared {
    replies: Mutex<VecDeque<FakeReply>>,
    requests: Mutex<Vec<RecordedRequest>>,
    /// Body bytes written by `Drip` replies.
    dripped: std::sync::atomic::AtomicU64,
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The fake provider; stops when dropped.
#[derive(Debug)]
pub struct FakeProvider {
    addr: SocketAddr,
    shared: Arc<Shared>,
    task: JoinHandle<()>,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Shared").finish_non_exhaustive()
    }
}

impl FakeProvider {
    /// Binds `127.0.0.1` on a free port and starts serving.
    ///
    /// # Panics
    ///
    /// When no local port can be bound.
    pub async fn start() -> Self {
        let listener = TcpListener::bind("127.0.0.1:0")
            .await
            .expect("bind 127.0.0.1");
        let addr = listener.local_addr().expect("local addr");
        let shared = Arc::new(Shared::default());
        let state = shared.clone();
        let task = tokio::spawn(async move {
            while let Ok((socket, _)) = listener.accept().await {
                tokio::spawn(serve(socket, state.clone()));
            }
        });
        Self { addr, shared, task }
    }

    /// [`start`](Self::start)s a fake that answers with `replies`, in order.
    ///
    /// # Panics
    ///
    /// When no local port can be bound.
    pub async fn scripted(replies: impl IntoIterator<Item = FakeReply>) -> Self {
        let fake = Self::start().await;
        fake.script(replies);
        fake
    }

    /// `http://127.0.0.1:<port>`: the base URL for either style (append `/v1` for OpenAI-style
    /// clients if you like; the fake answers on any path).
    pub fn url(&self) -> String {
        format!("http://{}", self.addr)
    }

    /// Queues a reply; requests take replies in order. With the queue empty the fake answers
    /// `500` with `fake provider: no scripted reply left`.
    pub fn push(&self, reply: FakeReply) {
        lock(&self.shared.replies).push_back(reply);
    }

    /// Queues several replies.
    pub fn script(&self, replies: impl IntoIterator<Item = FakeReply>) {
        lock(&self.shared.replies).extend(replies);
    }

    /// Every request received so far, in order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        lock(&self.shared.requests).clone()
    }

    /// How many body bytes [`FakeReply::Drip`] replies have written so far (the client read
    /// at most this much, plus what socket buffers hold).
    pub fn bytes_dripped(&self) -> u64 {
        self.shared
            .dripped
            .load(std::sync::atomic::Ordering::SeqCst)
    }

    /// How many replies are still queued.
    pub fn remaining(&self) -> usize {
        lock(&self.shared.replies).len()
    }

    /// An OpenAI-style provider aimed at this fake, with `key`.
    pub fn openai(&self, key: &str) -> HttpProviderBuilder {
        HttpProvider::openai(self.url()).api_key(key)
    }

    /// An Anthropic-style provider aimed at this fake, with `key`.
    pub fn anthropic(&self, key: &str) -> HttpProviderBuilder {
        HttpProvider::anthropic(self.url()).api_key(key)
    }
}

impl Drop for FakeProvider {
    fn drop(&mut self) {
        self.task.abort();
    }
}

async fn serve(mut socket: TcpStream, shared: Arc<Shared>) {
    let Some(request) = read_request(&mut socket).await else {
        return;
    };
    lock(&shared.requests).push(request);
    let reply = lock(&shared.replies)
        .pop_front()
        .unwrap_or_else(|| FakeReply::error(500, "fake provider: no scripted reply left"));
    // the client may hang up early (a timeout, a cancellation): write errors end the task
    let _ = respond(&mut socket, reply, &shared.dripped).await;
}

async fn read_request(socket: &mut TcpStream) -> Option<RecordedRequest> {
    let mut buf = Vec::new();
    let mut chunk = [0u8; 4096];
    let head_end = loop {
        if let Some(i) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            break i;
        }
        let n = socket.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        buf.extend_from_slice(&chunk[..n]);
    };
    let head = String::from_utf8_lossy(&buf[..head_end]).into_owned();
    let mut lines = head.split("\r\n");
    let mut first = lines.next()?.split(' ');
    let method = first.next()?.to_owned();
    let path = first.next()?.to_owned();
    let headers: Vec<(String, String)> = lines
        .filter_map(|l| l.split_once(':'))
        .map(|(k, v)| (k.trim().to_ascii_lowercase(), v.trim().to_owned()))
        .collect();
    let length = headers
        .iter()
        .find(|(k, _)| k == "content-length")
        .and_then(|(_, v)| v.parse::<usize>().ok())
        .unwrap_or(0);
    let mut body = buf[head_end + 4..].to_vec();
    while body.len() < length {
        let n = socket.read(&mut chunk).await.ok()?;
        if n == 0 {
            return None;
        }
        body.extend_from_slice(&chunk[..n]);
    }
    let raw_body = String::from_utf8_lossy(&body).into_owned();
    Some(RecordedRequest {
        method,
        path,
        headers,
        body: serde_json::from_str(&raw_body).unwrap_or(Value::Null),
        raw_body,
        received_at: Instant::now(),
    })
}

fn reason(status: u16) -> &'static str {
    match status {
        200 => "OK",
        400 => "Bad Request",
        401 => "Unauthorized",
        418 => "I'm a teapot",
        429 => "Too Many Requests",
        500 => "Internal Server Error",
        502 => "Bad Gateway",
        503 => "Service Unavailable",
        504 => "Gateway Timeout",
        529 => "Overloaded",
        _ => "Status",
    }
}

async fn respond(
    socket: &mut TcpStream,
    reply: FakeReply,
    dripped: &std::sync::atomic::AtomicU64,
) -> std::io::Result<()> {
    match reply {
        FakeReply::Drip {
            status,
            content_type,
            start,
            piece,
            times,
            pause,
        } => {
            let head = format!(
                "HTTP/1.1 {status} {}\r\ncontent-type: {content_type}\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n",
                reason(status)
            );
            socket.write_all(head.as_bytes()).await?;
            socket.flush().await?;
            let mut write = async |text: &str| -> std::io::Result<()> {
                if text.is_empty() {
                    return Ok(());
                }
                socket
                    .write_all(format!("{:x}\r\n{text}\r\n", text.len()).as_bytes())
                    .await?;
                socket.flush().await?;
                dripped.fetch_add(text.len() as u64, std::sync::atomic::Ordering::SeqCst);
                Ok(())
            };
            write(&start).await?;
            let mut written = 0u64;
            while times.is_none_or(|n| written < n) {
                write(&piece).await?;
                written += 1;
                if !pause.is_zero() {
                    tokio::time::sleep(pause).await;
                }
            }
            socket.write_all(b"0\r\n\r\n").await?;
            socket.flush().await
        }
        FakeReply::Json {
            status,
            headers,
            body,
        } => {
            let body = body.to_string();
            let mut head = format!(
                "HTTP/1.1 {status} {}\r\ncontent-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n",
                reason(status),
                body.len()
            );
            for (k, v) in headers {
                let _ = write!(head, "{k}: {v}\r\n");
            }
            head.push_str("\r\n");
            socket.write_all(head.as_bytes()).await?;
            socket.write_all(body.as_bytes()).await?;
            socket.flush().await
        }
        FakeReply::Sse {
            events,
            break_after,
            delay,
        } => {
            socket
                .write_all(
                    b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\ncache-control: no-cache\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n",
                )
                .await?;
            socket.flush().await?;
            for (i, event) in events.iter().enumerate() {
                if break_after == Some(i) {
                    return Ok(()); // dropped without the final zero-length chunk
                }
                let payload = event.wire();
                socket
                    .write_all(format!("{:x}\r\n{payload}\r\n", payload.len()).as_bytes())
                    .await?;
                socket.flush().await?;
                if !delay.is_zero() {
                    tokio::time::sleep(delay).await;
                }
            }
            if break_after.is_some_and(|n| n >= events.len()) {
                return Ok(());
            }
            socket.write_all(b"0\r\n\r\n").await?;
            socket.flush().await
        }
        FakeReply::Hang => {
            // wait until the client hangs up
            let mut sink = [0u8; 64];
            while socket.read(&mut sink).await.is_ok_and(|n| n > 0) {}
            Ok(())
        }
        FakeReply::Close => Ok(()),
    }
}

pub mod anthropic;
pub mod openai;
