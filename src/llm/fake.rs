//! An in-process scripted ChatModel for unit tests: the first rule whose
//! substrings all occur in the last user message answers.

use std::sync::Mutex;

use super::{ChatModel, ChatRequest, ChatResponse, Usage};
use crate::error::{Error, Result};

/// Needles that must all occur, and the answers (or an error message).
type FakeRule = (Vec<String>, Result<Vec<String>, String>);

pub struct FakeChat {
    rules: Vec<FakeRule>,
    /// Requests whose last message contains the needle wait this long first.
    delays: Vec<(String, u64)>,
    pub requests: Mutex<Vec<ChatRequest>>,
}

impl FakeChat {
    pub fn new() -> Self {
        FakeChat { rules: Vec::new(), delays: Vec::new(), requests: Mutex::new(Vec::new()) }
    }

    /// Answer requests whose last message contains every `needle` with `choices`
    /// (repeated to fill `n` when shorter).
    pub fn on(mut self, needles: &[&str], choices: &[&str]) -> Self {
        self.rules.push((
            needles.iter().map(|s| s.to_string()).collect(),
            Ok(choices.iter().map(|s| s.to_string()).collect()),
        ));
        self
    }

    /// Fail requests that match.
    pub fn fail(mut self, needles: &[&str], message: &str) -> Self {
        self.rules.push((needles.iter().map(|s| s.to_string()).collect(), Err(message.to_string())));
        self
    }

    /// Delay answers to requests containing `needle` by `ms`.
    pub fn slow(mut self, needle: &str, ms: u64) -> Self {
        self.delays.push((needle.to_string(), ms));
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
                    Err(m) => Err(Error::llm(&req.phase, m.clone())),
                    Ok(choices) => {
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
                        })
                    }
                };
            }
        }
        Err(Error::llm(&req.phase, format!("fake: no rule for {:?}", &last[..last.len().min(120)])))
    }

    fn model_name(&self) -> String {
        "fake".into()
    }
}
