//! Compile-fail (UI) tests of the macros: one `tests/ui/<macro>/<mistake>.rs` and its
//! `.stderr` per diagnostic.
//!
//! Compiler diagnostics change between rustc releases, so the `.stderr` files are pinned to
//! the rustc version in `tests/ui/RUSTC_VERSION`. On any other version the suite is skipped
//! with a notice (never passed silently); regenerate with `TRYBUILD=overwrite` and update the
//! version file. In a build with the store features on (`cargo test --workspace`), the suite
//! runs in a nested default-features build of its own, so the workspace test command runs it.

use std::process::Command;

// the record of skipped tests, shared with the `toolnexus-tests` binaries
#[allow(dead_code)] // this one test does not use every item
#[path = "support/skip.rs"]
pub mod skip;

fn rustc_version() -> Option<String> {
    let rustc = std::env::var("RUSTC").unwrap_or_else(|_| "rustc".to_owned());
    let out = Command::new(rustc).arg("--version").output().ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    text.split_whitespace().nth(1).map(str::to_owned)
}

#[test]
fn ui() {
    let pinned = include_str!("ui/RUSTC_VERSION").trim();
    match rustc_version() {
        Some(v) if v == pinned => {}
        other => {
            skip::skipped(
                "ui",
                &format!("rustc {pinned}"),
                &format!(
                    "the .stderr files were generated with it, this is rustc {}; regenerate them \
                     with TRYBUILD=overwrite to run them here",
                    other.as_deref().unwrap_or("of unknown version")
                ),
            );
            skip::summary();
            return;
        }
    }
    if cfg!(any(feature = "sqlite", feature = "postgres")) {
        // a workspace build unifies in the store features (the tests crate uses them); their
        // drivers' types change how rustc spells some types in the diagnostics, so the cases
        // run in a build of their own with the default features (never skipped)
        in_a_default_features_build();
        return;
    }
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*/*.rs");
}

/// Runs this suite again as `cargo test -p toolnexus --test compiletest` (the default
/// features), in a target directory of its own under this build's (so it never waits for this
/// build's lock, and stays warm for the next run), and fails with its output when it fails.
fn in_a_default_features_build() {
    let cargo = std::env::var("CARGO").unwrap_or_else(|_| "cargo".to_owned());
    let target = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("ui-default-features");
    let out = Command::new(cargo)
        .args(["test", "-p", "toolnexus", "--test", "compiletest"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env("CARGO_TARGET_DIR", &target)
        .output()
        .expect("cargo runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success(),
        "the UI cases failed in their default-features build ({}):\n{text}",
        target.display()
    );
    if text.contains("SKIPPED") {
        skip::skipped(
            "ui",
            "the rustc the .stderr files were made with",
            "see `cargo test -p toolnexus --test compiletest`",
        );
        skip::summary();
    }
    assert!(
        text.contains("test ui ... ok"),
        "the default-features build ran no UI test:\n{text}"
    );
}

/// No diagnostic's headline (the `error...:` line a user reads first) names the macros'
/// `__private` module: it is the crate's plumbing, not a path a user can write (a `#[tool]`
/// parameter without a schema read "the trait bound `Point:
/// toolnexus::__private::schemars::JsonSchema` is not satisfied"). Reads the expected
/// outputs, so it runs on any rustc.
#[test]
fn no_headline_names_the_private_module() {
    let root = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/ui");
    let mut read = 0;
    let mut named = Vec::new();
    for dir in std::fs::read_dir(&root).expect("tests/ui") {
        let dir = dir.expect("entry").path();
        if !dir.is_dir() {
            continue;
        }
        for file in std::fs::read_dir(&dir).expect("a case folder") {
            let file = file.expect("entry").path();
            if file.extension().is_none_or(|e| e != "stderr") {
                continue;
            }
            read += 1;
            let text = std::fs::read_to_string(&file).expect("stderr");
            for line in text.lines().filter(|l| l.starts_with("error")) {
                if line.contains("__private") {
                    named.push(format!("{}: {line}", file.display()));
                }
            }
        }
    }
    assert!(read > 20, "only {read} expected outputs found");
    assert!(named.is_empty(), "{}", named.join("\n"));
}
