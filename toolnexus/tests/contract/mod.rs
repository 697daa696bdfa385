//! What crosses the wire, one module per concern: the wire types of contract sections 1 and 2
//! (`types`), the credential trust boundary (`boundary`), provider tool schemas (`adapters`),
//! the OpenAI strict and Gemini schema lowerings (`lowering`), and bounded cost for any input
//! (`limits`).

mod adapters;
mod boundary;
mod limits;
mod lowering;
mod types;
