//! One LLM call, recorded for the trace (`types::trace::LlmCall`) whatever
//! happens. Every phase that prompts goes through [`call`].

use super::{ChatModel, ChatRequest, ChatResponse};
use crate::error::Result;
use crate::types::trace::LlmCall;

/// Send `req` and return the trace record together with the outcome. On an
/// error the record carries the message and no answers.
pub fn call(llm: &dyn ChatModel, req: &ChatRequest) -> (LlmCall, Result<ChatResponse>) {
    call_until(llm, req, None)
}

/// [`call`] through [`ChatModel::chat_until`] when `decided` is given.
pub fn call_until(
    llm: &dyn ChatModel,
    req: &ChatRequest,
    decided: Option<&super::Decider<'_>>,
) -> (LlmCall, Result<ChatResponse>) {
    let started = std::time::Instant::now();
    let result = match decided {
        Some(d) => llm.chat_until(req, d),
        None => llm.chat(req),
    };
    let mut rec = LlmCall {
        phase: req.phase.clone(),
        messages: req.messages.clone(),
        temperature: req.temperature,
        n: req.n,
        schema_sent: req.response_schema.is_some(),
        grammar_sent: req.grammar.is_some(),
        ..LlmCall::default()
    };
    match &result {
        Ok(resp) => {
            rec.structured = resp.structured;
            rec.choices = resp.choices.clone();
            rec.usage = resp.usage;
            rec.latency_ms = resp.latency_ms;
            rec.requests = resp.requests;
            rec.truncated = resp.truncated;
            rec.local = resp.local;
            rec.cuts = resp.cuts.clone();
            rec.skipped = resp.skipped;
        }
        Err(e) => {
            rec.error = Some(e.to_string());
            rec.latency_ms = started.elapsed().as_secs_f64() * 1000.0;
        }
    }
    (rec, result)
}
