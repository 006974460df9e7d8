//! `lucy serve` end to end: the real binary on 127.0.0.1 (port 0), the
//! scripted mock LLM on loopback, requests from reqwest. Checks the JSON
//! shapes against the CLI's `--json`, the phase stream, the security
//! defaults (token, Host check, body limit, concurrency cap, time limit)
//! and that the LLM key never appears in a response.

use std::io::{BufRead, BufReader, Read};
use std::path::Path;
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use lucy::llm::mock::{MockServer, Reply, Rule, Script};
use serde_json::{json, Value};

const MODEL: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels/ddo.json");
const SENTINEL: &str = "sk-SENTINEL-serve-0123456789";
const Q1: &str =
    "List customers who use datacenters with names starting with 'dev'. Output clients and datacenters names.";

/// The Q1 script of tests/ask_ddo.rs (tests/fixtures/mock/ddo-q1.json),
/// plus a question that answers slowly.
fn q1_mock() -> MockServer {
    let mut script =
        Script::from_file(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/mock/ddo-q1.json")).unwrap();
    // The first SLOW prompt answers late; later ones fail at once.
    script.rules.insert(
        0,
        Rule::when_contains(["SLOW"])
            .reply(Reply::delay(2500, Reply::ok(["[\"CLIENT\"]"])))
            .reply(Reply::status(500, "the slow question is over")),
    );
    MockServer::start(script)
}

struct Server {
    child: Child,
    base: String,
}

impl Drop for Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn command(args: &[&str], llm: Option<&str>, env: &[(&str, &str)]) -> Command {
    let mut c = Command::new(env!("CARGO_BIN_EXE_lucy"));
    c.arg("serve").args(args);
    if let Some(url) = llm {
        c.args(["--llm-url", url, "--llm-model", "mock-model", "--llm-retries", "0"]);
    }
    c.env("LUCY_API_KEY", SENTINEL)
        .env_remove("OPENAI_API_KEY")
        .env_remove("LUCY_LLM_MODEL")
        .env_remove("LUCY_LLM_URL")
        .env_remove("LUCY_SERVE_TOKEN")
        // No embedded default model either: "no LLM" must mean none.
        .env("LUCY_LLM_GGUF", "off");
    for (k, v) in env {
        c.env(k, v);
    }
    c
}

/// Start `lucy serve ARGS --addr 127.0.0.1:0` and wait for its address.
fn start(args: &[&str], llm: Option<&str>, env: &[(&str, &str)]) -> Server {
    let mut c = command(args, llm, env);
    c.args(["--addr", "127.0.0.1:0"]).stdout(Stdio::piped()).stderr(Stdio::piped());
    let mut child = c.spawn().expect("spawn lucy serve");
    let mut line = String::new();
    BufReader::new(child.stdout.take().unwrap()).read_line(&mut line).unwrap();
    let Some(base) = line.trim().strip_prefix("listening on ") else {
        let mut err = String::new();
        let _ = child.stderr.take().unwrap().read_to_string(&mut err);
        panic!("lucy serve did not start: {line} {err}");
    };
    Server { base: base.to_string(), child }
}

fn client() -> reqwest::blocking::Client {
    // reqwest is built without a default rustls provider (src/llm/tls.rs).
    lucy::llm::tls::install_provider();
    reqwest::blocking::Client::builder().timeout(Duration::from_secs(60)).build().unwrap()
}

fn get(s: &Server, path: &str) -> (u16, Value) {
    let r = client().get(format!("{}{path}", s.base)).send().unwrap();
    let st = r.status().as_u16();
    (st, r.json().unwrap_or(Value::Null))
}

fn post(s: &Server, path: &str, body: &Value) -> (u16, Value) {
    let r = client().post(format!("{}{path}", s.base)).json(body).send().unwrap();
    let st = r.status().as_u16();
    let text = r.text().unwrap();
    assert!(!text.contains(SENTINEL), "the API key leaked into a response");
    (st, serde_json::from_str(&text).unwrap_or(Value::String(text)))
}

fn cli_json(args: &[&str]) -> (Option<i32>, Value, Value) {
    let o = Command::new(env!("CARGO_BIN_EXE_lucy")).args(args).output().unwrap();
    let out = serde_json::from_slice(&o.stdout).unwrap_or(Value::Null);
    let err = serde_json::from_slice(&o.stderr).unwrap_or(Value::Null);
    (o.status.code(), out, err)
}

fn without_ms(mut v: Value) -> Value {
    v.as_object_mut().unwrap().remove("solve_ms");
    v
}

#[test]
fn models_view_and_errors_match_the_cli() {
    let s = start(&["--models", MODEL], None, &[]);
    let (st, h) = get(&s, "/healthz");
    assert_eq!(
        (st, h["status"].as_str(), h["models"].as_u64(), h["llm"].as_bool()),
        (200, Some("ok"), Some(1), Some(false))
    );
    let (st, m) = get(&s, "/v1/models");
    assert_eq!(st, 200);
    assert_eq!(m["models"][0]["name"], "ddo");
    assert_eq!(m["models"][0]["database"], true, "ddo.sqlite sits beside ddo.json");
    assert_eq!(m["models"][0]["file"], "ddo.json", "no server paths in answers");
    let (st, d) = get(&s, "/v1/models/ddo");
    assert_eq!(st, 200);
    assert!(d["core_table_names"].as_array().unwrap().iter().any(|t| t == "CLIENT"));
    assert!(!d["core_table_names"].as_array().unwrap().iter().any(|t| t == "CCPU"), "inner tables are not core");
    assert_eq!(d["model"]["patterns"].as_array().unwrap().len(), m["models"][0]["patterns"].as_u64().unwrap() as usize);
    let (st, e) = get(&s, "/v1/models/nope");
    assert_eq!(st, 404);
    assert!(e["error"].as_str().unwrap().contains("loaded models: ddo"));

    // POST /v1/view gives `lucy view --json`'s object.
    let (st, v) = post(
        &s,
        "/v1/view",
        &json!({"model": "ddo", "tables": ["CLIENT", "DATACENTER"], "attributes": ["CLIENT.name", "DATACENTER.name"]}),
    );
    assert_eq!(st, 200, "{v}");
    let (code, cli, _) = cli_json(&[
        "--json",
        "view",
        "--model",
        MODEL,
        "--tables",
        "CLIENT,DATACENTER",
        "--attrs",
        "CLIENT.name,DATACENTER.name",
    ]);
    assert_eq!(code, Some(0));
    assert_eq!(without_ms(v.clone()), without_ms(cli));
    assert!(v.get("svg").is_none(), "svg only when asked");
    let (_, v) = post(&s, "/v1/view", &json!({"model": "ddo", "tables": ["CLIENT", "DATACENTER"], "svg": true}));
    assert!(v["svg"].as_str().unwrap().contains("data-key=\"LOCATION\""));
    // The view options `lucy view` has: --keep, --inner-branch, --filter.
    let (st, v) = post(
        &s,
        "/v1/view",
        &json!({"model": "ddo", "tables": ["CLIENT", "DATACENTER"], "keep": "CLIENT",
                "filters": [{"column": {"table": "DATACENTER", "column": "name"}, "values": ["dev-eu-1", "dev-us-1"]}]}),
    );
    assert_eq!(st, 200, "{v}");
    let (code, cli, _) = cli_json(&[
        "--json",
        "view",
        "--model",
        MODEL,
        "--tables",
        "CLIENT,DATACENTER",
        "--keep",
        "CLIENT",
        "--filter",
        "DATACENTER.name=dev-eu-1,dev-us-1",
    ]);
    assert_eq!(code, Some(0));
    assert_eq!(without_ms(v.clone()), without_ms(cli));
    assert!(v["view_sql"].as_str().unwrap().contains("IN ('dev-eu-1', 'dev-us-1')"), "{}", v["view_sql"]);
    let (st, e) = post(
        &s,
        "/v1/view",
        &json!({"model": "ddo", "tables": ["CLIENT"], "filters": [{"column": {"table": "CLIENT", "column": "nope"}, "values": [1]}]}),
    );
    assert_eq!(st, 400, "{e}");
    assert!(e["error"].as_str().unwrap().contains("filters"), "{e}");

    // Errors: the CLI's message and exit code, as JSON.
    let (st, e) = post(&s, "/v1/view", &json!({"model": "ddo", "tables": ["CLIENTS", "DATACENTER"]}));
    let (code, _, cli_err) = cli_json(&["--json", "view", "--model", MODEL, "--tables", "CLIENTS,DATACENTER"]);
    assert_eq!(st, 400);
    assert_eq!(Some(e["exit_code"].as_i64().unwrap() as i32), code);
    assert_eq!(e["error"], cli_err["error"]);
    let (st, e) = post(&s, "/v1/view", &json!({"model": "ddo", "tables": ["CLIENT"], "bogus": 1}));
    assert_eq!(st, 422);
    assert!(e["error"].as_str().unwrap().contains("bogus"), "{e}");
    let r = client()
        .post(format!("{}/v1/view", s.base))
        .header("content-type", "application/json")
        .body("{not json")
        .send()
        .unwrap();
    assert_eq!(r.status().as_u16(), 400);
    assert!(r.json::<Value>().unwrap()["error"].is_string());
    let r = client()
        .post(format!("{}/v1/view", s.base))
        .header("content-type", "application/json")
        .body(vec![b' '; 2 << 20])
        .send()
        .unwrap();
    assert_eq!(r.status().as_u16(), 413);
    assert!(r.json::<Value>().unwrap()["error"].is_string());
    let r = client().delete(format!("{}/v1/view", s.base)).send().unwrap();
    assert_eq!(r.status().as_u16(), 405);
    let (st, _) = get(&s, "/v1/nothing-here");
    assert_eq!(st, 404);
    // POST /v1/check: `lucy check --json`'s report.
    let bad = "SELECT c.name FROM CLIENT c JOIN LOCATION l ON l.id = c.loc_id JOIN DATACENTER d ON d.loc_id = l.id";
    let (st, c) = post(&s, "/v1/check", &json!({"model": "ddo", "sql": bad}));
    let (code, cli, _) = cli_json(&["--json", "check", "--model", MODEL, "--sql", bad]);
    assert_eq!((st, code), (200, Some(1)));
    assert_eq!(c, cli);
    let (st, e) = post(&s, "/v1/check", &json!({"model": "ddo", "sql": "DROP TABLE CLIENT"}));
    assert_eq!((st, e["exit_code"].as_i64()), (400, Some(2)), "{e}");
    // Asks need an LLM unless tables are given and the run stops at the view.
    let (st, e) = post(&s, "/v1/ask", &json!({"model": "ddo", "question": Q1}));
    assert_eq!(st, 400);
    assert!(e["error"].as_str().unwrap().contains("needs an LLM"), "{e}");
    let (st, a) = post(
        &s,
        "/v1/ask",
        &json!({"model": "ddo", "question": Q1, "tables": ["CLIENT", "DATACENTER"], "stop_after": "view"}),
    );
    assert_eq!(st, 200, "{a}");
    assert_eq!(a["stopped_after"], "view");
    // Host names other than loopback ones are refused (DNS rebinding).
    let r = client().get(format!("{}/v1/models", s.base)).header("host", "evil.example").send().unwrap();
    assert_eq!(r.status().as_u16(), 403);
    // The document and the page are served.
    let (st, doc) = get(&s, "/openapi.json");
    assert_eq!((st, doc["openapi"].as_str()), (200, Some("3.1.0")));
    let r = client().get(format!("{}/", s.base)).send().unwrap();
    assert!(r.headers()["content-security-policy"].to_str().unwrap().contains("script-src 'self'"));
    assert!(r.text().unwrap().contains("<script src=\"/app.js\""));
}

#[test]
fn ask_q1_returns_rows_trace_and_streams_phases() {
    let mock = q1_mock();
    let s = start(&["--models", MODEL], Some(&mock.url()), &[]);
    let (st, a) =
        post(&s, "/v1/ask", &json!({"model": "ddo", "question": Q1, "execute": true, "min_votes": 2, "svg": true}));
    assert_eq!(st, 200, "{a}");
    assert_eq!(a["tables"], json!(["CLIENT", "DATACENTER"]));
    assert_eq!(a["rows"]["rows"].as_array().unwrap().len(), 29);
    assert!(a["failure"].is_null());
    assert!(a["svg"].as_str().unwrap().contains("votes 5/5"));
    let id = a["trace_id"].as_str().unwrap();
    let (st, t) = get(&s, &format!("/v1/traces/{id}"));
    assert_eq!(st, 200);
    assert_eq!(t["match_tables"]["steps"][0]["votes"][2], json!({"item": "LOCATION", "votes": 1, "kept": false}));
    let r = client().get(format!("{}/v1/traces/{id}/svg", s.base)).send().unwrap();
    assert_eq!(r.headers()["content-type"], "image/svg+xml; charset=utf-8");
    // The dropped-file path: POST the trace back for its picture.
    let r = client().post(format!("{}/v1/traces/svg", s.base)).json(&t).send().unwrap();
    assert_eq!(r.status().as_u16(), 200);
    assert!(r.text().unwrap().starts_with("<svg"));
    let (st, _) = get(&s, "/v1/traces/0000000000000000");
    assert_eq!(st, 404);

    // Streamed: one event per phase, in order, then the result.
    let r = client()
        .post(format!("{}/v1/ask", s.base))
        .header("accept", "text/event-stream")
        .json(&json!({"model": "ddo", "question": Q1, "execute": true, "min_votes": 2, "svg": true}))
        .send()
        .unwrap();
    assert_eq!(r.headers()["content-type"], "text/event-stream");
    let text = r.text().unwrap();
    assert!(!text.contains(SENTINEL));
    let all: Vec<(String, Value)> = text
        .split("\n\n")
        .filter_map(|chunk| {
            let name = chunk.lines().find_map(|l| l.strip_prefix("event: "))?;
            let data = chunk.lines().find_map(|l| l.strip_prefix("data: "))?;
            Some((name.to_string(), serde_json::from_str(data).unwrap()))
        })
        .collect();
    let events: Vec<&str> = all.iter().map(|(n, _)| n.as_str()).filter(|n| *n != "progress").collect();
    assert_eq!(events, ["match_tables", "generate_view", "query_view", "result"], "{text}");
    let data: Vec<&Value> = all.iter().filter(|(n, _)| n != "progress").map(|(_, d)| d).collect();
    // Progress as it happens: each step starts before its phase event, every
    // prompt is reported sent, then answered, and nothing is in flight at the end.
    let progress: Vec<String> = all
        .iter()
        .map(|(n, d)| match n.as_str() {
            "progress" => match d["kind"].as_str().unwrap() {
                "step" => format!("step {}", d["step"].as_str().unwrap()),
                k => format!("{k} {} {}", d["step"].as_str().unwrap(), d["what"].as_str().unwrap()),
            },
            phase => format!("phase {phase}"),
        })
        .collect();
    let pos = |e: &str| progress.iter().position(|p| p == e).unwrap_or_else(|| panic!("no `{e}` in {progress:#?}"));
    assert!(pos("step MatchTables") < pos("prompt MatchTables relevant tables"));
    assert!(pos("prompt MatchTables relevant tables") < pos("prompt_done MatchTables relevant tables"));
    assert!(pos("prompt_done MatchTables relevant tables") < pos("phase match_tables"));
    // The default view shows every column of its tables: no attribute prompt.
    assert!(!progress.iter().any(|p| p.contains("attributes of")), "{progress:#?}");
    assert!(pos("phase match_tables") < pos("step GenerateView"));
    assert!(pos("step GenerateView") < pos("phase generate_view"));
    assert!(pos("phase generate_view") < pos("step QueryView"));
    // QueryView's default form (`auto`) asks for the plan first.
    assert!(pos("step QueryView") < pos("prompt QueryView query plan"));
    assert!(pos("prompt_done QueryView query plan") < pos("phase query_view"));
    let sent = progress.iter().filter(|p| p.starts_with("prompt ")).count();
    let done = progress.iter().filter(|p| p.starts_with("prompt_done ")).count();
    assert_eq!(sent, done, "{progress:#?}");
    assert_eq!(sent, 2, "relevant tables and the query plan: {progress:#?}");
    let last = all.iter().rfind(|(n, d)| n == "progress" && d["kind"] == "prompt_done").unwrap();
    assert_eq!(last.1["in_flight"], 0);
    assert!(last.1["tokens_per_s"].as_f64().unwrap() >= 0.0);
    assert_eq!(data[0]["trace"]["tables"], json!(["CLIENT", "DATACENTER"]));
    assert!(data[1]["svg"].as_str().unwrap().contains("RSPOOL2CLIENT"));
    assert_eq!(data[3]["rows"]["rows"].as_array().unwrap().len(), 29);
    // The key travelled only to the LLM, in the Authorization header.
    assert!(mock.chat_requests().iter().all(|r| r.authorization.as_deref() == Some(&format!("Bearer {SENTINEL}")[..])));
}

#[test]
fn the_concurrency_cap_answers_429_and_the_time_limit_504() {
    let mock = q1_mock();
    let s = start(&["--models", MODEL, "--max-concurrent", "1", "--request-timeout", "1.5"], Some(&mock.url()), &[]);
    let base = s.base.clone();
    let slow = std::thread::spawn(move || {
        let r = client()
            .post(format!("{base}/v1/ask"))
            .json(&json!({"model": "ddo", "question": "SLOW question", "samples": 1}))
            .send()
            .unwrap();
        (r.status().as_u16(), r.json::<Value>().unwrap())
    });
    std::thread::sleep(Duration::from_millis(500));
    let r = client()
        .post(format!("{}/v1/view", s.base))
        .json(&json!({"model": "ddo", "tables": ["CLIENT"]}))
        .send()
        .unwrap();
    assert_eq!(r.status().as_u16(), 429);
    assert_eq!(r.headers()["retry-after"], "1");
    assert!(r.json::<Value>().unwrap()["error"].as_str().unwrap().contains("--max-concurrent"));
    let (st, e) = slow.join().unwrap();
    assert_eq!(st, 504, "{e}");
    assert!(e["error"].as_str().unwrap().contains("--request-timeout"));
    // The permit is held until the slow work really ends; then views pass again.
    std::thread::sleep(Duration::from_millis(2000));
    let (st, _) = post(&s, "/v1/view", &json!({"model": "ddo", "tables": ["CLIENT"]}));
    assert_eq!(st, 200);
}

#[test]
fn token_is_required_off_loopback_and_checked_when_set() {
    let o = command(&["--models", MODEL, "--addr", "0.0.0.0:0"], None, &[]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("LUCY_SERVE_TOKEN"));
    let token = "t0k3n-0123456789abcdef";
    let s = start(&["--models", MODEL], None, &[("LUCY_SERVE_TOKEN", token)]);
    let (st, e) = get(&s, "/v1/models");
    assert_eq!(st, 401);
    assert!(e["error"].as_str().unwrap().contains("bearer token"));
    let r = client().get(format!("{}/v1/models", s.base)).bearer_auth("wrong-token-0123456789").send().unwrap();
    assert_eq!(r.status().as_u16(), 401);
    let r = client().get(format!("{}/v1/models", s.base)).bearer_auth(token).send().unwrap();
    assert_eq!(r.status().as_u16(), 200);
    assert_eq!(get(&s, "/healthz").0, 200, "health needs no token");
}

#[test]
fn bad_models_fail_at_start_and_reload_keeps_the_old_set() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("ddo.json");
    std::fs::copy(MODEL, &file).unwrap();
    let broken = dir.path().join("broken.json");
    std::fs::write(&broken, "{\"name\": \"broken\", \"tables\": []").unwrap();
    let o = command(&["--models", dir.path().to_str().unwrap(), "--addr", "127.0.0.1:0"], None, &[]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("broken.json"), "{}", String::from_utf8_lossy(&o.stderr));
    std::fs::remove_file(&broken).unwrap();

    let s = start(&["--models", dir.path().to_str().unwrap()], None, &[]);
    let edit = |desc: &str| {
        let mut m: Value = serde_json::from_str(&std::fs::read_to_string(&file).unwrap()).unwrap();
        m["description"] = json!(desc);
        std::fs::write(&file, m.to_string()).unwrap();
    };
    edit("reloaded by POST");
    let (st, r) = post(&s, "/v1/models/reload", &json!({}));
    assert_eq!((st, &r["models"]), (200, &json!(1)));
    assert_eq!(get(&s, "/v1/models/ddo").1["description"], "reloaded by POST");
    // SIGHUP reloads too.
    edit("reloaded by SIGHUP");
    unsafe { libc::kill(s.child.id() as i32, libc::SIGHUP) };
    let mut seen = false;
    for _ in 0..50 {
        std::thread::sleep(Duration::from_millis(100));
        if get(&s, "/v1/models/ddo").1["description"] == "reloaded by SIGHUP" {
            seen = true;
            break;
        }
    }
    assert!(seen, "SIGHUP did not reload");
    // A broken file on reload: an error naming it, the old models stay.
    std::fs::write(&broken, "{").unwrap();
    let (st, e) = post(&s, "/v1/models/reload", &json!({}));
    assert_eq!(st, 500);
    assert!(e["error"].as_str().unwrap().contains("broken.json"), "{e}");
    assert_eq!(get(&s, "/v1/models").1["models"].as_array().unwrap().len(), 1);
}

/// Where scripts/setup-serve-tests.sh puts chromium's driver and
/// schemathesis. Missing tools fail the test when LUCY_REQUIRE_SERVE_TOOLS
/// is set (scripts/test.sh sets it after installing them), and are skipped
/// with a note otherwise.
fn tools() -> Option<std::path::PathBuf> {
    let dir = std::env::var_os("LUCY_SERVE_TOOLS")
        .map(std::path::PathBuf::from)
        .or_else(|| std::env::var_os("HOME").map(|h| std::path::PathBuf::from(h).join(".cache/lucy")))?;
    let ready = dir.join("venv/bin/schemathesis").is_file()
        && dir.join("node/node_modules/playwright-core/package.json").is_file()
        && Path::new("/usr/bin/chromium").is_file();
    if ready {
        return Some(dir);
    }
    assert!(
        std::env::var_os("LUCY_REQUIRE_SERVE_TOOLS").is_none(),
        "schemathesis, playwright-core or chromium missing under {}: run scripts/setup-serve-tests.sh",
        dir.display()
    );
    eprintln!("skipped: run scripts/setup-serve-tests.sh to install chromium, playwright-core and schemathesis");
    None
}

/// schemathesis fuzzes every operation of /openapi.json (valid and invalid
/// bodies): no 5xx, every status and body as documented.
#[test]
fn schemathesis_finds_no_undocumented_behaviour() {
    let Some(dir) = tools() else { return };
    let mock = q1_mock();
    // A copy of the model: POST /v1/models/{name}/examples writes beside it.
    let models = tempfile::tempdir().unwrap();
    for f in ["ddo.json", "ddo.sqlite"] {
        std::fs::copy(Path::new(MODEL).with_file_name(f), models.path().join(f)).unwrap();
    }
    let model = models.path().join("ddo.json");
    let s = start(&["--models", model.to_str().unwrap(), "--max-concurrent", "8"], Some(&mock.url()), &[]);
    let o = Command::new(dir.join("venv/bin/schemathesis"))
        .args(["run", &format!("{}/openapi.json", s.base)])
        .args(["--checks", "not_a_server_error,status_code_conformance,content_type_conformance,response_schema_conformance,negative_data_rejection,unsupported_method"])
        .args(["--max-examples", "25", "--seed", "1", "--workers", "1", "--request-timeout", "30", "--phases", "examples,coverage,fuzzing"])
        .args(["--exclude-path", "/v1/models/reload"])
        .env("SCHEMATHESIS_HOOKS", "")
        // It keeps a .schemathesis/ cache in its working directory: not the repo.
        .current_dir(std::env::temp_dir())
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "schemathesis failed:\n{out}\n{}", String::from_utf8_lossy(&o.stderr));
    eprintln!("{}", out.lines().rev().take(12).collect::<Vec<_>>().into_iter().rev().collect::<Vec<_>>().join("\n"));
}

/// The web page in Debian's chromium: ask Q1, check what is shown, take a
/// screenshot (target/tmp/serve-q1.png), open a trace file.
#[test]
fn browser_asks_q1_and_opens_a_trace() {
    let Some(dir) = tools() else { return };
    let mock = q1_mock();
    // jaffle_shop (imported from dbt) beside DDO: the page's table browser
    // shows where each of its tables lives and comes from.
    let jaffle = concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels/jaffle_shop.json");
    let s = start(&["--models", MODEL, jaffle], Some(&mock.url()), &[]);
    let tmp = tempfile::tempdir().unwrap();
    let trace = tmp.path().join("q1.json");
    let o = Command::new(env!("CARGO_BIN_EXE_lucy"))
        .args(["ask", "--model", MODEL, Q1, "--execute", concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels/ddo.sqlite")])
        .args(["--min-votes", "2", "--trace", trace.to_str().unwrap()])
        .args(["--llm-url", &mock.url(), "--llm-model", "mock-model", "--llm-retries", "0"])
        .env("LUCY_API_KEY", SENTINEL)
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    // The same trace with an execution vote and verified examples, built
    // from the trace types themselves, for the page's vote and examples
    // sections.
    let voted = tmp.path().join("q1-voted.json");
    std::fs::write(&voted, serde_json::to_string(&with_vote_and_examples(&trace)).unwrap()).unwrap();
    let shot = Path::new(env!("CARGO_TARGET_TMPDIR")).join("serve-q1.png");
    let o = Command::new("node")
        .arg(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/browser/ask_q1.cjs"))
        .args([&s.base, shot.to_str().unwrap(), trace.to_str().unwrap(), voted.to_str().unwrap()])
        .env("LUCY_PLAYWRIGHT", dir.join("node/node_modules/playwright-core"))
        .output()
        .unwrap();
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(o.status.success(), "browser test failed:\n{out}\n{}", String::from_utf8_lossy(&o.stderr));
    assert!(out.contains(" passed, 0 failed"), "{out}");
    assert!(std::fs::metadata(&shot).unwrap().len() > 10_000, "screenshot too small");
}

/// `trace` with a three-candidate execution vote (two agree, one the guard
/// rejected) and one verified example, as `lucy ask --exec-vote 3
/// --examples F` would record them.
fn with_vote_and_examples(trace: &Path) -> lucy::types::trace::Trace {
    use lucy::types::trace::{ExamplesTrace, ExecVote, SqlCandidate, UsedExample, Validation, VoteResult};
    let mut t = lucy::types::trace::Trace::load(trace).unwrap();
    let qv = t.query_view.as_mut().unwrap();
    let sql = qv.sql.clone().unwrap();
    let ok = |chosen: bool| SqlCandidate {
        extracted: Some(sql.clone()),
        extraction: "sql_fence".into(),
        validation: Validation { ok: true, ..Default::default() },
        execution: qv.attempts[0].execution.clone(),
        result_hash: Some("set:00112233445566ff".into()),
        votes: 2,
        chosen,
        ..Default::default()
    };
    let bad = SqlCandidate {
        extracted: Some("SELECT CLIENT_CLIENT_name FROM lucy_view".into()),
        extraction: "sql_fence".into(),
        validation: Validation {
            ok: false,
            error: Some("unknown column CLIENT_CLIENT_name".into()),
            ..Default::default()
        },
        ..Default::default()
    };
    qv.exec_vote = Some(ExecVote {
        k: 3,
        call: None,
        candidates: vec![ok(true), ok(false), bad],
        results: vec![VoteResult { hash: "set:00112233445566ff".into(), members: vec![0, 1], votes: 2, row_count: 29 }],
        chosen: Some(0),
    });
    // The plan form's section (issue 46): the plan the model read the
    // question as, and what it compiled to.
    qv.plan = Some(lucy::types::trace::PlanTrace {
        form: "auto".into(),
        table: [
            ("kind", "query"),
            ("select", "CLIENT_name, DATACENTER_name"),
            ("filter", "DATACENTER_name like 'dev%'"),
        ]
        .iter()
        .map(|(p, t)| lucy::types::trace::PlanLine { part: p.to_string(), text: t.to_string() })
        .collect(),
        tidied: vec!["like '%dev%' on DATACENTER_name: the question anchors it, 'dev%'".into()],
        compiled: Some(sql.clone()),
        ..Default::default()
    });
    t.examples = Some(ExamplesTrace {
        file: "ddo.examples.jsonl".into(),
        embedder: "hash".into(),
        k: 3,
        tables_mode: "offer".into(),
        tables: Vec::new(),
        used: vec![UsedExample {
            line: 1,
            question: "Which clients use the datacenter named prod1?".into(),
            sql: "SELECT c.name FROM CLIENT c".into(),
            score: 0.83,
            tables: vec!["CLIENT".into()],
            in_prompt: Some("SELECT DISTINCT CLIENT_name FROM lucy_view".into()),
            left_out: None,
        }],
    });
    t
}
