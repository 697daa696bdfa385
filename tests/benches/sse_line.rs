//! The server-sent events reader on one 8 MB line (issue 22): delivered in one piece and in
//! 64 KiB pieces, the cost must be about the same (the reader is linear in the bytes it
//! receives; the parser it replaced rescanned its buffer on every chunk, 6x slower in pieces).
//!
//! `cargo bench -p toolnexus-tests --features bench --bench sse_line`: divan's table, then the
//! ratio of the medians `pieces / one piece`, measured interleaved round by round (see
//! `toolnexus_tests::ratio`); it must stay under 2. Under `cargo test --features bench --benches`
//! each benchmark runs once, as a smoke test.

use divan::{Bencher, black_box};
use toolnexus::__private::parse_event_stream_chunks;
use toolnexus::providers::ProviderStyle;

fn main() {
    // both deliveries read the same text, or the comparison means nothing
    let body = line();
    let whole = parse(&[&body]);
    let pieces: Vec<&[u8]> = body.chunks(PIECE).collect();
    assert_eq!(parse(&pieces), whole);
    assert_eq!(whole, TEXT_BYTES);
    divan::main();
    if toolnexus_tests::ratio::benchmarking() {
        report_ratio();
    }
}

/// The text the line carries, and the piece size.
const TEXT_BYTES: usize = 8 << 20;
const PIECE: usize = 64 << 10;

/// One OpenAI-style stream whose only content event is one 8 MB line.
fn line() -> Vec<u8> {
    let text = "x".repeat(TEXT_BYTES);
    format!(
        "data: {{\"choices\":[{{\"index\":0,\"delta\":{{\"content\":\"{text}\"}}}}]}}\n\ndata: [DONE]\n\n"
    )
    .into_bytes()
}

/// The length of the streamed turn's text.
fn parse(chunks: &[&[u8]]) -> usize {
    let turn = parse_event_stream_chunks(ProviderStyle::OpenAi, chunks, &|_| {}).unwrap();
    turn.text.map_or(0, |t| t.len())
}

#[divan::bench(sample_count = 10)]
fn one_piece(b: Bencher<'_, '_>) {
    let body = line();
    b.bench(|| black_box(parse(&[black_box(&body)])));
}

#[divan::bench(sample_count = 10)]
fn pieces_of_64_kib(b: Bencher<'_, '_>) {
    let body = line();
    let pieces: Vec<&[u8]> = body.chunks(PIECE).collect();
    b.bench(|| black_box(parse(black_box(&pieces))));
}

/// `pieces / one piece`, interleaved round by round.
fn report_ratio() {
    let body = line();
    let pieces: Vec<&[u8]> = body.chunks(PIECE).collect();
    let mut in_pieces = || {
        let start = std::time::Instant::now();
        black_box(parse(black_box(&pieces)));
        start.elapsed()
    };
    let mut whole = || {
        let start = std::time::Instant::now();
        black_box(parse(&[black_box(&body)]));
        start.elapsed()
    };
    let r = toolnexus_tests::ratio::interleaved(21, &mut [&mut in_pieces, &mut whole]);
    println!(
        "sse_line: one piece {:.1} ms, 64 KiB pieces {:.1} ms, ratio pieces/one {:.2}",
        r.medians[1] * 1e3,
        r.medians[0] * 1e3,
        r.ratios[0]
    );
    assert!(
        r.ratios[0] < 2.0,
        "pieces cost {:.2}x one piece",
        r.ratios[0]
    );
}
