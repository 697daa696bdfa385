//! Tool names: [`validate_tool_name`] checks one, [`sanitize`] makes one from any text.

use crate::error::{Error, Result};

/// The longest tool name providers accept: 64 characters.
pub const MAX_TOOL_NAME_LEN: usize = 64;
/// Checks a tool name: 1 to 64 characters of `[A-Za-z0-9_-]`.
///
/// # Errors
///
/// [`Error::InvalidToolName`] saying what is wrong; use [`sanitize`] to make a valid name from
/// arbitrary text.
///
/// ```
/// assert!(toolnexus::tool::validate_tool_name("get_weather").is_ok());
/// assert_eq!(
///     toolnexus::tool::validate_tool_name("get weather").unwrap_err().to_string(),
///     "invalid tool name `get weather`: character ' ' at index 3 is not one of [A-Za-z0-9_-]"
/// );
/// ```
pub fn validate_tool_name(name: &str) -> Result<()> {
    let fail = |reason: String| {
        Err(Error::InvalidToolName {
            name: name.to_owned(),
            reason,
        })
    };
    if name.is_empty() {
        return fail("a name needs at least one character".to_owned());
    }
    let len = name.chars().count();
    if len > MAX_TOOL_NAME_LEN {
        return fail(format!(
            "{len} characters, at most {MAX_TOOL_NAME_LEN} are allowed"
        ));
    }
    if let Some((i, c)) = name.char_indices().find(|&(_, c)| !is_name_char(c)) {
        return fail(format!(
            "character {c:?} at index {i} is not one of [A-Za-z0-9_-]"
        ));
    }
    Ok(())
}

fn is_name_char(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_' || c == '-'
}

/// Replaces every character outside `[A-Za-z0-9_-]` with `_` ([contract section 1](crate::contract)).
///
/// ```
/// assert_eq!(toolnexus::tool::sanitize("get weather!"), "get_weather_");
/// ```
pub fn sanitize(s: &str) -> String {
    s.chars()
        .map(|c| if is_name_char(c) { c } else { '_' })
        .collect()
}
