//! Every public timing constant (`pub const NAME: Duration = Duration::from_secs(..)` or
//! `from_millis(..)`) and every public integer constant written as a plain number says its
//! value in its doc comment, so rustdoc shows it (rustdoc prints a `Duration` constant's
//! value as `_`). Reads the crate's sources.

use std::path::Path;

/// The ways a doc comment may say `ms` milliseconds.
fn spellings(ms: u64) -> Vec<String> {
    const WORDS: [&str; 11] = [
        "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    ];
    let mut out = vec![format!("{ms} ms")];
    let units = [
        (1_000, "second"),
        (60_000, "minute"),
        (3_600_000, "hour"),
        (86_400_000, "day"),
    ];
    for (per, unit) in units {
        if !ms.is_multiple_of(per) {
            continue;
        }
        let n = ms / per;
        if n == 1 {
            out.push(format!("1 {unit}"));
            out.push(format!("an {unit}"));
            out.push(format!("a {unit}"));
        } else {
            out.push(format!("{n} {unit}s"));
            if let Some(word) = WORDS.get(usize::try_from(n).unwrap_or(usize::MAX)) {
                out.push(format!("{word} {unit}s"));
            }
        }
    }
    out
}

/// `10000` as `10,000`.
fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `15 * 60` or `500`: a product of integer literals.
fn product(expr: &str) -> Option<u64> {
    expr.split('*')
        .map(|f| f.trim().replace('_', "").parse::<u64>().ok())
        .product()
}

fn walk(dir: &Path, files: &mut Vec<std::path::PathBuf>) {
    for entry in std::fs::read_dir(dir).unwrap() {
        let path = entry.unwrap().path();
        if path.is_dir() {
            walk(&path, files);
        } else if path.extension().is_some_and(|e| e == "rs") {
            files.push(path);
        }
    }
}

#[test]
fn public_constants_say_their_value_in_their_docs() {
    let mut files = Vec::new();
    walk(
        &Path::new(env!("CARGO_MANIFEST_DIR")).join("src"),
        &mut files,
    );
    let mut checked = 0;
    let mut silent = Vec::new();
    for file in files {
        let text = std::fs::read_to_string(&file).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        for (i, line) in lines.iter().enumerate() {
            let Some(rest) = line.strip_prefix("pub const ") else {
                continue;
            };
            let Some((name, value)) = rest.split_once(" = ") else {
                continue;
            };
            let value = value.trim_end_matches(';');
            let expected = if name.ends_with(": Duration") {
                let (unit, arg) = if let Some(a) = value.strip_prefix("Duration::from_secs(") {
                    (1_000, a)
                } else if let Some(a) = value.strip_prefix("Duration::from_millis(") {
                    (1, a)
                } else {
                    continue;
                };
                let n = product(arg.trim_end_matches(')')).expect("a literal duration");
                spellings(n * unit)
            } else if [": usize", ": u32", ": u64", ": i64"]
                .iter()
                .any(|t| name.ends_with(t))
            {
                match product(value) {
                    Some(n) => vec![n.to_string(), thousands(n)],
                    None => continue, // a shift or an expression: written in words by hand
                }
            } else {
                continue;
            };
            let mut doc_lines: Vec<&str> = lines[..i]
                .iter()
                .rev()
                .take_while(|l| l.starts_with("///") || l.starts_with("#["))
                .map(|l| l.trim_start_matches('/'))
                .collect();
            doc_lines.reverse();
            let doc: String = doc_lines
                .join(" ")
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ");
            checked += 1;
            if !expected.iter().any(|e| doc.contains(e.as_str())) {
                silent.push(format!(
                    "{}: {name} = {value}: its docs say none of {expected:?}",
                    file.display()
                ));
            }
        }
    }
    assert!(
        checked >= 15,
        "only {checked} constants found: the scan is broken"
    );
    assert!(silent.is_empty(), "{}", silent.join("\n"));
}
