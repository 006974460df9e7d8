//! `lucy bench` through the real binary: the offline oracle mode, input
//! errors, and `--oracle view` against the scripted mock.

use std::path::Path;
use std::process::{Command, Output};

use lucy::llm::mock::{MockServer, Reply, Rule, Script};

const SUITE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/benchmarks/suites/ddo.json");

fn lucy(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_lucy"))
        .args(args)
        .env("LUCY_API_KEY", "sk-test-bench-cli")
        .env_remove("OPENAI_API_KEY")
        .env_remove("LUCY_LLM_MODEL")
        .env_remove("LUCY_LLM_URL")
        .env("LUCY_LLM_GGUF", "off")
        .output()
        .expect("run lucy")
}

fn results(dir: &Path) -> serde_json::Value {
    serde_json::from_str(&std::fs::read_to_string(dir.join("results.json")).unwrap()).unwrap()
}

fn outcomes(v: &serde_json::Value) -> Vec<String> {
    v["questions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|q| {
            format!(
                "{} {} {} {}",
                q["id"], q["prediction"]["view_sql"], q["metrics"]["join"], q["metrics"]["join_mismatch"]
            )
        })
        .collect()
}

#[test]
fn oracle_tables_on_ddo_is_offline_deterministic_and_complete() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (dir.path().join("a"), dir.path().join("b"));
    let o = lucy(&["bench", SUITE, "--oracle", "tables", "--jobs", "3", "--out", a.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let stdout = String::from_utf8_lossy(&o.stdout);
    assert!(stdout.contains("## Phase 2: join accuracy"), "{stdout}");
    let v = results(&a);
    assert_eq!(v["mode"], "oracle-tables");
    assert_eq!(v["questions"].as_array().unwrap().len(), 24);
    let s = &v["summary"];
    assert_eq!(s["multi_table"], 24);
    assert_eq!(s["join_matched"], 23, "only ddo-20 joins through LOCATION keys");
    assert_eq!(s["view_runs_ok"], 24, "every view runs on ddo.sqlite");
    assert_eq!(s["join_mismatch_classes"], serde_json::json!([["model_forbids", 1]]));
    let q20 = v["questions"].as_array().unwrap().iter().find(|q| q["id"] == "ddo-20").unwrap();
    assert!(q20["metrics"]["join_detail"].as_str().unwrap().contains("LOCATION (C4)"));
    // Each trace renders with `lucy explain`.
    let trace = a.join(v["questions"][0]["trace"].as_str().unwrap());
    let e = lucy(&["explain", trace.to_str().unwrap()]);
    assert!(e.status.success(), "{}", String::from_utf8_lossy(&e.stderr));
    // Same outcomes, same order, with one job.
    let o = lucy(&["bench", SUITE, "--oracle", "tables", "--jobs", "1", "--out", b.to_str().unwrap()]);
    assert!(o.status.success());
    assert_eq!(outcomes(&results(&b)), outcomes(&v));
}

#[test]
fn input_errors_exit_2_with_a_hint() {
    let o = lucy(&["bench", "no-such-suite", "--oracle", "tables"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("known suites"));
    let dir = tempfile::tempdir().unwrap();
    let o = lucy(&["bench", SUITE, "--out", dir.path().to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "the full pipeline needs an LLM");
    assert!(String::from_utf8_lossy(&o.stderr).contains("--oracle tables"));
    let o = lucy(&["bench", SUITE, "--oracle", "tables", "--jobs", "0"]);
    assert_eq!(o.status.code(), Some(2));
}

#[test]
fn oracle_view_measures_query_view_alone() {
    // No MatchTables rule: the oracle must not ask it.
    let server = MockServer::start(
        Script::new()
            .rule(Rule::when_contains(["I created a view table", "starting with 'dev'"]).reply(Reply::ok([
                "```sql\nSELECT DISTINCT CLIENT_name, DATACENTER_name FROM lucy_view WHERE DATACENTER_name LIKE 'dev%'\n```",
            ])))
            .rule(Rule::when_contains(["I created a view table", "CPU overhead limit"]).reply(Reply::ok([
                "```sql\nSELECT RESOURCEPOOL_name FROM lucy_view WHERE CCPU_overheadlimit > RCPU_overallusage\n```",
            ]))),
    );
    let dir = tempfile::tempdir().unwrap();
    let o = lucy(&[
        "bench",
        SUITE,
        "--oracle",
        "view",
        "--limit",
        "2",
        "--out",
        dir.path().to_str().unwrap(),
        "--llm-url",
        &server.url(),
        "--llm-model",
        "mock",
        "--llm-retries",
        "0",
        // The scripted mock answers QueryView's SQL prompt, not a plan.
        "--set",
        "query.form=sql",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v = results(dir.path());
    let qs = v["questions"].as_array().unwrap();
    assert_eq!(qs.len(), 2);
    assert_eq!(qs[0]["metrics"]["ex"], true);
    assert_eq!(qs[0]["attribution"]["label"], "correct");
    // Q2 without "+ 100": the view was right, the SQL was not.
    assert_eq!(qs[1]["metrics"]["ex"], false);
    assert_eq!(qs[1]["attribution"]["label"], "phase3_wrong_sql");
    assert_eq!(v["summary"]["llm_calls"], 2, "only QueryView called the LLM");
}

#[test]
fn lucy_and_direct_compared_on_the_same_questions() {
    let q1 = "starting with 'dev'";
    let server = MockServer::start(
        Script::new()
            .rule(Rule::when_contains([q1, "JSON schema of the database"]).reply(Reply::ok(["[\"CLIENT\", \"DATACENTER\"]"])))
            .rule(Rule::when_contains([q1, "JSON schema of the table CLIENT."]).reply(Reply::ok(["[\"name\"]"])))
            .rule(Rule::when_contains([q1, "JSON schema of the table DATACENTER."]).reply(Reply::ok(["[\"name\"]"])))
            .rule(Rule::when_contains([q1, "I created a view table"]).reply(Reply::ok([
                "```sql\nSELECT DISTINCT CLIENT_name, DATACENTER_name FROM lucy_view WHERE DATACENTER_name LIKE 'dev%'\n```",
            ])))
            .rule(Rule::when_contains([q1, "Given the database described by the following DDL"]).reply(Reply::ok([
                "```sql\nSELECT DISTINCT c.name, d.name FROM CLIENT c JOIN LOCATION l ON l.id = c.loc_id \
                 JOIN DATACENTER d ON d.loc_id = l.id WHERE d.name LIKE 'dev%'\n```",
            ]))),
    );
    let dir = tempfile::tempdir().unwrap();
    let o = lucy(&[
        "bench",
        SUITE,
        "--method",
        "lucy,direct",
        "--limit",
        "1",
        "--out",
        dir.path().to_str().unwrap(),
        "--llm-url",
        &server.url(),
        "--llm-model",
        "mock",
        "--llm-retries",
        "0",
        // The scripted mock answers QueryView's SQL prompt, not a plan.
        "--set",
        "query.form=sql",
    ]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let lucy_run = results(&dir.path().join("lucy"));
    assert_eq!(lucy_run["questions"][0]["metrics"]["ex"], true);
    assert_eq!(lucy_run["questions"][0]["metrics"]["cov_t"], 1.0);
    let v = results(&dir.path().join("direct"));
    assert_eq!(v["method"], "direct");
    let q = &v["questions"][0];
    // The paper's wrong answer for Q1: clients and datacenters sharing a LOCATION.
    assert_eq!(q["metrics"]["ex"], false);
    assert_eq!(q["metrics"]["cov_t"], 0.4, "2 of the 5 gold tables");
    assert!(q["metrics"]["join"].is_null(), "no view, no phase-2 metric");
    assert_eq!(q["attribution"]["label"], "wrong_sql");
    let report = std::fs::read_to_string(dir.path().join("report.md")).unwrap();
    assert!(report.contains("| | lucy | direct |") && report.contains("| ex | 1 | 0 |"), "{report}");
    assert!(report.contains("| cov_t | 1.00 | 0.40 |"), "{report}");
}

/// Issue 5's acceptance commands, through the binary and by suite name:
/// `lucy bench acme --oracle tables` and `lucy bench spider-dev --oracle
/// tables` run offline and process every question. A measurement, not a
/// pass/fail on the match rate: it fails only if the harness breaks.
#[test]
fn oracle_tables_on_acme_and_spider_dev_by_suite_name() {
    for (suite, questions) in [("acme", 44), ("spider-dev", 1034)] {
        let dir = tempfile::tempdir().unwrap();
        let o = Command::new(env!("CARGO_BIN_EXE_lucy"))
            .current_dir(env!("CARGO_MANIFEST_DIR"))
            .args([
                "bench",
                suite,
                "--oracle",
                "tables",
                "--jobs",
                "2",
                "--no-progress",
                "--out",
                dir.path().to_str().unwrap(),
            ])
            .output()
            .expect("run lucy");
        assert!(o.status.success(), "{suite}: {}", String::from_utf8_lossy(&o.stderr));
        let v = results(dir.path());
        let s = &v["summary"];
        assert_eq!(s["questions"], questions, "{suite}");
        assert_eq!(v["questions"].as_array().unwrap().len(), questions, "{suite}");
        let compared = s["join_compared"].as_u64().unwrap();
        assert!(compared > 0 && s["join_matched"].as_u64().unwrap() <= compared, "{suite}: {s}");
        // No question may be blamed on a phase that did not run.
        let labels = s["attribution"].to_string();
        assert!(!labels.contains("phase3") && !labels.contains("llm"), "{suite}: {labels}");
        assert!(dir.path().join("report.md").is_file());
    }
}
