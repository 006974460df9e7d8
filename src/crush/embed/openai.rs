//! An OpenAI-compatible `/v1/embeddings` backend (OpenAI, vLLM, llama.cpp
//! server, text-embeddings-inference, ...).
//!
//! Configuration comes from the environment: the key from `LUCY_API_KEY` or
//! `OPENAI_API_KEY` (never printed or stored), the base URL from
//! `LUCY_EMBED_URL`, then the older `LUCY_EMBED_BASE_URL`, then the chat
//! client's `LUCY_LLM_URL` (one local server often serves both), then
//! `OPENAI_BASE_URL` (default `https://api.openai.com/v1`), the model from
//! `LUCY_EMBED_MODEL` (default `text-embedding-3-small`).

use std::time::Duration;

use serde::Deserialize;

use super::{normalize, Embedder};
use crate::error::{Error, Result};

/// Texts per request; OpenAI accepts up to 2048 inputs, small servers less.
const BATCH: usize = 128;

/// Embeddings over HTTP.
pub struct OpenAiEmbedder {
    base_url: String,
    model: String,
    api_key: Option<String>,
    client: reqwest::blocking::Client,
}

impl std::fmt::Debug for OpenAiEmbedder {
    // Hand-written so the key can never end up in a log or trace.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("OpenAiEmbedder")
            .field("base_url", &self.base_url)
            .field("model", &self.model)
            .field("api_key", &self.api_key.as_ref().map(|_| "<set>"))
            .finish()
    }
}

#[derive(Deserialize)]
struct Response {
    data: Vec<Item>,
}

#[derive(Deserialize)]
struct Item {
    #[serde(default)]
    index: Option<usize>,
    embedding: Vec<f32>,
}

fn env(name: &str) -> Option<String> {
    std::env::var(name).ok().filter(|v| !v.trim().is_empty())
}

impl OpenAiEmbedder {
    /// A client for `base_url` (ending in `/v1` or equivalent) and `model`.
    pub fn new(base_url: &str, model: &str, api_key: Option<String>, timeout: Duration) -> Result<Self> {
        crate::llm::tls::install_provider();
        let client = reqwest::blocking::Client::builder()
            .timeout(timeout)
            .build()
            .map_err(|e| Error::llm("embeddings", format!("cannot build HTTP client: {e}")))?;
        Ok(OpenAiEmbedder {
            base_url: base_url.trim_end_matches('/').to_string(),
            model: model.to_string(),
            api_key,
            client,
        })
    }

    /// Configure from the environment (see the module docs).
    pub fn from_env() -> Result<Self> {
        let base = env("LUCY_EMBED_URL")
            .or_else(|| env("LUCY_EMBED_BASE_URL"))
            .or_else(|| env("LUCY_LLM_URL"))
            .or_else(|| env("OPENAI_BASE_URL"))
            .unwrap_or_else(|| "https://api.openai.com/v1".to_string());
        let model = env("LUCY_EMBED_MODEL").unwrap_or_else(|| "text-embedding-3-small".to_string());
        let key = env("LUCY_API_KEY").or_else(|| env("OPENAI_API_KEY"));
        Self::new(&base, &model, key, Duration::from_secs(60))
    }

    fn request(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        let url = format!("{}/embeddings", self.base_url);
        let mut req = self.client.post(&url).json(&serde_json::json!({"model": self.model, "input": texts}));
        if let Some(k) = &self.api_key {
            req = req.bearer_auth(k);
        }
        let fail = |m: String| Error::llm("embeddings", format!("{url} (model {}): {m}", self.model));
        let resp = req.send().map_err(|e| fail(format!("request failed: {}", e.without_url())))?;
        let status = resp.status();
        // Bounded, and the key redacted before the excerpt is cut.
        let body = crate::llm::read_capped(resp).map_err(fail)?;
        let body = crate::llm::redact(&body, self.api_key.as_deref());
        if !status.is_success() {
            return Err(fail(format!("HTTP {status}: {}", crate::error::cut(&body, 300))));
        }
        let parsed: Response = serde_json::from_str(&body).map_err(|e| {
            fail(format!("response is not an embeddings answer ({e}); expected {{\"data\":[{{\"embedding\":[...]}}]}}"))
        })?;
        if parsed.data.len() != texts.len() {
            return Err(fail(format!("asked for {} embeddings, got {}", texts.len(), parsed.data.len())));
        }
        let mut items = parsed.data;
        if items.iter().all(|i| i.index.is_some()) {
            items.sort_by_key(|i| i.index);
        }
        let dim = items.first().map(|i| i.embedding.len()).unwrap_or(0);
        if dim == 0 || items.iter().any(|i| i.embedding.len() != dim) {
            return Err(fail("embeddings are empty or of different lengths".into()));
        }
        Ok(items
            .into_iter()
            .map(|i| {
                let mut v = i.embedding;
                normalize(&mut v);
                v
            })
            .collect())
    }
}

impl Embedder for OpenAiEmbedder {
    fn embed(&self, texts: &[String]) -> Result<Vec<Vec<f32>>> {
        let mut out = Vec::with_capacity(texts.len());
        for chunk in texts.chunks(BATCH) {
            out.extend(self.request(chunk)?);
        }
        Ok(out)
    }
    fn id(&self) -> String {
        format!("openai-compatible:{}@{}", self.model, self.base_url)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A one-shot loopback server answering with `answer(request body)`.
    fn serve(answer: impl Fn(&str) -> (u16, String) + Send + 'static, requests: usize) -> String {
        let server = tiny_http::Server::http("127.0.0.1:0").unwrap();
        let addr = server.server_addr().to_ip().unwrap();
        std::thread::spawn(move || {
            for _ in 0..requests {
                let Ok(mut req) = server.recv() else { return };
                let mut body = String::new();
                req.as_reader().read_to_string(&mut body).unwrap();
                let auth = req
                    .headers()
                    .iter()
                    .any(|h| h.field.equiv("Authorization") && h.value.as_str() == "Bearer sk-test");
                let (code, text) = if auth { answer(&body) } else { (401, "no key".into()) };
                let _ = req.respond(tiny_http::Response::from_string(text).with_status_code(code));
            }
        });
        format!("http://{addr}/v1")
    }

    #[test]
    fn embeds_in_request_order_and_normalises() {
        let url = serve(
            |body| {
                let v: serde_json::Value = serde_json::from_str(body).unwrap();
                assert_eq!(v["model"], "m");
                let n = v["input"].as_array().unwrap().len();
                // Answer out of order to check the index sort.
                let data: Vec<_> =
                    (0..n).rev().map(|i| serde_json::json!({"index": i, "embedding": [i as f32 + 1.0, 0.0]})).collect();
                (200, serde_json::json!({"data": data}).to_string())
            },
            1,
        );
        let e = OpenAiEmbedder::new(&url, "m", Some("sk-test".into()), Duration::from_secs(5)).unwrap();
        let v = e.embed(&["a".into(), "b".into()]).unwrap();
        assert_eq!(v, vec![vec![1.0, 0.0], vec![1.0, 0.0]]);
        assert!(!format!("{e:?}").contains("sk-test"));
    }

    #[test]
    fn http_errors_are_reported_without_the_key() {
        let url = serve(|_| (500, "boom".into()), 1);
        let e = OpenAiEmbedder::new(&url, "m", Some("sk-test".into()), Duration::from_secs(5)).unwrap();
        let err = e.embed(&["a".into()]).unwrap_err().to_string();
        assert!(err.contains("HTTP 500") && err.contains("boom"), "{err}");
        assert!(!err.contains("sk-test"));
    }

    #[test]
    fn garbage_answer_is_a_clear_error() {
        let url = serve(|_| (200, "{\"hello\": 1}".into()), 1);
        let e = OpenAiEmbedder::new(&url, "m", Some("sk-test".into()), Duration::from_secs(5)).unwrap();
        let err = e.embed(&["a".into()]).unwrap_err().to_string();
        assert!(err.contains("not an embeddings answer"), "{err}");
    }
}
