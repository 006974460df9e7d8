//! Record/replay cassettes: reproducible, offline LLM runs.
//!
//! A cassette is a JSONL file, one [`CassetteEntry`] per line, keyed by the
//! SHA-256 of (model, messages, temperature, n, response_schema, grammar). It holds
//! what the phases sent and got back, never the API key or HTTP headers.

use std::collections::HashMap;
use std::fs::{File, OpenOptions};
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use serde::{Deserialize, Serialize};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use super::wire::excerpt;
use super::{ChatModel, ChatRequest, ChatResponse, Message};
use crate::error::{read_to_string, Error, Result};

/// One recorded call.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CassetteEntry {
    /// [`cassette_key`] of the request.
    pub key: String,
    pub phase: String,
    pub model: String,
    pub messages: Vec<Message>,
    pub temperature: f64,
    pub n: usize,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub response_schema: Option<Value>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grammar: Option<String>,
    /// The answer as the phase received it (choices, usage, latency,
    /// structured flag, request count); replay returns it unchanged.
    /// Empty when the call failed (`error`).
    #[serde(default)]
    pub response: ChatResponse,
    /// The call's error message (as the backend reported it, keys already
    /// redacted), when it failed: replay fails the same way, so a recorded
    /// run's failures reproduce too.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// The cassette key of `req` sent to `model`: hex SHA-256 of a canonical JSON
/// rendering of (model, messages, temperature, n, response_schema). The phase
/// is not part of it, so renaming a phase does not invalidate cassettes.
pub fn cassette_key(model: &str, req: &ChatRequest) -> String {
    let mut canon = json!({
        "model": model,
        "messages": req.messages,
        "temperature": req.temperature,
        "n": req.n,
        "response_schema": req.response_schema,
    });
    // Added only when present, so cassettes recorded before grammars existed
    // keep their keys.
    if let Some(g) = &req.grammar {
        canon["grammar"] = g.clone().into();
    }
    let digest = Sha256::digest(canon.to_string().as_bytes());
    digest.iter().map(|b| format!("{b:02x}")).collect()
}

/// Wraps a model and appends every successful call to a cassette file.
/// Failed calls are not recorded (replay them by re-running the recording).
pub struct Recorder {
    inner: Box<dyn ChatModel>,
    path: PathBuf,
    file: Mutex<File>,
}

impl Recorder {
    /// Record `inner`'s answers, appending to `path` (created if missing).
    pub fn create(path: impl AsRef<Path>, inner: Box<dyn ChatModel>) -> Result<Self> {
        let path = path.as_ref().to_path_buf();
        let file = OpenOptions::new().create(true).append(true).open(&path).map_err(|e| Error::io(&path, e))?;
        Ok(Recorder { inner, path, file: Mutex::new(file) })
    }
}

impl ChatModel for Recorder {
    fn chat(&self, req: &ChatRequest) -> Result<ChatResponse> {
        let result = self.inner.chat(req);
        let model = self.inner.model_name();
        // A grammar the backend ignored did not shape the answer: keep it
        // out of the key, so changing the grammar builder does not
        // invalidate recordings of servers that never saw it.
        let stripped;
        let req = if req.grammar.is_some() && !self.inner.honours_grammar() {
            stripped = ChatRequest { grammar: None, ..req.clone() };
            &stripped
        } else {
            req
        };
        let entry = CassetteEntry {
            key: cassette_key(&model, req),
            phase: req.phase.clone(),
            model,
            messages: req.messages.clone(),
            temperature: req.temperature,
            n: req.n,
            response_schema: req.response_schema.clone(),
            grammar: req.grammar.clone(),
            error: result.as_ref().err().map(|e| match e {
                Error::Llm { message, .. } => message.clone(),
                other => other.to_string(),
            }),
            response: result.as_ref().map(Clone::clone).unwrap_or_default(),
        };
        let mut line = serde_json::to_string(&entry).map_err(|e| Error::llm(&req.phase, format!("cannot encode cassette entry: {e}")))?;
        line.push('\n');
        // One write per line under the lock, so concurrent calls never interleave.
        let mut f = self.file.lock().unwrap_or_else(|p| p.into_inner());
        f.write_all(line.as_bytes()).and_then(|_| f.flush()).map_err(|e| Error::io(&self.path, e))?;
        // Hand back what replay will read (serde_json's float parsing may
        // differ from the original f64 in the last bit), so a recorded run
        // and its replay are bit-identical.
        let replayed: CassetteEntry = serde_json::from_str(&line)
            .map_err(|e| Error::llm(&req.phase, format!("cannot decode the cassette entry just written: {e}")))?;
        result.map(|_| replayed.response)
    }

    fn model_name(&self) -> String {
        self.inner.model_name()
    }

    fn honours_grammar(&self) -> bool {
        self.inner.honours_grammar()
    }
}

/// Answers from a cassette, with no network.
///
/// When one key was recorded several times (the same prompt asked twice in a
/// run), the answers are replayed in recorded order; after the last one the
/// last answer repeats.
#[derive(Debug)]
pub struct Replayer {
    path: PathBuf,
    model: String,
    /// (line number, entry), in file order.
    entries: Vec<(usize, CassetteEntry)>,
    by_key: HashMap<String, Vec<usize>>,
    cursor: Mutex<HashMap<String, usize>>,
}

impl Replayer {
    /// Load `path`. The model name used for keys is `model` when given,
    /// otherwise the one model the cassette was recorded with.
    pub fn open(path: impl AsRef<Path>, model: Option<String>) -> Result<Self> {
        let path = path.as_ref().to_path_buf();
        let text = read_to_string(&path)?;
        let mut entries = Vec::new();
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let e: CassetteEntry = serde_json::from_str(line).map_err(|e| {
                Error::Input(format!("{}:{}: not a cassette entry ({e}); was this file written by --record?", path.display(), i + 1))
            })?;
            entries.push((i + 1, e));
        }
        let model = match model {
            Some(m) => m,
            None => {
                let mut models: Vec<&str> = entries.iter().map(|(_, e)| e.model.as_str()).collect();
                models.sort_unstable();
                models.dedup();
                match models.as_slice() {
                    [one] => one.to_string(),
                    [] => return Err(Error::Input(format!("cassette {} is empty: record one first with --record", path.display()))),
                    many => {
                        return Err(Error::Input(format!(
                            "cassette {} holds answers of several models ({}); pass --llm-model to pick one",
                            path.display(),
                            many.join(", ")
                        )))
                    }
                }
            }
        };
        let mut by_key: HashMap<String, Vec<usize>> = HashMap::new();
        for (i, (_, e)) in entries.iter().enumerate() {
            by_key.entry(e.key.clone()).or_default().push(i);
        }
        Ok(Replayer { path, model, entries, by_key, cursor: Mutex::new(HashMap::new()) })
    }

    /// Number of recorded calls.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the cassette has no entries.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    fn miss(&self, req: &ChatRequest, key: &str) -> Error {
        let phase = &req.phase;
        let mut msg = format!(
            "{REPLAY_MISS} {phase} prompt in cassette {} (model {}, key {}).",
            self.path.display(),
            self.model,
            &key[..12.min(key.len())]
        );
        let same: Vec<&(usize, CassetteEntry)> = self.entries.iter().filter(|(_, e)| &e.phase == phase).collect();
        if same.is_empty() {
            let mut counts: Vec<(String, usize)> = Vec::new();
            for (_, e) in &self.entries {
                match counts.iter_mut().find(|(p, _)| *p == e.phase) {
                    Some((_, c)) => *c += 1,
                    None => counts.push((e.phase.clone(), 1)),
                }
            }
            let list: Vec<String> = counts.iter().map(|(p, c)| format!("{p} ({c})")).collect();
            msg.push_str(&format!(" The cassette has no {phase} prompt at all; it has: {}.", list.join(", ")));
        } else {
            let now = transcript(&req.messages);
            let best = same.iter().copied().max_by_key(|(_, e)| common_prefix(&transcript(&e.messages), &now)).unwrap_or(same[0]);
            let (line, closest) = (best.0, &best.1);
            msg.push_str(&format!(" Closest recorded {phase} prompt (line {line}) {}.", first_difference(closest, &self.model, req)));
        }
        msg.push_str(" Re-record with --record, or run with the same prompts, model, temperature and n as the recording.");
        Error::llm(phase, msg)
    }
}

/// How a replay miss's error begins (`lucy bench --replay` looks for it to
/// say that a run did not reproduce its recording).
pub const REPLAY_MISS: &str = "no recorded answer for this";

impl ChatModel for Replayer {
    fn chat(&self, req: &ChatRequest) -> Result<ChatResponse> {
        let mut key = cassette_key(&self.model, req);
        if !self.by_key.contains_key(&key) && req.grammar.is_some() {
            // Recorded from a backend that ignores grammars (see Recorder).
            let without = cassette_key(&self.model, &ChatRequest { grammar: None, ..req.clone() });
            if self.by_key.contains_key(&without) {
                key = without;
            }
        }
        let Some(idxs) = self.by_key.get(&key) else { return Err(self.miss(req, &key)) };
        let mut cursor = self.cursor.lock().unwrap_or_else(|p| p.into_inner());
        let c = cursor.entry(key).or_insert(0);
        let idx = idxs[(*c).min(idxs.len() - 1)];
        *c += 1;
        let e = &self.entries[idx].1;
        match &e.error {
            Some(msg) => Err(Error::llm(&req.phase, msg.clone())),
            None => Ok(e.response.clone()),
        }
    }

    fn model_name(&self) -> String {
        self.model.clone()
    }
}

fn transcript(messages: &[Message]) -> String {
    messages.iter().map(|m| format!("[{}]\n{}\n", m.role, m.content)).collect()
}

fn common_prefix(a: &str, b: &str) -> usize {
    a.bytes().zip(b.bytes()).take_while(|(x, y)| x == y).count()
}

/// Where `rec` (recorded) and `req` (asked now) first differ, in words.
fn first_difference(rec: &CassetteEntry, model: &str, req: &ChatRequest) -> String {
    for (i, (r, q)) in rec.messages.iter().zip(&req.messages).enumerate() {
        if r.role != q.role {
            return format!("differs at message {} in role: recorded {:?}, now {:?}", i + 1, r.role, q.role);
        }
        if r.content != q.content {
            let (rl, ql): (Vec<&str>, Vec<&str>) = (r.content.lines().collect(), q.content.lines().collect());
            let j = rl.iter().zip(&ql).take_while(|(a, b)| a == b).count();
            let (a, b) = (rl.get(j).copied().unwrap_or(""), ql.get(j).copied().unwrap_or(""));
            let col = a.chars().zip(b.chars()).take_while(|(x, y)| x == y).count();
            // Long lines (schemas, table lists) are shown around the first
            // differing character, or the two excerpts would look equal.
            let from = col.saturating_sub(40);
            let show = |v: &Vec<&str>| {
                v.get(j)
                    .map(|l| {
                        let tail: String = l.chars().skip(from).collect();
                        format!("`{}{}`", if from > 0 { "…" } else { "" }, excerpt(&tail, 120))
                    })
                    .unwrap_or_else(|| "(end of message)".into())
            };
            return format!(
                "first differs at message {} ({}), line {}, column {}: recorded {} / now {}",
                i + 1,
                r.role,
                j + 1,
                col + 1,
                show(&rl),
                show(&ql)
            );
        }
    }
    if rec.messages.len() != req.messages.len() {
        return format!("differs in length: recorded {} messages, now {}", rec.messages.len(), req.messages.len());
    }
    let mut diffs = Vec::new();
    if rec.model != model {
        diffs.push(format!("model (recorded {}, now {model})", rec.model));
    }
    if rec.temperature != req.temperature {
        diffs.push(format!("temperature (recorded {}, now {})", rec.temperature, req.temperature));
    }
    if rec.n != req.n {
        diffs.push(format!("n (recorded {}, now {})", rec.n, req.n));
    }
    if rec.response_schema != req.response_schema {
        diffs.push("response_schema (the list of valid names changed?)".into());
    }
    if rec.grammar != req.grammar {
        diffs.push("grammar (the view's columns or the grammar builder changed?)".into());
    }
    format!("has the same messages but differs in {}", if diffs.is_empty() { "nothing visible".into() } else { diffs.join(", ") })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::llm::Usage;

    fn req(phase: &str, text: &str) -> ChatRequest {
        ChatRequest {
            phase: phase.into(),
            messages: vec![Message::system("sys"), Message::user(text)],
            temperature: 0.0,
            n: 1,
            response_schema: None,
            grammar: None,
        }
    }

    struct Echo;
    impl ChatModel for Echo {
        fn chat(&self, req: &ChatRequest) -> Result<ChatResponse> {
            Ok(ChatResponse {
                choices: vec![req.messages.last().map(|m| m.content.to_uppercase()).unwrap_or_default()],
                usage: Usage { prompt_tokens: 3, completion_tokens: 1 },
                latency_ms: 12.345678901,
                structured: false,
                requests: 1,
                truncated: 0,
                local: None,
            })
        }
        fn model_name(&self) -> String {
            "echo".into()
        }
    }

    #[test]
    fn key_depends_on_every_field_but_phase() {
        let base = req("p", "q");
        let k = cassette_key("m", &base);
        assert_eq!(k.len(), 64);
        assert_eq!(k, cassette_key("m", &req("other", "q")));
        assert_ne!(k, cassette_key("m2", &base));
        assert_ne!(k, cassette_key("m", &ChatRequest { temperature: 0.5, ..base.clone() }));
        assert_ne!(k, cassette_key("m", &ChatRequest { n: 2, ..base.clone() }));
        assert_ne!(k, cassette_key("m", &ChatRequest { response_schema: Some(json!({"type": "array"})), ..base.clone() }));
        assert_ne!(k, cassette_key("m", &ChatRequest { grammar: Some("start: \"x\"".into()), ..base.clone() }));
        assert_ne!(k, cassette_key("m", &req("p", "q2")));
    }

    #[test]
    fn round_trip_and_repeats_in_order() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.jsonl");
        let rec = Recorder::create(&path, Box::new(Echo)).unwrap();
        let a = rec.chat(&req("match_tables", "hello")).unwrap();
        let b = rec.chat(&req("attributes", "world")).unwrap();
        let rep = Replayer::open(&path, None).unwrap();
        assert_eq!(rep.len(), 2);
        assert_eq!(rep.model_name(), "echo");
        assert_eq!(rep.chat(&req("match_tables", "hello")).unwrap(), a);
        assert_eq!(rep.chat(&req("attributes", "world")).unwrap(), b);
        assert_eq!(rep.chat(&req("attributes", "world")).unwrap(), b);
    }

    struct Failing;
    impl ChatModel for Failing {
        fn chat(&self, req: &ChatRequest) -> Result<ChatResponse> {
            Err(Error::llm(&req.phase, "HTTP 500 from host (model m) after 5 attempts: boom"))
        }
        fn model_name(&self) -> String {
            "failing".into()
        }
    }

    #[test]
    fn a_failed_call_is_recorded_and_replays_as_the_same_failure() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.jsonl");
        let rec = Recorder::create(&path, Box::new(Failing)).unwrap();
        let recorded = rec.chat(&req("query_view", "q")).unwrap_err().to_string();
        let rep = Replayer::open(&path, None).unwrap();
        assert_eq!(rep.chat(&req("query_view", "q")).unwrap_err().to_string(), recorded);
        assert!(std::fs::read_to_string(&path).unwrap().contains("\"error\":\"HTTP 500"));
    }

    #[test]
    fn miss_names_phase_and_first_difference() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.jsonl");
        let rec = Recorder::create(&path, Box::new(Echo)).unwrap();
        rec.chat(&req("match_tables", "Tables:\nCLIENT\nDATACENTER\nQuestion: who?")).unwrap();
        rec.chat(&req("match_tables", "something else entirely")).unwrap();
        let rep = Replayer::open(&path, None).unwrap();
        let err = rep.chat(&req("match_tables", "Tables:\nCLIENT\nSERVER\nQuestion: who?")).unwrap_err().to_string();
        assert!(err.contains("(match_tables)"), "{err}");
        assert!(err.contains("line 1"), "{err}");
        assert!(err.contains("message 2 (user), line 3, column 1"), "{err}");
        assert!(err.contains("`DATACENTER`") && err.contains("`SERVER`"), "{err}");
        let err = rep.chat(&req("query_view", "x")).unwrap_err().to_string();
        assert!(err.contains("no query_view prompt at all") && err.contains("match_tables (2)"), "{err}");
        let mut hot = req("match_tables", "something else entirely");
        hot.temperature = 0.7;
        let err = rep.chat(&hot).unwrap_err().to_string();
        assert!(err.contains("temperature (recorded 0, now 0.7)"), "{err}");
    }

    #[test]
    fn long_lines_are_shown_around_the_difference() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.jsonl");
        let long = format!("{}CLIENT{}", "x".repeat(300), "y".repeat(300));
        Recorder::create(&path, Box::new(Echo)).unwrap().chat(&req("attributes", &long)).unwrap();
        let rep = Replayer::open(&path, None).unwrap();
        let err = rep.chat(&req("attributes", &long.replace("CLIENT", "SERVER"))).unwrap_err().to_string();
        assert!(err.contains("line 1, column 301"), "{err}");
        assert!(err.contains("CLIENT") && err.contains("SERVER"), "{err}");
    }

    #[test]
    fn bad_files_are_clear_errors() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("bad.jsonl");
        std::fs::write(&path, "{\"key\": 1}\n").unwrap();
        let err = Replayer::open(&path, None).unwrap_err().to_string();
        assert!(err.contains("bad.jsonl:1"), "{err}");
        std::fs::write(&path, "\n").unwrap();
        assert!(Replayer::open(&path, None).unwrap_err().to_string().contains("empty"));
        assert!(Replayer::open(dir.path().join("missing.jsonl"), None).is_err());
    }
}
