//! A scripted OpenAI-compatible server on 127.0.0.1, a testing aid.
//!
//! Tests (and users trying out `lucy` without an LLM) start it with a
//! [`Script`], point `--llm-url` at [`MockServer::url`], and afterwards
//! inspect the requests it received. It serves `POST /v1/chat/completions`,
//! `POST /v1/embeddings` and `GET /v1/models`, one request per connection,
//! on a background thread; it stops on [`MockServer::stop`], on drop, after
//! `max_requests`, or after `idle_timeout_secs` without requests.
//!
//! ```no_run
//! use lucy::llm::mock::{MockServer, Reply, Rule, Script};
//! let server = MockServer::start(
//!     Script::new().rule(Rule::when_contains(["core tables"]).reply(Reply::rate_limited(0.0)).reply(Reply::ok(["[\"CLIENT\"]"]))),
//! );
//! let url = server.url(); // http://127.0.0.1:PORT/v1
//! # let _ = url;
//! ```

mod http;
mod script;

use std::net::{SocketAddr, TcpListener, TcpStream};
use std::path::Path;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use script::RequestFacts;
pub use script::{EmbeddingRule, Embeddings, Matcher, Reply, Rule, Script};

use crate::error::{Error, Result};

/// A request the mock received.
#[derive(Debug, Clone, PartialEq)]
pub struct RecordedRequest {
    pub method: String,
    pub path: String,
    /// The `Authorization` header as sent (e.g. `Bearer sk-...`).
    pub authorization: Option<String>,
    pub body: String,
}

impl RecordedRequest {
    /// The body parsed as JSON, when it is JSON.
    pub fn json(&self) -> Option<Value> {
        serde_json::from_str(&self.body).ok()
    }
}

struct Shared {
    script: Script,
    cursors: Mutex<Vec<usize>>,
    log: Mutex<Vec<RecordedRequest>>,
    stop: AtomicBool,
    served: AtomicUsize,
    in_flight: AtomicUsize,
    peak_in_flight: AtomicUsize,
    last_activity: Mutex<Instant>,
}

/// The running mock server; stops when dropped.
pub struct MockServer {
    addr: SocketAddr,
    shared: Arc<Shared>,
    thread: Option<JoinHandle<()>>,
}

impl MockServer {
    /// Start serving `script` on 127.0.0.1 at a free port.
    ///
    /// # Panics
    /// When no loopback port can be bound (a test environment problem);
    /// use [`MockServer::try_start`] to handle that.
    pub fn start(script: Script) -> MockServer {
        match MockServer::try_start(script) {
            Ok(s) => s,
            Err(e) => panic!("mock LLM server: {e}"),
        }
    }

    /// Start serving `script`, reporting a bind failure as an error.
    pub fn try_start(script: Script) -> Result<MockServer> {
        let listener =
            TcpListener::bind("127.0.0.1:0").map_err(|e| Error::Input(format!("cannot bind 127.0.0.1: {e}")))?;
        let addr = listener.local_addr().map_err(|e| Error::Input(format!("cannot read the bound address: {e}")))?;
        listener
            .set_nonblocking(true)
            .map_err(|e| Error::Input(format!("cannot make the listener non-blocking: {e}")))?;
        let shared = Arc::new(Shared {
            cursors: Mutex::new(vec![0; script.rules.len()]),
            script,
            log: Mutex::new(Vec::new()),
            stop: AtomicBool::new(false),
            served: AtomicUsize::new(0),
            in_flight: AtomicUsize::new(0),
            peak_in_flight: AtomicUsize::new(0),
            last_activity: Mutex::new(Instant::now()),
        });
        let s2 = Arc::clone(&shared);
        let thread = std::thread::Builder::new()
            .name("lucy-mock-llm".into())
            .spawn(move || accept_loop(listener, s2))
            .map_err(|e| Error::Input(format!("cannot start the mock server thread: {e}")))?;
        Ok(MockServer { addr, shared, thread: Some(thread) })
    }

    /// Start serving a JSON script file (see docs/llm.md for the format).
    pub fn from_file(path: impl AsRef<Path>) -> Result<MockServer> {
        MockServer::try_start(Script::from_file(path)?)
    }

    /// Base URL to pass as `--llm-url`: `http://127.0.0.1:PORT/v1`.
    pub fn url(&self) -> String {
        format!("http://{}/v1", self.addr)
    }

    /// The bound socket address.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Every request received so far, in arrival order.
    pub fn requests(&self) -> Vec<RecordedRequest> {
        self.shared.log.lock().unwrap_or_else(|p| p.into_inner()).clone()
    }

    /// The chat-completion requests received so far.
    pub fn chat_requests(&self) -> Vec<RecordedRequest> {
        self.requests().into_iter().filter(|r| r.path.ends_with("/chat/completions")).collect()
    }

    /// Number of requests received so far.
    pub fn request_count(&self) -> usize {
        self.shared.log.lock().unwrap_or_else(|p| p.into_inner()).len()
    }

    /// The most requests ever being answered at the same time (to check a
    /// client's concurrency limit).
    pub fn peak_in_flight(&self) -> usize {
        self.shared.peak_in_flight.load(Ordering::SeqCst)
    }

    /// Whether the server has stopped (stop, limit or idle timeout).
    pub fn is_stopped(&self) -> bool {
        self.shared.stop.load(Ordering::SeqCst)
    }

    /// Block until the server stops by itself (request limit or idle timeout).
    pub fn wait(mut self) {
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }

    /// Stop accepting connections and wait for the accept loop to end.
    /// Afterwards connections to [`MockServer::url`] are refused.
    pub fn stop(&mut self) {
        self.shared.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for MockServer {
    fn drop(&mut self) {
        self.stop();
    }
}

fn accept_loop(listener: TcpListener, shared: Arc<Shared>) {
    let idle = shared.script.idle_timeout_secs.filter(|s| s.is_finite() && *s > 0.0).map(Duration::from_secs_f64);
    while !shared.stop.load(Ordering::SeqCst) {
        if let Some(idle) = idle {
            let last = *shared.last_activity.lock().unwrap_or_else(|p| p.into_inner());
            if last.elapsed() > idle {
                shared.stop.store(true, Ordering::SeqCst);
                break;
            }
        }
        match listener.accept() {
            Ok((stream, _)) => {
                *shared.last_activity.lock().unwrap_or_else(|p| p.into_inner()) = Instant::now();
                let s = Arc::clone(&shared);
                let _ = std::thread::Builder::new().name("lucy-mock-conn".into()).spawn(move || handle(stream, s));
            }
            Err(_) => std::thread::sleep(Duration::from_millis(2)),
        }
    }
    // Dropping the listener here closes the port.
}

fn handle(mut stream: TcpStream, shared: Arc<Shared>) {
    let _ = stream.set_nonblocking(false);
    let _ = stream.set_read_timeout(Some(Duration::from_secs(10)));
    let req = match http::read_request(&mut stream) {
        Ok(Some(r)) => r,
        Ok(None) => return,
        Err(e) => {
            let _ =
                http::write_response(&mut stream, 400, &[], error_body(&format!("mock: bad request: {e}")).as_bytes());
            return;
        }
    };
    let now = shared.in_flight.fetch_add(1, Ordering::SeqCst) + 1;
    shared.peak_in_flight.fetch_max(now, Ordering::SeqCst);
    let answer = respond(&shared, &req);
    // Counted out before the first byte goes back, so a client that sends
    // its next request after reading this answer is never double-counted.
    shared.in_flight.fetch_sub(1, Ordering::SeqCst);
    match answer {
        Answer::Http { code, headers, body } => {
            let _ = http::write_response(&mut stream, code, &headers, body.as_bytes());
        }
        Answer::Close => {
            let _ = stream.shutdown(std::net::Shutdown::Both);
        }
    }
}

/// What to send back, decided (and any scripted delay served) before writing.
enum Answer {
    Http { code: u16, headers: Vec<(&'static str, String)>, body: String },
    Close,
}

fn answer(code: u16, body: String) -> Answer {
    Answer::Http { code, headers: Vec::new(), body }
}

fn respond(shared: &Shared, req: &http::HttpRequest) -> Answer {
    let body = String::from_utf8_lossy(&req.body).into_owned();
    {
        let mut log = shared.log.lock().unwrap_or_else(|p| p.into_inner());
        log.push(RecordedRequest {
            method: req.method.clone(),
            path: req.path.clone(),
            authorization: req.header("authorization").map(str::to_string),
            body: body.clone(),
        });
    }
    let served = shared.served.fetch_add(1, Ordering::SeqCst) + 1;
    if served > shared.script.max_requests {
        shared.stop.store(true, Ordering::SeqCst);
        return answer(503, error_body("mock: max_requests reached, server stopping"));
    }
    let path = req.path.split('?').next().unwrap_or("");
    match (req.method.as_str(), path) {
        ("POST", p) if p.ends_with("/chat/completions") => chat(shared, &body),
        ("POST", p) if p.ends_with("/embeddings") => embeddings(shared, &body),
        ("GET", p) if p.ends_with("/models") => {
            let owner = shared.script.owned_by.as_deref().unwrap_or("lucy");
            answer(
                200,
                json!({"object": "list", "data": [{"id": "mock", "object": "model", "owned_by": owner}]}).to_string(),
            )
        }
        _ => answer(404, error_body(&format!("mock: no route for {} {}", req.method, req.path))),
    }
}

fn error_body(msg: &str) -> String {
    json!({"error": {"message": msg, "type": "mock_error"}}).to_string()
}

fn chat(shared: &Shared, body: &str) -> Answer {
    let Ok(v) = serde_json::from_str::<Value>(body) else {
        return answer(400, error_body("mock: request body is not JSON"));
    };
    let facts = RequestFacts::of(&v);
    let reply = pick_reply(shared, &facts);
    render(shared, &v, &facts, &reply)
}

fn pick_reply(shared: &Shared, facts: &RequestFacts) -> Reply {
    let mut cursors = shared.cursors.lock().unwrap_or_else(|p| p.into_inner());
    for (i, rule) in shared.script.rules.iter().enumerate() {
        if rule.replies.is_empty() || !rule.when.matches(facts) {
            continue;
        }
        let k = cursors[i].min(rule.replies.len() - 1);
        cursors[i] += 1;
        return rule.replies[k].clone();
    }
    shared.script.default.clone().unwrap_or_else(|| {
        let msg =
            format!("mock: no rule matches the last user message: {}", crate::llm::wire::excerpt(facts.last_user, 200));
        Reply::status(500, error_body(&msg))
    })
}

fn render(shared: &Shared, req: &Value, facts: &RequestFacts, reply: &Reply) -> Answer {
    match reply {
        Reply::Ok { choices, ignore_n, usage } => {
            let count = if *ignore_n { 1 } else { facts.n };
            let wrap = wants_wrapped_answer(req);
            let texts: Vec<String> = (0..count)
                .map(|i| choices.get(i % choices.len().max(1)).cloned().unwrap_or_default())
                .map(|t| if wrap { wrap_answer(t) } else { t })
                .collect();
            // Like a real server, stop at `max_tokens` (≈ 4 characters a
            // token here) and say so with finish_reason "length".
            let cap = req.get("max_tokens").and_then(Value::as_u64);
            let cut = |t: &str| cap.is_some_and(|m| approx_tokens(t) > m);
            let finish: Vec<&str> = texts.iter().map(|t| if cut(t) { "length" } else { "stop" }).collect();
            let texts: Vec<String> = texts
                .into_iter()
                .map(|t| match cap {
                    Some(m) if cut(&t) => t.chars().take(m as usize * 4).collect(),
                    _ => t,
                })
                .collect();
            let usage = usage.unwrap_or_else(|| crate::llm::Usage {
                prompt_tokens: approx_tokens(&prompt_text(req)),
                completion_tokens: texts.iter().map(|t| approx_tokens(t)).sum(),
            });
            let v = json!({
                "id": format!("mock-{}", shared.served.load(Ordering::SeqCst)),
                "object": "chat.completion",
                "created": 0,
                "model": req.get("model").cloned().unwrap_or(Value::Null),
                "choices": texts.iter().zip(&finish).enumerate().map(|(i, (t, f))| json!({
                    "index": i, "message": {"role": "assistant", "content": t}, "finish_reason": f})).collect::<Vec<_>>(),
                "usage": {"prompt_tokens": usage.prompt_tokens, "completion_tokens": usage.completion_tokens,
                          "total_tokens": usage.prompt_tokens + usage.completion_tokens},
            });
            answer(200, v.to_string())
        }
        Reply::Status { code, body, retry_after } => Answer::Http {
            code: *code,
            headers: retry_after.iter().map(|r| ("Retry-After", r.clone())).collect(),
            body: body.clone(),
        },
        Reply::Delay { ms, then } => {
            let until = Instant::now() + Duration::from_millis(*ms);
            // Sleep in slices so a stopped server does not keep threads alive.
            while Instant::now() < until && !shared.stop.load(Ordering::SeqCst) {
                std::thread::sleep(Duration::from_millis(5).min(until.saturating_duration_since(Instant::now())));
            }
            render(shared, req, facts, then)
        }
        Reply::Malformed { body } => answer(200, body.clone()),
        Reply::Close => Answer::Close,
    }
}

/// Whether the request's schema is lucy's `{"answer": ...}` wrapper, which a
/// real schema-following server would fill in.
fn wants_wrapped_answer(req: &Value) -> bool {
    let schema = &req["response_format"]["json_schema"]["schema"];
    schema["required"] == json!([crate::llm::wire::WRAP_KEY])
        && schema["properties"].get(crate::llm::wire::WRAP_KEY).is_some()
}

fn wrap_answer(text: String) -> String {
    match serde_json::from_str::<Value>(&text) {
        Ok(v) => json!({ crate::llm::wire::WRAP_KEY: v }).to_string(),
        Err(_) => text,
    }
}

fn prompt_text(req: &Value) -> String {
    req.get("messages")
        .and_then(Value::as_array)
        .map(|ms| ms.iter().filter_map(|m| m.get("content").and_then(Value::as_str)).collect::<Vec<_>>().join("\n"))
        .unwrap_or_default()
}

fn approx_tokens(s: &str) -> u64 {
    (s.chars().count() as u64).div_ceil(4)
}

fn embeddings(shared: &Shared, body: &str) -> Answer {
    let Ok(v) = serde_json::from_str::<Value>(body) else {
        return answer(400, error_body("mock: request body is not JSON"));
    };
    let inputs: Vec<String> = match v.get("input") {
        Some(Value::String(s)) => vec![s.clone()],
        Some(Value::Array(a)) => {
            a.iter().map(|x| x.as_str().map(str::to_string).unwrap_or_else(|| x.to_string())).collect()
        }
        _ => return answer(400, error_body("mock: `input` must be a string or a list of strings")),
    };
    let cfg = &shared.script.embeddings;
    let data: Vec<Value> = inputs
        .iter()
        .enumerate()
        .map(|(i, text)| {
            let vector = cfg
                .vectors
                .iter()
                .find(|r| text.contains(r.contains.as_str()))
                .map(|r| r.vector.clone())
                .unwrap_or_else(|| hashed_vector(text, cfg.dim.max(1)));
            json!({"object": "embedding", "index": i, "embedding": vector})
        })
        .collect();
    let tokens: u64 = inputs.iter().map(|t| approx_tokens(t)).sum();
    let v = json!({"object": "list", "data": data, "model": v.get("model").cloned().unwrap_or(Value::Null),
                   "usage": {"prompt_tokens": tokens, "total_tokens": tokens}});
    answer(200, v.to_string())
}

/// A deterministic unit vector derived from the text (same text, same vector).
fn hashed_vector(text: &str, dim: usize) -> Vec<f32> {
    let mut out = Vec::with_capacity(dim);
    let mut block = 0u32;
    while out.len() < dim {
        let digest = Sha256::new().chain_update(block.to_le_bytes()).chain_update(text.as_bytes()).finalize();
        for pair in digest.chunks(2) {
            if out.len() == dim {
                break;
            }
            let x = u16::from_le_bytes([pair[0], pair[1]]) as f32 / u16::MAX as f32;
            out.push(x * 2.0 - 1.0);
        }
        block += 1;
    }
    let norm = out.iter().map(|x| x * x).sum::<f32>().sqrt().max(f32::EPSILON);
    out.iter().map(|x| x / norm).collect()
}
