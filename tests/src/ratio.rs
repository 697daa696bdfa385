//! Ratios against a baseline measured in the same run, for the benchmarks: cases measured
//! interleaved, round by round, so a machine whose speed drifts (a shared VM) moves all of a
//! round's cases alike and the median of the rounds' ratios holds still.

/// Rounds of interleaved measurements: in each round every case times one batch of its own
/// (the order rotating from round to round), so the cases of a round run under the same
/// machine state. `cases[0]` is the subject; the result holds, for each other case, the
/// median over the rounds of `subject / case` (robust to a machine whose speed drifts, where
/// medians taken minutes apart are not), and the median batch time of every case.
///
/// The first [`warm_up`]`(rounds)` rounds run the same way but are not kept (connections,
/// statement caches and the allocator settle, whichever case ran first).
pub fn interleaved(
    rounds: usize,
    cases: &mut [&mut dyn FnMut() -> std::time::Duration],
) -> Interleaved {
    for round in 0..warm_up(rounds) {
        for k in 0..cases.len() {
            cases[(round + k) % cases.len()]();
        }
    }
    let mut times: Vec<Vec<f64>> = vec![Vec::with_capacity(rounds); cases.len()];
    for round in 0..rounds {
        for k in 0..cases.len() {
            let i = (round + k) % cases.len();
            times[i].push(cases[i]().as_secs_f64());
        }
    }
    let ratios = (1..cases.len())
        .map(|i| {
            median(
                times[0]
                    .iter()
                    .zip(&times[i])
                    .map(|(subject, case)| subject / case)
                    .collect(),
            )
        })
        .collect();
    Interleaved {
        medians: times.into_iter().map(median).collect(),
        ratios,
    }
}

/// The rounds [`interleaved`] runs before the `rounds` it keeps: a tenth, at least 2.
pub fn warm_up(rounds: usize) -> usize {
    (rounds / 10).max(2)
}

/// What [`interleaved`] measured.
#[derive(Debug)]
pub struct Interleaved {
    /// The median batch time of each case, in seconds.
    pub medians: Vec<f64>,
    /// For each case after the subject, the median ratio subject / case.
    pub ratios: Vec<f64>,
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v.get(v.len() / 2).copied().unwrap_or(f64::NAN)
}

/// Whether the benchmark binary runs as a benchmark (`cargo bench`), not as the one-pass
/// smoke test of `cargo test --benches`.
pub fn benchmarking() -> bool {
    std::env::args().any(|a| a == "--bench")
}
