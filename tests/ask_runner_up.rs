//! `lucy ask --exec-vote K --runner-up on` (issue 23 item 6) on DDO Q1 with
//! a scripted mock on 127.0.0.1: four of five listing samples name CLIENT
//! and DATACENTER, one adds RETENTION (the paper's vote keeps it; its INNER
//! JOIN loses every client without a retention strategy). Over that top
//! view QueryView's three answers split (the right filter, a wrong one, a
//! DELETE the guard refuses); over the runner-up view, without RETENTION,
//! two of three agree on the gold rows. The vote over both views answers
//! them; the vote over the top view alone does not. Narrowing is off so
//! that the lever is measured alone (`--narrow-view unnamed`, the default,
//! would drop RETENTION after the fact).

mod support;

use lucy::llm::mock::{MockServer, Script};
use support::{json_ok, rule, run_mock, sqlite_rows, trace_and_explain};

const MODEL: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels/ddo.json");
const DB: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels/ddo.sqlite");
const Q1: &str =
    "List customers who use datacenters with names starting with 'dev'. Output clients and datacenters names.";

const GOOD: &str =
    "```sql\nSELECT DISTINCT CLIENT_name, DATACENTER_name FROM lucy_view WHERE DATACENTER_name LIKE 'dev%'\n```";
const GOOD_GROUPED: &str = "```sql\nSELECT CLIENT_name AS client, DATACENTER_name AS datacenter FROM lucy_view WHERE substr(DATACENTER_name, 1, 3) = 'dev' GROUP BY CLIENT_name, DATACENTER_name\n```";
const WRONG: &str =
    "```sql\nSELECT DISTINCT CLIENT_name, DATACENTER_name FROM lucy_view WHERE DATACENTER_name LIKE 'prod%'\n```";
const REJECTED: &str = "```sql\nDELETE FROM CLIENT\n```";

/// The view prompt holds RETENTION's columns only over the top view.
const OVER_TOP: &[&str] = &["I created a view table lucy_view", "RETENTION_"];

fn script(top: &[&str], runner_up: &[&str]) -> Script {
    let both = "[\"CLIENT\", \"DATACENTER\"]";
    Script::new()
        .rule(rule(
            "JSON schema of the database",
            &[both, both, both, both, "[\"CLIENT\", \"DATACENTER\", \"RETENTION\"]"],
        ))
        .rule(rule("JSON schema of the table CLIENT", &["[\"name\"]"]))
        .rule(rule("JSON schema of the table DATACENTER", &["[\"name\"]"]))
        .rule(rule("JSON schema of the table RETENTION", &["[\"strategy\"]"]))
        .rule(rule(OVER_TOP, top))
        .rule(rule("I created a view table lucy_view", runner_up))
        // RETENTION's star (its pattern children prompt).
        .rule(rule("RETENTION", &["[\"GIFT\"]"]))
}

fn ask(url: &str, extra: &[&str]) -> serde_json::Value {
    let mut args = vec!["--json", "ask", "--model", MODEL, Q1, "--execute", DB, "--samples", "5"];
    // WRONG filters on 'prod%', which `--entity-literals on` would drop:
    // the answers run as written.
    args.extend_from_slice(&["--narrow-view", "off", "--entity-literals", "off", "--exec-vote", "3"]);
    args.extend_from_slice(extra);
    json_ok(&run_mock(&args, url))
}

fn view_requests(s: &MockServer) -> usize {
    s.chat_requests().iter().filter(|r| r.body.contains("I created a view table lucy_view")).count()
}

fn gold() -> std::collections::BTreeSet<Vec<String>> {
    sqlite_rows(
        DB,
        "SELECT DISTINCT c.name, d.name FROM CLIENT c JOIN RSPOOL2CLIENT j ON j.client_id = c.id \
         JOIN RESOURCEPOOL p ON p.id = j.rspool_id JOIN COMPUTE k ON k.id = p.compute_id \
         JOIN DATACENTER d ON d.id = k.dc_id WHERE d.name LIKE 'dev%'",
    )
}

#[test]
fn the_runner_up_view_wins_the_vote_with_the_gold_rows() {
    let gold = gold();
    assert_eq!(gold.len(), 29);
    let server = MockServer::start(script(&[GOOD, WRONG, REJECTED], &[GOOD, GOOD_GROUPED, WRONG]));

    // The vote over the top view only: its two results tie, the first
    // (the right filter over a view that lost rows) is the answer.
    let top = ask(&server.url(), &[]);
    assert!(top["tables"].as_array().unwrap().iter().any(|t| t == "RETENTION"), "{}", top["tables"]);
    let top_rows = support::rows_of(&top);
    assert!(!top_rows.is_empty() && top_rows.is_subset(&gold) && top_rows != gold, "{top_rows:?}");
    assert_eq!(view_requests(&server), 1);

    // With the runner-up view: three more answers over it, and its result
    // has two votes of six.
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("q1.json");
    let v = ask(&server.url(), &["--runner-up", "on", "--trace", trace.to_str().unwrap()]);
    assert_eq!(support::rows_of(&v), gold);
    assert_eq!(view_requests(&server), 3, "one request per view");
    // The answer reads the runner-up view: its tables are the answer's.
    assert_eq!(v["tables"], serde_json::json!(["CLIENT", "DATACENTER"]));
    let t =
        trace_and_explain(&trace, &["runner-up view (--runner-up on): without RETENTION (1 of 5 samples named it)"]);
    let vote = &t["query_view"]["exec_vote"];
    let cands = vote["candidates"].as_array().unwrap();
    assert_eq!(cands.len(), 6);
    let flags: Vec<bool> = cands.iter().map(|c| c.get("runner_up").is_some_and(|b| b == true)).collect();
    assert_eq!(flags, [false, false, false, true, true, true]);
    assert_eq!(vote["chosen"], 3);
    assert_eq!(cands[3]["votes"], 2);
    let ru = &vote["runner_up"];
    assert_eq!(ru["won"], true);
    assert_eq!(ru["change"], "without RETENTION (1 of 5 samples named it)");
    assert_eq!(ru["tables"], serde_json::json!(["CLIENT", "DATACENTER"]));
    // The trace's GenerateView is the view the answer reads; the top one
    // is kept beside the vote.
    let answered = t["generate_view"]["request"]["tables"].to_string();
    assert!(!answered.contains("RETENTION"), "{answered}");
    assert!(ru["view"]["request"]["tables"].to_string().contains("RETENTION"));
    // The top view's sampling call is kept (the runner-up's is the attempt's).
    assert!(vote["call"].is_object());
    assert!(ru.get("call").is_none());
}

#[test]
fn a_tie_goes_to_the_top_view_and_agreeing_samples_have_no_runner_up() {
    let gold = gold();
    // Two votes each: the top view's result stands.
    let server = MockServer::start(script(&[GOOD, GOOD, WRONG], &[GOOD, GOOD_GROUPED, WRONG]));
    let v = ask(&server.url(), &["--runner-up", "on"]);
    assert_ne!(support::rows_of(&v), gold);
    assert!(v["tables"].as_array().unwrap().iter().any(|t| t == "RETENTION"));
    assert_eq!(view_requests(&server), 2, "one request per view");

    // Every sample names the same tables: nothing to run up against.
    let both = "[\"CLIENT\", \"DATACENTER\"]";
    let agree = MockServer::start(
        Script::new()
            .rule(rule("JSON schema of the database", &[both]))
            .rule(rule("JSON schema of the table", &["[\"name\"]"]))
            .rule(rule("I created a view table lucy_view", &[GOOD, WRONG, GOOD_GROUPED])),
    );
    let v = ask(&agree.url(), &["--runner-up", "on"]);
    assert_eq!(support::rows_of(&v), gold);
    assert_eq!(view_requests(&agree), 1);
}

#[test]
fn runner_up_without_the_vote_is_refused() {
    let out = support::run(&["ask", "--model", MODEL, Q1, "--execute", DB, "--runner-up", "on"]);
    assert!(!out.status.success());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--runner-up on") && err.contains("--exec-vote K"), "{err}");
}
