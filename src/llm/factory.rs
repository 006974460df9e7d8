//! The one place a [`ChatModel`] is built from the LLM settings
//! ([`LlmArgs`]): a cassette replayer, the OpenAI-compatible client or the
//! embedded model (optionally recording), with `--llm-temperature` applied
//! outermost.

use super::cassette::{Recorder, Replayer};
use super::config::{LlmArgs, StructuredMode, NOT_CONFIGURED_HINT};
use super::embedded::EmbeddedModel;
use super::openai::OpenAiClient;
use super::{ChatModel, ChatRequest, ChatResponse};
use crate::error::{Error, Result};

/// Build the chat model the flags describe, reading the process environment:
/// - `--replay FILE`: a [`Replayer`] (no network);
/// - else a model name (`--llm-model` / `LUCY_LLM_MODEL`): an
///   [`OpenAiClient`];
/// - else a GGUF file (`--llm-gguf`, `LUCY_LLM_GGUF`, or the default model
///   when present): an [`EmbeddedModel`], announced on stderr;
/// - else `Ok(None)`: no LLM configured (print [`NOT_CONFIGURED_HINT`]).
///
/// A live model is wrapped in a [`Recorder`] with `--record FILE`
/// (incremental: prompts the file already holds are answered from it).
/// `--replay OLD --record NEW` answers from OLD, sends only the prompts OLD
/// lacks to the live model (a replay miss when none is configured), and
/// writes every call of the run into NEW ([`Recorder::copying`]).
///
/// `--llm-temperature` is applied outermost, so cassettes are keyed by the
/// temperature actually used.
pub fn build_chat_model(args: &LlmArgs) -> Result<Option<Box<dyn ChatModel>>> {
    build_chat_model_with_env(args, &|k| std::env::var(k).ok())
}

/// [`build_chat_model`] with `env` standing in for the process environment.
pub fn build_chat_model_with_env(
    args: &LlmArgs,
    env: &dyn Fn(&str) -> Option<String>,
) -> Result<Option<Box<dyn ChatModel>>> {
    let inner: Box<dyn ChatModel> = match (&args.replay, &args.record) {
        (Some(path), None) => Box::new(Replayer::open(path, args.model_from(env))?),
        (None, record) => {
            let Some(client) = live_model(args, env)? else {
                if record.is_some() {
                    return Err(Error::Input(format!("--record needs an LLM to record from; {NOT_CONFIGURED_HINT}")));
                }
                return Ok(None);
            };
            match record {
                Some(path) => Box::new(Recorder::create(path, client)?),
                None => client,
            }
        }
        (Some(from), Some(to)) => {
            // Prompts the old cassette lacks go to the live model when one
            // is configured; otherwise they fail as a replay miss does.
            Box::new(Recorder::copying(from, to, live_model(args, env)?, args.model_from(env))?)
        }
    };
    Ok(Some(match args.llm_temperature {
        Some(t) => Box::new(WithTemperature { inner, temperature: t }),
        None => inner,
    }))
}

/// The endpoint client or the embedded model the flags configure, if any.
fn live_model(args: &LlmArgs, env: &dyn Fn(&str) -> Option<String>) -> Result<Option<Box<dyn ChatModel>>> {
    if let Some(cfg) = args.to_config(env)? {
        return Ok(Some(Box::new(OpenAiClient::new(cfg)?)));
    }
    let Some(choice) = args.gguf_from(env)? else { return Ok(None) };
    let m = EmbeddedModel::load(&choice.options, &choice.fix, env)?
        .with_max_tokens(args.llm_max_tokens)
        .with_constraints(args.structured != StructuredMode::Off);
    let threads = if m.auto_threads() {
        format!("threads: 1 per generated token, up to {} for prompts and batches", m.threads())
    } else {
        format!("{} thread{}", m.threads(), if m.threads() == 1 { "" } else { "s" })
    };
    eprintln!(
        "lucy: {} model {} ({threads}; llama.cpp in-process)",
        if choice.is_default { "no LLM endpoint configured: using the embedded" } else { "using the embedded" },
        m.path().display(),
    );
    Ok(Some(Box::new(m)))
}

/// Rewrites every request's temperature before passing it on.
struct WithTemperature {
    inner: Box<dyn ChatModel>,
    temperature: f64,
}

impl ChatModel for WithTemperature {
    fn chat(&self, req: &ChatRequest) -> Result<ChatResponse> {
        let mut req = req.clone();
        req.temperature = self.temperature;
        self.inner.chat(&req)
    }
    fn chat_until(&self, req: &ChatRequest, decided: &super::Decider<'_>) -> Result<ChatResponse> {
        let mut req = req.clone();
        req.temperature = self.temperature;
        self.inner.chat_until(&req, decided)
    }
    fn model_name(&self) -> String {
        self.inner.model_name()
    }
    fn honours_grammar(&self) -> bool {
        self.inner.honours_grammar()
    }
    fn replay_misses(&self) -> Vec<String> {
        self.inner.replay_misses()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::config::env_of;

    #[test]
    fn nothing_configured_is_none() {
        let args = LlmArgs::default();
        assert!(build_chat_model_with_env(&args, &env_of(&[])).unwrap().is_none());
        // An API key alone does not configure an LLM: the model is what says which one.
        assert!(build_chat_model_with_env(&args, &env_of(&[("OPENAI_API_KEY", "k")])).unwrap().is_none());
    }

    #[test]
    fn record_without_model_is_an_error() {
        let args = LlmArgs { record: Some("x.jsonl".into()), ..Default::default() };
        let err = build_chat_model_with_env(&args, &env_of(&[])).err().unwrap().to_string();
        assert!(err.contains("--record"), "{err}");
    }
}
