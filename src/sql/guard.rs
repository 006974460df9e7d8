//! The read-only single-SELECT guard (in progress).
