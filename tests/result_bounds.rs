//! #13 "bounds on results", on the DDO view through the CLI: a huge cell or
//! a huge result is cut while it is read (bounded output, a note saying
//! why), or stopped inside SQLite with a clear error, never written out.

use std::process::Command;

const MODEL: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels/ddo.json");
const DB: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels/ddo.sqlite");

fn ask_sql(sql: &str, extra: &[&str]) -> std::process::Output {
    Command::new(env!("CARGO_BIN_EXE_lucy"))
        .args(["--json", "ask", "--model", MODEL, "--tables", "CLIENT", "--sql", sql, "--execute", DB])
        .args(extra)
        .env_remove("LUCY_LLM_URL")
        .env_remove("LUCY_LLM_MODEL")
        .output()
        .expect("run lucy")
}

#[test]
fn a_20_mb_blob_is_cut_to_the_cell_cap() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.json");
    let o = ask_sql("SELECT zeroblob(20000000) AS z FROM lucy_view LIMIT 1", &["--trace", trace.to_str().unwrap()]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(o.stdout.len() < 8 << 20, "stdout is {} bytes", o.stdout.len());
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(v["rows"]["truncated"], true);
    let why = v["rows"]["truncation"].as_str().unwrap();
    assert!(why.contains("per-cell cap of 1048576 bytes") && why.contains("20000000 bytes kept 131072"), "{why}");
    let t = std::fs::metadata(&trace).unwrap().len();
    assert!(t < 1 << 20, "the trace is {t} bytes");
}

#[test]
fn a_100_mb_string_is_stopped_inside_sqlite() {
    let o = ask_sql("SELECT printf('%.*c', 100000000, 'x') AS s FROM lucy_view LIMIT 1", &[]);
    assert!(!o.status.success());
    assert!(o.stdout.len() < 1 << 20 && o.stderr.len() < 1 << 16);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("grew past") && err.contains("--max-result-bytes"), "{err}");
}

#[test]
fn many_rows_stop_at_the_result_budget() {
    let sql = "WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 100000) \
               SELECT printf('%.1000c', 'x') AS s FROM n, lucy_view";
    let o = ask_sql(sql, &["--limit", "1000000", "--max-result-bytes", "65536"]);
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let v: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    let n = v["rows"]["rows"].as_array().unwrap().len();
    assert!((60..=66).contains(&n), "{n} rows");
    assert!(v["rows"]["truncation"].as_str().unwrap().contains("--max-result-bytes 65536"));
    let o = ask_sql("SELECT 1", &["--max-result-bytes", "12"]);
    assert_eq!(o.status.code(), Some(2), "{}", String::from_utf8_lossy(&o.stderr));
}
