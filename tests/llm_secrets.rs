//! The API key never reaches an error, an answer, a trace or a cassette,
//! whatever a server echoes: the key at every offset of a 0–400-character
//! body (a cut at 300 or 200 characters must not leave a prefix behind), in
//! error statuses, in `{"error": …}` objects, in garbage bodies, in answers,
//! and in echoed request headers. Also: a response larger than the cap is
//! refused without being read whole.

use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::Arc;
use std::thread;
use std::time::Duration;

use lucy::llm::{ApiKey, ChatModel, ChatRequest, LlmConfig, Message, OpenAiClient, MAX_RESPONSE_BYTES};

const KEY: &str = "sk-test-Zq8LmR2vXw9pT4kN7yB3";

/// A loopback server: the request's user message says what to send back.
/// `offset N kind K`: a 400-character body with the key at offset N, as
/// K = status (HTTP 400), error (an error object), garbage (HTTP 200, not
/// JSON) or answer (the content of a good answer). `headers`: HTTP 401 with
/// every request header echoed. `huge`: a body past the read cap.
fn server() -> (String, Arc<AtomicUsize>) {
    let s = tiny_http::Server::http("127.0.0.1:0").unwrap();
    let url = format!("http://{}/v1", s.server_addr().to_ip().unwrap());
    let served = Arc::new(AtomicUsize::new(0));
    let count = served.clone();
    thread::spawn(move || {
        for mut req in s.incoming_requests() {
            count.fetch_add(1, Ordering::Relaxed);
            let mut body = String::new();
            let _ = req.as_reader().read_to_string(&mut body);
            let v: serde_json::Value = serde_json::from_str(&body).unwrap_or_default();
            let ask = v["messages"][1]["content"].as_str().unwrap_or_default().to_string();
            let words: Vec<&str> = ask.split_whitespace().collect();
            let (code, text) = match words.as_slice() {
                ["offset", n, "kind", k] => {
                    let n: usize = n.parse().unwrap();
                    let text = format!("{}{KEY}{}", "A".repeat(n), "B".repeat(400 - n - KEY.len()));
                    match *k {
                        "status" => (400, text),
                        "error" => (200, serde_json::json!({"error": {"message": text}}).to_string()),
                        "garbage" => (200, text),
                        _ => (200, serde_json::json!({"choices": [{"message": {"content": text}}]}).to_string()),
                    }
                }
                ["headers"] => {
                    let echoed: Vec<String> =
                        req.headers().iter().map(|h| format!("{}: {}", h.field, h.value)).collect();
                    (401, echoed.join("\n"))
                }
                ["huge"] => (200, "x".repeat(MAX_RESPONSE_BYTES as usize + 10)),
                _ => (404, "unknown".to_string()),
            };
            let _ = req.respond(tiny_http::Response::from_string(text).with_status_code(code));
        }
    });
    (url, served)
}

fn client(url: &str) -> OpenAiClient {
    let mut c = LlmConfig::new(url.to_string(), "m");
    c.api_key = Some(ApiKey::new(KEY));
    c.timeout = Duration::from_secs(10);
    c.max_retries = 0;
    OpenAiClient::new(c).unwrap()
}

fn ask(c: &OpenAiClient, text: &str) -> String {
    let req = ChatRequest {
        phase: "query_view".into(),
        messages: vec![Message::system("s"), Message::user(text)],
        temperature: 0.0,
        n: 1,
        response_schema: None,
        grammar: None,
        max_tokens: None,
    };
    match c.chat(&req) {
        Ok(r) => serde_json::to_string(&r).unwrap(),
        Err(e) => e.to_string(),
    }
}

/// No run of six characters of the key appears in `out`.
fn assert_no_key_part(out: &str, what: &str) {
    let chars: Vec<char> = KEY.chars().collect();
    for w in chars.windows(6) {
        let part: String = w.iter().collect();
        assert!(!out.contains(&part), "{what}: `{part}` of the key leaked in: {out}");
    }
}

#[test]
fn the_key_never_leaks_at_any_offset() {
    let (url, served) = server();
    let c = client(&url);
    let mut checked = 0;
    for kind in ["status", "error", "garbage", "answer"] {
        for n in 0..=(400 - KEY.len()) {
            let out = ask(&c, &format!("offset {n} kind {kind}"));
            assert_no_key_part(&out, &format!("{kind} at offset {n}"));
            if kind == "answer" {
                assert!(out.contains("<redacted>"), "{out}");
            }
            checked += 1;
        }
    }
    assert_eq!(served.load(Ordering::Relaxed), checked);
}

#[test]
fn echoed_headers_are_redacted() {
    let (url, _) = server();
    let out = ask(&client(&url), "headers");
    assert!(out.contains("HTTP 401"), "{out}");
    assert!(out.to_ascii_lowercase().contains("authorization: bearer <redacted>"), "{out}");
    assert_no_key_part(&out, "echoed headers");
}

#[test]
fn a_huge_response_is_refused() {
    let (url, _) = server();
    let out = ask(&client(&url), "huge");
    assert!(out.contains("larger than 16 MiB"), "{out}");
}
