//! `lucy ask --exec-vote K` on DDO Q1 with a scripted mock LLM on
//! 127.0.0.1: QueryView's first answer is wrong (datacenters named `prod…`),
//! the next two agree on the gold rows in different SQL. Off (the default,
//! 0), lucy answers the first; with the vote, the gold rows. The trace and
//! `lucy explain` show every candidate, its result hash and the vote.

mod support;

use std::collections::BTreeSet;
use std::process::{Command, Output};

use lucy::llm::mock::{MockServer, Script};
use support::rule;

const MODEL: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels/ddo.json");
const DB: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels/ddo.sqlite");
const Q1: &str =
    "List customers who use datacenters with names starting with 'dev'. Output clients and datacenters names.";

const WRONG: &str =
    "```sql\nSELECT DISTINCT CLIENT_name, DATACENTER_name FROM lucy_view WHERE DATACENTER_name LIKE 'prod%'\n```";
const GOOD: &str =
    "```sql\nSELECT DISTINCT CLIENT_name, DATACENTER_name FROM lucy_view WHERE DATACENTER_name LIKE 'dev%'\n```";
const GOOD_GROUPED: &str = "```sql\nSELECT CLIENT_name AS client, DATACENTER_name AS datacenter FROM lucy_view WHERE substr(DATACENTER_name, 1, 3) = 'dev' GROUP BY CLIENT_name, DATACENTER_name\n```";
const REJECTED: &str = "```sql\nDELETE FROM CLIENT\n```";

/// Q1's phase 1 picks CLIENT and DATACENTER; QueryView's answers, in order,
/// are `answers` (cycled to fill `n`).
fn server(answers: &[&str]) -> MockServer {
    MockServer::start(
        Script::new()
            .rule(rule("JSON schema of the database", &["[\"CLIENT\", \"DATACENTER\"]"]))
            .rule(rule("JSON schema of the table", &["[\"name\"]"]))
            .rule(rule("I created a view table lucy_view", answers)),
    )
}

fn lucy(args: &[&str], url: &str) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lucy"))
        .args(args)
        .args(["--llm-url", url, "--llm-model", "mock-model", "--llm-retries", "0"])
        .env("LUCY_API_KEY", "sk-test-exec-vote")
        // The scripted mock answers QueryView's SQL prompt, not a plan:
        // the `sql` form (the default is `auto` since session 30).
        .env("LUCY_SET", "query.form=sql")
        .env_remove("OPENAI_API_KEY")
        .env_remove("LUCY_LLM_MODEL")
        .env_remove("LUCY_LLM_URL")
        .output()
        .expect("run lucy")
}

fn ask(url: &str, trace: &std::path::Path, extra: &[&str]) -> (Output, serde_json::Value) {
    let mut args = vec!["--json", "ask", "--model", MODEL, Q1, "--execute", DB, "--trace", trace.to_str().unwrap()];
    // WRONG filters on 'prod%', a value the question never names, which
    // `--entity-literals on` (the default) would drop: these tests are
    // about the vote, so the answers run as written.
    args.extend_from_slice(&["--entity-literals", "off"]);
    args.extend_from_slice(extra);
    let out = lucy(&args, url);
    assert!(out.status.success(), "stderr: {}", String::from_utf8_lossy(&out.stderr));
    let v = serde_json::from_slice(&out.stdout).unwrap();
    (out, v)
}

/// Rows of `sql` on the DDO database, as a set of text tuples.
fn gold(sql: &str) -> BTreeSet<Vec<String>> {
    let c = rusqlite::Connection::open_with_flags(DB, rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY).unwrap();
    let mut st = c.prepare(sql).unwrap();
    let n = st.column_count();
    let rows = st.query_map([], |r| (0..n).map(|i| r.get::<_, String>(i)).collect::<Result<Vec<_>, _>>()).unwrap();
    rows.map(|r| r.unwrap()).collect()
}

fn q1_rows(prefix: &str) -> BTreeSet<Vec<String>> {
    gold(&format!(
        "SELECT DISTINCT c.name, d.name FROM CLIENT c JOIN RSPOOL2CLIENT j ON j.client_id = c.id \
         JOIN RESOURCEPOOL p ON p.id = j.rspool_id JOIN COMPUTE k ON k.id = p.compute_id \
         JOIN DATACENTER d ON d.id = k.dc_id WHERE d.name LIKE '{prefix}%'"
    ))
}

fn rows_of(json: &serde_json::Value) -> BTreeSet<Vec<String>> {
    json["rows"]["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_array().unwrap().iter().map(|v| v.as_str().unwrap().to_string()).collect())
        .collect()
}

/// The QueryView requests the server saw, as JSON.
fn query_view_requests(s: &MockServer) -> Vec<serde_json::Value> {
    s.chat_requests()
        .into_iter()
        .filter(|r| r.body.contains("I created a view table lucy_view"))
        .map(|r| r.json().unwrap())
        .collect()
}

fn explain(trace: &std::path::Path) -> String {
    let ex = Command::new(env!("CARGO_BIN_EXE_lucy")).args(["explain", trace.to_str().unwrap()]).output().unwrap();
    assert!(ex.status.success(), "{}", String::from_utf8_lossy(&ex.stderr));
    String::from_utf8(ex.stdout).unwrap()
}

#[test]
fn the_vote_answers_the_gold_rows_where_the_first_answer_is_wrong() {
    let gold_rows = q1_rows("dev");
    let wrong_rows = q1_rows("prod");
    assert_eq!(gold_rows.len(), 29, "dbmodels/README.md lists 29 pairs");
    assert!(!wrong_rows.is_empty() && wrong_rows != gold_rows);
    let dir = tempfile::tempdir().unwrap();

    // Off (the default): the first answer, wrong.
    let off = server(&[WRONG, GOOD, GOOD_GROUPED]);
    let trace = dir.path().join("off.json");
    let (_, v) = ask(&off.url(), &trace, &["--exec-vote", "0"]);
    assert_eq!(rows_of(&v), wrong_rows);
    let t: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&trace).unwrap()).unwrap();
    assert!(t["query_view"].get("exec_vote").is_none());
    assert_eq!(t["options"]["query"]["exec_vote"], 0, "the trace names every setting");
    // Byte for byte the request lucy sends without the flag.
    let plain = server(&[WRONG, GOOD, GOOD_GROUPED]);
    ask(&plain.url(), &dir.path().join("plain.json"), &[]);
    // (The attribute prompts run concurrently: compare the requests as a set.)
    let bodies = |s: &MockServer| s.chat_requests().into_iter().map(|r| r.body).collect::<BTreeSet<_>>();
    assert_eq!(bodies(&off), bodies(&plain));
    assert_eq!(off.chat_requests().len(), plain.chat_requests().len());
    assert_eq!(query_view_requests(&off)[0]["n"].as_u64().unwrap_or(1), 1);

    // With the vote: three answers in one request; two agree on the gold rows.
    let on = server(&[WRONG, GOOD, GOOD_GROUPED]);
    let trace = dir.path().join("on.json");
    let (_, v) = ask(&on.url(), &trace, &["--exec-vote", "3"]);
    assert_eq!(rows_of(&v), gold_rows);
    assert!(v["sql"].as_str().unwrap().contains("LIKE 'dev%'"), "{}", v["sql"]);
    let reqs = query_view_requests(&on);
    assert_eq!(reqs.len(), 1, "one call for the three answers");
    assert_eq!(reqs[0]["n"], 3);
    let t: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&trace).unwrap()).unwrap();
    assert_eq!(t["options"]["query"]["exec_vote"], 3);
    let vote = &t["query_view"]["exec_vote"];
    assert_eq!(vote["k"], 3);
    assert_eq!(vote["chosen"], 1);
    let cands = vote["candidates"].as_array().unwrap();
    assert_eq!(cands.len(), 3);
    assert_eq!(cands.iter().map(|c| c["votes"].as_u64().unwrap()).collect::<Vec<_>>(), [1, 2, 2]);
    assert_eq!(cands[1]["result_hash"], cands[2]["result_hash"], "the same rows, whatever the SQL");
    assert_ne!(cands[0]["result_hash"], cands[1]["result_hash"]);
    assert!(cands[0]["result_hash"].as_str().unwrap().starts_with("set:"));
    assert_eq!(cands[1]["chosen"], true);
    assert_eq!(cands[0]["execution"]["row_count"].as_u64().unwrap() as usize, wrong_rows.len());
    assert_eq!(
        vote["results"][0],
        serde_json::json!({"hash": cands[1]["result_hash"], "members": [1, 2], "votes": 2, "row_count": 29})
    );
    assert_eq!(t["query_view"]["attempts"][0]["execution"]["row_count"], 29);

    let report = explain(&trace);
    assert!(report.contains("RESULT: ok — SQL accepted, 29 row(s)"), "{report}");
    assert!(
        report.contains(
            "execution vote (--exec-vote 3): 3 answer(s) sampled, 3 ran; chose candidate #1 (2 of 3 vote(s))"
        ),
        "{report}"
    );
    let hash = cands[1]["result_hash"].as_str().unwrap();
    assert!(report.contains(&format!("#1 (chosen): 29 row(s), result {hash}, 2 vote(s)")), "{report}");
    assert!(report.contains(&format!("#0: {} row(s), result", wrong_rows.len())), "{report}");
    assert!(report.contains("LIKE 'prod%'") && report.contains("substr(DATACENTER_name, 1, 3)"), "{report}");
    assert!(report.contains("answer chosen by the execution vote (candidate #1)"), "{report}");
    let ex =
        Command::new(env!("CARGO_BIN_EXE_lucy")).args(["explain", "--json", trace.to_str().unwrap()]).output().unwrap();
    let summary: serde_json::Value = serde_json::from_slice(&ex.stdout).unwrap();
    assert_eq!(summary["exec_vote"]["chosen"], 1);
}

#[test]
fn a_candidate_the_guard_rejects_does_not_vote() {
    let dir = tempfile::tempdir().unwrap();
    let s = server(&[REJECTED, WRONG, GOOD, GOOD_GROUPED]);
    let trace = dir.path().join("t.json");
    let (_, v) = ask(&s.url(), &trace, &["--exec-vote", "4"]);
    assert_eq!(rows_of(&v), q1_rows("dev"));
    let t: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(&trace).unwrap()).unwrap();
    let cands = t["query_view"]["exec_vote"]["candidates"].as_array().unwrap();
    assert_eq!(cands[0]["validation"]["ok"], false);
    assert_eq!(cands[0]["votes"], 0);
    assert!(cands[0].get("result_hash").is_none() && cands[0].get("execution").is_none());
    assert_eq!(t["query_view"]["exec_vote"]["chosen"], 2);
    let report = explain(&trace);
    assert!(report.contains("#0: rejected, no vote: only a read-only SELECT is allowed"), "{report}");
}

#[test]
fn the_vote_needs_execution_and_says_so_before_any_call() {
    let s = server(&[GOOD]);
    for extra in [&["--exec-vote", "3"][..], &["--exec-vote", "3", "--execute", DB, "--stop-after", "sql"][..]] {
        let mut args = vec!["ask", "--model", MODEL, Q1];
        args.extend_from_slice(extra);
        let out = lucy(&args, &s.url());
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{err}");
        assert!(err.contains("--exec-vote K compares the candidates' results") && err.contains("--execute"), "{err}");
    }
    assert!(s.chat_requests().is_empty(), "refused before MatchTables");
    let out = lucy(&["ask", "--model", MODEL, Q1, "--execute", DB, "--exec-vote", "17"], &s.url());
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("from 0 to 16"));
    let out = lucy(&["ask", "--model", MODEL, Q1, "--execute", DB, "--direct", "--exec-vote", "3"], &s.url());
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--direct"));
}
