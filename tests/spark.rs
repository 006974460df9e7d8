//! lucy against the project's Spark Connect server (feature `spark`),
//! started and loaded by `scripts/db.sh start spark; scripts/db.sh load ddo
//! spark; scripts/db.sh load acme spark`. With LUCY_DB_TESTS=1 a server
//! that is down fails these tests; without it they are skipped with a note.
//!
//! Covered: views over every DDO and ACME relationship (and every table),
//! written in the Spark dialect, return SQLite's rows; `lucy ask` over a
//! view answers DDO's Q1 as SQLite does, a double-quoted text being a string
//! to both lucy's guard and Spark; `lucy model import --spark` reads DDO's
//! tables and columns (no keys: Spark declares none), and `lucy model
//! suggest --relationships --execute sc://…` proposes DDO's 20
//! relationships back from names and the values on Spark; hostile SQL, through `lucy ask` and handed
//! straight to the executor, changes and creates nothing (the catalog and
//! row counts before and after); the time limit interrupts a slow query
//! within 10 % + 1 s; the row limit and the byte bound cut a huge result
//! while it is read; a stopped server, a port that never answers, a wrong
//! database and a bad token fail clearly, without a hang and without
//! printing the token.
#![cfg(feature = "spark")]

mod support;

use std::collections::BTreeMap;
use std::path::Path;
use std::process::{Command, Output};
use std::time::{Duration, Instant};

use lucy::sql::exec::{run, spark_catalog, Database, ExecOptions, QueryRows, SqlValue, ViewDef};
use lucy::{Dialect, SchemaGraph, ViewRequest};

const ROOT: &str = env!("CARGO_MANIFEST_DIR");
/// The token scripts/db.sh gives its Spark server.
const TOKEN: &str = "lucy";

fn db_sh(args: &[&str]) -> Output {
    Command::new(format!("{ROOT}/scripts/db.sh")).args(args).output().expect("run scripts/db.sh")
}

/// The URL of a loaded suite on the Spark server, or None (skip) when it
/// is down and LUCY_DB_TESTS is not set.
fn url(suite: &str) -> Option<String> {
    if !db_sh(&["status", "spark"]).status.success() {
        if std::env::var("LUCY_DB_TESTS").is_ok_and(|v| v == "1") {
            panic!("the Spark server is down: scripts/db.sh start spark; scripts/db.sh load {suite} spark");
        }
        eprintln!(
            "note: Spark server not running (scripts/db.sh start spark; scripts/db.sh load {suite} spark): skipped"
        );
        return None;
    }
    let o = db_sh(&["url", "spark", suite]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    Some(String::from_utf8(o.stdout).unwrap().trim().to_string())
}

fn spark(u: &str) -> Database {
    // Every test sets the same value: no test depends on another's.
    std::env::set_var("LUCY_SPARK_TOKEN", TOKEN);
    Database::parse(u).unwrap()
}

/// The lucy binary: `LUCY_BIN` when set (as scripts/db.sh check reads it),
/// else the one cargo built for this test.
fn lucy(args: &[&str], token: &str) -> Output {
    Command::new(std::env::var("LUCY_BIN").unwrap_or_else(|_| env!("CARGO_BIN_EXE_lucy").to_string()))
        .args(args)
        .env_remove("LUCY_LLM_URL")
        .env_remove("LUCY_LLM_MODEL")
        .env("LUCY_SPARK_TOKEN", token)
        .output()
        .expect("run lucy")
}

fn sqlite_of(suite: &str) -> String {
    match suite {
        "ddo" => format!("{ROOT}/dbmodels/ddo.sqlite"),
        "acme" => format!("{ROOT}/../shared/benchmarks/acme/acme_small.sqlite"),
        other => panic!("{other}"),
    }
}

/// A row as comparable text: numbers as reals (SQLite keeps 30.0 where
/// Spark's DECIMAL gives 30), text and blobs as they are.
fn norm(r: &QueryRows) -> BTreeMap<Vec<String>, usize> {
    let mut m = BTreeMap::new();
    for row in &r.rows {
        let k = row
            .iter()
            .map(|v| match v {
                SqlValue::Null => "NULL".to_string(),
                SqlValue::Integer(i) => format!("{:.6}", *i as f64),
                SqlValue::Real(x) => format!("{x:.6}"),
                SqlValue::Text(t) => format!("'{t}'"),
                SqlValue::Blob(b) => format!("{b:?}"),
            })
            .collect();
        *m.entry(k).or_insert(0) += 1;
    }
    m
}

/// The view over `tables`, in `dialect`.
fn view_request(tables: &[String]) -> ViewRequest {
    ViewRequest::new(tables.to_vec())
}

fn view(graph: &SchemaGraph, tables: &[String], dialect: Dialect) -> Option<lucy::types::ViewBody> {
    let req = ViewRequest { dialect, ..view_request(tables) };
    lucy::generate_view(graph, &req).ok().and_then(|v| v.body)
}

#[test]
fn views_on_ddo_and_acme_return_sqlites_rows() {
    for suite in ["ddo", "acme"] {
        let Some(u) = url(suite) else { return };
        let db = spark(&u);
        let model = lucy::load_model(Path::new(&format!("{ROOT}/dbmodels/{suite}.json"))).unwrap();
        let mut sets: Vec<Vec<String>> =
            model.relationships.iter().map(|r| vec![r.from.clone(), r.to.clone()]).filter(|s| s[0] != s[1]).collect();
        sets.extend(model.tables.iter().map(|t| vec![t.name.clone()]));
        sets.sort();
        sets.dedup();
        let graph = SchemaGraph::new(model).unwrap();
        let sqlite = Database::Sqlite(sqlite_of(suite).into());
        let mut compared = 0;
        for tables in &sets {
            let (Some(sv), Some(pv)) = (view(&graph, tables, Dialect::Sqlite), view(&graph, tables, Dialect::Spark))
            else {
                continue;
            };
            let sql = "SELECT * FROM lucy_view";
            let want = run(&sqlite, Some(ViewDef::from(&sv)), sql, &ExecOptions::default()).unwrap();
            let got = run(&db, Some(ViewDef::from(&pv)), sql, &ExecOptions::default())
                .unwrap_or_else(|e| panic!("{suite} {tables:?}: {e}\n{}", pv.select));
            assert_eq!(got.view_mode, "cte");
            assert_eq!(got.columns.len(), want.columns.len(), "{suite} {tables:?}");
            assert!(!got.truncated, "{suite} {tables:?}: {:?}", got.truncation);
            assert_eq!(norm(&got), norm(&want), "{suite} {tables:?}: rows differ\n{}", pv.select);
            compared += 1;
        }
        assert!(compared >= sets.len() * 9 / 10, "{suite}: only {compared} of {} views compared", sets.len());
        eprintln!("{suite}: {compared} views return SQLite's rows on Spark");
    }
}

/// Row counts of every DDO table, and the whole catalog.
fn state(db: &Database, tables: &[String]) -> (Vec<String>, Vec<Vec<SqlValue>>) {
    let catalog = spark_catalog(db, Duration::from_secs(60)).unwrap();
    let counts = tables
        .iter()
        .map(|t| {
            run(db, None, &format!("SELECT COUNT(*) FROM `{t}`"), &ExecOptions::default()).unwrap().rows[0].clone()
        })
        .collect();
    (catalog, counts)
}

const HOSTILE: &[&str] = &[
    "DELETE FROM CLIENT",
    "UPDATE CLIENT SET name = 'x'",
    "INSERT INTO LOCATION (id) VALUES (999)",
    "INSERT OVERWRITE TABLE CLIENT SELECT * FROM CLIENT WHERE 1 = 0",
    "CREATE TABLE Z (a INT)",
    "CREATE TABLE Z2 AS SELECT 1 AS a",
    "CREATE VIEW V2 AS SELECT 1 AS a",
    "CREATE TEMPORARY VIEW V3 AS SELECT 1 AS a",
    "CREATE GLOBAL TEMPORARY VIEW V4 AS SELECT 1 AS a",
    "CREATE DATABASE evil",
    "DROP TABLE RSPOOL2CLIENT",
    "DROP DATABASE acme CASCADE",
    "TRUNCATE TABLE RSPOOL2CLIENT",
    "ALTER TABLE CLIENT ADD COLUMNS (q INT)",
    "ALTER TABLE CLIENT RENAME TO CLIENT2",
    "CACHE TABLE CLIENT",
    "UNCACHE TABLE CLIENT",
    "REFRESH TABLE CLIENT",
    "SET spark.sql.ansi.enabled = false",
    "RESET",
    "USE acme",
    "ADD JAR /tmp/x.jar",
    "LOAD DATA LOCAL INPATH '/etc/passwd' INTO TABLE CLIENT",
    "INSERT OVERWRITE DIRECTORY '/tmp/lucy-evil' USING parquet SELECT * FROM CLIENT",
    "MSCK REPAIR TABLE CLIENT",
    "ANALYZE TABLE CLIENT COMPUTE STATISTICS",
    "SELECT 1; DROP TABLE CLIENT",
    "SELECT reflect('java.lang.Thread', 'sleep', 1000L)",
    "SELECT java_method('java.lang.System', 'getProperty', 'user.home')",
    "SELECT `reflect`('java.lang.Thread', 'sleep', 1000L) AS x",
];

#[test]
fn hostile_sql_changes_and_creates_nothing() {
    let Some(u) = url("ddo") else { return };
    let db = spark(&u);
    let tables: Vec<String> = lucy::load_model(Path::new(&format!("{ROOT}/dbmodels/ddo.json")))
        .unwrap()
        .tables
        .iter()
        .map(|t| t.name.clone())
        .collect();
    let before = state(&db, &tables);
    assert!(before.0.iter().any(|t| t.to_ascii_lowercase().starts_with("ddo.client ")), "{:#?}", before.0);
    let model = format!("{ROOT}/dbmodels/ddo.json");
    let view = ViewDef { name: "lucy_view", select: "SELECT 1 AS a" };
    for sql in HOSTILE {
        // Through lucy's guard, as a user would send it.
        let o = lucy(&["ask", "--model", &model, "--tables", "CLIENT", "--sql", sql, "--execute", &u, "x"], TOKEN);
        assert!(!o.status.success(), "{sql}: accepted by lucy ask");
        // Straight to the executor (as if the guard were bypassed), with and
        // without a view in front.
        for v in [None, Some(view)] {
            let r = run(&db, v, sql, &ExecOptions::default());
            assert!(r.is_err(), "{sql}: ran on Spark: {r:?}");
        }
    }
    let after = state(&db, &tables);
    assert_eq!(before.0, after.0, "the catalog changed");
    assert_eq!(before.1, after.1, "row counts changed");
    assert!(!Path::new("/tmp/lucy-evil").exists(), "a directory was written");
}

#[test]
fn the_time_limit_interrupts_a_slow_query() {
    let Some(u) = url("ddo") else { return };
    let db = spark(&u);
    let limit = Duration::from_secs(3);
    let opts = ExecOptions { timeout: limit, ..ExecOptions::default() };
    let t = Instant::now();
    let e = run(&db, None, "SELECT COUNT(*) FROM range(0, 1000000000000) a", &opts).unwrap_err().to_string();
    let took = t.elapsed();
    assert!(took < limit.mul_f64(1.1) + Duration::from_secs(1), "took {took:?}: {e}");
    assert!(took >= limit, "stopped before the limit ({took:?}): {e}");
    assert!(e.contains("time limit") && e.contains("interrupted on the server"), "{e}");
    // The server is free again: a small query answers at once.
    let t = Instant::now();
    let r = run(&db, None, "SELECT COUNT(*) FROM CLIENT", &ExecOptions::default()).unwrap();
    assert!(matches!(r.rows[0][0], SqlValue::Integer(n) if n > 0));
    assert!(t.elapsed() < Duration::from_secs(20), "{:?}", t.elapsed());
}

#[test]
fn row_limit_and_byte_bound_cut_while_reading() {
    let Some(u) = url("ddo") else { return };
    let db = spark(&u);
    let opts = ExecOptions { max_result_bytes: 64 << 10, ..ExecOptions::default() };
    let r = run(&db, None, "SELECT repeat('x', 3000000) AS z", &opts).unwrap();
    assert!(r.truncated && r.bytes <= 64 << 10, "{:?} {}", r.truncation, r.bytes);
    assert!(r.truncation.as_deref().unwrap_or("").contains("per-cell cap"), "{:?}", r.truncation);
    // Fifty million rows: cut at the byte bound, in bounded time.
    let t = Instant::now();
    let r = run(&db, None, "SELECT id, 'some text' AS t FROM range(0, 50000000)", &opts).unwrap();
    assert!(r.truncated && r.bytes <= 64 << 10, "{:?} {}", r.truncation, r.bytes);
    assert!(r.truncation.as_deref().unwrap_or("").contains("--max-result-bytes 65536"), "{:?}", r.truncation);
    assert!(t.elapsed() < Duration::from_secs(30), "{:?}", t.elapsed());
    let r =
        run(&db, None, "SELECT id FROM CLIENT ORDER BY id", &ExecOptions { limit: Some(3), ..ExecOptions::default() })
            .unwrap();
    assert_eq!(r.rows.len(), 3);
    assert!(r.truncated && r.truncation.unwrap().contains("row limit of 3"));
    let all = run(&db, None, "SELECT id FROM CLIENT ORDER BY id", &ExecOptions::default()).unwrap();
    assert_eq!(all.rows[..3], r.rows[..], "ORDER BY is kept through lucy's wrapping");
}

#[test]
fn a_stopped_server_a_silent_port_a_wrong_database_and_a_bad_token_fail_clearly() {
    let Some(u) = url("ddo") else { return };
    let model = format!("{ROOT}/dbmodels/ddo.json");
    let ask = |url: &str, token: &str| {
        let t = Instant::now();
        let o = lucy(
            &[
                "ask",
                "--model",
                &model,
                "--tables",
                "CLIENT",
                "--sql",
                "SELECT 1 FROM lucy_view",
                "--execute",
                url,
                "x",
            ],
            token,
        );
        (o, t.elapsed())
    };
    // Nothing listens on port 1.
    let (o, took) = ask("sc://127.0.0.1:1/ddo", TOKEN);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(err.contains("cannot connect to sc://127.0.0.1:1/ddo"), "{err}");
    assert!(took < Duration::from_secs(15), "{took:?}");
    // A port that accepts and never answers: bounded by the connect timeout.
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    let (o, took) = ask(&format!("sc://127.0.0.1:{port}/ddo"), TOKEN);
    let err = String::from_utf8_lossy(&o.stderr);
    assert_eq!(o.status.code(), Some(2), "{err}");
    assert!(took < Duration::from_secs(45), "{took:?}: {err}");
    drop(silent);
    // A database the server does not have.
    let (o, _) = ask(&u.replace("/ddo", "/no_such_db"), TOKEN);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{err}");
    assert!(err.contains("no_such_db"), "{err}");
    // A wrong token, and none.
    for token in ["not-the-token-hunter2", ""] {
        let (o, took) = ask(&u, token);
        let err = String::from_utf8_lossy(&o.stderr);
        assert_eq!(o.status.code(), Some(2), "{err}");
        assert!(err.contains("refused the"), "{err}");
        assert!(err.contains("LUCY_SPARK_TOKEN"), "{err}");
        assert!(!err.contains("hunter2"), "the token is printed: {err}");
        assert!(!err.contains("panicked"), "{err}");
        assert!(took < Duration::from_secs(15), "{took:?}");
    }
    // The right token: the query runs.
    let (o, _) = ask(&u, TOKEN);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
}

#[test]
fn ask_over_a_spark_view_returns_q1_gold_rows() {
    let Some(u) = url("ddo") else { return };
    let model = format!("{ROOT}/dbmodels/ddo.json");
    let gold = support::sqlite_rows(&sqlite_of("ddo"), support::DDO_Q1_GOLD);
    assert!(gold.len() >= 2);
    // The second query writes its pattern in double quotes: a string in
    // Spark SQL, and so to lucy's guard (sqlparser's Databricks dialect) too.
    for sql in [
        "SELECT DISTINCT CLIENT_name, DATACENTER_name FROM lucy_view WHERE DATACENTER_name LIKE 'dev%' ORDER BY 1, 2",
        "SELECT DISTINCT `CLIENT_name`, DATACENTER_name FROM lucy_view WHERE DATACENTER_name LIKE \"dev%\"",
    ] {
        let o = lucy(
            &["--json", "ask", "--model", &model, "--tables", "CLIENT,DATACENTER", "--sql", sql, "--execute", &u, "Q1"],
            TOKEN,
        );
        assert!(o.status.success(), "{sql}: {}", String::from_utf8_lossy(&o.stderr));
        let rows = support::rows_of(&serde_json::from_slice(&o.stdout).unwrap());
        assert_eq!(rows, gold, "{sql}");
    }
    // A plain list over the m:m path, as QueryView writes it: --distinct
    // auto keeps one row per (client, datacenter) with a ROW_NUMBER window,
    // which Spark accepts only ordered (a fresh Q1 on Spark failed so).
    let graph = SchemaGraph::new(lucy::load_model(Path::new(&model)).unwrap()).unwrap();
    let tables = vec!["CLIENT".to_string(), "DATACENTER".to_string()];
    let req = ViewRequest { dialect: Dialect::Spark, ..view_request(&tables) };
    let v = lucy::generate_view(&graph, &req).unwrap();
    let plain = "SELECT CLIENT_name, DATACENTER_name FROM lucy_view WHERE DATACENTER_name LIKE 'dev%'";
    let note = lucy::check::distinct::analyze(plain, &v.grain, &v.view_name, Dialect::Spark).unwrap().unwrap();
    let db = spark(&u);
    let body = v.body.as_ref().unwrap();
    let plain_rows = run(&db, Some(ViewDef::from(body)), plain, &ExecOptions::default()).unwrap();
    let one_each = run(&db, Some(ViewDef::from(body)), &note.rewritten, &ExecOptions::default())
        .unwrap_or_else(|e| panic!("{e}\n{}", note.rewritten));
    assert!(plain_rows.rows.len() > gold.len(), "the plain list repeats pairs");
    assert_eq!(one_each.rows.len(), gold.len(), "{}", note.rewritten);
}

#[test]
fn model_import_reads_ddos_tables_and_columns_without_keys() {
    let Some(u) = url("ddo") else { return };
    let o = lucy(&["--json", "model", "import", "--spark", &u], TOKEN);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let got: lucy::DbModel = serde_json::from_value(v["model"].clone()).unwrap();
    assert_eq!(got.dialect, Some(Dialect::Spark));
    assert!(got.relationships.is_empty() && got.tables.iter().all(|t| t.primary_key.is_empty()));
    assert!(v["warnings"].to_string().contains("--relationships"), "{}", v["warnings"]);
    let curated = lucy::load_model(Path::new(&format!("{ROOT}/dbmodels/ddo.json"))).unwrap();
    let names = |m: &lucy::DbModel| -> std::collections::BTreeSet<String> {
        m.tables
            .iter()
            .flat_map(|t| t.columns.iter().map(move |c| format!("{}.{}", t.name, c.name).to_ascii_lowercase()))
            .collect()
    };
    assert_eq!(names(&got), names(&curated));
    // A database that does not exist names the ones that do.
    let o = lucy(&["model", "import", "--spark", &u, "--database", "no_such_db"], TOKEN);
    assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stderr));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("no_such_db") && err.contains("ddo"), "{err}");
}

#[test]
fn import_then_suggest_relationships_on_spark_finds_ddos_twenty() {
    let Some(u) = url("ddo") else { return };
    let dir = tempfile::tempdir().unwrap();
    let imported = dir.path().join("ddo-spark.json");
    let o = lucy(&["model", "import", "--spark", &u, "--out", imported.to_str().unwrap()], TOKEN);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let o =
        lucy(&["--json", "model", "suggest", "--relationships", "--execute", &u, imported.to_str().unwrap()], TOKEN);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let patch: Vec<serde_json::Value> = serde_json::from_slice(&o.stdout).unwrap();
    let side = |t: &serde_json::Value, c: &serde_json::Value| {
        format!("{}.{}", t.as_str().unwrap(), c.as_str().unwrap()).to_ascii_lowercase()
    };
    let pair = |a: String, b: String| if a < b { (a, b) } else { (b, a) };
    let curated = lucy::load_model(Path::new(&format!("{ROOT}/dbmodels/ddo.json"))).unwrap();
    let truth: std::collections::HashSet<(String, String)> = curated
        .relationships
        .iter()
        .map(|r| {
            pair(
                format!("{}.{}", r.from, r.on[0][0]).to_ascii_lowercase(),
                format!("{}.{}", r.to, r.on[0][1]).to_ascii_lowercase(),
            )
        })
        .collect();
    let found = patch
        .iter()
        .filter(|p| {
            let r = &p["value"];
            truth.contains(&pair(side(&r["from"], &r["on"][0][0]), side(&r["to"], &r["on"][0][1])))
        })
        .count();
    // As on SQLite without keys (benchmarks/results/suggest.md): 20 of 20.
    assert_eq!((patch.len(), found), (20, 20), "{patch:#?}");
    for p in &patch {
        assert!(p["reason"].as_str().unwrap().contains("; values: "), "checked on Spark's data: {p}");
    }
}
