//! An answer page for parked runs (feature `inbox`): an embeddable [axum] [`Router`] that
//! lists the pending requests of any [`RunStore`], renders each as a form, checks the answer
//! on the server and records it ([`RunStore::submit`], with who gave it) and returns at once:
//! a [`Worker`](crate::worker::Worker) resumes the run, in this process or another. The page
//! never runs the model inside a request; the run's status page shows the outcome once the
//! run has moved on.
//!
//! Routes, relative to where the host mounts the router:
//!
//! | route | what |
//! |---|---|
//! | `GET /` | the pending requests, newest first, paged (`?page=2`), the ones made since the caller last looked marked new |
//! | `GET /r/{id}` | one request as a form |
//! | `POST /r/{id}` | the answer: checked and recorded; "Recorded. The assistant is continuing." |
//! | `GET /r/{id}/status?run=..` | the run's progress: continuing, or its outcome once it moved on |
//! | `GET /history` | the answered requests, newest first, paged (`?after=<cursor>`): who answered, when, the outcome |
//! | `GET /api/requests` | the list as JSON |
//! | `GET /api/requests/{id}` | one request as JSON |
//! | `POST /api/requests/{id}/answer` | answers with a JSON [`Answer`](crate::Answer) body (`{"ok":true,"data":{..}}`) |
//! | `GET /api/requests/{id}/status?run=..` | the run's progress as JSON |
//! | `GET /api/history` | the history as JSON (`?after=<cursor>`) |
//! | `GET /rules` | the [remembered decisions](crate::remember), newest first, paged (`?after=<cursor>`), each with a Revoke button; a damaged one by its id |
//! | `POST /rules/{id}/revoke` | revokes one (CSRF-checked like every form) |
//! | `GET /api/rules` | the remembered decisions as JSON (`?after=<cursor>`) |
//!
//! An approval's form offers to remember the decision ("the same answer from now on"): this
//! exact call or every call of the tool, in the run's conversation (when it is a
//! conversation's turn) or for the run's principal (each labelled with whose calls it
//! covers: "every call of this tool, for alice"), until revoked or for a while; the answer
//! then carries `data.remember`. A remembered decision covers the runs of the answered run's
//! principal, so the page offers it only to that principal (named by
//! [`InboxBuilder::answered_by`]) or to an answerer the host's [`InboxBuilder::grants`] check
//! allows to grant for them; a run for nobody offers only its conversation's rule, to
//! whoever may answer it. The JSON API takes the same `data.remember` and checks it the same
//! way (`403` for a rule the answerer may not make; nothing is recorded). `/rules` and `/api/rules` are
//! [`Target::Rules`]; `/api/rules` answers `{"rules":[{"id","effect","tool","scope","args",
//! "within","holder","until","createdAt","answeredBy","requestId","runId"}],"damaged":[{"id",
//! "reason"}],"next"}` (newest first, [`RULES_PAGE`] a page; `next`: the cursor of the next
//! page, for `?after=`; `damaged`: the rules of the page whose rows cannot be read), and a run's
//! `history` names the rule that decided a call (`{"event":"decided","rule",..}`).
//!
//! The JSON API answers `{"requests":[{"id","runId","kind","prompt","createdAt","expiresAt",
//! "agent","conversationId","history","link","new"}],"page","next"}` for the list (`new`: made
//! since this caller last looked at the list, kept in a `toolnexus_seen` cookie that each look at
//! the list, page or JSON, moves to now; the page marks them "new" and counts them),
//! `{"request","runId","state","agent","conversationId","history","notifications"}` for one
//! request (`notifications`: `[{"id","notifier","state","attempts","lastError"}]`, each
//! notifier's notification of the request, from the store's
//! [outbox](crate::store::outbox); `agent`:
//! the name its client was built with, [`ClientBuilder::agent_name`](crate::client::ClientBuilder::agent_name);
//! `conversationId`: the conversation the run is a turn of; each `null` when there is none;
//! `history`: the run's [events](crate::store::RunEvent), `[{"event","at",
//! "request"?,"by"?,"outcome"?}]`, RFC 3339 times), `{"runs":[{"runId","requestId","kind",
//! "prompt","state","agent","conversationId","answeredBy","answeredAt","decision","outcome",
//! "history"}],"damaged":[{"runId","reason"}],"next"}` for the history (`decision`: `approved`, `approved-with-changes`,
//! `answered`, `declined`, `cancelled`, `expired`, or `null` when the answer is no longer kept;
//! `outcome`: `done`, `incomplete`, `failed` once the run ended; `next`: the cursor of the next
//! page, for `?after=`), `202` with
//! `{"status":"recorded","runId","answeredBy","statusLink"}` for an answer, and
//! `{"runId","state","answeredBy","history","outcome","next","notifications"}` for the status (`outcome`:
//! `{"status","text"}` once finished; `next`: `{"request","link"}` once the run asks again);
//! errors are `{"error"}` (plus `"field"` for a wrong value, `422`) with the same status
//! codes as the pages.
//!
//! # Safe by default
//!
//! - **Nobody may answer unless the host says so.** A request is open to a caller holding a
//!   signed link ([`InboxBuilder::signed_links`]: HMAC-SHA-256 over the request id and the
//!   link's expiry, made with [`Inbox::link`]), or one the host's check admits
//!   ([`InboxBuilder::authorize`]); anonymous access only with [`InboxBuilder::allow_anonymous`].
//!   Anything else gets `403`.
//! - **CSRF.** Every form carries a token bound to the request and to a random
//!   `SameSite=Strict`, `HttpOnly` cookie; a `POST` without both gets `403`. The JSON API
//!   takes only `application/json` bodies (which a cross-site form cannot send).
//! - **Escaping.** Pages are [maud] templates: every prompt, value and message is HTML-escaped;
//!   an authorization `url` becomes a link only when it is `http(s)`.
//! - **The trust boundary.** A request the trust boundary refuses
//!   ([`check_request`](crate::boundary::check_request): any kind that carries a form, and every
//!   `input` or `question`) is never rendered and cannot be answered (`422`), even when its row
//!   was written past the loop's own check.
//! - **Expiry.** A request past its `expiresAt` shows as expired and cannot be answered (`410`).
//! - **Once.** The store records one answer per request; a second submit reads
//!   "already answered" (`409`).
//! - **Who answered.** Each recorded answer names who gave it ([`InboxBuilder::answered_by`],
//!   else how the caller got in: `signed link`, `authorized`, `anonymous`); the run's history
//!   keeps it.
//!
//! ```
//! use std::sync::Arc;
//! use toolnexus::inbox::Inbox;
//! use toolnexus::store::{MemoryStore, RunStore};
//!
//! let store: Arc<dyn RunStore> = Arc::new(MemoryStore::new());
//! let inbox = Inbox::builder(store)
//!     .signed_links(b"a host secret of 32 bytes or more".to_vec())
//!     .build()
//!     .unwrap();
//! let app: axum::Router = axum::Router::new().nest("/inbox", inbox.router());
//! let link = inbox.link("sus-1-1-abc", std::time::Duration::from_secs(3600)).unwrap();
//! assert!(link.starts_with("/r/sus-1-1-abc?exp="));
//! # let _ = app;
//! ```

pub(crate) mod fields;
mod groups;
mod handlers;
mod history;
mod pages;
mod together;
mod votes;
mod when;

use std::fmt;
use std::sync::Arc;
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use axum::Router;
use axum::http::request::Parts;
use hmac::{Hmac, KeyInit, Mac};
use sha2::Sha256;

use crate::error::Error;
use crate::store::RunStore;
use crate::util::{hex, unhex};

/// What a caller asks to see or answer, for the host's check ([`InboxBuilder::authorize`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[non_exhaustive]
pub enum Target<'a> {
    /// The list of pending requests (HTML or JSON).
    List,
    /// One request (its page, its JSON, or answering it), by request id.
    Request(&'a str),
    /// The history of answered requests (HTML or JSON): who answered what, when, and how each
    /// run went on. A check written before this target existed denies it (it matches
    /// [`List`](Target::List) only); admit it where the list is admitted.
    History,
    /// The [remembered decisions](crate::remember) (HTML or JSON), and revoking one. A check
    /// written before this target existed denies it; admit it for whoever may change what is
    /// answered without asking.
    Rules,
}

type AuthorizeFn = dyn Fn(&Parts, Target<'_>) -> bool + Send + Sync;
type AnsweredByFn = dyn Fn(&Parts) -> Option<String> + Send + Sync;
type GrantsFn = dyn Fn(&Parts, &str) -> bool + Send + Sync;

/// The rules per page of the rules page and `/api/rules`: 50 (newest first; `?after=<cursor>`
/// the next page).
pub const RULES_PAGE: usize = 50;

/// The default number of requests per list page: 20.
pub const DEFAULT_PAGE_SIZE: usize = 20;

/// The most pending requests the list reads from the store (newest first within them):
/// 10,000.
pub const MAX_LISTED: usize = 10_000;

/// The fewest bytes a signed-link key ([`InboxBuilder::signed_links`]) may have: 32.
pub const MIN_LINK_KEY_LEN: usize = 32;

/// The answer page: build it with [`Inbox::builder`], mount [`Inbox::router`] in an app.
#[derive(Clone)]
pub struct Inbox {
    shared: Arc<Shared>,
}

pub(crate) struct Shared {
    pub(crate) store: Arc<dyn RunStore>,
    link_key: Option<Vec<u8>>,
    csrf_key: [u8; 32],
    authorize: Option<Arc<AuthorizeFn>>,
    answered_by: Option<Arc<AnsweredByFn>>,
    grants: Option<Arc<GrantsFn>>,
    groups_of: Option<Arc<groups::GroupsOfFn>>,
    anonymous: bool,
    pub(crate) page_size: usize,
    pub(crate) link_ttl: Duration,
    pub(crate) title: String,
}

impl fmt::Debug for Inbox {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Inbox")
            .field("store", &self.shared.store)
            .field("signed_links", &self.shared.link_key.is_some())
            .field("authorize", &self.shared.authorize.is_some())
            .field("anonymous", &self.shared.anonymous)
            .finish_non_exhaustive()
    }
}

/// Builds an [`Inbox`]; see [`Inbox::builder`].
#[must_use = "a builder does nothing until `build` is called"]
pub struct InboxBuilder {
    store: Arc<dyn RunStore>,
    link_key: Option<Vec<u8>>,
    authorize: Option<Arc<AuthorizeFn>>,
    answered_by: Option<Arc<AnsweredByFn>>,
    grants: Option<Arc<GrantsFn>>,
    groups_of: Option<Arc<groups::GroupsOfFn>>,
    anonymous: bool,
    page_size: usize,
    link_ttl: Duration,
    title: String,
}

impl fmt::Debug for InboxBuilder {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("InboxBuilder").finish_non_exhaustive()
    }
}

impl Inbox {
    /// Starts an inbox over `store`. It records answers ([`RunStore::submit`]); a
    /// [`Worker`](crate::worker::Worker) over the same store resumes the runs.
    pub fn builder(store: Arc<dyn RunStore>) -> InboxBuilder {
        InboxBuilder {
            store,
            link_key: None,
            authorize: None,
            answered_by: None,
            grants: None,
            groups_of: None,
            anonymous: false,
            page_size: DEFAULT_PAGE_SIZE,
            link_ttl: Duration::from_secs(24 * 3600),
            title: "Requests".to_owned(),
        }
    }

    /// The router: mount it with [`Inbox::mount`], with `Router::nest("/prefix",
    /// inbox.router())`, or serve it as is. Links on its pages follow the mount point. (axum's
    /// `nest("/inbox", ..)` answers `/inbox` but not `/inbox/`; [`Inbox::mount`] answers both.)
    pub fn router(&self) -> Router {
        handlers::router(self.shared.clone())
    }

    /// The router mounted at `at` (`"/inbox"`), to [`merge`](Router::merge) into your app:
    /// the list at `at`, and at `at` with a trailing slash (a permanent redirect to `at`, so
    /// the page's links stay relative to one place).
    ///
    /// ```no_run
    /// # fn demo(inbox: toolnexus::inbox::Inbox) {
    /// let app = axum::Router::new().merge(inbox.mount("/inbox"));
    /// # let _: axum::Router = app;
    /// # }
    /// ```
    ///
    /// # Panics
    ///
    /// When `at` does not start with `/` or is `/` itself (serve [`Inbox::router`] as is
    /// for that), as `Router::nest` does.
    pub fn mount(&self, at: &str) -> Router {
        let at = at.trim_end_matches('/');
        assert!(
            at.starts_with('/'),
            "an inbox is mounted at a path that starts with `/` (and is not `/`): `/inbox`"
        );
        let to = at.to_owned();
        Router::new().nest(at, self.router()).route(
            &format!("{at}/"),
            axum::routing::get(move || async move { axum::response::Redirect::permanent(&to) }),
        )
    }

    /// A signed link to the page of request `request_id`, valid for `valid_for`, relative to the
    /// router's mount point (prefix it with where the router is mounted). `None` without
    /// [`InboxBuilder::signed_links`].
    pub fn link(&self, request_id: &str, valid_for: Duration) -> Option<String> {
        let exp = unix_secs(SystemTime::now() + valid_for);
        self.shared
            .signed_query(request_id, exp)
            .map(|q| format!("/r/{}?{q}", path_segment(request_id)))
    }
}

impl InboxBuilder {
    /// Grants access to a request to whoever holds a link signed with `key` (HMAC-SHA-256 over
    /// the request id and the link's expiry; see [`Inbox::link`]). Keep `key` secret: at least
    /// [`MIN_LINK_KEY_LEN`] (32) random bytes, or [`build`](Self::build) refuses it (with a
    /// short key anyone could mint links and answer any request). The key also seeds the CSRF
    /// tokens, so several processes that share it accept each other's forms.
    pub fn signed_links(mut self, key: impl Into<Vec<u8>>) -> Self {
        self.link_key = Some(key.into());
        self
    }

    /// Grants access by the host's own check: `f` sees the request's head (headers, cookies,
    /// URI, method: a `POST` answers) and what is asked for, and returns whether to allow it.
    /// Combined with signed links, either grants. The list page hands whoever it admits signed
    /// links to each request (when signed links are on).
    pub fn authorize<F>(mut self, f: F) -> Self
    where
        F: Fn(&Parts, Target<'_>) -> bool + Send + Sync + 'static,
    {
        self.authorize = Some(Arc::new(f));
        self
    }

    /// Names who answers, from the answering request's head (a session cookie, a header your
    /// proxy sets): kept with the answer in the run's history. When `f` gives `None`, or
    /// without it, the answer is `signed link`'s, `authorized`'s or `anonymous`'s, by how the
    /// caller got in.
    pub fn answered_by<F>(mut self, f: F) -> Self
    where
        F: Fn(&Parts) -> Option<String> + Send + Sync + 'static,
    {
        self.answered_by = Some(Arc::new(f));
        self
    }

    /// Lets an answerer make [remembered decisions](crate::remember) for the runs of a
    /// principal other than themselves (an operator, a delegate): `f` sees the answering
    /// request's head and the principal the run was started for
    /// ([`Client::for_principal`](crate::Client::for_principal)), and says whether the caller
    /// may grant standing permissions for that principal. Without it, an answerer named by
    /// [`answered_by`](Self::answered_by) may remember decisions for their own runs only.
    /// A granted answer is recorded with
    /// [`RunStore::submit_granting`]; the rule names
    /// the real answerer.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use toolnexus::inbox::Inbox;
    /// # use toolnexus::store::{MemoryStore, RunStore};
    /// # let store: Arc<dyn RunStore> = Arc::new(MemoryStore::new());
    /// let inbox = Inbox::builder(store)
    ///     .authorize(|_, _| true)
    ///     .answered_by(|parts| parts.headers.get("x-user")?.to_str().ok().map(str::to_owned))
    ///     // the on-call operator may grant for anyone
    ///     .grants(|parts, _principal| parts.headers.get("x-user").is_some_and(|u| u == "ops"))
    ///     .build()
    ///     .unwrap();
    /// # let _ = inbox;
    /// ```
    pub fn grants<F>(mut self, f: F) -> Self
    where
        F: Fn(&Parts, &str) -> bool + Send + Sync + 'static,
    {
        self.grants = Some(Arc::new(f));
        self
    }

    /// Lets anyone who can reach the router list and answer every request. Only for a router
    /// behind the host's own authentication, or a local demo.
    pub fn allow_anonymous(mut self) -> Self {
        self.anonymous = true;
        self
    }

    /// Requests per list page (default [`DEFAULT_PAGE_SIZE`]; at least 1).
    pub fn page_size(mut self, n: usize) -> Self {
        self.page_size = n.max(1);
        self
    }

    /// How long the signed links the list page hands out stay valid (default 24 hours).
    pub fn link_ttl(mut self, ttl: Duration) -> Self {
        self.link_ttl = ttl;
        self
    }

    /// The heading of the list page (default `Requests`).
    pub fn title(mut self, title: impl Into<String>) -> Self {
        self.title = title.into();
        self
    }

    /// Finishes the inbox. Without [`signed_links`](Self::signed_links),
    /// [`authorize`](Self::authorize) or [`allow_anonymous`](Self::allow_anonymous), every
    /// page answers `403`.
    ///
    /// # Errors
    ///
    /// [`Error::Config`] when the [`signed_links`](Self::signed_links) key is shorter than
    /// [`MIN_LINK_KEY_LEN`] bytes.
    ///
    /// ```
    /// # use std::sync::Arc;
    /// # use toolnexus::inbox::Inbox;
    /// # use toolnexus::store::{MemoryStore, RunStore};
    /// # let store: Arc<dyn RunStore> = Arc::new(MemoryStore::new());
    /// let err = Inbox::builder(store)
    ///     .signed_links(b"short".to_vec())
    ///     .build()
    ///     .unwrap_err();
    /// assert_eq!(
    ///     err.to_string(),
    ///     "the inbox's signed-link key needs at least 32 bytes, got 5: use 32 or more random bytes"
    /// );
    /// ```
    pub fn build(self) -> Result<Inbox, Error> {
        if let Some(key) = &self.link_key
            && key.len() < MIN_LINK_KEY_LEN
        {
            return Err(Error::Config(format!(
                "the inbox's signed-link key needs at least {MIN_LINK_KEY_LEN} bytes, got {}: use {MIN_LINK_KEY_LEN} or more random bytes",
                key.len()
            )));
        }
        let csrf_key = match &self.link_key {
            Some(key) => {
                let mut mac = mac(key);
                mac.update(b"toolnexus-inbox-csrf-key");
                mac.finalize().into_bytes().into()
            }
            None => random_bytes(),
        };
        Ok(Inbox {
            shared: Arc::new(Shared {
                store: self.store,
                link_key: self.link_key,
                csrf_key,
                authorize: self.authorize,
                answered_by: self.answered_by,
                grants: self.grants,
                groups_of: self.groups_of,
                anonymous: self.anonymous,
                page_size: self.page_size,
                link_ttl: self.link_ttl,
                title: self.title,
            }),
        })
    }
}

/// Whether a caller got in, and how.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Access {
    Granted,
    /// The link's signature does not match.
    Forged,
    /// The link's own expiry passed.
    LinkExpired,
    /// No capability at all.
    Denied,
}

impl Shared {
    /// The `exp=..&sig=..` query of a signed link, or `None` without a link key.
    pub(crate) fn signed_query(&self, request_id: &str, exp: u64) -> Option<String> {
        let key = self.link_key.as_ref()?;
        Some(format!(
            "exp={exp}&sig={}",
            hex(&link_mac(key, request_id, exp).finalize().into_bytes())
        ))
    }

    /// The query to put on links the (already admitted) viewer of the list follows.
    pub(crate) fn link_query(&self, request_id: &str) -> Option<String> {
        self.signed_query(request_id, unix_secs(SystemTime::now() + self.link_ttl))
    }

    pub(crate) fn access(
        &self,
        parts: &Parts,
        target: Target<'_>,
        query: &[(String, String)],
    ) -> Access {
        if self.anonymous || self.authorize.as_ref().is_some_and(|f| f(parts, target)) {
            return Access::Granted;
        }
        let (Target::Request(id), Some(key)) = (target, &self.link_key) else {
            return Access::Denied;
        };
        let get = |name: &str| {
            query
                .iter()
                .find(|(k, _)| k == name)
                .map(|(_, v)| v.as_str())
        };
        let (Some(exp), Some(sig)) = (get("exp"), get("sig")) else {
            return Access::Denied;
        };
        let (Ok(exp), Some(sig)) = (exp.parse::<u64>(), unhex(sig)) else {
            return Access::Forged;
        };
        if link_mac(key, id, exp).verify_slice(&sig).is_err() {
            return Access::Forged;
        }
        if unix_secs(SystemTime::now()) > exp {
            return Access::LinkExpired;
        }
        Access::Granted
    }

    /// Who answers request `request_id` (already admitted): the host's
    /// [`answered_by`](InboxBuilder::answered_by), else how the caller got in.
    pub(crate) fn answerer(&self, parts: &Parts, request_id: &str) -> String {
        if let Some(who) = self.answered_by.as_ref().and_then(|f| f(parts)) {
            return who;
        }
        if self
            .authorize
            .as_ref()
            .is_some_and(|f| f(parts, Target::Request(request_id)))
        {
            "authorized".to_owned()
        } else if self.anonymous {
            "anonymous".to_owned()
        } else {
            "signed link".to_owned()
        }
    }

    /// Who answers, as the host's [`answered_by`](InboxBuilder::answered_by) names them
    /// (`None` without a name: nothing is remembered for them).
    pub(crate) fn named_answerer(&self, parts: &Parts) -> Option<String> {
        self.answered_by.as_ref().and_then(|f| f(parts))
    }

    /// Whether the caller of `parts` may make rules covering the runs of `principal`: named
    /// as that principal, or named and granted by the host's
    /// [`grants`](InboxBuilder::grants); the second says whether it is a grant.
    pub(crate) fn may_remember_for(&self, parts: &Parts, principal: &str) -> Option<bool> {
        let named = self.named_answerer(parts)?;
        if named == principal {
            Some(false)
        } else if self.grants.as_ref().is_some_and(|f| f(parts, principal)) {
            Some(true)
        } else {
            None
        }
    }

    /// The CSRF token of `request_id` for the browser session `session` (the cookie's value).
    pub(crate) fn csrf_token(&self, session: &str, request_id: &str) -> String {
        let mut m = mac(&self.csrf_key);
        m.update(b"csrf\0");
        m.update(session.as_bytes());
        m.update(b"\0");
        m.update(request_id.as_bytes());
        hex(&m.finalize().into_bytes())
    }

    pub(crate) fn csrf_ok(&self, session: &str, request_id: &str, token: &str) -> bool {
        let Some(token) = unhex(token) else {
            return false;
        };
        let mut m = mac(&self.csrf_key);
        m.update(b"csrf\0");
        m.update(session.as_bytes());
        m.update(b"\0");
        m.update(request_id.as_bytes());
        m.verify_slice(&token).is_ok()
    }
}

fn mac(key: &[u8]) -> Hmac<Sha256> {
    // HMAC takes a key of any length
    <Hmac<Sha256> as KeyInit>::new_from_slice(key).unwrap_or_else(|_| unreachable!())
}

fn link_mac(key: &[u8], request_id: &str, exp: u64) -> Hmac<Sha256> {
    let mut m = mac(key);
    m.update(b"toolnexus-inbox-link\0");
    m.update(request_id.as_bytes());
    m.update(b"\0");
    m.update(exp.to_string().as_bytes());
    m
}

pub(crate) fn random_bytes() -> [u8; 32] {
    let mut buf = [0u8; 32];
    // the OS's random source; without one there is no safe token, so stop loudly
    getrandom::fill(&mut buf).unwrap_or_else(|e| panic!("no OS random source for the inbox: {e}"));
    buf
}

pub(crate) fn unix_secs(t: SystemTime) -> u64 {
    t.duration_since(UNIX_EPOCH).map_or(0, |d| d.as_secs())
}

/// What a path segment keeps unencoded: RFC 3986 unreserved characters.
const SEGMENT: &percent_encoding::AsciiSet = &percent_encoding::NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'_')
    .remove(b'.')
    .remove(b'~');

pub(crate) fn path_segment(s: &str) -> String {
    percent_encoding::utf8_percent_encode(s, SEGMENT).to_string()
}
