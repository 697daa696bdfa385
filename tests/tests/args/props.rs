//! Property tests: the schema and the decoder agree.
