//! A toolkit served as an MCP server over stdio, for desktop MCP hosts (Claude Desktop,
//! coding agents, IDEs). `delete_note` asks for approval; served over MCP, that question is
//! an elicitation the host shows in its own UI. Each tool declares its annotations (read-only,
//! destructive, idempotent, closed-world), so a host can tell `delete_note` is destructive.
//!
//! Build it (`cargo build -p toolnexus-examples --features mcp --example mcp_server`) and point
//! the host at `target/debug/examples/mcp_server` (see the README's MCP section).

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, PoisonError};

use toolnexus::mcp::McpService;
use toolnexus::{Suspension, Toolkit, ask, tool, toolset};

/// Notes kept in memory for the session.
#[derive(Default)]
struct Notes {
    notes: Mutex<BTreeMap<String, String>>,
}

#[toolset]
impl Notes {
    /// Save a note under a title (replacing any note of that title).
    #[tool(destructive, idempotent, open_world = false)]
    fn save_note(
        &self,
        /// The note's title.
        title: String,
        /// What the note says.
        text: String,
    ) -> String {
        let mut notes = self.notes.lock().unwrap_or_else(PoisonError::into_inner);
        let saved = format!("saved \"{title}\"");
        notes.insert(title, text);
        format!("{saved} ({} notes)", notes.len())
    }

    /// List the titles of all notes.
    #[tool(read_only, idempotent, open_world = false)]
    fn list_notes(&self) -> Vec<String> {
        let notes = self.notes.lock().unwrap_or_else(PoisonError::into_inner);
        notes.keys().cloned().collect()
    }

    /// Delete a note; asks the user to approve first.
    #[tool(destructive, idempotent, open_world = false)]
    fn delete_note(
        &self,
        /// The title of the note to delete.
        title: &str,
        ctx: &toolnexus::Context,
    ) -> Result<String, Suspension> {
        let () = ask!(ctx, approval format!("Delete the note \"{title}\"?"));
        let mut notes = self.notes.lock().unwrap_or_else(PoisonError::into_inner);
        Ok(match notes.remove(title) {
            Some(_) => format!("deleted \"{title}\""),
            None => format!("no note \"{title}\""),
        })
    }
}

/// Count the words of a text.
#[tool(read_only, idempotent, open_world = false)]
fn word_count(
    /// The text.
    text: &str,
) -> usize {
    text.split_whitespace().count()
}

#[tokio::main]
async fn main() -> Result<(), Box<dyn std::error::Error>> {
    let toolkit = Toolkit::builder()
        .tools(Arc::new(Notes::default()).tools())
        .tool(WordCount)
        .build()?;
    // stdout carries the protocol: log to stderr only
    eprintln!("mcp_server: serving {} tools over stdio", toolkit.len());
    McpService::new(toolkit)
        .with_name("toolnexus-notes", env!("CARGO_PKG_VERSION"))
        .serve_stdio()
        .await?;
    Ok(())
}
