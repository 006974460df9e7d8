//! Verification that drops a table (`--prune N`, issue 23) through `lucy
//! ask` on DDO Q1, with a scripted mock on 127.0.0.1: four of five samples
//! of the listing name CLIENT and DATACENTER, one adds RETENTION (a table
//! the question does not need; the view would INNER JOIN it and lose every
//! client without a retention strategy). The paper's vote keeps every
//! named table; with `--prune 2` the yes/no question about RETENTION, named
//! by one sample of five, says no, RETENTION is dropped and the rows are
//! the gold ones. CLIENT and DATACENTER, named by every sample, are not
//! asked about. (Since session 18 the default `--narrow-view unnamed`
//! drops RETENTION too, after the SQL ran; the prune runs here without it.)

mod support;

use support::{json_ok, rule, run_mock, sqlite_rows, trace_and_explain};

use lucy::llm::mock::{MockServer, Script};

const MODEL: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels/ddo.json");
const DB: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels/ddo.sqlite");
const Q1: &str =
    "List customers who use datacenters with names starting with 'dev'. Output clients and datacenters names.";
const SQL: &str =
    "```sql\nSELECT DISTINCT CLIENT_name, DATACENTER_name FROM lucy_view WHERE DATACENTER_name LIKE 'dev%'\n```";

fn script() -> Script {
    let both = "[\"CLIENT\", \"DATACENTER\"]";
    Script::new()
        .rule(rule(
            "JSON schema of the database",
            &[both, both, both, both, "[\"CLIENT\", \"DATACENTER\", \"RETENTION\"]"],
        ))
        .rule(rule("Is the table RETENTION needed", &["no"]))
        .rule(rule("Is the table", &["yes"]))
        .rule(rule("JSON schema of the table CLIENT", &["[\"name\"]"]))
        .rule(rule("JSON schema of the table DATACENTER", &["[\"name\"]"]))
        .rule(rule("JSON schema of the table RETENTION", &["[\"strategy\"]"]))
        .rule(rule("I created a view table lucy_view", &[SQL]))
        // RETENTION's star (its pattern children prompt).
        .rule(rule("RETENTION", &["[\"GIFT\"]"]))
}

fn ask(url: &str, extra: &[&str]) -> serde_json::Value {
    let mut args = vec!["--json", "ask", "--model", MODEL, Q1, "--execute", DB, "--samples", "5"];
    args.extend_from_slice(extra);
    json_ok(&run_mock(&args, url))
}

#[test]
fn prune_drops_a_table_one_sample_named_and_the_verification_rejects() {
    let server = MockServer::start(script());
    let gold = sqlite_rows(
        DB,
        "SELECT DISTINCT c.name, d.name FROM CLIENT c JOIN RSPOOL2CLIENT j ON j.client_id = c.id \
         JOIN RESOURCEPOOL p ON p.id = j.rspool_id JOIN COMPUTE k ON k.id = p.compute_id \
         JOIN DATACENTER d ON d.id = k.dc_id WHERE d.name LIKE 'dev%'",
    );
    assert_eq!(gold.len(), 29);

    // The paper's vote, nothing narrowed: RETENTION stays, and its INNER
    // JOIN drops rows.
    let kept = ask(&server.url(), &["--narrow-view", "off"]);
    let tables: Vec<&str> = kept["tables"].as_array().unwrap().iter().map(|t| t.as_str().unwrap()).collect();
    assert!(tables.contains(&"RETENTION"), "{tables:?}");
    assert_ne!(support::rows_of(&kept), gold);
    let asked = |s: &MockServer| s.chat_requests().iter().filter(|r| r.body.contains("Is the table")).count();
    assert_eq!(asked(&server), 0, "no verification without --prune");
    // The default narrowing (`unnamed`) drops RETENTION after the fact: the
    // SQL reads nothing of it and Q1 does not name it.
    let narrowed = ask(&server.url(), &[]);
    assert_eq!(support::rows_of(&narrowed), gold);
    assert_eq!(asked(&server), 0);

    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("q1.json");
    let v = ask(&server.url(), &["--prune", "2", "--narrow-view", "off", "--trace", trace.to_str().unwrap()]);
    assert_eq!(v["tables"], serde_json::json!(["CLIENT", "DATACENTER"]));
    assert_eq!(support::rows_of(&v), gold);
    assert_eq!(asked(&server), 1, "only RETENTION, named by one sample of five, is asked about");
    let t = trace_and_explain(&trace, &["verify_table"]);
    let warnings = t["match_tables"]["warnings"].to_string();
    assert!(warnings.contains("--prune: dropped RETENTION (1 of 5)"), "{warnings}");
}
