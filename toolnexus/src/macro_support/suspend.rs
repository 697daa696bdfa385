//! Support for `suspend!` and the answer-form derive.
