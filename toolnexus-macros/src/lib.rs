//! Procedural macros of [toolnexus](https://docs.rs/toolnexus). An implementation detail: depend
//! on `toolnexus`, which re-exports these macros with their documentation.
