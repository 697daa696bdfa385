//! One statement text for both SQL stores: written with SQLite's numbered parameters (`?1`,
//! `?2`, ..), each renamed for the store that runs it (PostgreSQL's `$1`, `$2`, ..).

/// `sql` with each `?n` named `placeholder(n)` instead (a `?` without a number is kept).
pub(crate) fn numbered(sql: &str, placeholder: fn(usize) -> String) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut rest = sql;
    while let Some(at) = rest.find('?') {
        out.push_str(&rest[..at]);
        let digits = rest[at + 1..]
            .find(|c: char| !c.is_ascii_digit())
            .unwrap_or(rest.len() - at - 1);
        match rest[at + 1..at + 1 + digits].parse() {
            Ok(n) => out.push_str(&placeholder(n)),
            Err(_) => out.push('?'),
        }
        rest = &rest[at + 1 + digits..];
    }
    out.push_str(rest);
    out
}

#[cfg(test)]
mod tests {
    use super::numbered;

    #[test]
    fn each_numbered_parameter_is_renamed_and_a_bare_mark_kept() {
        let pg = |n: usize| format!("${n}");
        assert_eq!(
            numbered("a = ?1 AND b IN (?12, ?2) OR c = '?' AND d = ?3", pg),
            "a = $1 AND b IN ($12, $2) OR c = '?' AND d = $3"
        );
        assert_eq!(numbered("x = ?7", |n| format!("?{n}")), "x = ?7");
        assert_eq!(numbered("", pg), "");
    }
}
