//! Durable runs that cannot be forged, replayed or lost (CONTRACT sections 2 and 4), one module
//! per guarantee: checkpoints after each tool result (`checkpoints`), request ids unique across processes (`ids`), `expiresAt` to the millisecond
//! on every path (`expiry`), a record checked against itself on load (`record`), sealed
//! records (`seal`), and single use by run id (`single_use`).

mod agent;
mod checkpoints;
mod expiry;
mod ids;
mod reconcile;
mod record;
mod seal;
mod single_use;
