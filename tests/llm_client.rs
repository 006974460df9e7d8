//! The OpenAI-compatible client against the scripted mock server on
//! 127.0.0.1: retries, timeouts, garbage, `n` fallback, structured output.

use std::time::Duration;

use lucy::llm::mock::{MockServer, Reply, Rule, Script};
use lucy::llm::{ChatModel, ChatRequest, LlmConfig, Message, OpenAiClient, ServerGrammar, StructuredMode};
use serde_json::{json, Value};

/// Short timeouts and backoffs so failure paths stay fast.
fn cfg(server: &MockServer) -> LlmConfig {
    let mut c = LlmConfig::new(server.url(), "mock-model");
    c.timeout = Duration::from_secs(5);
    c.max_retries = 3;
    c.backoff_base = Duration::from_millis(5);
    c.backoff_max = Duration::from_millis(20);
    c
}

fn client(server: &MockServer) -> OpenAiClient {
    OpenAiClient::new(cfg(server)).unwrap()
}

fn req(phase: &str, question: &str, n: usize) -> ChatRequest {
    ChatRequest {
        phase: phase.into(),
        messages: vec![Message::system("You pick tables."), Message::user(question)],
        temperature: 0.0,
        n,
        response_schema: None,
        grammar: None,
        max_tokens: None,
    }
}

fn table_schema() -> Value {
    json!({"type": "array", "items": {"type": "string", "enum": ["CLIENT", "DATACENTER"]}})
}

fn bodies(server: &MockServer) -> Vec<Value> {
    server.chat_requests().iter().map(|r| r.json().unwrap()).collect()
}

#[test]
fn rate_limit_then_success_is_retried() {
    // Retry-After of 30 s is honoured but capped by backoff_max (20 ms here).
    let server = MockServer::start(
        Script::new().rule(Rule::any().reply(Reply::rate_limited(30.0)).reply(Reply::ok(["[\"CLIENT\"]"]))),
    );
    let resp = client(&server).chat(&req("match_tables", "which tables?", 1)).unwrap();
    assert_eq!(resp.choices, vec!["[\"CLIENT\"]"]);
    assert_eq!(resp.requests, 2);
    assert_eq!(server.chat_requests().len(), 2);
    assert!(resp.usage.prompt_tokens > 0 && resp.usage.completion_tokens > 0);
    assert!(resp.latency_ms > 0.0);
    assert!(!resp.structured);
}

#[test]
fn server_error_forever_is_bounded_and_clear() {
    let server =
        MockServer::start(Script::new().default_reply(Reply::status(500, r#"{"error":{"message":"model crashed"}}"#)));
    let err = client(&server).chat(&req("match_tables", "q", 1)).unwrap_err();
    let msg = err.to_string();
    assert!(matches!(err, lucy::Error::Llm { .. }));
    assert!(msg.contains("(match_tables)"), "{msg}");
    assert!(msg.contains("HTTP 500"), "{msg}");
    assert!(msg.contains(&server.addr().to_string()), "{msg}");
    assert!(msg.contains("model crashed"), "{msg}");
    assert!(msg.contains("4 attempts"), "{msg}");
    assert_eq!(server.chat_requests().len(), 4, "1 try + max_retries 3");
}

#[test]
fn timeout_names_the_phase() {
    let server = MockServer::start(Script::new().default_reply(Reply::delay(3_000, Reply::ok(["late"]))));
    let mut c = cfg(&server);
    c.timeout = Duration::from_millis(200);
    c.max_retries = 1;
    let err = OpenAiClient::new(c).unwrap().chat(&req("query_view", "q", 1)).unwrap_err().to_string();
    assert!(err.contains("(query_view)"), "{err}");
    assert!(err.contains("within 0.2s") && err.contains("2 attempts") && err.contains("--llm-timeout"), "{err}");
    assert_eq!(server.chat_requests().len(), 2);
}

#[test]
fn garbage_bodies_are_clear_errors_without_retry() {
    let server = MockServer::start(
        Script::new()
            .rule(Rule::when_contains(["html"]).reply(Reply::malformed("<html>Bad gateway page</html>")))
            .rule(Rule::when_contains(["object"]).reply(Reply::malformed(r#"{"result": "hi"}"#))),
    );
    let c = client(&server);
    let err = c.chat(&req("attributes", "html please", 1)).unwrap_err().to_string();
    assert!(
        err.contains("(attributes)") && err.contains("not JSON") && err.contains("<html>Bad gateway page"),
        "{err}"
    );
    let err = c.chat(&req("attributes", "object please", 1)).unwrap_err().to_string();
    assert!(err.contains("no `choices`"), "{err}");
    assert_eq!(server.chat_requests().len(), 2, "garbage is not retried");
}

#[test]
fn closed_connection_is_retried() {
    let server = MockServer::start(Script::new().rule(Rule::any().reply(Reply::Close).reply(Reply::ok(["ok"]))));
    let resp = client(&server).chat(&req("match_tables", "q", 1)).unwrap();
    assert_eq!(resp.choices, vec!["ok"]);
    assert_eq!(resp.requests, 2);
    assert_eq!(server.chat_requests().len(), 2, "no hidden retries below the client");
}

#[test]
fn client_errors_are_not_retried() {
    let server = MockServer::start(Script::new().default_reply(Reply::status(404, "model not found")));
    let err = client(&server).chat(&req("match_tables", "q", 1)).unwrap_err().to_string();
    assert!(err.contains("HTTP 404") && err.contains("1 attempt") && err.contains("--llm-url"), "{err}");
    assert_eq!(server.chat_requests().len(), 1);
}

#[test]
fn unreachable_server_is_a_clear_error() {
    let mut server = MockServer::start(Script::new());
    let c = client(&server);
    server.stop();
    let err = c.chat(&req("match_tables", "q", 1)).unwrap_err().to_string();
    assert!(err.contains("(match_tables)") && err.contains("cannot talk to") && err.contains("4 attempts"), "{err}");
}

#[test]
fn n_choices_in_one_request_when_supported() {
    let server = MockServer::start(Script::new().rule(Rule::any().reply(Reply::ok(["a", "b"]))));
    let resp = client(&server).chat(&req("match_tables", "q", 3)).unwrap();
    assert_eq!(resp.choices, vec!["a", "b", "a"]);
    assert_eq!(resp.requests, 1);
    assert_eq!(bodies(&server)[0]["n"], 3);
}

#[test]
fn server_ignoring_n_gets_separate_calls() {
    let server = MockServer::start(Script::new().rule(
        Rule::any().reply(Reply::ok_ignoring_n("a")).reply(Reply::ok_ignoring_n("b")).reply(Reply::ok_ignoring_n("c")),
    ));
    let resp = client(&server).chat(&req("match_tables", "q", 3)).unwrap();
    let mut got = resp.choices.clone();
    got.sort();
    assert_eq!(got, vec!["a", "b", "c"]);
    assert_eq!(resp.choices[0], "a", "the first call's answer comes first");
    assert_eq!(resp.requests, 3);
    let b = bodies(&server);
    assert_eq!(b.len(), 3);
    assert_eq!(b[0]["n"], 3);
    assert!(b[1].get("n").is_none() && b[2].get("n").is_none(), "fallback calls ask for one choice");
    // Usage is summed over the three calls.
    let one = resp.usage.completion_tokens / 3;
    assert!(one > 0 && resp.usage.completion_tokens == 3 * one, "{:?}", resp.usage);
}

#[test]
fn server_rejecting_n_like_llama_cpp_gets_separate_calls() {
    let server = MockServer::start(
        Script::new()
            .rule(Rule::any().multi_n(true).reply(Reply::status(
                500,
                r#"{"error":{"code":500,"message":"Only one completion choice is allowed"}}"#,
            )))
            .rule(Rule::any().reply(Reply::ok(["x"]))),
    );
    let c = client(&server);
    let resp = c.chat(&req("match_tables", "q", 3)).unwrap();
    assert_eq!(resp.choices, vec!["x", "x", "x"]);
    assert_eq!(resp.requests, 4, "the rejection is not retried: 1 rejected + 3 single calls");
    // The client remembers: no more n > 1 to this server.
    let resp = c.chat(&req("match_tables", "q2", 2)).unwrap();
    assert_eq!(resp.requests, 2);
    assert!(bodies(&server).iter().skip(4).all(|b| b.get("n").is_none()));
}

#[test]
fn structured_output_is_sent_and_unwrapped() {
    let server = MockServer::start(Script::new().rule(Rule::any().structured(true).reply(Reply::ok(["[\"CLIENT\"]"]))));
    let mut r = req("match_tables", "q", 1);
    r.response_schema = Some(table_schema());
    let resp = client(&server).chat(&r).unwrap();
    assert!(resp.structured);
    assert_eq!(resp.choices, vec![r#"["CLIENT"]"#]);
    let body = &bodies(&server)[0];
    let rf = &body["response_format"];
    assert_eq!(rf["type"], "json_schema");
    assert_eq!(rf["json_schema"]["strict"], true);
    assert_eq!(rf["json_schema"]["name"], "match_tables");
    // OpenAI wants an object at the root: the array schema is wrapped.
    assert_eq!(rf["json_schema"]["schema"]["properties"]["answer"], table_schema());
}

#[test]
fn structured_rejected_in_auto_falls_back_and_remembers() {
    let server = MockServer::start(
        Script::new()
            .rule(
                Rule::any()
                    .structured(true)
                    .reply(Reply::status(400, r#"{"error":{"message":"response_format not supported"}}"#)),
            )
            .rule(Rule::any().reply(Reply::ok(["CLIENT, DATACENTER"]))),
    );
    let c = client(&server);
    let mut r = req("match_tables", "q", 1);
    r.response_schema = Some(table_schema());
    let resp = c.chat(&r).unwrap();
    assert!(!resp.structured);
    assert_eq!(resp.choices, vec!["CLIENT, DATACENTER"]);
    assert_eq!(resp.requests, 2);
    assert!(!c.schema_supported());
    let resp = c.chat(&r).unwrap();
    assert_eq!(resp.requests, 1, "the client remembers the server has no structured output");
    assert!(!resp.structured);
    assert!(bodies(&server)[2].get("response_format").is_none());
}

#[test]
fn structured_rejected_in_on_mode_is_an_error() {
    let server = MockServer::start(
        Script::new()
            .rule(Rule::any().structured(true).reply(Reply::status(400, "response_format not supported")))
            .rule(Rule::any().reply(Reply::ok(["x"]))),
    );
    let mut c = cfg(&server);
    c.structured = StructuredMode::On;
    let mut r = req("attributes", "q", 1);
    r.response_schema = Some(table_schema());
    let err = OpenAiClient::new(c).unwrap().chat(&r).unwrap_err().to_string();
    assert!(err.contains("(attributes)") && err.contains("HTTP 400") && err.contains("--structured"), "{err}");
    assert_eq!(server.chat_requests().len(), 1);
}

#[test]
fn structured_off_never_sends_a_schema() {
    let server = MockServer::start(Script::new().rule(Rule::any().reply(Reply::ok(["x"]))));
    let mut c = cfg(&server);
    c.structured = StructuredMode::Off;
    let mut r = req("attributes", "q", 1);
    r.response_schema = Some(table_schema());
    let resp = OpenAiClient::new(c).unwrap().chat(&r).unwrap();
    assert!(!resp.structured);
    assert!(bodies(&server)[0].get("response_format").is_none());
}

#[test]
fn request_carries_model_messages_and_temperature() {
    let server = MockServer::start(Script::new().rule(Rule::when_contains(["DDO"]).reply(Reply::ok(["ok"]))));
    let mut r = req("match_tables", "tables for DDO?", 1);
    r.temperature = 0.7;
    client(&server).chat(&r).unwrap();
    let b = &bodies(&server)[0];
    assert_eq!(b["model"], "mock-model");
    assert_eq!(b["temperature"], 0.7);
    assert_eq!(b["messages"][1]["content"], "tables for DDO?");
    assert_eq!(b["messages"][0]["role"], "system");
    assert!(server.chat_requests()[0].authorization.is_none(), "no key configured, no Authorization header");
}

#[test]
fn unmatched_requests_get_a_loud_default() {
    let server = MockServer::start(Script::new().rule(Rule::when_contains(["never"]).reply(Reply::ok(["x"]))));
    let mut c = cfg(&server);
    c.max_retries = 0;
    let err = OpenAiClient::new(c).unwrap().chat(&req("match_tables", "hello there", 1)).unwrap_err().to_string();
    assert!(err.contains("no rule matches") && err.contains("hello there"), "{err}");
}

#[test]
fn fallback_calls_respect_the_concurrency_limit() {
    let server = MockServer::start(Script::new().rule(Rule::any().reply(Reply::delay(30, Reply::ok_ignoring_n("x")))));
    let mut c = cfg(&server);
    c.concurrency = 2;
    let resp = OpenAiClient::new(c).unwrap().chat(&req("match_tables", "q", 7)).unwrap();
    assert_eq!(resp.choices.len(), 7);
    assert_eq!(resp.requests, 7);
    assert!(server.peak_in_flight() <= 2, "peak {}", server.peak_in_flight());
}

#[test]
fn concurrent_callers_share_one_limit() {
    let server = MockServer::start(Script::new().rule(Rule::any().reply(Reply::delay(20, Reply::ok(["x"])))));
    let mut c = cfg(&server);
    c.concurrency = 3;
    let client = OpenAiClient::new(c).unwrap();
    std::thread::scope(|s| {
        for i in 0..8 {
            let client = &client;
            s.spawn(move || client.chat(&req("attributes", &format!("table {i}"), 1)).unwrap());
        }
    });
    assert_eq!(server.chat_requests().len(), 8);
    assert!(server.peak_in_flight() <= 3, "peak {}", server.peak_in_flight());
}

#[test]
fn mock_serves_embeddings_and_stops_at_its_limit() {
    let script = Script::from_json(
        r#"{"embeddings": {"dim": 4, "vectors": [{"contains": "client", "vector": [1, 0, 0, 0]}]}, "max_requests": 3}"#,
        "inline script",
    )
    .unwrap();
    let server = MockServer::start(script);
    lucy::llm::tls::install_provider(); // reqwest is built without a default rustls provider
    let http = reqwest::blocking::Client::builder().no_proxy().build().unwrap();
    let embed = |input: Value| -> Value {
        http.post(format!("{}/embeddings", server.url()))
            .json(&json!({"model": "e", "input": input}))
            .send()
            .unwrap()
            .json()
            .unwrap()
    };
    let v = embed(json!(["a client", "something else"]));
    assert_eq!(v["data"][0]["embedding"], json!([1.0, 0.0, 0.0, 0.0]));
    let other: Vec<f64> = serde_json::from_value(v["data"][1]["embedding"].clone()).unwrap();
    assert_eq!(other.len(), 4);
    assert!((other.iter().map(|x| x * x).sum::<f64>() - 1.0).abs() < 1e-4, "{other:?}");
    assert_eq!(embed(json!("something else"))["data"][0]["embedding"], v["data"][1]["embedding"], "deterministic");
    let models = http.get(format!("{}/models", server.url())).send().unwrap();
    assert_eq!(models.status().as_u16(), 200);
    let over = http.get(format!("{}/models", server.url())).send().unwrap();
    assert_eq!(over.status().as_u16(), 503);
    assert!(server.is_stopped());
}

#[test]
fn unrelated_bad_request_does_not_disable_structured_output() {
    let server = MockServer::start(
        Script::new()
            .rule(Rule::when_contains(["huge"]).reply(Reply::status(400, "maximum context length exceeded")))
            .rule(Rule::any().structured(true).reply(Reply::ok(["[\"CLIENT\"]"]))),
    );
    let c = client(&server);
    let mut r = req("match_tables", "huge prompt", 1);
    r.response_schema = Some(table_schema());
    let err = c.chat(&r).unwrap_err().to_string();
    assert!(err.contains("HTTP 400") && err.contains("maximum context length"), "{err}");
    assert_eq!(server.chat_requests().len(), 2, "one try with the schema, one without");
    assert!(c.schema_supported(), "the schema was not the problem");
    let mut r = req("match_tables", "small prompt", 1);
    r.response_schema = Some(table_schema());
    assert!(c.chat(&r).unwrap().structured);
}

const GRAMMAR: &str = "start: \"SELECT \" NAME\nNAME: /[a-z]+/";

fn grammar_req() -> ChatRequest {
    let mut r = req("query_view", "q", 1);
    r.grammar = Some(GRAMMAR.into());
    r.response_schema = Some(table_schema());
    r
}

#[test]
fn a_grammar_goes_to_llama_cpp_and_vllm_in_their_forms_found_from_models() {
    for (owner, field) in [("llamacpp", "grammar"), ("vllm", "structured_outputs")] {
        let server = MockServer::start(
            Script::new().owned_by(owner).rule(Rule::any().grammar(true).reply(Reply::ok(["SELECT x"]))),
        );
        let c = client(&server);
        assert!(c.honours_grammar(), "{owner}");
        let resp = c.chat(&grammar_req()).unwrap();
        assert!(resp.structured, "{owner}");
        let b = &bodies(&server)[0];
        assert!(b.get(field).is_some(), "{owner}: {b}");
        assert!(b.get("response_format").is_none(), "{owner}: one constraint at a time: {b}");
        if owner == "llamacpp" {
            assert_eq!(b["grammar"], format!("%llguidance {{}}\n{GRAMMAR}"));
        } else {
            assert_eq!(b["structured_outputs"]["grammar"], GRAMMAR);
            assert_eq!(b["guided_grammar"], GRAMMAR);
        }
        // The server kind is asked once.
        c.chat(&grammar_req()).unwrap();
        let gets = server.requests().iter().filter(|r| r.method == "GET").count();
        assert_eq!(gets, 1, "{owner}");
    }
}

#[test]
fn other_servers_get_no_grammar_but_the_schema() {
    let server = MockServer::start(
        Script::new().rule(Rule::any().grammar(false).structured(true).reply(Reply::ok(["[\"CLIENT\"]"]))),
    );
    let c = client(&server);
    assert!(!c.honours_grammar());
    let resp = c.chat(&grammar_req()).unwrap();
    assert!(resp.structured);
    assert!(bodies(&server)[0].get("response_format").is_some());
}

#[test]
fn a_rejected_grammar_falls_back_in_auto_and_is_not_sent_again() {
    let server = MockServer::start(
        Script::new()
            .owned_by("llamacpp")
            .rule(
                Rule::any()
                    .grammar(true)
                    .reply(Reply::status(400, r#"{"error":{"message":"failed to parse grammar"}}"#)),
            )
            .rule(Rule::any().reply(Reply::ok(["[\"CLIENT\"]"]))),
    );
    let c = client(&server);
    let resp = c.chat(&grammar_req()).unwrap();
    assert_eq!(resp.requests, 2);
    assert!(resp.structured, "the schema is still sent after the grammar is dropped");
    let b = bodies(&server);
    assert!(b[0].get("grammar").is_some() && b[1].get("grammar").is_none() && b[1].get("response_format").is_some());
    assert!(!c.honours_grammar());
    assert_eq!(c.chat(&grammar_req()).unwrap().requests, 1);
    assert!(bodies(&server)[2].get("grammar").is_none());
    // --structured on: the rejection is the answer.
    let mut cf = cfg(&server);
    cf.structured = StructuredMode::On;
    let err = OpenAiClient::new(cf).unwrap().chat(&grammar_req()).unwrap_err().to_string();
    assert!(err.contains("HTTP 400") && err.contains("--llm-grammar off"), "{err}");
}

#[test]
fn llm_grammar_flag_forces_or_stops_the_grammar() {
    let server = MockServer::start(Script::new().owned_by("llamacpp").rule(Rule::any().reply(Reply::ok(["SELECT x"]))));
    let mut off = cfg(&server);
    off.grammar = ServerGrammar::Off;
    OpenAiClient::new(off).unwrap().chat(&grammar_req()).unwrap();
    let mut vllm = cfg(&server);
    vllm.grammar = ServerGrammar::Vllm;
    OpenAiClient::new(vllm).unwrap().chat(&grammar_req()).unwrap();
    let mut none = cfg(&server);
    none.structured = StructuredMode::Off;
    OpenAiClient::new(none).unwrap().chat(&grammar_req()).unwrap();
    let b = bodies(&server);
    assert!(b[0].get("grammar").is_none() && b[0].get("response_format").is_some(), "off: {}", b[0]);
    assert!(b[1].get("structured_outputs").is_some(), "vllm forced over a llama.cpp server: {}", b[1]);
    assert!(b[2].get("grammar").is_none() && b[2].get("response_format").is_none(), "structured off: {}", b[2]);
    assert_eq!(server.requests().iter().filter(|r| r.method == "GET").count(), 0, "a forced form asks nothing");
}

#[test]
fn a_phase_cap_is_sent_unless_llm_max_tokens_is_set() {
    let server = MockServer::start(Script::new().default_reply(Reply::ok(["SELECT 1"])));
    let mut capped = req("query_view", "q", 1);
    capped.max_tokens = Some(640);
    client(&server).chat(&capped).unwrap();
    let mut c = cfg(&server);
    c.max_tokens = Some(64);
    OpenAiClient::new(c).unwrap().chat(&capped).unwrap();
    client(&server).chat(&req("query_view", "q", 1)).unwrap();
    let sent: Vec<serde_json::Value> = server
        .chat_requests()
        .iter()
        .map(|r| serde_json::from_str::<serde_json::Value>(&r.body).unwrap()["max_tokens"].clone())
        .collect();
    assert_eq!(sent, [serde_json::json!(640), serde_json::json!(64), serde_json::Value::Null]);
}
