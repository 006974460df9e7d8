//! The rename lever (`--rename-unknown`) end to end through `lucy ask`, with
//! a scripted OpenAI-compatible mock on 127.0.0.1: DDO Q1 as the embedded
//! default model answered it on a fresh run, naming `CLIENT_CLIENT_name` and
//! `DATACENTER_DATACENTER_name` (the view has `CLIENT_name` and
//! `DATACENTER_name`) and repeating that SQL in the repair round.

mod support;

use std::collections::BTreeSet;
use std::process::{Command, Output};

use lucy::llm::mock::{MockServer, Script};
use support::rule;

const MODEL: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels/ddo.json");
const DB: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels/ddo.sqlite");
const Q1: &str =
    "List customers who use datacenters with names starting with 'dev'. Output clients and datacenters names.";
const DOUBLED: &str = "```sql\nSELECT DISTINCT CLIENT_CLIENT_name, DATACENTER_DATACENTER_name FROM lucy_view WHERE DATACENTER_DATACENTER_name LIKE 'dev%'\n```";

fn script() -> Script {
    Script::new()
        .rule(rule("JSON schema of the database", &["[\"CLIENT\", \"DATACENTER\"]"]))
        .rule(rule("JSON schema of the table CLIENT", &["[\"name\"]"]))
        .rule(rule("JSON schema of the table DATACENTER", &["[\"name\"]"]))
        // The repair round answers the same SQL again, as the model did.
        .rule(rule("cannot be used", &[DOUBLED]))
        .rule(rule("I created a view table lucy_view", &[DOUBLED]))
}

fn ask(url: &str, extra: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lucy"))
        .args(["--json", "ask", "--model", MODEL, Q1, "--execute", DB, "--samples", "1"])
        .args(extra)
        .args(["--llm-url", url, "--llm-model", "mock-model", "--llm-retries", "0"])
        .env("LUCY_API_KEY", "sk-test-ask-rename")
        // The scripted mock answers QueryView's SQL prompt, not a plan:
        // the `sql` form (the default is `auto` since session 30).
        .env("LUCY_SET", "query.form=sql")
        .env_remove("OPENAI_API_KEY")
        .env_remove("LUCY_LLM_MODEL")
        .env_remove("LUCY_LLM_URL")
        .output()
        .expect("run lucy")
}

/// Rows of `sql` on the DDO database, as a set of text tuples.
fn gold(sql: &str) -> BTreeSet<Vec<String>> {
    let c = rusqlite::Connection::open_with_flags(DB, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    let mut st = c.prepare(sql).unwrap();
    let n = st.column_count();
    let rows = st.query_map([], |r| (0..n).map(|i| r.get::<_, String>(i)).collect::<Result<Vec<_>, _>>()).unwrap();
    rows.map(|r| r.unwrap()).collect()
}

fn rows_of(json: &serde_json::Value) -> BTreeSet<Vec<String>> {
    json["rows"]["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_string()).collect())
        .collect()
}

#[test]
fn the_rename_turns_q1s_doubled_names_into_the_gold_rows() {
    let server = MockServer::start(script());
    for names in ["free", "strict"] {
        let out = ask(&server.url(), &["--rename-unknown", "on", "--query-names", names]);
        assert!(out.status.success(), "{names}: stderr: {}", String::from_utf8_lossy(&out.stderr));
        let v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(
            v["sql"],
            "SELECT DISTINCT CLIENT_name, DATACENTER_name FROM lucy_view WHERE DATACENTER_name LIKE 'dev%'"
        );
        let expected = gold(
            "SELECT DISTINCT c.name, d.name FROM CLIENT c JOIN RSPOOL2CLIENT j ON j.client_id = c.id \
             JOIN RESOURCEPOOL p ON p.id = j.rspool_id JOIN COMPUTE k ON k.id = p.compute_id \
             JOIN DATACENTER d ON d.id = k.dc_id WHERE d.name LIKE 'dev%'",
        );
        assert_eq!(expected.len(), 29);
        assert_eq!(rows_of(&v), expected, "{names}");
    }
}

#[test]
fn without_the_rename_the_repeated_answer_fails_and_says_so() {
    let server = MockServer::start(script());
    let out = ask(&server.url(), &["--rename-unknown", "off"]);
    assert!(!out.status.success());
    let all = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(all.contains("the repair round returned the rejected SQL unchanged"), "{all}");
    assert!(all.contains("CLIENT_CLIENT_name"), "{all}");
}
