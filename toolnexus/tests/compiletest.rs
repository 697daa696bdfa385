//! Compile-fail (UI) tests of the macros: one `tests/ui/<macro>/<mistake>.rs` and its
//! `.stderr` per diagnostic.
//!
//! Compiler diagnostics change between rustc releases, so the `.stderr` files are pinned to
//! the rustc version in `tests/ui/RUSTC_VERSION`. On any other version the suite is skipped
//! with a notice (never passed silently); regenerate with `TRYBUILD=overwrite` and update the
//! version file. The cases always build with the default features, also in a build with
//! the store features on (`cargo test --workspace`), so the workspace test command runs them
//! (see `with_the_default_features`).

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
    if std::env::var_os(CHILD).is_none() {
        // the cases always run with the default features: a workspace build unifies in the
        // store features (the tests crate uses them), and their drivers' types change how
        // rustc spells some types in the diagnostics (never skipped for that)
        with_the_default_features();
        return;
    }
    let t = trybuild::TestCases::new();
    t.compile_fail("tests/ui/*/*.rs");
}

/// Set in the copy of this binary that [`with_the_default_features`] runs.
const CHILD: &str = "TOOLNEXUS_UI_DEFAULT_FEATURES";

/// The rustc flags trybuild builds the cases with (trybuild 1.0's `rustflags.rs` and
/// `cargo::build_all_tests`); were they to drift from trybuild's, the diagnostics would show it.
const TRYBUILD_CASE_FLAGS: [&str; 6] = [
    "--cfg",
    "trybuild",
    "--verbose",
    "-A",
    "dead_code",
    "--diagnostic-width=140",
];

/// Runs this test again in a copy of this binary under a name trybuild finds no build record
/// for: trybuild reads the features to build the cases with from the fingerprint of the test
/// binary that `argv[0]` names, and without one it builds them with the crate's default
/// features (whatever features this binary was built with). The cases build in trybuild's own
/// directory under the target directory (`tests/trybuild`), with no nested build of this crate
/// and its dev-dependencies. Fails with the copy's output when it fails.
fn with_the_default_features() {
    let dir = std::path::Path::new(env!("CARGO_TARGET_TMPDIR")).join("ui-default-features");
    std::fs::create_dir_all(&dir).expect("a directory for the copy");
    let copy = dir.join(format!("compiletest{}", std::env::consts::EXE_SUFFIX));
    let me = std::env::current_exe().expect("the path of this test binary");
    // a fresh file (not overwritten in place: a copy still running from another test run
    // keeps its own)
    let _ = std::fs::remove_file(&copy);
    std::fs::copy(&me, &copy).expect("a copy of this test binary");
    let out = Command::new(&copy)
        .args(["ui", "--exact", "--nocapture"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .env(CHILD, "1")
        // trybuild builds the cases' dependencies with its flags, then builds the cases with
        // the same flags and `--diagnostic-width=140`: every dependency compiled twice (half
        // of the cold cost). Cargo prefers CARGO_ENCODED_RUSTFLAGS to the `build.rustflags`
        // trybuild passes, so both builds get the cases' flags and share the dependencies.
        .env("CARGO_ENCODED_RUSTFLAGS", TRYBUILD_CASE_FLAGS.join("\x1f"))
        .output()
        .expect("the copy runs");
    let text = format!(
        "{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        out.status.success(),
        "the UI cases failed with the default features:\n{text}"
    );
    assert!(
        text.contains("test ui ... ok"),
        "the default-features run ran no UI test:\n{text}"
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
