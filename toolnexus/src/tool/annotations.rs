//! [`ToolAnnotations`]: what a tool says about its effects, as MCP's tool annotations do.

/// What a tool says about its effects: hints for a host, a client policy
/// ([`ClientBuilder::approve_destructive`](crate::client::ClientBuilder::approve_destructive))
/// or a protocol that has a place for them (MCP's tool annotations `readOnlyHint`,
/// `destructiveHint`, `idempotentHint`, `openWorldHint`).
///
/// Each hint is `None` when the tool does not say (a protocol then applies its own default:
/// MCP assumes a tool may destroy and reaches an open world), or what the tool states:
///
/// - `read_only`: the tool changes nothing in its environment (MCP `readOnlyHint`);
/// - `destructive`: the tool may delete or overwrite what exists, rather than only add
///   (MCP `destructiveHint`; meaningless for a read-only tool, and a tool cannot be both);
/// - `idempotent`: calling it again with the same arguments has no further effect
///   (MCP `idempotentHint`). The loop acts on this one: a call of a tool that does not state
///   it, cut by a crash of its worker, is not run again on its own but asked about
///   ([`reconcile`](crate::reconcile)); a consumed MCP tool with `idempotentHint: true` is
///   idempotent;
/// - `open_world`: it reaches beyond a closed set of things, the web, say, rather than a
///   local database (MCP `openWorldHint`).
///
/// They are hints from the tool's author, not guarantees: never let a model's word or a
/// tool from an untrusted server lower a safeguard on them alone.
///
/// `#[tool(read_only)]`, `#[tool(destructive)]`, `#[tool(idempotent)]` and
/// `#[tool(open_world)]` (or `key = false`) set them on a function's tool, checked at compile
/// time; [`FnToolBuilder`](crate::tool::FnToolBuilder) has a setter for each.
///
/// ```
/// use toolnexus::tool::ToolAnnotations;
///
/// let a = ToolAnnotations::new().destructive(true).idempotent(true);
/// assert!(a.is_destructive());
/// assert_eq!(a.read_only, None);
/// assert_eq!(a.idempotent, Some(true));
/// assert_eq!(a.contradiction(), None);
/// assert_eq!(
///     a.read_only(true).contradiction(),
///     Some("a tool cannot be both `read_only` and `destructive`")
/// );
/// ```
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[non_exhaustive]
pub struct ToolAnnotations {
    /// The tool changes nothing in its environment (MCP `readOnlyHint`).
    pub read_only: Option<bool>,
    /// The tool may delete or overwrite what exists (MCP `destructiveHint`).
    pub destructive: Option<bool>,
    /// Calling it again with the same arguments has no further effect (MCP `idempotentHint`).
    pub idempotent: Option<bool>,
    /// It reaches an open world, such as the web (MCP `openWorldHint`).
    pub open_world: Option<bool>,
}

impl ToolAnnotations {
    /// No hints: the tool says nothing about its effects.
    pub const fn new() -> Self {
        Self {
            read_only: None,
            destructive: None,
            idempotent: None,
            open_world: None,
        }
    }

    /// The same hints with `read_only` stated.
    #[must_use]
    pub const fn read_only(mut self, value: bool) -> Self {
        self.read_only = Some(value);
        self
    }

    /// The same hints with `destructive` stated.
    #[must_use]
    pub const fn destructive(mut self, value: bool) -> Self {
        self.destructive = Some(value);
        self
    }

    /// The same hints with `idempotent` stated.
    #[must_use]
    pub const fn idempotent(mut self, value: bool) -> Self {
        self.idempotent = Some(value);
        self
    }

    /// The same hints with `open_world` stated.
    #[must_use]
    pub const fn open_world(mut self, value: bool) -> Self {
        self.open_world = Some(value);
        self
    }

    /// Whether the tool states that it is destructive (`destructive == Some(true)`).
    pub const fn is_destructive(&self) -> bool {
        matches!(self.destructive, Some(true))
    }

    /// Whether the tool states that it is idempotent (`idempotent == Some(true)`): running a
    /// call of it twice is safe. A call of a tool that does not say so is never run again on
    /// its own after a crash cut it; a person decides ([`reconcile`](crate::reconcile)).
    pub const fn is_idempotent(&self) -> bool {
        matches!(self.idempotent, Some(true))
    }

    /// Whether the tool states that it is read-only (`read_only == Some(true)`).
    pub const fn is_read_only(&self) -> bool {
        matches!(self.read_only, Some(true))
    }

    /// Whether the hints contradict each other, and how: a tool cannot be both read-only and
    /// destructive.
    pub const fn contradiction(&self) -> Option<&'static str> {
        if self.is_read_only() && self.is_destructive() {
            Some("a tool cannot be both `read_only` and `destructive`")
        } else {
            None
        }
    }
}
