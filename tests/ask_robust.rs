//! `lucy ask` when things go wrong: no LLM configured, a server that fails
//! forever, garbage answers, unknown names, a DROP TABLE answer.

mod support;

use std::process::Output;
use std::time::{Duration, Instant};

use lucy::llm::mock::{MockServer, Reply, Rule, Script};
use support::lucy;

const MODEL: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels/ddo.json");
const DB: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels/ddo.sqlite");
const Q1: &str =
    "List customers who use datacenters with names starting with 'dev'. Output clients and datacenters names.";

/// The mock at `url` with one retry and a 5 s timeout (the failing server's
/// tests wait on both).
fn with_mock(args: &[&str], url: &str) -> Output {
    lucy()
        .args(args)
        .args(["--llm-url", url, "--llm-model", "mock", "--llm-retries", "1", "--llm-timeout", "5"])
        .env("LUCY_API_KEY", "sk-SENTINEL-robust-42")
        // The scripted mock answers QueryView's SQL prompt, not a plan:
        // the `sql` form (the default is `auto` since session 30).
        .env("LUCY_SET", "query.form=sql")
        .output()
        .unwrap()
}

fn text(o: &Output) -> (String, String) {
    (String::from_utf8_lossy(&o.stdout).into_owned(), String::from_utf8_lossy(&o.stderr).into_owned())
}

#[test]
fn no_llm_and_no_offline_model_says_how_and_exits_2() {
    let empty = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let o = lucy().args(["ask", "--model", MODEL, Q1]).env("LUCY_MINILM_DIR", empty.path()).output().unwrap();
    assert!(started.elapsed() < Duration::from_secs(20), "must not hang");
    assert_eq!(o.status.code(), Some(2));
    let (_, err) = text(&o);
    assert!(err.contains("no LLM configured") && err.contains("--llm-model") && err.contains("LUCY_API_KEY"), "{err}");
    assert!(err.contains("offline linker"), "{err}");
    assert!(err.contains("fetch-minilm.sh"), "{err}");
    assert!(err.contains("scripts/fetch-model.sh"), "the hint names the embedded model's fetch script: {err}");
}

/// Without an LLM, phase 1 runs on the offline embedding linker (CRUSH over
/// MiniLM) and the run stops after the view; the trace names the linker.
#[test]
fn no_llm_uses_the_offline_linker_and_stops_after_the_view() {
    if !lucy::crush::embed::minilm::MiniLm::available(&lucy::crush::embed::minilm::MiniLm::default_dir()) {
        eprintln!("skipped: MiniLM model files absent (scripts/fetch-minilm.sh installs them; CI runs it)");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.json");
    let o = lucy().args(["ask", "--model", MODEL, Q1, "--trace", trace.to_str().unwrap()]).output().unwrap();
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(err.contains("no LLM configured") && err.contains("offline embedding linker"), "{err}");
    // The linker must find both tables the question names; the solver then
    // owns the join: through the m:m junction, never through LOCATION.
    assert!(out.contains("CLIENT_name") && out.contains("DATACENTER_name"), "{out}");
    assert!(out.contains("RSPOOL2CLIENT") && !out.contains("JOIN LOCATION"), "{out}");
    assert!(!out.contains("-- SQL"), "{out}");
    let t: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&trace).unwrap()).unwrap();
    assert!(t["match_tables"]["source"].as_str().unwrap().starts_with("offline embedding linker"), "{t}");
    assert_eq!(t["stopped_after"], "view");
}

#[test]
fn offline_view_with_given_tables() {
    let o = lucy()
        .args(["ask", "--model", MODEL, Q1, "--tables", "CLIENT,DATACENTER", "--stop-after", "view"])
        .output()
        .unwrap();
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(out.contains("CREATE VIEW lucy_view"), "{out}");
    assert!(out.contains("RSPOOL2CLIENT"), "{out}");
    assert!(!out.contains("-- SQL"));
    // --stop-after match also works offline.
    let o = lucy()
        .args(["--json", "ask", "--model", MODEL, Q1, "--attrs", "CLIENT.name", "--stop-after", "match"])
        .output()
        .unwrap();
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["tables"], serde_json::json!(["CLIENT"]));
    assert_eq!(v["stopped_after"], "match");
    // Unknown given tables are input errors naming the table.
    let o =
        lucy().args(["ask", "--model", MODEL, Q1, "--tables", "CUSTOMER", "--stop-after", "view"]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(text(&o).1.contains("unknown table `CUSTOMER`"));
}

#[test]
fn server_error_forever_is_a_clear_error() {
    let server = MockServer::start(
        Script::new().rule(Rule::any().reply(Reply::status(500, "{\"error\":{\"message\":\"boom\"}}"))),
    );
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.json");
    let o = with_mock(&["ask", "--model", MODEL, Q1, "--trace", trace.to_str().unwrap()], &server.url());
    let (out, err) = text(&o);
    assert_eq!(o.status.code(), Some(1), "{out}\n{err}");
    assert!(err.contains("match_tables failed (llm)"), "{err}");
    assert!(err.contains("500"), "{err}");
    let all = format!("{out}{err}{}", std::fs::read_to_string(&trace).unwrap());
    assert!(!all.contains("SENTINEL"), "the API key leaked");
    let ex = lucy().args(["explain", trace.to_str().unwrap()]).output().unwrap();
    assert!(text(&ex).0.contains("RESULT: failed in match_tables (llm)"));
}

#[test]
fn garbage_answers_end_with_nothing_matched() {
    let server = MockServer::start(Script::new().rule(Rule::any().reply(Reply::ok([
        "",
        "Sorry, I can't.",
        "[]",
        "[CUSTOMERS, ORDERS]",
    ]))));
    let o = with_mock(&["ask", "--model", MODEL, Q1], &server.url());
    let (_, err) = text(&o);
    assert_eq!(o.status.code(), Some(1));
    assert!(err.contains("MatchTables found no relevant table"), "{err}");
    assert!(err.contains("dropped unknown table `CUSTOMERS`"), "{err}");
}

#[test]
fn drop_table_answer_is_repaired_and_never_run() {
    let server = MockServer::start(
        Script::new()
            .rule(Rule::when_contains(["JSON schema of the database"]).reply(Reply::ok(["[\"CLIENT\", \"DATACENTER\"]"])))
            .rule(Rule::when_contains(["JSON schema of the table"]).reply(Reply::ok(["[\"name\"]"])))
            .rule(Rule::when_contains(["cannot be used"]).reply(Reply::ok(["```sql\nSELECT DISTINCT CLIENT_name, DATACENTER_name FROM lucy_view WHERE DATACENTER_name LIKE 'dev%'\n```"])))
            .rule(Rule::when_contains(["I created a view table"]).reply(Reply::ok(["```sql\nDROP TABLE CLIENT; SELECT CLIENT_name FROM lucy_view\n```"]))),
    );
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.json");
    let o = with_mock(
        &["ask", "--model", MODEL, Q1, "--samples", "1", "--execute", DB, "--trace", trace.to_str().unwrap()],
        &server.url(),
    );
    let (out, err) = text(&o);
    assert!(o.status.success(), "{err}");
    assert!(out.contains("-- 29 row(s)"), "{out}");
    let t: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&trace).unwrap()).unwrap();
    let a0 = &t["query_view"]["attempts"][0];
    assert!(a0["validation"]["error"]
        .as_str()
        .unwrap()
        .contains("exactly one statement, found 2 (DROP TABLE, SELECT)"));
    assert!(a0.get("execution").is_none());
    assert_eq!(t["query_view"]["repaired"], true);
    // The database still has its clients.
    let c = rusqlite::Connection::open_with_flags(DB, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    let n: i64 = c.query_row("SELECT count(*) FROM CLIENT", [], |r| r.get(0)).unwrap();
    assert!(n > 0);
}

/// `--prefilter crush` offers MatchTables only the core tables of CRUSH's
/// picks (given probes, so no hallucination call); the trace records it and
/// the first prompt lists only those tables.
#[test]
fn crush_prefilter_restricts_the_core_tables_offered() {
    if !lucy::crush::embed::minilm::MiniLm::available(&lucy::crush::embed::minilm::MiniLm::default_dir()) {
        eprintln!("skipped: MiniLM model files absent (scripts/fetch-minilm.sh installs them; CI runs it)");
        return;
    }
    let server = MockServer::start(Script::new().rule(Rule::any().reply(Reply::ok(["[\"CLIENT\", \"DATACENTER\"]"]))));
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.json");
    let o = with_mock(
        &[
            "ask",
            "--model",
            MODEL,
            Q1,
            "--prefilter",
            "crush",
            "--budget",
            "4",
            "--probes",
            "CLIENT(name); DATACENTER(name)",
            "--samples",
            "1",
            "--stop-after",
            "match",
            "--trace",
            trace.to_str().unwrap(),
        ],
        &server.url(),
    );
    let (_, err) = text(&o);
    assert!(o.status.success(), "{err}");
    let t: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&trace).unwrap()).unwrap();
    let restricted: Vec<String> = t["match_tables"]["restricted_to"]
        .as_array()
        .unwrap()
        .iter()
        .map(|v| v.as_str().unwrap().to_string())
        .collect();
    assert!(
        restricted.contains(&"CLIENT".to_string()) && restricted.contains(&"DATACENTER".to_string()),
        "{restricted:?}"
    );
    assert!(!restricted.contains(&"PAYMENT".to_string()), "{restricted:?}");
    assert_eq!(t["match_tables"]["core_tables"].as_array().unwrap().len(), restricted.len(), "{t}");
}

/// `--llm-max-tokens` is sent as `max_tokens`; an answer the server cuts off
/// there (`finish_reason: length`) is flagged in the trace and named in the
/// error, since the cut explains the unusable SQL.
#[test]
fn answers_cut_at_the_token_limit_are_flagged() {
    let sql =
        "```sql\nSELECT DISTINCT CLIENT_name, DATACENTER_name FROM lucy_view WHERE DATACENTER_name LIKE 'dev%'\n```";
    let server = MockServer::start(
        Script::new()
            .rule(
                Rule::when_contains(["JSON schema of the database"]).reply(Reply::ok(["[\"CLIENT\", \"DATACENTER\"]"])),
            )
            .rule(Rule::when_contains(["JSON schema of the table"]).reply(Reply::ok(["[\"name\"]"])))
            .default_reply(Reply::ok([sql])),
    );
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.json");
    let o = with_mock(
        &["ask", "--model", MODEL, Q1, "--samples", "1", "--llm-max-tokens", "12", "--trace", trace.to_str().unwrap()],
        &server.url(),
    );
    let (_, err) = text(&o);
    assert!(!o.status.success(), "a cut-off query must not pass: {err}");
    assert!(err.contains("stopped at the token limit") && err.contains("--llm-max-tokens"), "{err}");
    assert!(server.chat_requests().iter().all(|r| r.json().unwrap()["max_tokens"] == 12));
    let t: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&trace).unwrap()).unwrap();
    let a0 = &t["query_view"]["attempts"][0];
    assert_eq!(a0["call"]["truncated"], 1, "{a0}");
    assert!(a0["validation"]["error"].as_str().unwrap().contains("token limit"), "{a0}");
    // The short MatchTables answers were not cut: no flag there.
    assert!(t["match_tables"].to_string().find("\"truncated\"").is_none(), "{}", t["match_tables"]);
}

/// A MatchTables sample cut at the token limit is a warning of its step.
#[test]
fn match_step_warns_about_a_cut_off_sample() {
    let server = MockServer::start(
        Script::new()
            .rule(
                Rule::when_contains(["JSON schema of the database"]).reply(Reply::ok(["[\"CLIENT\", \"DATACENTER\"]"])),
            )
            .default_reply(Reply::ok(["[]"])),
    );
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.json");
    let _ = with_mock(
        &[
            "ask",
            "--model",
            MODEL,
            Q1,
            "--samples",
            "1",
            "--llm-max-tokens",
            "3",
            "--stop-after",
            "match",
            "--trace",
            trace.to_str().unwrap(),
        ],
        &server.url(),
    );
    let t: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&trace).unwrap()).unwrap();
    let step = &t["match_tables"]["steps"][0];
    assert_eq!(step["call"]["truncated"], 1, "{step}");
    assert!(step["warnings"].to_string().contains("1 of 1 answer(s) stopped at the token limit"), "{step}");
}
