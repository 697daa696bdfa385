//! The HTTP providers against the fake provider (a real server on 127.0.0.1), one module per
//! behaviour: what goes on the wire (`wire`), streaming (`stream`), retries, timeouts,
//! cancellation and the key (`resilience`), logging (`logs`), a connection dropped under the
//! agent loop (`faults`), and the whole loop over HTTP in both styles (`e2e`).

mod e2e;
mod faults;
mod logs;
mod resilience;
mod stream;
mod wire;
