//! QueryView's plan form (`--query-form plan|auto`, issue 46) end to end
//! through `lucy ask`, with the scripted OpenAI-compatible mock on
//! 127.0.0.1: a plan compiled to the gold rows of DDO Q1; `auto` falling
//! back to free SQL when the model answers `needs_sql` or a plan that does
//! not compile (the mock ignores grammars, so a bad plan reaches the
//! compiler), recorded in the trace and `lucy explain`; `plan` failing with
//! the reason; and `sql`, the default, never asking for a plan.

mod support;

use lucy::llm::mock::{MockServer, Script};
use support::{ask_traced, rows_of, rule, sqlite_rows, DDO_Q1_GOLD};

const MODEL: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels/ddo.json");
const DB: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels/ddo.sqlite");
const Q1: &str =
    "List customers who use datacenters with names starting with 'dev'. Output clients and datacenters names.";
const PLAN_PROMPT: &str = "Answer a question about a database view with a JSON query plan";
const SQL: &str =
    "```sql\nSELECT DISTINCT CLIENT_name, DATACENTER_name FROM lucy_view WHERE DATACENTER_name LIKE 'dev%'\n```";
const PLAN: &str = r#"{"kind": "query", "select": [{"col": "CLIENT_name"}, {"col": "DATACENTER_name"}], "distinct": true, "where": {"col": "DATACENTER_name", "op": "like", "value": "dev%"}}"#;

fn script(plan_answer: &str) -> Script {
    Script::new()
        .rule(rule("JSON schema of the database", &["[\"CLIENT\", \"DATACENTER\"]"]))
        .rule(rule("JSON schema of the table CLIENT", &["[\"name\"]"]))
        .rule(rule("JSON schema of the table DATACENTER", &["[\"name\"]"]))
        .rule(rule(PLAN_PROMPT, &[plan_answer]))
        .rule(rule("I created a view table lucy_view", &[SQL]))
}

fn phases(server: &MockServer) -> Vec<String> {
    server
        .chat_requests()
        .iter()
        .filter_map(|r| r.json())
        .map(|j| {
            let last = j["messages"].as_array().and_then(|m| m.last()).map(|m| m["content"].to_string());
            let text = last.unwrap_or_default();
            if text.contains(PLAN_PROMPT) {
                "plan".to_string()
            } else if text.contains("I created a view table") {
                "sql".to_string()
            } else {
                "other".to_string()
            }
        })
        .collect()
}

#[test]
fn a_plan_compiles_to_q1s_gold_rows_without_a_sql_prompt() {
    for form in ["plan", "auto"] {
        let server = MockServer::start(script(PLAN));
        let a = ask_traced(&server.url(), MODEL, DB, Q1, &["--query-form", form]);
        let v = a.json();
        assert_eq!(
            v["sql"],
            "SELECT DISTINCT CLIENT_name, DATACENTER_name FROM lucy_view WHERE DATACENTER_name LIKE 'dev%'"
        );
        assert_eq!(rows_of(&v), sqlite_rows(DB, DDO_Q1_GOLD), "{form}");
        let p = phases(&server);
        assert!(p.contains(&"plan".to_string()) && !p.contains(&"sql".to_string()), "{form}: {p:?}");
        let t = a.trace();
        let plan = &t["query_view"]["plan"];
        assert_eq!(plan["form"], form);
        assert_eq!(plan["fell_back"], serde_json::Value::Null, "{plan}");
        assert_eq!(plan["plan"]["kind"], "query");
        let report = a.explain();
        assert!(report.contains(&format!("query plan (--query-form {form})")), "{report}");
        assert!(report.contains("filter  DATACENTER_name like 'dev%'"), "{report}");
    }
}

#[test]
fn auto_falls_back_to_sql_on_needs_sql_and_on_a_plan_that_does_not_compile() {
    for (answer, why) in [
        (r#"{"kind": "needs_sql"}"#, "needs free SQL"),
        (
            r#"{"kind": "query", "select": [{"col": "CLIENT_CLIENT_name"}]}"#,
            "CLIENT_CLIENT_name, which is not a column",
        ),
        (r#"{"kind": "query", "select": [{"agg": "sum", "col": "CLIENT_id"}]}"#, "is not a quantity"),
        ("SELECT 1", "no JSON object"),
    ] {
        let server = MockServer::start(script(answer));
        let a = ask_traced(&server.url(), MODEL, DB, Q1, &["--query-form", "auto"]);
        let v = a.json();
        assert_eq!(rows_of(&v), sqlite_rows(DB, DDO_Q1_GOLD), "{answer}");
        let p = phases(&server);
        let plan_at = p.iter().position(|x| x == "plan").expect("a plan prompt");
        let sql_at = p.iter().position(|x| x == "sql").expect("a SQL prompt after it");
        assert!(plan_at < sql_at, "{p:?}");
        let t = a.trace();
        let plan = &t["query_view"]["plan"];
        assert_eq!(plan["fell_back"], true, "{plan}");
        assert!(plan["error"].as_str().unwrap().contains(why), "{answer}: {plan}");
        // The plan's attempt, then the SQL answer's.
        let attempts = t["query_view"]["attempts"].as_array().unwrap();
        assert_eq!(attempts[0]["extraction"], "plan");
        assert_eq!(attempts.last().unwrap()["validation"]["ok"], true);
        let report = a.explain();
        assert!(report.contains("fell back to free SQL (--query-form auto)"), "{report}");
    }
}

#[test]
fn the_plan_form_fails_with_the_reason_and_sql_asks_no_plan() {
    let server = MockServer::start(script(r#"{"kind": "needs_sql"}"#));
    let a = ask_traced(&server.url(), MODEL, DB, Q1, &["--query-form", "plan"]);
    assert!(!a.out.status.success());
    let all = format!("{}{}", String::from_utf8_lossy(&a.out.stdout), String::from_utf8_lossy(&a.out.stderr));
    assert!(all.contains("needs free SQL"), "{all}");
    assert!(!phases(&server).contains(&"sql".to_string()));

    let server = MockServer::start(script(PLAN));
    let a = ask_traced(&server.url(), MODEL, DB, Q1, &[]);
    assert_eq!(rows_of(&a.json()), sqlite_rows(DB, DDO_Q1_GOLD));
    assert!(!phases(&server).contains(&"plan".to_string()));
    assert!(a.trace()["query_view"].get("plan").is_none());
}

/// A plan lucy tidies (`like '%dev%'` where Q1 says "starting with 'dev'",
/// a `group_by` with no aggregate): the compiled SQL is the tidied plan's,
/// and the trace and `lucy explain` say what was changed.
#[test]
fn a_tidied_plan_says_what_was_changed() {
    let answer = r#"{"kind": "query", "select": [{"col": "CLIENT_name"}, {"col": "DATACENTER_name"}], "where": {"col": "DATACENTER_name", "op": "like", "value": "%dev%"}, "group_by": ["CLIENT_name"]}"#;
    let server = MockServer::start(script(answer));
    let a = ask_traced(&server.url(), MODEL, DB, Q1, &["--query-form", "plan"]);
    let v = a.json();
    assert_eq!(
        v["sql"],
        "SELECT DISTINCT CLIENT_name, DATACENTER_name FROM lucy_view WHERE DATACENTER_name LIKE 'dev%'"
    );
    assert_eq!(rows_of(&v), sqlite_rows(DB, DDO_Q1_GOLD));
    let t = a.trace();
    let tidied: Vec<String> =
        t["query_view"]["plan"]["tidied"].as_array().unwrap().iter().map(|x| x.as_str().unwrap().to_string()).collect();
    assert_eq!(tidied.len(), 2, "{tidied:?}");
    assert!(tidied.iter().any(|x| x.contains("'dev%'")) && tidied.iter().any(|x| x.contains("distinct")), "{tidied:?}");
    // The model's plan as answered stays in the trace.
    assert_eq!(t["query_view"]["plan"]["plan"]["group_by"][0], "CLIENT_name");
    let report = a.explain();
    assert!(report.contains("tidied: like '%dev%' on DATACENTER_name"), "{report}");
}

/// `auto`: a plan that selects fewer things than Q1's output sentence lists
/// ("Output clients and datacenters names.": two) left part of the question
/// out, so free SQL answers; in the `plan` form the plan stands.
#[test]
fn auto_falls_back_when_the_plan_selects_less_than_the_question_lists() {
    let answer = r#"{"kind": "query", "select": [{"col": "CLIENT_name"}], "where": {"col": "DATACENTER_name", "op": "like", "value": "dev%"}}"#;
    let server = MockServer::start(script(answer));
    let a = ask_traced(&server.url(), MODEL, DB, Q1, &["--query-form", "auto"]);
    assert_eq!(rows_of(&a.json()), sqlite_rows(DB, DDO_Q1_GOLD));
    let plan = &a.trace()["query_view"]["plan"];
    assert_eq!(plan["fell_back"], true, "{plan}");
    assert!(
        plan["error"].as_str().unwrap().contains("selects 1 item(s); the question's output sentence lists 2"),
        "{plan}"
    );
    let server = MockServer::start(script(answer));
    let a = ask_traced(&server.url(), MODEL, DB, Q1, &["--query-form", "plan"]);
    assert_eq!(a.json()["sql"], "SELECT CLIENT_name FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY CLIENT_id) AS lucy_first_1 FROM lucy_view WHERE DATACENTER_name LIKE 'dev%') AS lucy_view WHERE lucy_view.lucy_first_1 = 1");
}
