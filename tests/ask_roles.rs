//! MatchTables' role questions (issue 17, item 5) end to end on the paper's
//! DDO through `lucy ask`, with a scripted OpenAI-compatible mock on
//! 127.0.0.1: a question that needs LOCATION twice (the client's city and
//! the datacenter's, ddo-20) gets one role prompt and a view with both
//! instances, whose SQL runs on dbmodels/ddo.sqlite and returns the gold
//! rows; a question without a choice costs no extra call; role answers are
//! voted like tables.

mod support;

use lucy::llm::mock::{MockServer, Script};
use support::{json_ok, rows_of, rule, run_mock, sqlite_rows, trace_and_explain};

const MODEL: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels/ddo.json");
const DB: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels/ddo.sqlite");
const Q20: &str = "Which clients use a resource pool hosted in a datacenter located in their own city? Output client and datacenter names.";
const ROLE_PROMPT: &str = "The table LOCATION can be joined to the other tables of the question in several ways";

/// ddo-20's answers: LOCATION in both roles, compared city to city.
fn q20_script(role_answers: &[&str]) -> Script {
    Script::new()
        .rule(rule(&["JSON schema of the database"], &["[\"CLIENT\", \"DATACENTER\", \"LOCATION\"]"]))
        .rule(rule(&[ROLE_PROMPT], role_answers))
        .rule(rule(&["JSON schema of the table LOCATION", "is used in one role"], &["[\"city\"]"]))
        .rule(rule(&["JSON schema of the table"], &["[\"name\"]"]))
        .rule(rule(
            &["I created a view table lucy_view"],
            &["SELECT DISTINCT CLIENT_name, DATACENTER_name FROM lucy_view WHERE LOCATION_CLIENT_city = LOCATION_DATACENTER_city"],
        ))
}

#[test]
fn ddo20_asks_for_roles_once_and_compares_two_locations() {
    let server = MockServer::start(q20_script(&["[\"LOCATION@CLIENT.loc_id\", \"LOCATION@DATACENTER.loc_id\"]"]));
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("q20.json");
    let out = run_mock(
        &[
            "--json",
            "ask",
            "--model",
            MODEL,
            Q20,
            "--execute",
            DB,
            "--samples",
            "3",
            "--trace",
            trace.to_str().unwrap(),
            // The paper's view of the chosen attributes: each instance gets
            // its attribute prompt (the default view, of every column, asks
            // none).
            "--view-columns",
            "selected",
        ],
        &server.url(),
    );
    let v = json_ok(&out);
    assert_eq!(
        v["tables"],
        serde_json::json!(["CLIENT", "DATACENTER", "LOCATION@CLIENT.loc_id", "LOCATION@DATACENTER.loc_id"])
    );
    let view_sql = v["view"]["view_sql"].as_str().unwrap();
    assert!(
        view_sql.contains("FROM LOCATION AS LOCATION_CLIENT")
            || view_sql.contains("JOIN LOCATION AS LOCATION_CLIENT ON"),
        "{view_sql}"
    );
    assert!(
        view_sql.contains("JOIN LOCATION AS LOCATION_DATACENTER ON DATACENTER.loc_id = LOCATION_DATACENTER.id"),
        "{view_sql}"
    );
    // The clients still reach their datacenters through the m:m junction,
    // never through LOCATION (a lookup).
    assert!(view_sql.contains("JOIN RSPOOL2CLIENT"), "{view_sql}");
    // Each instance carries the requested LOCATION column.
    assert!(
        view_sql.contains("LOCATION_CLIENT.city AS LOCATION_CLIENT_city")
            && view_sql.contains("LOCATION_DATACENTER.city AS LOCATION_DATACENTER_city")
    );
    let gold = sqlite_rows(
        DB,
        "SELECT DISTINCT c.name, d.name FROM DATACENTER d JOIN COMPUTE k ON k.dc_id = d.id JOIN RESOURCEPOOL p ON p.compute_id = k.id \
         JOIN RSPOOL2CLIENT j ON j.rspool_id = p.id JOIN CLIENT c ON c.id = j.client_id \
         JOIN LOCATION lc ON lc.id = c.loc_id JOIN LOCATION ld ON ld.id = d.loc_id WHERE lc.city = ld.city",
    );
    assert_eq!(gold.len(), 2, "the DDO data has two such client/datacenter pairs");
    assert_eq!(rows_of(&v), gold);
    // Exactly one role prompt, grammar-constrained to the two labels; one
    // attribute prompt per LOCATION instance.
    let reqs = server.chat_requests();
    let role_reqs: Vec<_> = reqs.iter().filter(|r| r.body.contains(ROLE_PROMPT)).collect();
    assert_eq!(role_reqs.len(), 1);
    let body = role_reqs[0].json().unwrap();
    let schema = body["response_format"].to_string();
    assert!(schema.contains("LOCATION@CLIENT.loc_id") && schema.contains("LOCATION@DATACENTER.loc_id"), "{schema}");
    assert_eq!(reqs.iter().filter(|r| r.body.contains("is used in one role")).count(), 2);
    // The trace records the role prompt, its votes and the kept instances;
    // explain shows them.
    let t = trace_and_explain(
        &trace,
        &[
            "[match_roles LOCATION]",
            "[attributes LOCATION@DATACENTER.loc_id]",
            "relevant tables: CLIENT, DATACENTER, LOCATION@CLIENT.loc_id, LOCATION@DATACENTER.loc_id",
        ],
    );
    let steps = t["match_tables"]["steps"].as_array().unwrap();
    let role = steps.iter().find(|s| s["prompt"] == "match_roles").unwrap();
    assert_eq!(role["subject"], "LOCATION");
    assert_eq!(role["tables"], serde_json::json!(["LOCATION@CLIENT.loc_id", "LOCATION@DATACENTER.loc_id"]));
    assert_eq!(role["votes"][0], serde_json::json!({"item": "LOCATION@CLIENT.loc_id", "votes": 3, "kept": true}));
}

#[test]
fn role_answers_are_voted_and_a_question_without_a_choice_costs_no_call() {
    // Two of three samples name only the client's location: with
    // --min-votes 2 the datacenter's is dropped.
    let server = MockServer::start(q20_script(&[
        "[\"LOCATION@CLIENT.loc_id\"]",
        "[\"LOCATION@CLIENT.loc_id\", \"LOCATION@DATACENTER.loc_id\"]",
        "[\"CLIENT.loc_id\"]",
    ]));
    let out = run_mock(
        &["--json", "ask", "--model", MODEL, Q20, "--samples", "3", "--min-votes", "2", "--stop-after", "view"],
        &server.url(),
    );
    let v = json_ok(&out);
    assert_eq!(v["tables"], serde_json::json!(["CLIENT", "DATACENTER", "LOCATION@CLIENT.loc_id"]));
    let view_sql = v["view"]["view_sql"].as_str().unwrap();
    assert!(view_sql.contains("LOCATION_CLIENT") && !view_sql.contains("LOCATION_DATACENTER"), "{view_sql}");

    // LOCATION referenced by CLIENT alone: no role prompt.
    let server = MockServer::start(
        Script::new()
            .rule(rule(&["JSON schema of the database"], &["[\"CLIENT\", \"LOCATION\"]"]))
            .rule(rule(&["JSON schema of the table"], &["[\"name\", \"city\"]"])),
    );
    let out = run_mock(
        &["--json", "ask", "--model", MODEL, "In which city is each client based?", "--stop-after", "view"],
        &server.url(),
    );
    let v = json_ok(&out);
    assert_eq!(v["tables"], serde_json::json!(["CLIENT", "LOCATION"]));
    let reqs = server.chat_requests();
    assert_eq!(reqs.len(), 1, "match_tables alone (the default view shows every column: no attribute prompt)");
    assert!(!reqs.iter().any(|r| r.body.contains("can be joined to the other tables")));

    // The m:m junction between its two relevant sides: no role prompt, the
    // paper's path.
    let server = MockServer::start(
        Script::new()
            .rule(rule(&["JSON schema of the database"], &["[\"CLIENT\", \"RSPOOL2CLIENT\", \"RESOURCEPOOL\"]"]))
            .rule(rule(&["The table RESOURCEPOOL is part of a snowflake"], &["[\"name\"]"]))
            .rule(rule(&["JSON schema of the table"], &["[\"name\"]"])),
    );
    let out = run_mock(
        &["--json", "ask", "--model", MODEL, "Which resource pools does each client use?", "--stop-after", "view"],
        &server.url(),
    );
    assert!(out.status.success(), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    let reqs = server.chat_requests();
    assert_eq!(reqs.len(), 2, "match_tables and RESOURCEPOOL's pattern prompt (no attribute prompt)");
    assert!(!reqs.iter().any(|r| r.body.contains("can be joined to the other tables")));
}
