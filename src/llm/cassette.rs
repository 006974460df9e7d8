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

/// Wraps a model and appends every call (answer or failure) to a cassette
/// file.
///
/// Incremental: when the file already holds entries, a request whose key it
/// holds is answered from the file (the k-th ask of a key gets its k-th
/// recorded answer, as [`Replayer`] hands them out) without calling the
/// model and without appending again; only keys the file lacks (or asks
/// beyond the recorded count) reach the model and are appended. So after a
/// prompt change, recording into the same cassette re-runs only the changed
/// calls. Entries no run asks any more stay in the file; [`Recorder::copying`]
/// writes a cassette with exactly the calls of one run.
pub struct Recorder {
    /// The model asked for prompts `prior` lacks; `None`: those fail as a
    /// replay miss of `prior` (copying a cassette with no model).
    inner: Option<Box<dyn ChatModel>>,
    path: PathBuf,
    file: Mutex<File>,
    /// Answers recorded before this run.
    prior: Option<Replayer>,
    /// Whether answers taken from `prior` are appended too (`prior` is
    /// another file).
    copy_prior: bool,
    /// (answers taken from `prior`, calls sent to `inner`).
    counts: Mutex<(usize, usize)>,
}

impl Recorder {
    /// Record `inner`'s answers, appending to `path` (created if missing).
    /// Entries already in `path` answer their prompts again (see the type's
    /// docs); a file that is not a cassette is an error, as is one whose
    /// last line was cut off (an interrupted write: delete that line).
    pub fn create(path: impl AsRef<Path>, inner: Box<dyn ChatModel>) -> Result<Self> {
        let path = path.as_ref().to_path_buf();
        let prior = match std::fs::metadata(&path) {
            Ok(m) if m.len() > 0 => Some(Replayer::open(&path, Some(inner.model_name()))?),
            _ => None,
        };
        Self::open(path, Some(inner), prior, false)
    }

    /// Record into a new cassette `path`, answering every prompt that the
    /// cassette `from` holds from it (and copying that entry into `path`),
    /// and sending only the others to `inner`. `path` then holds exactly the
    /// calls of this run: use it to drop entries a changed prompt left
    /// behind. `path` must not be `from` and must be empty or absent.
    /// Without `inner` (no model configured), `from` answers as
    /// [`Replayer`] does (the last answer of a key repeats) and a prompt it
    /// lacks is a replay miss; `model` then picks the cassette's model as
    /// `Replayer::open` does.
    pub fn copying(
        from: impl AsRef<Path>,
        path: impl AsRef<Path>,
        inner: Option<Box<dyn ChatModel>>,
        model: Option<String>,
    ) -> Result<Self> {
        let (from, path) = (from.as_ref(), path.as_ref().to_path_buf());
        let same = match (from.canonicalize(), path.canonicalize()) {
            (Ok(a), Ok(b)) => a == b,
            _ => false,
        };
        if same {
            return Err(Error::Input(format!(
                "--replay and --record name the same cassette {}: to record into it incrementally, pass --record alone",
                path.display()
            )));
        }
        if std::fs::metadata(&path).map(|m| m.len() > 0).unwrap_or(false) {
            return Err(Error::Input(format!(
                "{} is not empty: with --replay, --record writes a new cassette; remove it or pick another name",
                path.display()
            )));
        }
        let prior = Replayer::open(from, inner.as_ref().map(|m| m.model_name()).or(model))?;
        Self::open(path, inner, Some(prior), true)
    }

    fn open(
        path: PathBuf,
        inner: Option<Box<dyn ChatModel>>,
        prior: Option<Replayer>,
        copy_prior: bool,
    ) -> Result<Self> {
        let file = OpenOptions::new().create(true).append(true).open(&path).map_err(|e| Error::io(&path, e))?;
        Ok(Recorder { inner, path, file: Mutex::new(file), prior, copy_prior, counts: Mutex::new((0, 0)) })
    }

    /// (answers taken from the cassette's earlier entries, calls sent to
    /// the model) so far.
    pub fn counts(&self) -> (usize, usize) {
        *self.counts.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Append `entry`; returns the line written.
    fn append(&self, phase: &str, entry: &CassetteEntry) -> Result<String> {
        let line = serde_json::to_string(entry)
            .map_err(|e| Error::llm(phase, format!("cannot encode cassette entry: {e}")))?;
        self.write_line(&line)?;
        Ok(line)
    }

    /// Append one line (without its newline).
    fn write_line(&self, line: &str) -> Result<()> {
        let text = format!("{line}\n");
        // One write per line under the lock, so concurrent calls never interleave.
        let mut f = self.file.lock().unwrap_or_else(|p| p.into_inner());
        f.write_all(text.as_bytes()).and_then(|_| f.flush()).map_err(|e| Error::io(&self.path, e))
    }
}

impl Recorder {
    /// Answer `req` (from the old cassette or the model) and record it.
    fn record(&self, req: &ChatRequest, decided: Option<&super::Decider<'_>>) -> Result<ChatResponse> {
        let Some(inner) = &self.inner else {
            // Copying with no model: the old cassette answers as a replay.
            let prior = self.prior.as_ref().expect("a recorder without a model copies a cassette");
            let idx = prior.answer(req)?;
            self.write_line(&prior.lines[idx])?;
            self.counts.lock().unwrap_or_else(|p| p.into_inner()).0 += 1;
            return outcome(&req.phase, &prior.entries[idx].1);
        };
        let model = inner.model_name();
        // A grammar the backend ignored did not shape the answer: keep it
        // out of the key, so changing the grammar builder does not
        // invalidate recordings of servers that never saw it.
        let stripped;
        let req = if req.grammar.is_some() && !inner.honours_grammar() {
            stripped = ChatRequest { grammar: None, ..req.clone() };
            &stripped
        } else {
            req
        };
        let key = cassette_key(&model, req);
        if let Some((prior, idx)) = self.prior.as_ref().and_then(|p| Some((p, p.take(&key)?))) {
            if self.copy_prior {
                self.write_line(&prior.lines[idx])?;
            }
            self.counts.lock().unwrap_or_else(|p| p.into_inner()).0 += 1;
            return outcome(&req.phase, &prior.entries[idx].1);
        }
        let result = match decided {
            Some(d) => inner.chat_until(req, d),
            None => inner.chat(req),
        };
        self.counts.lock().unwrap_or_else(|p| p.into_inner()).1 += 1;
        let entry = CassetteEntry {
            key,
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
        let line = self.append(&req.phase, &entry)?;
        // Hand back what replay will read (serde_json's float parsing may
        // differ from the original f64 in the last bit), so a recorded run
        // and its replay are bit-identical.
        let replayed: CassetteEntry = serde_json::from_str(&line)
            .map_err(|e| Error::llm(&req.phase, format!("cannot decode the cassette entry just written: {e}")))?;
        result.map(|_| replayed.response)
    }
}

impl ChatModel for Recorder {
    fn chat(&self, req: &ChatRequest) -> Result<ChatResponse> {
        self.record(req, None)
    }

    fn chat_until(&self, req: &ChatRequest, decided: &super::Decider<'_>) -> Result<ChatResponse> {
        self.record(req, Some(decided))
    }
    fn model_name(&self) -> String {
        match (&self.inner, &self.prior) {
            (Some(m), _) => m.model_name(),
            (None, Some(p)) => p.model_name(),
            (None, None) => String::new(),
        }
    }

    fn honours_grammar(&self) -> bool {
        self.inner.as_ref().is_some_and(|m| m.honours_grammar())
    }

    /// The misses of the cassette it answers from (with a model, prompts
    /// the cassette lacks go to the model: no misses).
    fn replay_misses(&self) -> Vec<String> {
        self.prior.as_ref().map(|p| p.replay_misses()).unwrap_or_default()
    }
}

impl Drop for Recorder {
    /// One line on stderr when the run reused earlier entries, so an
    /// incremental recording says how much it re-ran.
    fn drop(&mut self) {
        if self.prior.is_some() {
            let (reused, called) = self.counts();
            eprintln!(
                "lucy: cassette {}: {reused} answer(s) taken from its earlier entries, {called} call(s) sent to the model{}",
                self.path.display(),
                if self.copy_prior { " (both written to it)" } else { " (appended)" }
            );
        }
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
    /// Each entry's line as read, so copying it keeps it byte for byte.
    lines: Vec<String>,
    by_key: HashMap<String, Vec<usize>>,
    cursor: Mutex<HashMap<String, usize>>,
    /// The error messages of the requests the cassette could not answer,
    /// in order (see [`ChatModel::replay_misses`]).
    misses: Mutex<Vec<String>>,
}

impl Replayer {
    /// Load `path`. The model name used for keys is `model` when given,
    /// otherwise the one model the cassette was recorded with.
    ///
    /// `path` may name several cassettes joined by commas (`base.jsonl,
    /// more.jsonl`): their entries are read in that order, as one cassette
    /// (a small recording of new prompts beside the recording it extends).
    pub fn open(path: impl AsRef<Path>, model: Option<String>) -> Result<Self> {
        let path = path.as_ref().to_path_buf();
        let joined = path.to_string_lossy().to_string();
        let parts: Vec<PathBuf> = if joined.contains(',') && !path.exists() {
            joined.split(',').filter(|p| !p.is_empty()).map(PathBuf::from).collect()
        } else {
            vec![path.clone()]
        };
        let mut entries = Vec::new();
        let mut lines = Vec::new();
        for part in &parts {
            Self::read_into(part, &mut entries, &mut lines)?;
        }
        Self::from_entries(path, model, entries, lines)
    }

    /// Append the entries of the cassette at `path` (numbered by its lines).
    fn read_into(path: &Path, entries: &mut Vec<(usize, CassetteEntry)>, lines: &mut Vec<String>) -> Result<()> {
        let text = read_to_string(path)?;
        for (i, line) in text.lines().enumerate() {
            if line.trim().is_empty() {
                continue;
            }
            let e: CassetteEntry = serde_json::from_str(line).map_err(|e| {
                if !text.ends_with('\n') && i + 1 == text.lines().count() {
                    Error::Input(format!(
                        "{}:{}: the last line is cut off ({e}): a recording was interrupted while writing it; delete that line",
                        path.display(),
                        i + 1
                    ))
                } else {
                    Error::Input(format!("{}:{}: not a cassette entry ({e}); was this file written by --record?", path.display(), i + 1))
                }
            })?;
            entries.push((i + 1, e));
            lines.push(line.to_string());
        }
        Ok(())
    }

    fn from_entries(
        path: PathBuf,
        model: Option<String>,
        entries: Vec<(usize, CassetteEntry)>,
        lines: Vec<String>,
    ) -> Result<Self> {
        let model = match model {
            Some(m) => m,
            None => {
                let mut models: Vec<&str> = entries.iter().map(|(_, e)| e.model.as_str()).collect();
                models.sort_unstable();
                models.dedup();
                match models.as_slice() {
                    [one] => one.to_string(),
                    [] => {
                        return Err(Error::Input(format!(
                            "cassette {} is empty: record one first with --record",
                            path.display()
                        )))
                    }
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
        Ok(Replayer {
            path,
            model,
            entries,
            lines,
            by_key,
            cursor: Mutex::new(HashMap::new()),
            misses: Mutex::new(Vec::new()),
        })
    }

    /// The next recorded entry of `key` not handed out yet (recorded
    /// order), or `None` when the cassette has no (more) entries of it.
    /// Shares [`ChatModel::chat`]'s cursor; unlike `chat`, it does not
    /// repeat the last answer.
    fn take(&self, key: &str) -> Option<usize> {
        let idxs = self.by_key.get(key)?;
        let mut cursor = self.cursor.lock().unwrap_or_else(|p| p.into_inner());
        let c = cursor.entry(key.to_string()).or_insert(0);
        let idx = *idxs.get(*c)?;
        *c += 1;
        Some(idx)
    }

    /// Number of recorded calls.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether the cassette has no entries.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }

    /// The error for a request the cassette does not hold, counted as a
    /// miss.
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
            let best = same
                .iter()
                .copied()
                .max_by_key(|(_, e)| common_prefix(&transcript(&e.messages), &now))
                .unwrap_or(same[0]);
            let (line, closest) = (best.0, &best.1);
            msg.push_str(&format!(
                " Closest recorded {phase} prompt (line {line}) {}.",
                first_difference(closest, &self.model, req)
            ));
        }
        msg.push_str(
            " Re-record with --record, or run with the same prompts, model, temperature and n as the recording.",
        );
        self.misses.lock().unwrap_or_else(|p| p.into_inner()).push(msg.clone());
        Error::llm(phase, msg)
    }
}

/// How a replay miss's error message begins.
pub const REPLAY_MISS: &str = "no recorded answer for this";

impl Replayer {
    /// The recorded entry that answers `req`: its key's next answer in
    /// recorded order, the last one repeating (a miss is an error naming
    /// the closest recorded prompt).
    fn answer(&self, req: &ChatRequest) -> Result<usize> {
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
        Ok(idx)
    }
}

/// A recorded entry's outcome, as the phase receives it.
fn outcome(phase: &str, e: &CassetteEntry) -> Result<ChatResponse> {
    match &e.error {
        Some(msg) => Err(Error::llm(phase, msg.clone())),
        None => Ok(e.response.clone()),
    }
}

impl ChatModel for Replayer {
    fn chat(&self, req: &ChatRequest) -> Result<ChatResponse> {
        outcome(&req.phase, &self.entries[self.answer(req)?].1)
    }

    fn model_name(&self) -> String {
        self.model.clone()
    }

    fn replay_misses(&self) -> Vec<String> {
        self.misses.lock().unwrap_or_else(|p| p.into_inner()).clone()
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
    format!(
        "has the same messages but differs in {}",
        if diffs.is_empty() { "nothing visible".into() } else { diffs.join(", ") }
    )
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
            max_tokens: None,
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
                cuts: Vec::new(),
                skipped: 0,
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
        assert_ne!(
            k,
            cassette_key("m", &ChatRequest { response_schema: Some(json!({"type": "array"})), ..base.clone() })
        );
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
    fn cassettes_joined_by_commas_replay_as_one() {
        let dir = tempfile::tempdir().unwrap();
        let (a, b) = (dir.path().join("a.jsonl"), dir.path().join("b.jsonl"));
        let ra = Recorder::create(&a, Box::new(Echo)).unwrap();
        let x = ra.chat(&req("match_tables", "hello")).unwrap();
        let rb = Recorder::create(&b, Box::new(Echo)).unwrap();
        let y = rb.chat(&req("query_plan", "plan?")).unwrap();
        let both = PathBuf::from(format!("{},{}", a.display(), b.display()));
        let rep = Replayer::open(&both, None).unwrap();
        assert_eq!(rep.len(), 2);
        assert_eq!(rep.chat(&req("match_tables", "hello")).unwrap(), x);
        assert_eq!(rep.chat(&req("query_plan", "plan?")).unwrap(), y);
        // A missing part is an error naming it.
        let e =
            Replayer::open(PathBuf::from(format!("{},{}", a.display(), dir.path().join("none.jsonl").display())), None)
                .err()
                .unwrap()
                .to_string();
        assert!(e.contains("none.jsonl"), "{e}");
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
    fn the_replayer_counts_its_misses() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.jsonl");
        let rec = Recorder::create(&path, Box::new(Echo)).unwrap();
        rec.chat(&req("match_tables", "who?")).unwrap();
        rec.chat(&req("query_view", "sql?")).unwrap();
        assert!(rec.replay_misses().is_empty(), "recording from a model misses nothing");
        drop(rec);
        let rep = Replayer::open(&path, None).unwrap();
        // Held prompts, asked again and again (the last answer repeats): no miss.
        for _ in 0..3 {
            rep.chat(&req("match_tables", "who?")).unwrap();
        }
        rep.chat(&req("query_view", "sql?")).unwrap();
        assert_eq!(rep.replay_misses(), Vec::<String>::new());
        // Each request the cassette lacks is one miss, in order, with the
        // message its error carries.
        let errs: Vec<String> = [req("match_tables", "whom?"), req("attributes", "x"), req("match_tables", "whom?")]
            .iter()
            .map(|r| match rep.chat(r).unwrap_err() {
                Error::Llm { message, .. } => message,
                other => panic!("{other}"),
            })
            .collect();
        assert_eq!(rep.replay_misses(), errs);
        assert!(errs[1].starts_with(REPLAY_MISS) && errs[1].contains("no attributes prompt at all"), "{}", errs[1]);
        // Through the trait object the bench holds, and through a recorder
        // that copies the cassette with no model.
        let boxed: Box<dyn ChatModel> = Box::new(rep);
        assert_eq!(boxed.replay_misses().len(), 3);
        let copy = Recorder::copying(&path, dir.path().join("copy.jsonl"), None, None).unwrap();
        copy.chat(&req("match_tables", "who?")).unwrap();
        assert!(copy.replay_misses().is_empty());
        assert!(copy.chat(&req("query_view", "other")).is_err());
        assert_eq!(copy.replay_misses().len(), 1);
        // A recorder with a model sends what the cassette lacks to it.
        let live = Recorder::copying(&path, dir.path().join("live.jsonl"), Some(Box::new(Echo)), None).unwrap();
        live.chat(&req("query_view", "other")).unwrap();
        assert!(live.replay_misses().is_empty());
        // A recorded failure replays as that failure, not as a miss.
        let failed = dir.path().join("failed.jsonl");
        assert!(Recorder::create(&failed, Box::new(Failing)).unwrap().chat(&req("match_tables", "who?")).is_err());
        let rep = Replayer::open(&failed, None).unwrap();
        assert!(rep.chat(&req("match_tables", "who?")).is_err());
        assert!(rep.replay_misses().is_empty());
        // Models that replay nothing report none.
        assert!(Echo.replay_misses().is_empty());
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

    /// Answers "<PROMPT> #<call number>", so a test can tell a replayed
    /// answer from a fresh call.
    #[derive(Default, Clone)]
    struct Counting(std::sync::Arc<std::sync::atomic::AtomicUsize>);
    impl Counting {
        fn calls(&self) -> usize {
            self.0.load(std::sync::atomic::Ordering::SeqCst)
        }
    }
    impl ChatModel for Counting {
        fn chat(&self, req: &ChatRequest) -> Result<ChatResponse> {
            let n = self.0.fetch_add(1, std::sync::atomic::Ordering::SeqCst) + 1;
            let text = req.messages.last().map(|m| m.content.to_uppercase()).unwrap_or_default();
            Ok(ChatResponse { choices: vec![format!("{text} #{n}")], ..Default::default() })
        }
        fn model_name(&self) -> String {
            "counting".into()
        }
    }

    impl CassetteEntry {
        fn choices_text(&self) -> String {
            self.response.choices.join("|")
        }
    }

    fn lines(path: &Path) -> Vec<CassetteEntry> {
        std::fs::read_to_string(path).unwrap().lines().map(|l| serde_json::from_str(l).unwrap()).collect()
    }

    #[test]
    fn recording_into_a_cassette_replays_what_it_holds_and_calls_only_for_new_prompts() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.jsonl");
        let first = Counting::default();
        {
            let rec = Recorder::create(&path, Box::new(first.clone())).unwrap();
            assert_eq!(rec.chat(&req("match_tables", "a")).unwrap().choices, ["A #1"]);
            assert_eq!(rec.chat(&req("query_view", "b")).unwrap().choices, ["B #2"]);
        }
        // The prompt of `b` changed to `b2`: only that call reaches the model.
        let second = Counting::default();
        let rec = Recorder::create(&path, Box::new(second.clone())).unwrap();
        assert_eq!(
            rec.chat(&req("match_tables", "a")).unwrap().choices,
            ["A #1"],
            "the recorded answer, not a new call"
        );
        assert_eq!(rec.chat(&req("query_view", "b2")).unwrap().choices, ["B2 #1"]);
        assert_eq!(second.calls(), 1);
        assert_eq!(rec.counts(), (1, 1));
        drop(rec);
        let keys: Vec<String> = lines(&path).iter().map(|e| e.messages[1].content.clone()).collect();
        assert_eq!(keys, ["a", "b", "b2"], "the replayed entry is not appended again; the stale one stays");
        // The result replays like a fresh recording of the new prompts.
        let rep = Replayer::open(&path, None).unwrap();
        assert_eq!(rep.chat(&req("match_tables", "a")).unwrap().choices, ["A #1"]);
        assert_eq!(rep.chat(&req("query_view", "b2")).unwrap().choices, ["B2 #1"]);
    }

    #[test]
    fn a_prompt_asked_more_often_than_recorded_gets_its_answers_in_order_then_new_calls() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.jsonl");
        {
            let rec = Recorder::create(&path, Box::new(Counting::default())).unwrap();
            rec.chat(&req("query_view", "q")).unwrap();
            rec.chat(&req("query_view", "q")).unwrap();
        }
        let model = Counting::default();
        let rec = Recorder::create(&path, Box::new(model.clone())).unwrap();
        let answers: Vec<String> =
            (0..3).map(|_| rec.chat(&req("query_view", "q")).unwrap().choices[0].clone()).collect();
        assert_eq!(answers, ["Q #1", "Q #2", "Q #1"], "two recorded answers, then the model's first call");
        assert_eq!(model.calls(), 1);
        drop(rec);
        assert_eq!(lines(&path).len(), 3);
    }

    #[test]
    fn a_recorded_failure_is_replayed_while_recording_too() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.jsonl");
        let recorded =
            Recorder::create(&path, Box::new(Failing)).unwrap().chat(&req("query_view", "q")).unwrap_err().to_string();
        // The key holds the model name: record the failure under the same one.
        let line = std::fs::read_to_string(&path).unwrap().replace("\"failing\"", "\"counting\"");
        let mut e: CassetteEntry = serde_json::from_str(line.trim()).unwrap();
        e.key = cassette_key("counting", &req("query_view", "q"));
        std::fs::write(&path, serde_json::to_string(&e).unwrap() + "\n").unwrap();
        let model = Counting::default();
        let rec = Recorder::create(&path, Box::new(model.clone())).unwrap();
        assert_eq!(rec.chat(&req("query_view", "q")).unwrap_err().to_string(), recorded);
        assert_eq!(model.calls(), 0);
    }

    #[test]
    fn copying_writes_exactly_the_calls_of_the_run() {
        let dir = tempfile::tempdir().unwrap();
        let (old, new) = (dir.path().join("old.jsonl"), dir.path().join("new.jsonl"));
        {
            let rec = Recorder::create(&old, Box::new(Counting::default())).unwrap();
            for p in ["a", "stale", "b"] {
                rec.chat(&req("match_tables", p)).unwrap();
            }
        }
        let model = Counting::default();
        let rec = Recorder::copying(&old, &new, Some(Box::new(model.clone())), None).unwrap();
        assert_eq!(rec.chat(&req("match_tables", "b")).unwrap().choices, ["B #3"]);
        assert_eq!(rec.chat(&req("match_tables", "c")).unwrap().choices, ["C #1"]);
        assert_eq!(rec.chat(&req("match_tables", "a")).unwrap().choices, ["A #1"]);
        assert_eq!(model.calls(), 1);
        drop(rec);
        let got: Vec<String> = lines(&new).iter().map(|e| e.choices_text()).collect();
        assert_eq!(got, ["B #3", "C #1", "A #1"]);
        assert_eq!(lines(&old).len(), 3, "the old cassette is not touched");
        // Refused: the same file, or a new file that already holds entries.
        let err = Recorder::copying(&old, &old, Some(Box::new(Counting::default())), None).err().unwrap().to_string();
        assert!(err.contains("same cassette"), "{err}");
        let err = Recorder::copying(&old, &new, Some(Box::new(Counting::default())), None).err().unwrap().to_string();
        assert!(err.contains("not empty"), "{err}");
        // With no model: a replay that writes what it used; a prompt the
        // old cassette lacks is a replay miss.
        let pruned = dir.path().join("pruned.jsonl");
        let rec = Recorder::copying(&old, &pruned, None, None).unwrap();
        assert_eq!(rec.model_name(), "counting");
        assert_eq!(rec.chat(&req("match_tables", "a")).unwrap().choices, ["A #1"]);
        let err = rec.chat(&req("match_tables", "zzz")).unwrap_err().to_string();
        assert!(err.contains(REPLAY_MISS), "{err}");
        drop(rec);
        assert_eq!(lines(&pruned).len(), 1);
    }

    #[test]
    fn an_interrupted_last_line_is_named() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("c.jsonl");
        Recorder::create(&path, Box::new(Counting::default())).unwrap().chat(&req("match_tables", "a")).unwrap();
        let mut text = std::fs::read_to_string(&path).unwrap();
        text.push_str("{\"key\": \"ab");
        std::fs::write(&path, text).unwrap();
        let err = Recorder::create(&path, Box::new(Counting::default())).err().unwrap().to_string();
        assert!(err.contains("c.jsonl:2") && err.contains("cut off") && err.contains("delete that line"), "{err}");
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
