//! Compile-fail (UI) tests of the macros: one `tests/ui/<macro>/<mistake>.rs` and its
//! `.stderr` per diagnostic.
//!
//! Compiler diagnostics change between rustc releases, so the `.stderr` files are pinned to
//! the rustc version in `tests/ui/RUSTC_VERSION`. On any other version the suite is skipped
//! with a notice (never passed silently); regenerate with `TRYBUILD=overwrite` and update the
//! version file.

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
        // a workspace build unifies in the store features (the tests and examples crates use
        // them); their drivers' types change how rustc spells some types in the diagnostics
        skip::skipped(
            "ui",
            "the default features",
            "this build has a store feature on; `cargo test -p toolnexus --test compiletest` runs them",
        );
        skip::summary();
        return;
    }
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*/*.rs");
}
