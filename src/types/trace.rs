//! Trace of one `lucy ask` run: what each phase saw, chose and why.
//! Written by `lucy ask --trace`, read by `lucy explain` and `lucy bench`.
