//! The agent loop on in-process models, one module per behaviour: approval before a call
//! (`approval`), edited approvals and a person's wait (`approval_edit`), no secret in an answer
//! at any depth (`secrets`), what the loop takes from a host held to its bounds (`bounds`),
//! models, streaming, events and model hooks (`models`), suspension with and
//! without `wait_for` (contract section 3, `suspension`), durable resume (contract section 4,
//! `durable`), a `#[tool]` that asks (`tool_ask`), faults in tools, `wait_for` and the model's
//! calls (`faults`), and what a run tells `tracing` (`observability`).
//!
//! Also here, each in its own folder beside this one: `#[derive(Args)]`'s schemas and decoders
//! (`args::`, `tests/args/`) and the property tests (`prop::`, `tests/prop/`); run one with
//! `cargo test -p toolnexus-tests --test agent_loop -- prop::`.

mod approval;
mod approval_edit;
mod bounds;
mod durable;
mod faults;
mod governed;
mod loop_rules;
mod models;
mod observability;
mod secrets;
mod suspension;
mod together;
mod tool_ask;

// the `args` and `prop` binaries, as modules of this one (each test binary links the whole
// graph: issue 38, the test command's cold CPU); their files stay in their own folders
#[path = "../args/mod.rs"]
mod args;
#[path = "../prop/mod.rs"]
mod prop;
