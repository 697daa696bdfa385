//! Tool annotations across MCP: a [`ToolAnnotations`] becomes the `annotations` of a served
//! tool in `tools/list`, and a listed tool's `annotations` become its [`Tool::annotations`].
//!
//! [`Tool::annotations`]: crate::Tool::annotations

use crate::tool::ToolAnnotations;

/// The MCP `annotations` of a tool that states `hints`: `None` when it states nothing (the
/// peer applies MCP's defaults), else the stated hints, each unstated one left out.
pub(super) fn hints_to_mcp(hints: ToolAnnotations) -> Option<rmcp::model::ToolAnnotations> {
    if hints == ToolAnnotations::new() {
        return None;
    }
    Some(rmcp::model::ToolAnnotations::from_raw(
        None,
        hints.read_only,
        hints.destructive,
        hints.idempotent,
        hints.open_world,
    ))
}

/// The hints a listed MCP tool states, as the server sent them (unstated ones stay `None`;
/// they are the server's claims, see [`ToolAnnotations`]).
pub(super) fn hints_from_mcp(
    annotations: Option<&rmcp::model::ToolAnnotations>,
) -> ToolAnnotations {
    let Some(a) = annotations else {
        return ToolAnnotations::new();
    };
    let mut hints = ToolAnnotations::new();
    hints.read_only = a.read_only_hint;
    hints.destructive = a.destructive_hint;
    hints.idempotent = a.idempotent_hint;
    hints.open_world = a.open_world_hint;
    hints
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn no_hints_send_no_annotations() {
        assert_eq!(hints_to_mcp(ToolAnnotations::new()), None);
        assert_eq!(hints_from_mcp(None), ToolAnnotations::new());
    }

    #[test]
    fn stated_hints_round_trip_and_unstated_ones_stay_out() {
        let hints = ToolAnnotations::new().destructive(true).idempotent(false);
        let mcp = hints_to_mcp(hints).unwrap();
        assert_eq!(
            serde_json::to_value(&mcp).unwrap(),
            serde_json::json!({"destructiveHint": true, "idempotentHint": false})
        );
        assert_eq!(hints_from_mcp(Some(&mcp)), hints);
    }

    #[test]
    fn a_consumed_tool_is_idempotent_exactly_when_its_server_says_so() {
        // the loop's crash rule reads `is_idempotent`: a consumed tool with
        // `idempotentHint: true` runs again after a crash, any other is asked about
        let said = |v: serde_json::Value| {
            let mcp: rmcp::model::ToolAnnotations = serde_json::from_value(v).unwrap();
            hints_from_mcp(Some(&mcp)).is_idempotent()
        };
        assert!(said(serde_json::json!({"idempotentHint": true})));
        assert!(!said(serde_json::json!({"idempotentHint": false})));
        assert!(!said(serde_json::json!({"readOnlyHint": true})));
        assert!(!hints_from_mcp(None).is_idempotent());
        // and a served tool says what it states
        let served = hints_to_mcp(ToolAnnotations::new().idempotent(true)).unwrap();
        assert_eq!(served.idempotent_hint, Some(true));
    }
}
