//! A streamed ask's progress for the web page: the step that runs, each
//! prompt as it is sent and answered, and the model's generation speed —
//! what `lucy ask` draws on a terminal, as `progress` server-sent events.
//!
//! The pipeline calls a [`Progress`] observer from its blocking task (and
//! from the threads of concurrent explorations); [`StreamProgress`] turns
//! each call into one event payload and hands it to a sender, so this file
//! knows nothing of axum.

use std::sync::Mutex;

use schemars::JsonSchema;
use serde::Serialize;

use crate::pipeline::progress::{PromptInfo, PromptStats};
use crate::pipeline::{Progress, Step};

/// One `progress` event of a streamed ask.
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct ProgressEvent {
    /// `step` (a step starts), `prompt` (a prompt is sent) or `prompt_done`
    /// (its answer, or its error, is back).
    pub kind: String,
    /// `MatchTables`, `GenerateView`, `QueryView` or `SQL (direct)`.
    pub step: String,
    /// The prompt's number within its step (1, 2, …); absent for `step`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub index: Option<usize>,
    /// The prompt's name (`match_tables`, `attributes`, `query_view`, …).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompt: Option<String>,
    /// What the prompt asks, in words: `attributes of CLIENT`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub what: Option<String>,
    /// Samples asked for.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub samples: Option<usize>,
    /// `prompt_done`: whether the call answered.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ok: Option<bool>,
    /// `prompt_done`: tokens this prompt generated.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tokens: Option<u64>,
    /// `prompt_done`: the call's wall time in milliseconds.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub ms: Option<f64>,
    /// Prompts sent and not yet answered, this one included for `prompt`.
    pub in_flight: usize,
    /// Generated tokens per second over the prompts answered so far (0
    /// before the first answer), as the terminal's status line shows it.
    pub tokens_per_s: f64,
}

/// A [`Progress`] that sends a [`ProgressEvent`] for each call.
pub struct StreamProgress<F: Fn(ProgressEvent) + Send + Sync> {
    send: F,
    state: Mutex<Totals>,
}

#[derive(Default)]
struct Totals {
    in_flight: usize,
    tokens: u64,
    decode_ms: f64,
}

impl Totals {
    fn tokens_per_s(&self) -> f64 {
        if self.tokens == 0 || self.decode_ms <= 0.0 {
            0.0
        } else {
            // One decimal, as the status line.
            (self.tokens as f64 * 10_000.0 / self.decode_ms).round() / 10.0
        }
    }
}

impl<F: Fn(ProgressEvent) + Send + Sync> StreamProgress<F> {
    /// Events go to `send` (called from the pipeline's threads).
    pub fn new(send: F) -> Self {
        StreamProgress { send, state: Mutex::new(Totals::default()) }
    }

    /// One event: `f` updates the totals first; `stats` are the answered
    /// prompt's (for `prompt_done`).
    fn event(
        &self,
        kind: &str,
        step: Step,
        prompt: Option<&PromptInfo>,
        stats: Option<&PromptStats>,
        f: impl FnOnce(&mut Totals),
    ) {
        let (in_flight, tokens_per_s) = match self.state.lock() {
            Ok(mut t) => {
                f(&mut t);
                (t.in_flight, t.tokens_per_s())
            }
            Err(_) => return,
        };
        (self.send)(ProgressEvent {
            kind: kind.to_string(),
            step: step.as_str().to_string(),
            index: prompt.map(|p| p.index),
            prompt: prompt.map(|p| p.prompt.clone()),
            what: prompt.map(PromptInfo::describe),
            samples: prompt.map(|p| p.samples),
            ok: stats.map(|s| s.ok),
            tokens: stats.map(|s| s.completion_tokens),
            ms: stats.map(|s| (s.ms * 10.0).round() / 10.0),
            in_flight,
            tokens_per_s,
        });
    }
}

impl<F: Fn(ProgressEvent) + Send + Sync> Progress for StreamProgress<F> {
    fn step(&self, step: Step) {
        self.event("step", step, None, None, |_| {});
    }

    fn prompt_started(&self, prompt: &PromptInfo) {
        self.event("prompt", prompt.step, Some(prompt), None, |t| t.in_flight += 1);
    }

    fn prompt_finished(&self, prompt: &PromptInfo, stats: &PromptStats) {
        self.event("prompt_done", prompt.step, Some(prompt), Some(stats), |t| {
            t.in_flight = t.in_flight.saturating_sub(1);
            if stats.completion_tokens > 0 {
                t.tokens += stats.completion_tokens;
                t.decode_ms += stats.decode_ms;
            }
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn info(index: usize, prompt: &str, subject: Option<&str>) -> PromptInfo {
        PromptInfo {
            step: Step::MatchTables,
            index,
            prompt: prompt.into(),
            subject: subject.map(String::from),
            samples: 5,
        }
    }

    #[test]
    fn events_count_prompts_in_flight_and_the_generation_speed() {
        let seen = Mutex::new(Vec::new());
        let p = StreamProgress::new(|e| seen.lock().unwrap().push(e));
        p.step(Step::MatchTables);
        let (a, b) = (info(2, "attributes", Some("CLIENT")), info(3, "attributes", Some("DATACENTER")));
        p.prompt_started(&a);
        p.prompt_started(&b);
        let stats = PromptStats { ok: true, prompt_tokens: 900, completion_tokens: 40, ms: 1234.56, decode_ms: 1000.0 };
        p.prompt_finished(&a, &stats);
        p.prompt_finished(&b, &PromptStats { ok: false, ..PromptStats::default() });
        let seen = seen.into_inner().unwrap();
        let kinds: Vec<(&str, usize, f64)> =
            seen.iter().map(|e| (e.kind.as_str(), e.in_flight, e.tokens_per_s)).collect();
        assert_eq!(
            kinds,
            [
                ("step", 0, 0.0),
                ("prompt", 1, 0.0),
                ("prompt", 2, 0.0),
                ("prompt_done", 1, 40.0),
                ("prompt_done", 0, 40.0)
            ]
        );
        assert_eq!(seen[1].what.as_deref(), Some("attributes of CLIENT"));
        assert_eq!(seen[3].ms, Some(1234.6));
        assert_eq!((seen[4].ok, seen[4].tokens), (Some(false), Some(0)));
        // The JSON the page reads: a step event carries no prompt fields.
        let j = serde_json::to_value(&seen[0]).unwrap();
        assert_eq!(j, serde_json::json!({"kind": "step", "step": "MatchTables", "in_flight": 0, "tokens_per_s": 0.0}));
    }
}
