//! An in-process scripted ChatModel for unit tests: the first rule whose
//! substrings all occur in the last user message answers.

use std::sync::Mutex;

use super::{ChatModel, ChatRequest, ChatResponse, Usage};
use crate::error::{Error, Result};

/// What a rule answers.
enum FakeAnswer {
    /// These choices.
    Choices(Vec<String>),
    /// This error.
    Fail(String),
    /// One answer decoded from these tokens, one at a time, through the
    /// repetition stop (`super::stop`) as a decoding backend does: cut where
    /// it loops, or at the request's `max_tokens`.
    Stream(Vec<String>),
}

/// Needles that must all occur, and the answer.
type FakeRule = (Vec<String>, FakeAnswer);

pub struct FakeChat {
    rules: Vec<FakeRule>,
    /// Requests whose last message contains the needle wait this long first.
    delays: Vec<(String, u64)>,
    pub requests: Mutex<Vec<ChatRequest>>,
    /// Answer [`ChatModel::chat_until`] as a decoding backend does: the
    /// first samples, the rest only when they do not decide.
    adaptive: bool,
}

impl FakeChat {
    pub fn new() -> Self {
        FakeChat { rules: Vec::new(), delays: Vec::new(), requests: Mutex::new(Vec::new()), adaptive: false }
    }

    /// Answer requests whose last message contains every `needle` with `choices`
    /// (repeated to fill `n` when shorter).
    pub fn on(mut self, needles: &[&str], choices: &[&str]) -> Self {
        self.rules.push((
            needles.iter().map(|s| s.to_string()).collect(),
            FakeAnswer::Choices(choices.iter().map(|s| s.to_string()).collect()),
        ));
        self
    }

    /// Answer requests that match by decoding `tokens` one at a time
    /// through the repetition stop ([`FakeAnswer::Stream`]).
    pub fn stream(mut self, needles: &[&str], tokens: Vec<String>) -> Self {
        self.rules.push((needles.iter().map(|s| s.to_string()).collect(), FakeAnswer::Stream(tokens)));
        self
    }

    /// Fail requests that match.
    pub fn fail(mut self, needles: &[&str], message: &str) -> Self {
        self.rules.push((needles.iter().map(|s| s.to_string()).collect(), FakeAnswer::Fail(message.to_string())));
        self
    }

    /// Delay answers to requests containing `needle` by `ms`.
    pub fn slow(mut self, needle: &str, ms: u64) -> Self {
        self.delays.push((needle.to_string(), ms));
        self
    }

    /// Stop sampling when the caller's vote is decided ([`Self::adaptive`]).
    pub fn adaptive(mut self) -> Self {
        self.adaptive = true;
        self
    }

    pub fn phases(&self) -> Vec<String> {
        self.requests.lock().unwrap().iter().map(|r| r.phase.clone()).collect()
    }
}

impl ChatModel for FakeChat {
    fn chat(&self, req: &ChatRequest) -> Result<ChatResponse> {
        self.requests.lock().unwrap().push(req.clone());
        let last = req.messages.last().map(|m| m.content.as_str()).unwrap_or("");
        for (needle, ms) in &self.delays {
            if last.contains(needle.as_str()) {
                std::thread::sleep(std::time::Duration::from_millis(*ms));
            }
        }
        for (needles, answer) in &self.rules {
            if needles.iter().all(|n| last.contains(n.as_str())) {
                return match answer {
                    FakeAnswer::Fail(m) => Err(Error::llm(&req.phase, m.clone())),
                    FakeAnswer::Stream(tokens) => Ok(decode(tokens, req.max_tokens)),
                    FakeAnswer::Choices(choices) => {
                        let mut c: Vec<String> = choices.clone();
                        while !c.is_empty() && c.len() < req.n {
                            c.push(choices[c.len() % choices.len()].clone());
                        }
                        Ok(ChatResponse {
                            choices: c,
                            usage: Usage { prompt_tokens: 10, completion_tokens: 2 },
                            latency_ms: 1.0,
                            structured: false,
                            requests: 1,
                            truncated: 0,
                            local: None,
                            cuts: Vec::new(),
                            skipped: 0,
                        })
                    }
                };
            }
        }
        Err(Error::llm(&req.phase, format!("fake: no rule for {:?}", &last[..last.len().min(120)])))
    }

    fn chat_until(&self, req: &ChatRequest, decided: &super::Decider<'_>) -> Result<ChatResponse> {
        let mut r = self.chat(req)?;
        if self.adaptive && decided.first < r.choices.len() && (decided.decided)(&r.choices[..decided.first]) {
            r.skipped = (r.choices.len() - decided.first) as u32;
            r.choices.truncate(decided.first);
        }
        Ok(r)
    }

    fn model_name(&self) -> String {
        "fake".into()
    }
}

/// Decode `tokens` as a backend would: one at a time through the repetition
/// stop, until it cuts or `max_tokens` is reached.
fn decode(tokens: &[String], max_tokens: Option<u32>) -> ChatResponse {
    let mut stop = super::stop::Stopper::new();
    let mut ids: std::collections::HashMap<&str, u32> = std::collections::HashMap::new();
    let mut cuts = Vec::new();
    let mut n = 0u64;
    let mut truncated = 0;
    for t in tokens {
        if max_tokens.is_some_and(|m| n >= u64::from(m)) {
            truncated = 1;
            break;
        }
        let next = ids.len() as u32;
        let id = *ids.entry(t.as_str()).or_insert(next);
        n += 1;
        if let Some(c) = stop.push(id, t.as_bytes()) {
            cuts.push(c);
            truncated = 1;
            break;
        }
    }
    ChatResponse {
        choices: vec![String::from_utf8_lossy(stop.text()).into_owned()],
        usage: Usage { prompt_tokens: 10, completion_tokens: n },
        latency_ms: 1.0,
        structured: false,
        requests: 1,
        truncated,
        local: None,
        cuts,
        skipped: 0,
    }
}
