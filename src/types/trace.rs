//! Trace of one `lucy ask` run: what each phase saw, chose and why.
//! (Owned by the LLM-phases work; see `docs/llm.md`.)
