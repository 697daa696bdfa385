//! Generated inputs, one module per property: the wire contract's round trips and key order
//! (`contract`), suspension in the loop (`suspension`), the credential trust boundary
//! (`boundary`; over answers, at every door: `answers`), durable depth (`durable`), the
//! remembered rules' call key (`rules`), and the regression tests for what fuzzing and
//! hardening found (`regressions`).

mod answers;
mod boundary;
mod contract;
mod durable;
mod regressions;
mod rules;
mod suspension;
