//! The summary a test binary prints of what it skipped (`toolnexus_tests::skip::render`).
//! (Kept here rather than as unit tests of the library: a library test target compiles the
//! whole library a second time.)

use toolnexus_tests::skip::{Skip, render};

fn skip(binary: &str, test: &str, needs: &str) -> Skip {
    Skip {
        binary: binary.to_owned(),
        test: test.to_owned(),
        needs: needs.to_owned(),
        how: format!("how to get {needs}"),
    }
}

#[test]
fn nothing_skipped_prints_nothing() {
    assert_eq!(render("store", &[], &[]), "");
}

#[test]
fn the_binary_s_skips_are_grouped_by_need_and_module() {
    let mine = [
        skip("store", "postgres::expiry", "PostgreSQL"),
        skip("store", "workers::four_workers", "PostgreSQL"),
        skip("store", "postgres::paging", "PostgreSQL"),
        skip("store", "browser::page", "Chromium"),
    ];
    assert_eq!(
        render("store", &mine, &mine),
        "SKIPPED in store: 4 tests (passed without running what they need; .ci/run runs them all)\n  \
         1 needs Chromium (how to get Chromium): browser (1)\n  \
         3 need PostgreSQL (how to get PostgreSQL): postgres (2), workers (1)\n"
    );
}

#[test]
fn earlier_binaries_of_the_run_add_a_line_for_the_run() {
    let mine = [skip("store", "postgres::expiry", "PostgreSQL")];
    let run = [
        skip("compiletest", "ui", "the default features"),
        skip("provider", "third_party::faults", "llmock and fakellm"),
        skip("provider", "third_party::approval", "llmock and fakellm"),
        mine[0].clone(),
    ];
    assert_eq!(
        render("store", &mine, &run),
        "SKIPPED in store: 1 test (passed without running what they need; .ci/run runs them all)\n  \
         1 needs PostgreSQL (how to get PostgreSQL): postgres (1)\n\
         SKIPPED in this cargo test run so far: 4 tests: compiletest 1 (the default features), provider 2 (llmock and fakellm), store 1 (PostgreSQL)\n"
    );
    // a binary that skipped nothing still reports the run
    assert_eq!(
        render("worker", &[], &run),
        "SKIPPED in this cargo test run so far: 4 tests: compiletest 1 (the default features), provider 2 (llmock and fakellm), store 1 (PostgreSQL)\n"
    );
}
