//! The paper's DDO questions Q1 and Q2 end to end through `lucy ask`, with a
//! scripted OpenAI-compatible mock on 127.0.0.1: the final SQL reads only
//! the view, runs on dbmodels/ddo.sqlite, and returns the same rows as
//! independently written gold SQL over the base tables.

mod support;

use std::path::Path;
use std::process::Output;

use lucy::llm::mock::{MockServer, Script};
use support::{json_ok, rows_of, rule, run, run_mock, sqlite_rows, trace_and_explain};

const MODEL: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels/ddo.json");
const DB: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels/ddo.sqlite");
const SENTINEL: &str = support::MOCK_API_KEY;

/// The mock LLM's answers for Q1 (shared with the serve, MCP and load tests).
const Q1_SCRIPT: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/mock/ddo-q1.json");
const Q1: &str =
    "List customers who use datacenters with names starting with 'dev'. Output clients and datacenters names.";
const Q2: &str = "List resource pool names with CPU overhead limit greater than runtime overall usage by 100";

fn no_secret(out: &Output, trace: &Path) {
    let all = format!(
        "{}{}{}",
        String::from_utf8_lossy(&out.stdout),
        String::from_utf8_lossy(&out.stderr),
        std::fs::read_to_string(trace).unwrap_or_default()
    );
    assert!(!all.contains(SENTINEL), "the API key leaked");
}

#[test]
fn q1_clients_and_datacenters_through_the_m_to_m() {
    let server = MockServer::start(Script::from_file(Q1_SCRIPT).unwrap());
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("q1.json");
    let out = run_mock(
        &[
            "--json",
            "ask",
            "--model",
            MODEL,
            Q1,
            "--execute",
            DB,
            "--min-votes",
            "2",
            "--trace",
            trace.to_str().unwrap(),
        ],
        &server.url(),
    );
    let v = json_ok(&out);
    // LOCATION got 1 of 5 votes: below --min-votes 2.
    assert_eq!(v["tables"], serde_json::json!(["CLIENT", "DATACENTER"]));
    let view_sql = v["view"]["view_sql"].as_str().unwrap();
    assert!(view_sql.contains("RSPOOL2CLIENT") && !view_sql.contains("LOCATION"), "{view_sql}");
    let sql = v["sql"].as_str().unwrap();
    assert!(sql.contains("CLIENT_name") && sql.contains("DATACENTER_name") && sql.contains("FROM lucy_view"));
    let expected = sqlite_rows(
        DB,
        "SELECT DISTINCT c.name, d.name FROM CLIENT c JOIN RSPOOL2CLIENT j ON j.client_id = c.id \
         JOIN RESOURCEPOOL p ON p.id = j.rspool_id JOIN COMPUTE k ON k.id = p.compute_id \
         JOIN DATACENTER d ON d.id = k.dc_id WHERE d.name LIKE 'dev%'",
    );
    assert_eq!(expected.len(), 29);
    assert_eq!(rows_of(&v), expected);
    no_secret(&out, &trace);
    // The trace holds every phase and renders.
    let t = trace_and_explain(&trace, &["RESULT: ok — SQL accepted, 29 row(s)", "LOCATION 1/5 (dropped)"]);
    assert_eq!(
        t["match_tables"]["steps"][0]["votes"][2],
        serde_json::json!({"item": "LOCATION", "votes": 1, "kept": false})
    );
    assert!(t["generate_view"]["request"]["tables"].is_array());
    assert_eq!(t["query_view"]["attempts"][0]["execution"]["row_count"], 29);
}

#[test]
fn q2_resource_pools_through_the_snowflake() {
    let server = MockServer::start(
        Script::new()
            .rule(rule("JSON schema of the database", &["[\"RESOURCEPOOL\"]"]))
            .rule(rule("The table RESOURCEPOOL is part of a snowflake", &["[\"CONFIG\", \"RUNTIME\", \"name\"]"]))
            .rule(rule("The table CONFIG is part of a snowflake", &["[\"CCPU\"]"]))
            .rule(rule("The table RUNTIME is part of a snowflake", &["[\"RCPU\"]"]))
            .rule(rule("JSON schema of the table CCPU", &["[\"overheadlimit\"]"]))
            .rule(rule("JSON schema of the table RCPU", &["[\"overallusage\"]"]))
            .rule(rule(
                "I created a view table lucy_view",
                &["SELECT DISTINCT RESOURCEPOOL_name FROM lucy_view WHERE CCPU_overheadlimit > RCPU_overallusage + 100;\nThis query compares the limits."],
            )),
    );
    let out = run_mock(&["--json", "ask", "--model", MODEL, Q2, "--execute", DB, "--samples", "3"], &server.url());
    let v = json_ok(&out);
    assert_eq!(v["tables"], serde_json::json!(["RESOURCEPOOL", "CONFIG", "RUNTIME", "CCPU", "RCPU"]));
    let expected = sqlite_rows(
        DB,
        "SELECT DISTINCT p.name FROM RESOURCEPOOL p JOIN CONFIG c ON c.rspool_id = p.id JOIN CCPU cc ON cc.config_id = c.id \
         JOIN RUNTIME r ON r.rspool_id = p.id JOIN RCPU rc ON rc.runtime_id = r.id WHERE cc.overheadlimit > rc.overallusage + 100",
    );
    assert_eq!(expected.len(), 20, "dbmodels/README.md lists 20 pools");
    assert_eq!(rows_of(&v), expected);
    // Every MatchTables request asked for 3 samples and offered the enum of names.
    let reqs = server.chat_requests();
    let first = reqs[0].json().unwrap();
    assert_eq!(first["n"], 3);
    assert!(!reqs.iter().any(|r| r.body.contains(SENTINEL)), "the key travels only in the Authorization header");
}

/// A run recorded against the mock replays bit-identically with the mock
/// gone: the phases ask the same prompts in the same order every time.
#[test]
fn recorded_run_replays_identically_offline() {
    let dir = tempfile::tempdir().unwrap();
    let cassette = dir.path().join("q1.jsonl");
    let cassette = cassette.to_str().unwrap();
    let url;
    let recorded = {
        let server = MockServer::start(
            Script::new()
                .rule(rule("JSON schema of the database", &["[\"CLIENT\", \"DATACENTER\"]", "[\"CLIENT\"]"]))
                .rule(rule("JSON schema of the table", &["[\"name\"]"]))
                .rule(rule("I created a view table", &["```sql\nSELECT DISTINCT CLIENT_name, DATACENTER_name FROM lucy_view WHERE DATACENTER_name LIKE 'dev%'\n```"])),
        );
        url = server.url();
        run_mock(&["--json", "ask", "--model", MODEL, Q1, "--execute", DB, "--record", cassette], &url)
    };
    assert!(recorded.status.success(), "{}", String::from_utf8_lossy(&recorded.stderr));
    let text = std::fs::read_to_string(cassette).unwrap();
    assert!(!text.contains(SENTINEL), "the API key leaked into the cassette");
    // Recorded in the sql form (`run_mock`), replayed in it.
    let replayed =
        run(&["--json", "ask", "--model", MODEL, Q1, "--execute", DB, "--replay", cassette, "--set", "query.form=sql"]);
    assert!(replayed.status.success(), "{}", String::from_utf8_lossy(&replayed.stderr));
    let strip = |o: &Output| {
        let mut v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
        // Solver wall time differs between runs; everything else must not.
        v["view"]["solve_ms"] = serde_json::Value::Null;
        v
    };
    assert_eq!(strip(&recorded), strip(&replayed));
    // A different question is a cassette miss, reported as an LLM failure.
    let miss = run(&["ask", "--model", MODEL, "Which pools are red?", "--replay", cassette]);
    assert_eq!(miss.status.code(), Some(1));
    assert!(
        String::from_utf8_lossy(&miss.stderr).contains("match_tables failed (llm)"),
        "{}",
        String::from_utf8_lossy(&miss.stderr)
    );
}
