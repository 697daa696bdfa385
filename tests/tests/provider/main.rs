//! The HTTP providers against the fake provider (a real server on 127.0.0.1), one module per
//! behaviour: what goes on the wire (`wire`), streaming (`stream`), retries, timeouts,
//! cancellation and the key (`resilience`), logging (`logs`), content parts of tool results
//! (`parts`), a connection dropped under the agent loop (`faults`), stall limits and capped
//! bodies (`limits`), what is retried and what the parsers forgive (`recovery`), redaction
//! (`secrets`), the whole loop over HTTP in both styles (`e2e`), and third-party mock servers
//! from PyPI (`third_party`).

mod e2e;
mod faults;
mod limits;
mod logs;
mod parts;
mod recovery;
mod resilience;
mod secrets;
mod stream;
mod third_party;
mod wire;

// last: what this binary skipped (its tests that need a missing component pass without running)
toolnexus_tests::skip_summary!();
