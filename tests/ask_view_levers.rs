//! Two QueryView levers of issue 23 end to end through `lucy ask`, with a
//! scripted OpenAI-compatible mock on 127.0.0.1, on DDO Q1's view (clients
//! and datacenters through the m:m resource pools):
//! - `--distinct auto`: the answer lists the pairs without DISTINCT, as the
//!   embedded default model wrote it on a fresh run (34 rows, the gold 29):
//!   one row per (client, datacenter) is kept;
//! - `--view-columns all`: MatchTables chose only the names, and the answer
//!   filters on `CLIENT_gender`, a column the paper's view leaves out.

mod support;

use std::process::Output;

use support::{json_ok, rule, run_mock, sqlite_rows, trace_and_explain};

use lucy::llm::mock::{MockServer, Script};

const MODEL: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels/ddo.json");
const DB: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels/ddo.sqlite");
const Q1: &str =
    "List customers who use datacenters with names starting with 'dev'. Output clients and datacenters names.";
const GOLD_FROM: &str = "FROM CLIENT c JOIN RSPOOL2CLIENT j ON j.client_id = c.id \
     JOIN RESOURCEPOOL p ON p.id = j.rspool_id JOIN COMPUTE k ON k.id = p.compute_id \
     JOIN DATACENTER d ON d.id = k.dc_id WHERE d.name LIKE 'dev%'";

/// MatchTables names CLIENT and DATACENTER and only their names; QueryView
/// (and the repair round) answer `sql`.
fn script(sql: &str) -> Script {
    let answer = format!("```sql\n{sql}\n```");
    Script::new()
        .rule(rule("JSON schema of the database", &["[\"CLIENT\", \"DATACENTER\"]"]))
        .rule(rule("JSON schema of the table CLIENT", &["[\"name\"]"]))
        .rule(rule("JSON schema of the table DATACENTER", &["[\"name\"]"]))
        .rule(rule("cannot be used", &[&answer]))
        .rule(rule("I created a view table lucy_view", &[&answer]))
}

fn ask(url: &str, extra: &[&str]) -> Output {
    let mut args = vec!["--json", "ask", "--model", MODEL, Q1, "--execute", DB, "--samples", "1"];
    args.extend_from_slice(extra);
    run_mock(&args, url)
}

/// The rows `lucy ask --json` printed, in order, duplicates kept.
fn row_list(v: &serde_json::Value) -> Vec<Vec<String>> {
    v["rows"]["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r.as_array().unwrap().iter().map(|c| c.as_str().unwrap_or_default().to_string()).collect())
        .collect()
}

#[test]
fn distinct_auto_turns_q1s_repeated_pairs_into_the_gold_rows() {
    let plain = "SELECT CLIENT_name, DATACENTER_name FROM lucy_view WHERE DATACENTER_name LIKE 'dev%'";
    let server = MockServer::start(script(plain));
    let gold = sqlite_rows(DB, &format!("SELECT DISTINCT c.name, d.name {GOLD_FROM}"));
    assert_eq!(gold.len(), 29);

    let off = json_ok(&ask(&server.url(), &["--distinct", "off"]));
    assert_eq!(off["sql"], plain);
    let repeated = row_list(&off);
    assert!(repeated.len() > gold.len(), "the view repeats pairs: {} rows", repeated.len());

    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("q1.json");
    let on = json_ok(&ask(&server.url(), &["--distinct", "auto", "--trace", trace.to_str().unwrap()]));
    let sql = on["sql"].as_str().unwrap();
    assert!(sql.contains("PARTITION BY CLIENT_id, DATACENTER_id"), "{sql}");
    let rows = row_list(&on);
    assert_eq!(rows.len(), gold.len());
    assert_eq!(rows.into_iter().collect::<std::collections::BTreeSet<_>>(), gold);
    let t = trace_and_explain(
        &trace,
        &["kept one row per CLIENT_id, DATACENTER_id: the view repeats the rows of CLIENT, DATACENTER"],
    );
    let note = &t["query_view"]["attempts"][0]["distinct"];
    assert_eq!(note["original"], plain, "{note}");
}

#[test]
fn view_columns_all_keeps_a_column_matchtables_did_not_choose() {
    let sql = "SELECT DISTINCT CLIENT_name, DATACENTER_name FROM lucy_view \
               WHERE DATACENTER_name LIKE 'dev%' AND CLIENT_gender = 'F'";
    let server = MockServer::start(script(sql));

    // The paper's view has the chosen names and the keys only.
    let out = ask(&server.url(), &["--view-columns", "selected"]);
    assert!(!out.status.success(), "CLIENT_gender is not in the selected view");
    let all = format!("{}{}", String::from_utf8_lossy(&out.stdout), String::from_utf8_lossy(&out.stderr));
    assert!(all.contains("CLIENT_gender"), "{all}");

    let v = json_ok(&ask(&server.url(), &["--view-columns", "all"]));
    let view_sql = v["view"]["view_sql"].as_str().unwrap();
    for c in ["CLIENT_gender", "RSPOOL2CLIENT_rspool_id", "COMPUTE_dc_id"] {
        assert!(view_sql.contains(c), "{c} not in {view_sql}");
    }
    let gold = sqlite_rows(DB, &format!("SELECT DISTINCT c.name, d.name {GOLD_FROM} AND c.gender = 'F'"));
    assert!(!gold.is_empty() && gold.len() < 29, "{}", gold.len());
    assert_eq!(support::rows_of(&v), gold);
}
