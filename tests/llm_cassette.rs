//! Cassettes recorded against the mock server replay bit-identically with
//! the server gone; misses are explained; the API key never leaks.

use std::time::Duration;

use lucy::llm::build_chat_model_with_env;
use lucy::llm::mock::{MockServer, Reply, Rule, Script};
use lucy::llm::{ChatRequest, ChatResponse, LlmArgs, LlmConfig, Message, OpenAiClient};
use serde_json::json;

const SENTINEL: &str = "sk-SENTINEL-123";

fn env_with_key(k: &str) -> Option<String> {
    (k == "LUCY_API_KEY").then(|| SENTINEL.to_string())
}

fn no_env(_: &str) -> Option<String> {
    None
}

fn req(phase: &str, text: &str, n: usize) -> ChatRequest {
    ChatRequest {
        phase: phase.into(),
        messages: vec![Message::system("You are a data engineer."), Message::user(text)],
        temperature: if n > 1 { 0.7 } else { 0.0 },
        n,
        response_schema: None,
        grammar: None,
        max_tokens: None,
    }
}

fn script() -> Script {
    Script::new()
        .rule(
            Rule::when_contains(["core tables"])
                .structured(true)
                .reply(Reply::ok(["[\"CLIENT\"]", "[\"CLIENT\",\"DATACENTER\"]"])),
        )
        .rule(Rule::when_contains(["children"]).reply(Reply::ok_ignoring_n("VM")).reply(Reply::ok_ignoring_n("SERVER")))
        .rule(
            Rule::when_contains(["SQL"])
                .reply(Reply::rate_limited(0.0))
                .reply(Reply::ok(["SELECT CLIENT_name FROM v"])),
        )
}

fn requests() -> Vec<ChatRequest> {
    let mut tables =
        req("match_tables", "Which core tables answer: clients per datacenter?\nTables:\nCLIENT\nDATACENTER", 5);
    tables.response_schema = Some(json!({"type": "array", "items": {"enum": ["CLIENT", "DATACENTER"]}}));
    vec![
        tables,
        req("pattern_children", "Which children of SERVER are relevant?\nVM\nSERVER", 3),
        req("query_view", "Write SQL over the view v.", 1),
    ]
}

fn args_for(server: &MockServer) -> LlmArgs {
    LlmArgs {
        llm_url: Some(server.url()),
        llm_model: Some("mock-model".into()),
        llm_timeout: 5.0,
        ..LlmArgs::default()
    }
}

#[test]
fn round_trip_replays_bit_identically_without_network() {
    let dir = tempfile::tempdir().unwrap();
    let cassette = dir.path().join("run.jsonl");
    let mut server = MockServer::start(script());
    let recorded: Vec<ChatResponse> = {
        let args = LlmArgs { record: Some(cassette.clone()), ..args_for(&server) };
        let model = build_chat_model_with_env(&args, &env_with_key).unwrap().unwrap();
        requests().iter().map(|r| model.chat(r).unwrap()).collect()
    };
    assert_eq!(recorded[0].choices.len(), 5);
    assert!(recorded[0].structured);
    assert_eq!(recorded[1].choices.len(), 3);
    assert_eq!(recorded[2].requests, 2);
    let sent = server.request_count();
    server.stop();

    // Replay needs neither the server, the model flag nor a key.
    let args = LlmArgs { replay: Some(cassette.clone()), ..LlmArgs::default() };
    let replay = build_chat_model_with_env(&args, &no_env).unwrap().unwrap();
    assert_eq!(replay.model_name(), "mock-model");
    for (r, rec) in requests().iter().zip(&recorded) {
        let got = replay.chat(r).unwrap();
        assert_eq!(&got, rec, "phase {}", r.phase);
        assert_eq!(got.latency_ms.to_bits(), rec.latency_ms.to_bits());
    }
    assert_eq!(server.request_count(), sent);

    let text = std::fs::read_to_string(&cassette).unwrap();
    assert_eq!(text.lines().count(), 3);
    assert!(!text.contains(SENTINEL), "the API key must never reach a cassette");
    assert!(!text.to_ascii_lowercase().contains("authorization"));
    let first: serde_json::Value = serde_json::from_str(text.lines().next().unwrap()).unwrap();
    assert_eq!(first["phase"], "match_tables");
    assert_eq!(first["model"], "mock-model");
    assert_eq!(first["key"].as_str().unwrap().len(), 64);
}

#[test]
fn temperature_override_is_part_of_the_key() {
    let dir = tempfile::tempdir().unwrap();
    let cassette = dir.path().join("t.jsonl");
    let server = MockServer::start(Script::new().rule(Rule::any().reply(Reply::ok(["x"]))));
    let args = LlmArgs { record: Some(cassette.clone()), llm_temperature: Some(0.3), ..args_for(&server) };
    let model = build_chat_model_with_env(&args, &no_env).unwrap().unwrap();
    model.chat(&req("query_view", "q", 1)).unwrap();
    assert_eq!(server.chat_requests()[0].json().unwrap()["temperature"], 0.3);
    let same = LlmArgs { replay: Some(cassette.clone()), llm_temperature: Some(0.3), ..LlmArgs::default() };
    build_chat_model_with_env(&same, &no_env).unwrap().unwrap().chat(&req("query_view", "q", 1)).unwrap();
    let other = LlmArgs { replay: Some(cassette), ..LlmArgs::default() };
    let err =
        build_chat_model_with_env(&other, &no_env).unwrap().unwrap().chat(&req("query_view", "q", 1)).unwrap_err();
    assert!(err.to_string().contains("temperature (recorded 0.3, now 0)"), "{err}");
}

#[test]
fn missing_key_names_the_phase_and_the_first_difference() {
    let dir = tempfile::tempdir().unwrap();
    let cassette = dir.path().join("run.jsonl");
    {
        let server = MockServer::start(script());
        let args = LlmArgs { record: Some(cassette.clone()), ..args_for(&server) };
        let model = build_chat_model_with_env(&args, &no_env).unwrap().unwrap();
        for r in requests() {
            model.chat(&r).unwrap();
        }
    }
    let args = LlmArgs { replay: Some(cassette.clone()), ..LlmArgs::default() };
    let replay = build_chat_model_with_env(&args, &no_env).unwrap().unwrap();
    let mut changed = requests().remove(1);
    changed.messages[1].content = changed.messages[1].content.replace("\nVM\n", "\nHOST\n");
    let err = replay.chat(&changed).unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, lucy::Error::Llm { ref phase, .. } if phase == "pattern_children"), "{msg}");
    assert!(msg.contains("run.jsonl"), "{msg}");
    assert!(msg.contains("line 2"), "the closest entry is the second cassette line: {msg}");
    assert!(
        msg.contains("message 2 (user), line 2, column 1") && msg.contains("`VM`") && msg.contains("`HOST`"),
        "{msg}"
    );
    assert!(msg.contains("--record"), "{msg}");
}

#[test]
fn api_key_is_sent_but_never_shown() {
    let server = MockServer::start(
        Script::new()
            .rule(Rule::when_contains(["auth"]).reply(Reply::status(401, format!("invalid api key {SENTINEL}"))))
            .rule(Rule::when_contains(["boom"]).reply(Reply::status(500, format!("upstream said Bearer {SENTINEL}"))))
            .rule(Rule::any().reply(Reply::ok(["fine"]))),
    );
    let args = LlmArgs { llm_retries: 0, ..args_for(&server) };
    let model = build_chat_model_with_env(&args, &env_with_key).unwrap().unwrap();
    model.chat(&req("match_tables", "hello", 1)).unwrap();
    assert_eq!(server.chat_requests()[0].authorization.as_deref(), Some("Bearer sk-SENTINEL-123"));
    for text in ["auth", "boom"] {
        let err = model.chat(&req("match_tables", text, 1)).unwrap_err();
        let shown = format!("{err} {err:?}");
        assert!(!shown.contains(SENTINEL), "{shown}");
        assert!(shown.contains("<redacted>"), "{shown}");
    }
    assert!(server.chat_requests()[1].authorization.as_deref() == Some("Bearer sk-SENTINEL-123"));

    let mut cfg = LlmConfig::new(server.url(), "m");
    cfg.api_key = Some(lucy::llm::ApiKey::new(SENTINEL));
    cfg.backoff_max = Duration::from_millis(10);
    let client = OpenAiClient::new(cfg.clone()).unwrap();
    for shown in [format!("{cfg:?}"), format!("{client:?}"), format!("{:?}", cfg.api_key)] {
        assert!(!shown.contains(SENTINEL), "{shown}");
    }
}
