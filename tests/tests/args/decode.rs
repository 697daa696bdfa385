//! What the decoders accept and refuse.
