//! `lucy bench --method direct,direct+check` against the scripted mock: the
//! direct baseline's Q1 answer joins CLIENT.loc_id = DATACENTER.id (runs,
//! wrong rows); with `direct+check` that finding is the repair message and
//! the repaired SQL is right.

use std::process::Command;

use lucy::llm::mock::{MockServer, Reply, Rule, Script};

const SUITE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/benchmarks/suites/ddo.json");
const BAD: &str = "SELECT CLIENT.name, DATACENTER.name FROM CLIENT JOIN DATACENTER ON CLIENT.loc_id = DATACENTER.id WHERE DATACENTER.name LIKE 'dev%'";
const GOOD: &str = "SELECT DISTINCT CLIENT.name, DATACENTER.name FROM DATACENTER JOIN COMPUTE ON COMPUTE.dc_id = DATACENTER.id JOIN RESOURCEPOOL ON RESOURCEPOOL.compute_id = COMPUTE.id JOIN RSPOOL2CLIENT ON RSPOOL2CLIENT.rspool_id = RESOURCEPOOL.id JOIN CLIENT ON CLIENT.id = RSPOOL2CLIENT.client_id WHERE DATACENTER.name LIKE 'dev%'";

fn fence(sql: &str) -> Reply {
    Reply::ok([format!("```sql\n{sql}\n```")])
}

#[test]
fn direct_check_repairs_the_undeclared_join() {
    let script = Script::new()
        .rule(Rule::when_contains(["does not follow the database model", "undeclared_join"]).reply(fence(GOOD)))
        .rule(Rule::when_contains(["List customers who use datacenters"]).reply(fence(BAD)));
    let server = MockServer::start(script);
    let dir = tempfile::tempdir().unwrap();
    let o = Command::new(env!("CARGO_BIN_EXE_lucy"))
        .args(["--json", "bench", SUITE, "--method", "direct,direct+check", "--limit", "1", "--no-progress"])
        .args([
            "--llm-url",
            &server.url(),
            "--llm-model",
            "mock-model",
            "--llm-retries",
            "0",
            "--out",
            dir.path().to_str().unwrap(),
        ])
        .env("LUCY_API_KEY", "sk-test-direct-check")
        .env_remove("OPENAI_API_KEY")
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let results = |m: &str| -> serde_json::Value {
        serde_json::from_str(&std::fs::read_to_string(dir.path().join(m).join("results.json")).unwrap()).unwrap()
    };
    let direct = results("direct");
    assert_eq!(direct["method"], "direct");
    assert_eq!(direct["questions"][0]["metrics"]["ex"], false, "the bad join runs and answers wrong");
    let checked = results("direct+check");
    assert_eq!(checked["method"], "direct+check");
    let q = &checked["questions"][0];
    assert_eq!(q["metrics"]["ex"], true, "{q:#}");
    let trace: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(dir.path().join("direct+check").join(q["trace"].as_str().unwrap())).unwrap(),
    )
    .unwrap();
    assert_eq!(trace["method"], "direct+check");
    let attempts = trace["query_view"]["attempts"].as_array().unwrap();
    assert_eq!(attempts.len(), 2);
    assert_eq!(attempts[0]["check"]["findings"][0]["kind"], "undeclared_join");
    assert_eq!(attempts[1]["check"]["findings"], serde_json::json!([]));
    let report = std::fs::read_to_string(dir.path().join("report.md")).unwrap();
    assert!(report.contains("| | direct | direct+check |") && report.contains("| ex | 0 | 1 |"), "{report}");
}
