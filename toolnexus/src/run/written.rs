//! The JSON a [`PendingRun`] was checked as when it was made from a run, kept so that
//! storing the record does not write it again.

use super::pending::PendingRun;

/// The JSON a record was checked as when it was made from a run (`check_holds` writes it to
/// measure its depth): the same bytes [`PendingRun::to_json`] would write, as nothing changes
/// a record once made. Not part of the record: never serialized, not shown, and equal, as a
/// field, to any other.
#[derive(Clone, Default)]
pub(crate) struct Written(Option<String>);

impl Written {
    /// `json`, kept.
    pub(crate) fn kept(json: String) -> Self {
        Self(Some(json))
    }

    /// The JSON kept, if any.
    pub(crate) fn json(&self) -> Option<&str> {
        self.0.as_deref()
    }
}

impl PartialEq for Written {
    fn eq(&self, _: &Self) -> bool {
        true
    }
}

// the record's fields, as a derived `Debug` shows them: the kept JSON is not the record's
#[allow(clippy::missing_fields_in_debug)]
impl std::fmt::Debug for PendingRun {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PendingRun")
            .field("version", &self.version)
            .field("run_id", &self.run_id)
            .field("model", &self.model)
            .field("pending", &self.pending)
            .field("messages", &self.messages)
            .field("tool_calls", &self.tool_calls)
            .field("usage", &self.usage)
            .field("turns", &self.turns)
            .field("halted", &self.halted)
            .finish()
    }
}

#[cfg(test)]
mod tests {
    use crate::{Client, FnTool, PendingRun, Reply, Request, ScriptedModel, ToolResult, Toolkit};

    /// A record made from a halted run, as a host makes one to park it.
    fn made() -> PendingRun {
        let ask = FnTool::builder("ask")
            .description("Asks.")
            .handler(|_, _| async { ToolResult::suspended(Request::input("Your name?")) })
            .build()
            .unwrap();
        let toolkit = Toolkit::builder().tool(ask).build().unwrap();
        let script = [Reply::tool_call("ask", serde_json::json!({"who": "me"}))];
        let client = Client::builder(ScriptedModel::new(script))
            .model_name("m")
            .build()
            .unwrap();
        let halted = tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .unwrap()
            .block_on(client.run("hi", &toolkit))
            .unwrap();
        PendingRun::try_from(halted).unwrap()
    }

    #[test]
    fn a_record_made_from_a_run_keeps_the_bytes_it_was_checked_as_which_are_its_json() {
        let record = made();
        let kept = record
            .written
            .json()
            .expect("the conversion keeps its JSON")
            .to_owned();
        // the bytes a park stores are the record's own JSON, written afresh
        assert_eq!(kept, serde_json::to_string(&record).unwrap());
        assert_eq!(record.to_json(), kept);
        // a record read back keeps nothing, yet is the same record, shown the same
        let read = PendingRun::from_json(&kept).unwrap();
        assert_eq!(read.written.json(), None);
        assert_eq!(read, record);
        assert_eq!(format!("{read:?}"), format!("{record:?}"));
        assert!(!format!("{record:?}").contains("written"));
        assert_eq!(read.to_json(), kept);
    }
}
