//! `lucy ask --sql`: SQL given instead of written by QueryView runs through
//! the view, the guard and `--execute` without any LLM configured.

mod support;

use std::collections::BTreeSet;

use support::{rows_of, run, sqlite_rows, stdout_json, trace_and_explain};

const MODEL: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels/ddo.json");
const DB: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels/ddo.sqlite");

/// Real numbers to 6 decimals: a sum in another order differs in the last bits.
fn rounded(rows: BTreeSet<Vec<String>>) -> BTreeSet<Vec<String>> {
    rows.into_iter()
        .map(|r| {
            r.into_iter()
                .map(|c| match c.parse::<f64>() {
                    Ok(f) => format!("{f:.6}"),
                    _ => c,
                })
                .collect()
        })
        .collect()
}

#[test]
fn given_sql_runs_over_the_view_without_an_llm() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.json");
    let o = run(&[
        "--json",
        "ask",
        "--model",
        MODEL,
        "--tables",
        "CLIENT,LOCATION",
        "--sql",
        "SELECT CLIENT_name, LOCATION_city FROM lucy_view WHERE LOCATION_country = 'Ireland'",
        "--execute",
        DB,
        "--trace",
        trace.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(0), "stderr: {}", String::from_utf8_lossy(&o.stderr));
    let j = stdout_json(&o);
    let want = gold("SELECT CLIENT.name, LOCATION.city FROM CLIENT JOIN LOCATION ON LOCATION.id = CLIENT.loc_id WHERE LOCATION.country = 'Ireland'");
    assert!(!want.is_empty());
    assert_eq!(rows_of(&j), want);
    // The trace says the SQL was given, and explain renders it.
    let t = trace_and_explain(&trace, &["given SQL"]);
    assert_eq!(t["query_view"]["attempts"][0]["extraction"], "given");
    assert!(t.get("llm").is_none(), "no LLM was used: {}", t["llm"]);
}

#[test]
fn given_sql_is_checked_by_the_guard() {
    let o = run(&["ask", "--model", MODEL, "--tables", "CLIENT", "--sql", "SELECT name FROM CLIENT", "--execute", DB]);
    assert_eq!(o.status.code(), Some(1));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("relation `CLIENT` is not allowed"), "{err}");
}

#[test]
fn given_sql_over_base_tables_with_direct() {
    let sql = "SELECT DATACENTER.name FROM DATACENTER JOIN LOCATION ON LOCATION.id = DATACENTER.loc_id WHERE LOCATION.country = 'Ireland'";
    let o = run(&["--json", "ask", "--model", MODEL, "--direct", "--sql", sql, "--execute", DB]);
    assert_eq!(o.status.code(), Some(0), "stderr: {}", String::from_utf8_lossy(&o.stderr));
    assert_eq!(rows_of(&stdout_json(&o)), gold(sql));
}

#[test]
fn given_sql_needs_tables_for_the_view() {
    let o = run(&["ask", "--model", MODEL, "--sql", "SELECT 1 FROM lucy_view"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("--tables"), "{}", String::from_utf8_lossy(&o.stderr));
}

/// The chasm and fan questions of the DDO suite: the SQL an LLM would write
/// over the view counts repeated rows; `--fanout rewrite` (the default)
/// turns it into the gold answer, `--fanout warn` runs it as written and
/// differs, `--fanout error` refuses it naming the aggregate.
#[test]
fn fanout_questions_of_the_ddo_suite_are_answered_right() {
    let cases: &[(&str, &str, &str)] = &[
        (
            "ddo-22",
            "CLIENT,PAYMENT,PAYAMOUNT,RETENTION",
            "SELECT CLIENT_name, SUM(PAYAMOUNT_amount), COUNT(RETENTION_id) FROM lucy_view GROUP BY CLIENT_name",
        ),
        (
            "ddo-23",
            "DATACENTER,COMPUTE,RESOURCEPOOL",
            "SELECT DATACENTER_name, COUNT(COMPUTE_id), COUNT(RESOURCEPOOL_id) FROM lucy_view GROUP BY DATACENTER_name",
        ),
        (
            "ddo-24",
            "CLIENT,PAYMENT,RESOURCEPOOL",
            "SELECT CLIENT_name, COUNT(PAYMENT_id), COUNT(RESOURCEPOOL_id) FROM lucy_view GROUP BY CLIENT_name",
        ),
    ];
    let questions =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/benchmarks/questions/ddo.jsonl")).unwrap();
    for (id, tables, sql) in cases {
        let q: serde_json::Value = questions
            .lines()
            .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap())
            .find(|q| q["id"] == *id)
            .unwrap_or_else(|| panic!("{id} is in ddo.jsonl"));
        assert!(q["tags"].as_array().unwrap().iter().any(|t| t == "chasm" || t == "fan"), "{id}");
        let want = rounded(gold(q["gold_sql"].as_str().unwrap()));
        let o = run(&["--json", "ask", "--model", MODEL, "--tables", tables, "--sql", sql, "--execute", DB]);
        assert_eq!(o.status.code(), Some(0), "{id}: {}", String::from_utf8_lossy(&o.stderr));
        let j = stdout_json(&o);
        assert_eq!(rounded(rows_of(&j)), want, "{id}: rewritten SQL {}", j["sql"]);
        assert!(j["fanout"]["rewritten"].is_string(), "{id}: {}", j["fanout"]);
        assert_eq!(j["fanout"]["original"], *sql);
        // As written, the answer is wrong on this data.
        let w = run(&[
            "--json",
            "ask",
            "--model",
            MODEL,
            "--tables",
            tables,
            "--sql",
            sql,
            "--execute",
            DB,
            "--fanout",
            "warn",
        ]);
        assert_eq!(w.status.code(), Some(0));
        let jw = stdout_json(&w);
        assert_ne!(rounded(rows_of(&jw)), want, "{id}: the trap shows on ddo.sqlite");
        assert!(jw["fanout"]["findings"].as_array().is_some_and(|f| !f.is_empty()));
        // Refused with the aggregate named.
        let e = run(&["ask", "--model", MODEL, "--tables", tables, "--sql", sql, "--execute", DB, "--fanout", "error"]);
        assert_eq!(e.status.code(), Some(1), "{id}");
        let err = String::from_utf8_lossy(&e.stderr);
        assert!(err.contains("fan-out") && err.contains("COUNT("), "{id}: {err}");
    }
}

#[test]
fn human_output_shows_the_sql_as_written_and_as_run() {
    let sql = "SELECT CLIENT_name, SUM(PAYAMOUNT_amount) FROM lucy_view GROUP BY CLIENT_name";
    let o = run(&[
        "ask",
        "--model",
        MODEL,
        "--tables",
        "CLIENT,PAYMENT,PAYAMOUNT,RETENTION",
        "--sql",
        sql,
        "--execute",
        DB,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("-- fan-out: SUM(PAYAMOUNT_amount) in SELECT reads PAYAMOUNT rows"), "{out}");
    assert!(out.contains("-- SQL as written") && out.contains(sql), "{out}");
    assert!(out.contains("ROW_NUMBER() OVER (PARTITION BY CLIENT_name, PAYAMOUNT_id)"), "{out}");
}

#[test]
fn lucy_view_marks_repeated_columns() {
    let o = run(&[
        "view",
        "--model",
        MODEL,
        "--tables",
        "CLIENT,PAYMENT,PAYAMOUNT,RETENTION",
        "--attrs",
        "CLIENT.name,PAYAMOUNT.amount",
    ]);
    assert_eq!(o.status.code(), Some(0));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("grain: a row is a combination of rows of"), "{out}");
    assert!(
        out.lines().any(|l| l.trim_start().starts_with("* PAYAMOUNT_amount") && l.contains("repeated by RETENTION")),
        "{out}"
    );
    let j = run(&["--json", "view", "--model", MODEL, "--tables", "CLIENT,LOCATION"]);
    let v = stdout_json(&j);
    // CLIENT M:1 LOCATION: CLIENT's rows appear once each, LOCATION's repeat
    // per client (whichever end the walk starts from).
    let inst = |name: &str| {
        v["grain"]["instances"].as_array().unwrap().iter().find(|i| i["instance"] == name).cloned().unwrap()
    };
    assert_eq!(inst("CLIENT")["multiplied_by"], serde_json::json!([]), "{}", v["grain"]);
    assert_eq!(inst("LOCATION")["multiplied_by"], serde_json::json!(["CLIENT"]), "{}", v["grain"]);
    assert!(v["grain"]["columns"].as_array().is_some_and(|c| !c.is_empty()));
}

/// "For each client, their total payments and number of retention
/// strategies": the plain view keeps the 12 clients with both; `--keep
/// CLIENT` starts from CLIENT with LEFT JOINs and keeps all 30, and the
/// fan-out rewrite still counts each payment amount and strategy once.
#[test]
fn keep_client_answers_for_each_client() {
    let sql = "SELECT CLIENT_name, SUM(PAYAMOUNT_amount), COUNT(RETENTION_id) FROM lucy_view GROUP BY CLIENT_name";
    let tables = "CLIENT,PAYMENT,PAYAMOUNT,RETENTION";
    let plain =
        stdout_json(&run(&["--json", "ask", "--model", MODEL, "--tables", tables, "--sql", sql, "--execute", DB]));
    assert_eq!(rows_of(&plain).len(), 12);
    let o = run(&[
        "--json",
        "ask",
        "--model",
        MODEL,
        "--tables",
        tables,
        "--keep",
        "CLIENT",
        "--sql",
        sql,
        "--execute",
        DB,
    ]);
    assert_eq!(o.status.code(), Some(0), "{}", String::from_utf8_lossy(&o.stderr));
    let j = stdout_json(&o);
    let view_sql = j["view"]["view_sql"].as_str().unwrap();
    assert!(view_sql.contains("FROM CLIENT\n") && !view_sql.contains("INNER JOIN"), "{view_sql}");
    let gold_sql = "SELECT c.name, (SELECT SUM(pa.amount) FROM PAYMENT p JOIN PAYAMOUNT pa ON pa.pay_id = p.id WHERE p.client_id = c.id), \
                (SELECT COUNT(*) FROM RETENTION r WHERE r.client_id = c.id) FROM CLIENT c";
    let want = rounded(gold(gold_sql));
    assert_eq!(want.len(), 30);
    assert_eq!(rounded(rows_of(&j)), want, "{}", j["sql"]);
    // COUNT(*) would count a row for a client with no strategy: refused with the fix.
    let star = "SELECT CLIENT_name, COUNT(*) FROM lucy_view GROUP BY CLIENT_name";
    let e = run(&[
        "ask",
        "--model",
        MODEL,
        "--tables",
        "CLIENT,RETENTION",
        "--keep",
        "CLIENT",
        "--sql",
        star,
        "--execute",
        DB,
    ]);
    assert_eq!(e.status.code(), Some(1));
    let err = String::from_utf8_lossy(&e.stderr);
    assert!(err.contains("COUNT(RETENTION_id)"), "{err}");
}

/// Rows of `sql` on the DDO database, in `rows_of`'s form.
fn gold(sql: &str) -> BTreeSet<Vec<String>> {
    sqlite_rows(DB, sql)
}
