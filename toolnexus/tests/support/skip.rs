//! Tests that could not run here, told. A test that skips (a component it needs is missing)
//! says so at once, past libtest's output capture, and records it; the last test of each test
//! binary that can skip (`toolnexus_tests::skip_summary!()`) waits for the others and prints one
//! summary of what this binary skipped, and of what the earlier binaries of the same
//! `cargo test` run skipped.
//!
//! libtest captures what a passing test prints with `print!`/`eprint!`, so a notice printed that
//! way is never seen; writes to the `stderr` handle are not captured. The run's record is a file
//! under the target directory (`<target>/<profile>/test-skips/`), one per `cargo test` process.
//!
//! One file for both crates' tests: `toolnexus/tests/compiletest.rs` includes it with `#[path]`
//! (the runtime's tests cannot depend on `toolnexus-tests`), and `toolnexus-tests` re-exports it
//! as `toolnexus_tests::skip`. It uses the standard library only.

use std::collections::BTreeMap;
use std::fmt::Write as _;
use std::fs::{self, OpenOptions};
use std::io::Write as _;
use std::path::{Path, PathBuf};
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

/// One skipped test (or the part of a test that needs what is missing).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Skip {
    /// The test binary (its target name, without cargo's hash).
    pub binary: String,
    /// The test: libtest's name for it, its module path in the binary.
    pub test: String,
    /// What it needs that is missing here.
    pub needs: String,
    /// How to provide it.
    pub how: String,
}

/// The skips of this process, in order.
static SKIPS: Mutex<Vec<Skip>> = Mutex::new(Vec::new());

/// How long the summary waits for the other tests of its binary, at most.
const WAIT_AT_MOST: Duration = Duration::from_secs(300);

/// Records that the running test skips (all of it, or the part that needs `needs`) because
/// `needs` is missing here, and says so on stderr at once (not captured). `how` says how to
/// provide it; the summary shows it.
///
/// The test is named by its thread (libtest names each test's thread after the test);
/// `fallback` names it when the caller runs on another thread.
pub fn skipped(fallback: &str, needs: &str, how: &str) {
    let skip = Skip {
        binary: binary(),
        test: current_test(fallback),
        needs: needs.to_owned(),
        how: how.to_owned(),
    };
    let _ = writeln!(
        std::io::stderr().lock(),
        "SKIPPED {} (needs {})",
        skip.test,
        skip.needs
    );
    if let Some(path) = run_record() {
        let line = [&skip.binary, &skip.test, &skip.needs, &skip.how]
            .map(|f| f.replace(['\t', '\n'], " "))
            .join("\t");
        // one short write per line: appends from several threads and processes stay whole
        if let Ok(mut file) = OpenOptions::new().create(true).append(true).open(path) {
            let _ = file.write_all(format!("{line}\n").as_bytes());
        }
    }
    SKIPS
        .lock()
        .unwrap_or_else(PoisonError::into_inner)
        .push(skip);
}

/// What this process has skipped so far.
pub fn skips() -> Vec<Skip> {
    SKIPS.lock().unwrap_or_else(PoisonError::into_inner).clone()
}

/// The body of the summary test (`skip_summary!`): waits until no other test of this binary
/// runs, then prints (on stderr, not captured) what this binary skipped and what the `cargo
/// test` run skipped so far; prints nothing when nothing was skipped.
pub fn summary() {
    wait_for_the_other_tests(WAIT_AT_MOST);
    let run = run_record().map(|p| read(&p)).unwrap_or_default();
    let text = render(&binary(), &skips(), &run);
    if !text.is_empty() {
        let _ = std::io::stderr().lock().write_all(text.as_bytes());
    }
}

/// The summary's text: what `mine` (this binary's skips) needed, grouped by what is missing,
/// and, when earlier binaries of the run skipped tests too, a line for the whole run.
pub fn render(binary: &str, mine: &[Skip], run: &[Skip]) -> String {
    let mut out = String::new();
    if !mine.is_empty() {
        let _ = writeln!(
            out,
            "SKIPPED in {binary}: {} (passed without running what they need; .ci/run runs them all)",
            tests(mine.len())
        );
        let mut by_need: BTreeMap<&str, Vec<&Skip>> = BTreeMap::new();
        for skip in mine {
            by_need.entry(&skip.needs).or_default().push(skip);
        }
        for (needs, skips) in by_need {
            let verb = if skips.len() == 1 { "needs" } else { "need" };
            let _ = writeln!(
                out,
                "  {} {verb} {needs} ({}): {}",
                skips.len(),
                skips[0].how,
                modules(skips.iter().map(|s| s.test.as_str()))
            );
        }
    }
    let others = run.iter().filter(|s| s.binary != binary).count();
    if others > 0 {
        let mut by_binary: BTreeMap<(&str, &str), usize> = BTreeMap::new();
        for skip in run {
            *by_binary.entry((&skip.binary, &skip.needs)).or_default() += 1;
        }
        let list: Vec<String> = by_binary
            .iter()
            .map(|((binary, needs), n)| format!("{binary} {n} ({needs})"))
            .collect();
        let _ = writeln!(
            out,
            "SKIPPED in this cargo test run so far: {}: {}",
            tests(run.len()),
            list.join(", ")
        );
    }
    out
}

fn tests(n: usize) -> String {
    if n == 1 {
        "1 test".to_owned()
    } else {
        format!("{n} tests")
    }
}

/// `postgres (24), workers (1)`: the first path segment of each test name, counted.
fn modules<'a>(tests: impl Iterator<Item = &'a str>) -> String {
    let mut counts: BTreeMap<&str, usize> = BTreeMap::new();
    for test in tests {
        *counts
            .entry(test.split("::").next().unwrap_or(test))
            .or_default() += 1;
    }
    let list: Vec<String> = counts.iter().map(|(m, n)| format!("{m} ({n})")).collect();
    list.join(", ")
}

/// The running test's name: its thread's, unless the caller runs on a thread libtest did not
/// name after a test (the main thread with `--test-threads=1` on some targets, a runtime's
/// worker).
fn current_test(fallback: &str) -> String {
    match std::thread::current().name() {
        Some(name) if name != "main" && !name.starts_with("tokio-") => name.to_owned(),
        _ => fallback.to_owned(),
    }
}

/// This test binary's target name: the executable's name without cargo's `-<hash>`.
fn binary() -> String {
    let exe = std::env::current_exe().ok();
    let stem = exe
        .as_deref()
        .and_then(Path::file_stem)
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    match stem.rsplit_once('-') {
        Some((name, hash)) if hash.chars().all(|c| c.is_ascii_hexdigit()) => name.to_owned(),
        _ => stem,
    }
}

/// The record of this `cargo test` run: `<target>/<profile>/test-skips/<cargo's pid>-<its
/// start time>.log`, or `None` when this binary was not started by cargo (run by hand, its
/// skips belong to no run) or the platform has no `/proc`.
fn run_record() -> Option<PathBuf> {
    let exe = std::env::current_exe().ok()?;
    let deps = exe.parent()?;
    if deps.file_name()? != "deps" {
        return None;
    }
    let dir = deps.parent()?.join("test-skips");
    let key = cargo_run_key()?;
    fs::create_dir_all(&dir).ok()?;
    Some(dir.join(format!("{key}.log")))
}

#[cfg(unix)]
fn cargo_run_key() -> Option<String> {
    let ppid = std::os::unix::process::parent_id();
    let comm = fs::read_to_string(format!("/proc/{ppid}/comm")).ok()?;
    if comm.trim() != "cargo" {
        return None;
    }
    // field 22 of stat, the start time: a pid alone may be reused by a later run
    let stat = fs::read_to_string(format!("/proc/{ppid}/stat")).ok()?;
    let started_at = stat.rsplit_once(')')?.1.split_whitespace().nth(19)?;
    Some(format!("{ppid}-{started_at}"))
}

#[cfg(not(unix))]
fn cargo_run_key() -> Option<String> {
    None
}

fn read(path: &Path) -> Vec<Skip> {
    fs::read_to_string(path)
        .unwrap_or_default()
        .lines()
        .filter_map(|line| {
            let mut f = line.split('\t');
            Some(Skip {
                binary: f.next()?.to_owned(),
                test: f.next()?.to_owned(),
                needs: f.next()?.to_owned(),
                how: f.next()?.to_owned(),
            })
        })
        .collect()
}

/// Waits until no thread of this process but the caller's runs a test, at most `cap`.
///
/// The summary test is named to sort last, and libtest starts tests in name order, so every
/// other test has started (its thread exists) when it runs. libtest names each test's thread
/// after the test, and every test of the binaries that use this has a module path, so a test's
/// thread has `::` in its name (Linux keeps 15 bytes of it), as have the unnamed threads a test
/// starts (they inherit it); the main thread, tokio's and the SQLite store's do not. Where
/// threads cannot be listed (no `/proc`), it does not wait.
fn wait_for_the_other_tests(cap: Duration) {
    let Ok(me) = fs::read_link("/proc/thread-self") else {
        return;
    };
    let me = me.file_name().map(std::ffi::OsStr::to_os_string);
    let started = Instant::now();
    while started.elapsed() < cap {
        let Ok(tasks) = fs::read_dir("/proc/self/task") else {
            return;
        };
        let busy = tasks.flatten().any(|task| {
            Some(task.file_name()) != me
                && fs::read_to_string(task.path().join("comm")).is_ok_and(|c| c.contains("::"))
        });
        if !busy {
            return;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// The summary test of a test binary whose tests can skip: put `toolnexus_tests::skip_summary!();`
/// at the root of its `main.rs`. Its name sorts after every other test's (libtest starts tests
/// in name order).
#[macro_export]
macro_rules! skip_summary {
    () => {
        /// What this binary skipped (and the `cargo test` run so far), printed after its
        /// other tests.
        #[test]
        fn zz_skipped_summary() {
            $crate::skip::summary();
        }
    };
}
