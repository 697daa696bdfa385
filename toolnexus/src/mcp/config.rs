//! `mcp.json`: the `mcpServers` configuration desktop hosts use, to connect several servers.

use std::collections::BTreeMap;
use std::path::Path;

use serde::Deserialize;
use serde_json::Value;

use super::McpError;
use super::consume::{McpServer, McpServerBuilder};
use crate::tool::SharedTool;

/// One entry of `mcpServers`: a stdio `command` (with `args` and `env`) or a streamable HTTP
/// `url` (with `headers`).
#[derive(Clone, Debug, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
#[non_exhaustive]
pub struct ServerEntry {
    /// The program to start (stdio).
    #[serde(default)]
    pub command: Option<String>,
    /// Its arguments.
    #[serde(default)]
    pub args: Vec<String>,
    /// Extra environment variables.
    #[serde(default)]
    pub env: BTreeMap<String, String>,
    /// The streamable HTTP endpoint.
    #[serde(default)]
    pub url: Option<String>,
    /// HTTP headers for every request.
    #[serde(default)]
    pub headers: BTreeMap<String, String>,
    /// The transport some hosts name (`stdio`, `http`, `streamable-http`); read and ignored,
    /// `command` or `url` decides.
    #[serde(default, rename = "type")]
    pub kind: Option<String>,
    /// Some hosts' switch to keep an entry without using it.
    #[serde(default)]
    pub disabled: bool,
}

/// A parsed `mcp.json`: `{"mcpServers": {"<name>": {command, args, env} | {url, headers}}}`,
/// in file order.
///
/// ```
/// use toolnexus::mcp::McpConfig;
///
/// let config = McpConfig::from_json(r#"{"mcpServers": {
///     "files": {"command": "npx", "args": ["-y", "@modelcontextprotocol/server-filesystem", "/tmp"]},
///     "search": {"url": "https://mcp.example.com/mcp", "headers": {"Authorization": "Bearer t"}}
/// }}"#).unwrap();
/// let names: Vec<&str> = config.servers().iter().map(|(name, _)| name.as_str()).collect();
/// assert_eq!(names, ["files", "search"]);
///
/// let err = McpConfig::from_json(r#"{"mcpServers": {"x": {"args": []}}}"#).unwrap_err();
/// assert_eq!(err.to_string(), r#"invalid MCP configuration: server "x" needs a `command` or a `url`"#);
/// ```
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct McpConfig {
    servers: Vec<(String, ServerEntry)>,
}

impl McpConfig {
    /// Parses the JSON text of an `mcp.json`.
    ///
    /// # Errors
    ///
    /// [`McpError::Config`] naming the problem: not JSON, no `mcpServers` object, an entry of
    /// the wrong shape (the server and field named), an entry with neither or both of
    /// `command` and `url`.
    pub fn from_json(text: &str) -> Result<Self, McpError> {
        let bad = |m: String| McpError::Config(m);
        let root: Value = serde_json::from_str(text).map_err(|e| bad(format!("not JSON: {e}")))?;
        let Some(map) = root.get("mcpServers").and_then(Value::as_object) else {
            return Err(bad("no `mcpServers` object".to_owned()));
        };
        // in file order: a `Value`'s map has its own order (sorted, unless serde_json's
        // `preserve_order` is on), so the names' order comes from the text
        let mut names: Vec<String> = crate::json_text::raw_members(text)
            .and_then(|root| root.into_iter().rev().find(|(k, _)| k == "mcpServers"))
            .and_then(|(_, servers)| crate::json_text::raw_members(servers))
            .map(|members| members.into_iter().map(|(name, _)| name).collect())
            .unwrap_or_default();
        let mut seen = std::collections::HashSet::new();
        names.retain(|name| map.contains_key(name) && seen.insert(name.clone()));
        names.extend(map.keys().filter(|k| !seen.contains(*k)).cloned());
        let mut servers = Vec::with_capacity(map.len());
        for name in names {
            let entry = &map[&name];
            let entry: ServerEntry = serde_path_to_error::deserialize(entry.clone())
                .map_err(|e| bad(format!("server \"{name}\": {e}")))?;
            match (&entry.command, &entry.url) {
                (Some(_), Some(_)) => {
                    return Err(bad(format!(
                        "server \"{name}\" has both a `command` and a `url`; give one"
                    )));
                }
                (None, None) => {
                    return Err(bad(format!(
                        "server \"{name}\" needs a `command` or a `url`"
                    )));
                }
                _ => {}
            }
            servers.push((name, entry));
        }
        Ok(Self { servers })
    }

    /// Reads and parses an `mcp.json` file.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Self, McpError> {
        let path = path.as_ref();
        let text = std::fs::read_to_string(path)
            .map_err(|e| McpError::Config(format!("cannot read {}: {e}", path.display())))?;
        Self::from_json(&text)
    }

    /// The entries, in file order.
    pub fn servers(&self) -> &[(String, ServerEntry)] {
        &self.servers
    }

    /// A builder for each enabled entry, named after its key.
    pub fn builders(&self) -> Vec<McpServerBuilder> {
        self.servers
            .iter()
            .filter(|(_, e)| !e.disabled)
            .map(|(name, e)| match (&e.command, &e.url) {
                (Some(command), _) => {
                    let mut b =
                        McpServer::stdio(name.clone(), command.clone()).args(e.args.clone());
                    for (k, v) in &e.env {
                        b = b.env(k.clone(), v.clone());
                    }
                    b
                }
                (None, url) => {
                    let mut b = McpServer::http(name.clone(), url.clone().unwrap_or_default());
                    for (k, v) in &e.headers {
                        b = b.header(k.clone(), v.clone());
                    }
                    b
                }
            })
            .collect()
    }

    /// Connects every enabled server (one after another), each builder first passed through
    /// `configure` (to set a handler, a prefix, a timeout). A server that fails does not stop
    /// the others: its error, naming it, is in [`McpServers::failed`].
    pub async fn connect(
        &self,
        configure: impl Fn(McpServerBuilder) -> McpServerBuilder,
    ) -> McpServers {
        let mut servers = McpServers::default();
        for builder in self.builders() {
            match configure(builder).connect().await {
                Ok(server) => servers.connected.push(server),
                Err(e) => servers.failed.push(e),
            }
        }
        servers
    }
}

/// The servers of an [`McpConfig`]: those connected, and the errors of those that failed.
#[derive(Debug, Default)]
#[non_exhaustive]
pub struct McpServers {
    /// The connected servers, in file order.
    pub connected: Vec<McpServer>,
    /// One error per server that could not be connected, naming it.
    pub failed: Vec<McpError>,
}

impl McpServers {
    /// Every connected server's tools, in order.
    pub fn tools(&self) -> Vec<SharedTool> {
        self.connected.iter().flat_map(McpServer::tools).collect()
    }

    /// Closes every connected server.
    pub async fn close(&self) {
        for server in &self.connected {
            server.close().await;
        }
    }
}
