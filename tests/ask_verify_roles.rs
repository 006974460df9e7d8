//! `lucy ask --verify-roles N` (issue 23 item 4) on DDO through a scripted
//! mock on 127.0.0.1: a question about clients, the datacenters they use
//! and the city each client is based in. Four of five samples of
//! LOCATION's role question name the client's location, one adds the
//! datacenter's; the paper's vote keeps both, and QueryView (scripted to
//! confuse the two cities when both are there, as the small model does)
//! reads the datacenter's city. With `--verify-roles 2` the yes/no question
//! about the datacenter's LOCATION, named by one sample of five, says no:
//! the instance is dropped and the answer is the gold rows. The client's
//! LOCATION, named by every sample, is not asked about.

mod support;

use lucy::llm::mock::{MockServer, Script};
use support::{json_ok, rows_of, rule, run_mock, sqlite_rows, trace_and_explain};

const MODEL: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels/ddo.json");
const DB: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels/ddo.sqlite");
const Q: &str = "List the clients, the datacenters they use, and the city each client is based in.";
const ROLE_PROMPT: &str = "The table LOCATION can be joined to the other tables of the question in several ways";
const CLIENT_ROLE: &str = "\"LOCATION@CLIENT.loc_id\"";
const BOTH_ROLES: &str = "[\"LOCATION@CLIENT.loc_id\", \"LOCATION@DATACENTER.loc_id\"]";

fn script() -> Script {
    let client = format!("[{CLIENT_ROLE}]");
    Script::new()
        .rule(rule(&["JSON schema of the database"], &["[\"CLIENT\", \"DATACENTER\", \"LOCATION\"]"]))
        .rule(rule(&[ROLE_PROMPT], &[&client, &client, &client, &client, BOTH_ROLES]))
        .rule(rule(&["this way (LOCATION@DATACENTER.loc_id)"], &["no"]))
        .rule(rule(&["this way ("], &["yes"]))
        .rule(rule(&["JSON schema of the table LOCATION"], &["[\"city\"]"]))
        .rule(rule(&["JSON schema of the table"], &["[\"name\"]"]))
        // With both cities in the view the scripted model takes the wrong one.
        .rule(rule(
            &["I created a view table lucy_view", "LOCATION_DATACENTER_city"],
            &["SELECT DISTINCT CLIENT_name, DATACENTER_name, LOCATION_DATACENTER_city FROM lucy_view"],
        ))
        .rule(rule(
            &["I created a view table lucy_view"],
            &["SELECT DISTINCT CLIENT_name, DATACENTER_name, LOCATION_CLIENT_city FROM lucy_view"],
        ))
}

fn ask(url: &str, extra: &[&str]) -> serde_json::Value {
    // The gold has 66 rows, more than the default --limit.
    let mut args = vec!["--json", "ask", "--model", MODEL, Q, "--execute", DB, "--samples", "5", "--limit", "500"];
    args.extend_from_slice(extra);
    json_ok(&run_mock(&args, url))
}

#[test]
fn verify_roles_drops_a_role_one_sample_named_and_the_rows_become_the_gold_ones() {
    let gold = sqlite_rows(
        DB,
        "SELECT DISTINCT c.name, d.name, l.city FROM CLIENT c JOIN RSPOOL2CLIENT j ON j.client_id = c.id \
         JOIN RESOURCEPOOL p ON p.id = j.rspool_id JOIN COMPUTE k ON k.id = p.compute_id \
         JOIN DATACENTER d ON d.id = k.dc_id JOIN LOCATION l ON l.id = c.loc_id",
    );
    assert_eq!(gold.len(), 66);
    let server = MockServer::start(script());
    let asked = |s: &MockServer| s.chat_requests().iter().filter(|r| r.body.contains("this way (")).count();

    // The paper's vote: both instances, the datacenter's city read.
    let kept = ask(&server.url(), &[]);
    assert!(kept["tables"].to_string().contains("LOCATION@DATACENTER.loc_id"), "{}", kept["tables"]);
    assert_ne!(rows_of(&kept), gold);
    assert_eq!(asked(&server), 0, "no verification without --verify-roles");

    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("q.json");
    let v = ask(&server.url(), &["--verify-roles", "2", "--trace", trace.to_str().unwrap()]);
    let tables = v["tables"].to_string();
    assert!(tables.contains("LOCATION@CLIENT.loc_id") && !tables.contains("LOCATION@DATACENTER"), "{tables}");
    assert_eq!(rows_of(&v), gold);
    assert_eq!(asked(&server), 1, "only the datacenter's LOCATION, named by one sample of five, is asked about");
    let t = trace_and_explain(&trace, &["verify_role"]);
    let warnings = t["match_tables"]["warnings"].to_string();
    assert!(warnings.contains("--verify-roles: dropped LOCATION@DATACENTER.loc_id (1 of 5)"), "{warnings}");
    let step =
        t["match_tables"]["steps"].as_array().unwrap().iter().find(|s| s["prompt"] == "verify_role").unwrap().clone();
    assert_eq!(step["subject"], "LOCATION@DATACENTER.loc_id");
    assert_eq!(
        (step["call"]["phase"].as_str(), step["call"]["grammar_sent"].as_bool()),
        (Some("verify_role"), Some(true))
    );
    assert_eq!(step["votes"][0], serde_json::json!({"item": "yes", "votes": 0, "kept": false}));
}
