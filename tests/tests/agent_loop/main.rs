//! The agent loop on in-process models, one module per behaviour: approval before a call
//! (`approval`), models, streaming, events and model hooks (`models`), suspension with and
//! without `wait_for` (contract section 3, `suspension`), durable resume (contract section 4,
//! `durable`), a `#[tool]` that asks
//! (`tool_ask`), and faults in tools, `wait_for` and the model's calls (`faults`).

mod approval;
mod durable;
mod faults;
mod models;
mod suspension;
mod tool_ask;
