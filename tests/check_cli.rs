//! `lucy check` from the command line: exit codes, text and JSON output.

mod support;

use support::run;

const MODEL: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels/ddo.json");

/// The direct baseline's answer to the paper's DDO Q1 on a real model.
const Q1_DIRECT: &str = "SELECT CLIENT.name, DATACENTER.name FROM CLIENT JOIN DATACENTER ON CLIENT.loc_id = DATACENTER.id WHERE DATACENTER.name LIKE 'dev%'";

#[test]
fn the_direct_q1_answer_exits_1_naming_the_undeclared_join() {
    let o = run(&["check", "--model", MODEL, "--sql", Q1_DIRECT]);
    assert_eq!(o.status.code(), Some(1));
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(out.contains("[undeclared_join] JOIN DATACENTER ON"), "{out}");
    assert!(out.contains("CLIENT.loc_id = DATACENTER.id"), "{out}");
    assert!(
        out.contains("fix: join along the declared path CLIENT – RSPOOL2CLIENT – RESOURCEPOOL – COMPUTE – DATACENTER"),
        "{out}"
    );
    let j = run(&["--json", "check", "--model", MODEL, "--sql", Q1_DIRECT]);
    assert_eq!(j.status.code(), Some(1));
    let v: serde_json::Value = serde_json::from_slice(&j.stdout).unwrap();
    assert_eq!(v["findings"][0]["kind"], "undeclared_join");
    assert_eq!(v["findings"][0]["clause"], "JOIN DATACENTER ON");
    assert_eq!(v["tables"], serde_json::json!(["CLIENT", "DATACENTER"]));
}

#[test]
fn every_ddo_gold_query_exits_0() {
    let text = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/benchmarks/questions/ddo.jsonl")).unwrap();
    let dir = tempfile::tempdir().unwrap();
    for (i, line) in text.lines().filter(|l| !l.trim().is_empty()).enumerate() {
        let q: serde_json::Value = serde_json::from_str(line).unwrap();
        // Half through --file, half through --sql.
        let sql = q["gold_sql"].as_str().unwrap();
        let o = if i % 2 == 0 {
            let f = dir.path().join(format!("q{i}.sql"));
            std::fs::write(&f, format!("{sql};\n")).unwrap();
            run(&["check", "--model", MODEL, "--file", f.to_str().unwrap()])
        } else {
            run(&["check", "--model", MODEL, "--sql", sql])
        };
        assert_eq!(o.status.code(), Some(0), "{}: {}", q["id"], String::from_utf8_lossy(&o.stdout));
        assert!(String::from_utf8_lossy(&o.stdout).starts_with("ok: no findings"));
    }
}

#[test]
fn unparsable_sql_exits_2() {
    let o = run(&["check", "--model", MODEL, "--sql", "SELEC name FROM CLIENT"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("cannot parse"), "{}", String::from_utf8_lossy(&o.stderr));
    let o = run(&["check", "--model", MODEL, "--sql", "DROP TABLE CLIENT"]);
    assert_eq!(o.status.code(), Some(2));
    let o = run(&["check", "--model", MODEL]);
    assert_eq!(o.status.code(), Some(2), "--sql or --file is required");
    let o = run(&["check", "--model", MODEL, "--file", "/nonexistent/q.sql"]);
    assert_eq!(o.status.code(), Some(2));
}
