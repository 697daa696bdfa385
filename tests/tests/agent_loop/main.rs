//! The agent loop on in-process models, one module per behaviour: approval before a call
//! (`approval`), edited approvals and a person's wait (`approval_edit`), no secret in an answer
//! at any depth (`secrets`), what the loop takes from a host held to its bounds (`bounds`),
//! models, streaming, events and model hooks (`models`), suspension with and
//! without `wait_for` (contract section 3, `suspension`), durable resume (contract section 4,
//! `durable`), a `#[tool]` that asks (`tool_ask`), faults in tools, `wait_for` and the model's
//! calls (`faults`), and what a run tells `tracing` (`observability`).

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
