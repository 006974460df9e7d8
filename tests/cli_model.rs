//! `lucy model …` through the real binary: output, exit codes, stderr.

mod support;

use std::process::Output;

use serde_json::Value;
use support::run;

const DDO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels/ddo.json");

fn stdout(o: &Output) -> String {
    String::from_utf8_lossy(&o.stdout).into_owned()
}

fn stderr(o: &Output) -> String {
    String::from_utf8_lossy(&o.stderr).into_owned()
}

#[test]
fn check_prints_a_summary() {
    let o = run(&["model", "check", DDO]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    assert!(out.contains("dbModel `ddo` is valid"), "{out}");
    assert!(out.contains("tables:        20 (66 columns)"), "{out}");
    assert!(out.contains("relationships: 20"), "{out}");
    assert!(out.contains("patterns:      5 (1 lookup, 1 many_to_many, 1 snowflake, 2 star)"), "{out}");
    assert!(
        out.contains(
            "core tables:   8 (LOCATION, CLIENT, DATACENTER, COMPUTE, RESOURCEPOOL, RSPOOL2CLIENT, PAYMENT, RETENTION)"
        ),
        "{out}"
    );
}

#[test]
fn check_json() {
    let o = run(&["--json", "model", "check", DDO]);
    assert_eq!(o.status.code(), Some(0));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["valid"], true);
    assert_eq!(v["tables"], 20);
    assert_eq!(v["patterns"]["star"], 2);
    assert_eq!(v["core_tables"].as_array().unwrap().len(), 8);
}

#[test]
fn check_reports_every_error_with_file_and_path_and_exits_2() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.json");
    let mut m: Value = serde_json::from_str(&std::fs::read_to_string(DDO).unwrap()).unwrap();
    m["relationships"][3]["on"][0][1] = "ident".into();
    m["patterns"][2]["children"][0]["table"] = "CONFIGS".into();
    std::fs::write(&bad, m.to_string()).unwrap();
    let o = run(&["model", "check", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stdout(&o).is_empty());
    let err = stderr(&o);
    assert!(err.contains("bad.json: $.relationships[3].on[0][1]: unknown column `ident` in table `COMPUTE`"), "{err}");
    assert!(err.contains("bad.json: $.patterns[2].children[0].table: unknown table `CONFIGS`"), "{err}");
    assert!(err.contains("did you mean `CONFIG`?"), "{err}");

    let o = run(&["--json", "model", "check", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    let v: Value = serde_json::from_str(stderr(&o).trim()).unwrap();
    assert_eq!(v["issues"].as_array().unwrap().len(), 2);
    assert_eq!(v["issues"][0]["path"], "$.relationships[3].on[0][1]");
}

#[test]
fn check_syntax_error_and_missing_file() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("trunc.json");
    std::fs::write(&bad, "{\"name\": \"x\", \"tables\": [").unwrap();
    let o = run(&["model", "check", bad.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("trunc.json: $: unexpected end of JSON input at line 1"), "{}", stderr(&o));

    let o = run(&["model", "check", "/nonexistent/model.json"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(stderr(&o).contains("/nonexistent/model.json"), "{}", stderr(&o));
}

#[test]
fn show_lists_tables_relationships_and_patterns() {
    let o = run(&["model", "show", DDO]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let out = stdout(&o);
    for needle in [
        "RSPOOL2CLIENT [core, m:m junction of CLIENT and RESOURCEPOOL]",
        "LOCATION [core, lookup]",
        "CCPU [inner of snowflake RESOURCEPOOL]",
        "loc_id INTEGER [→ LOCATION.id]",
        "id INTEGER [PK, NOT NULL]",
        "CLIENT(loc_id)->LOCATION(id)  M:1  CLIENT.loc_id = LOCATION.id",
        "many_to_many: RSPOOL2CLIENT between CLIENT and RESOURCEPOOL",
        "snowflake rooted at RESOURCEPOOL",
        "└ CONFIG",
    ] {
        assert!(out.contains(needle), "missing {needle:?} in\n{out}");
    }
}

#[test]
fn show_json_prints_the_normalized_model() {
    let o = run(&["--json", "model", "show", DDO]);
    assert_eq!(o.status.code(), Some(0));
    let shown = lucy::model::parse(&stdout(&o), None).unwrap();
    assert_eq!(shown, lucy::model::load(DDO).unwrap());
}

#[test]
fn suggest_on_ddo_without_patterns() {
    let dir = tempfile::tempdir().unwrap();
    let bare = dir.path().join("ddo_bare.json");
    let mut m: Value = serde_json::from_str(&std::fs::read_to_string(DDO).unwrap()).unwrap();
    m["patterns"] = Value::Array(vec![]);
    std::fs::write(&bare, m.to_string()).unwrap();

    let o = run(&["model", "suggest", bare.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).contains("RSPOOL2CLIENT has exactly two foreign keys"), "{}", stderr(&o));
    let patch: Vec<Value> = serde_json::from_str(&stdout(&o)).unwrap();
    for op in &patch {
        assert_eq!(op["op"], "add");
        assert_eq!(op["path"], "/patterns/-");
        assert!(!op["reason"].as_str().unwrap().is_empty());
    }
    let mm: Vec<&Value> = patch.iter().filter(|p| p["value"]["kind"] == "many_to_many").collect();
    assert_eq!(mm.len(), 1);
    assert_eq!(mm[0]["value"]["junction"], "RSPOOL2CLIENT");
    let lookups: Vec<&Value> = patch.iter().filter(|p| p["value"]["kind"] == "lookup").collect();
    assert_eq!(lookups.len(), 1);
    assert_eq!(lookups[0]["value"]["tables"], serde_json::json!(["LOCATION"]));
    assert!(!patch.iter().any(|p| p["value"]["kind"] == "lookup" && p["value"]["tables"][0] == "CLIENT"));

    // --json prints the same patch and nothing on stderr.
    let o = run(&["--json", "model", "suggest", bare.to_str().unwrap()]);
    assert_eq!(serde_json::from_str::<Vec<Value>>(&stdout(&o)).unwrap(), patch);
    assert!(stderr(&o).is_empty());
}

#[test]
fn schema_subcommand_prints_the_committed_schema() {
    let o = run(&["model", "schema"]);
    assert_eq!(o.status.code(), Some(0));
    let committed = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/docs/dbmodel.schema.json")).unwrap();
    assert_eq!(stdout(&o), committed);
}

#[test]
fn check_accepts_the_split_form() {
    let main = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/split/financial.json");
    let o = run(&["model", "check", main]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stdout(&o).contains("dbModel `financial_mini` is valid"));
}

#[test]
fn check_prints_warnings_but_succeeds() {
    let dir = tempfile::tempdir().unwrap();
    let f = dir.path().join("w.json");
    let mut m: Value = serde_json::from_str(&std::fs::read_to_string(DDO).unwrap()).unwrap();
    m["tables"].as_array_mut().unwrap().push(serde_json::json!({"name": "AUDIT", "columns": [{"name": "at"}]}));
    std::fs::write(&f, m.to_string()).unwrap();
    let o = run(&["model", "check", f.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let err = stderr(&o);
    assert!(
        err.contains("warning: ") && err.contains("w.json: $.tables[20]: table `AUDIT` has no relationship"),
        "{err}"
    );
    assert!(err.contains("$.tables[20].primary_key: table `AUDIT` has no primary key"), "{err}");
    let o = run(&["--json", "model", "check", f.to_str().unwrap()]);
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v["warnings"].as_array().unwrap().len(), 2);
}

#[test]
fn check_several_files_reports_each_and_fails_if_one_fails() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("bad.json");
    std::fs::write(
        &bad,
        r#"{"name": "b", "tables": [{"name": "T", "primary_key": ["x"], "columns": [{"name": "id"}]}]}"#,
    )
    .unwrap();
    let split = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/split/financial.json");
    let o = run(&["model", "check", DDO, bad.to_str().unwrap(), split]);
    assert_eq!(o.status.code(), Some(2));
    let out = stdout(&o);
    assert!(out.contains("dbModel `ddo` is valid") && out.contains("dbModel `financial_mini` is valid"), "{out}");
    assert!(stderr(&o).contains("bad.json: $.tables[0].primary_key[0]: primary key column `x`"), "{}", stderr(&o));

    let o = run(&["--json", "model", "check", DDO, split]);
    assert_eq!(o.status.code(), Some(0));
    let v: Value = serde_json::from_str(&stdout(&o)).unwrap();
    assert_eq!(v.as_array().unwrap().len(), 2);
}

#[test]
fn suggest_apply_prints_a_valid_model_with_the_proposals() {
    let dir = tempfile::tempdir().unwrap();
    let bare = dir.path().join("bare.json");
    let mut m: Value = serde_json::from_str(&std::fs::read_to_string(DDO).unwrap()).unwrap();
    m["patterns"] = Value::Array(vec![]);
    std::fs::write(&bare, m.to_string()).unwrap();
    let o = run(&["model", "suggest", "--apply", bare.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let applied = dir.path().join("applied.json");
    std::fs::write(&applied, stdout(&o)).unwrap();
    let g = lucy::graph::load(&applied).unwrap();
    assert_eq!(g.model().patterns.len(), 5);
    assert!(g.is_lookup(g.table_id("LOCATION").unwrap()));
    assert!(g.junction_of(g.table_id("RSPOOL2CLIENT").unwrap()).is_some());
}

/// Non-regular files are refused at once with what they are (issue #13: a
/// FIFO used to block the import forever, and a directory or /dev/null was
/// "no such SQLite file").
#[test]
fn non_regular_inputs_are_refused_without_blocking() {
    let dir = tempfile::tempdir().unwrap();
    let fifo = dir.path().join("schema.ddl");
    let c = std::ffi::CString::new(fifo.to_string_lossy().as_bytes()).unwrap();
    // SAFETY: a valid NUL-terminated path; mkfifo has no other effect.
    assert_eq!(unsafe { libc::mkfifo(c.as_ptr(), 0o600) }, 0);
    let dir_s = dir.path().to_string_lossy().into_owned();
    let fifo_s = fifo.to_string_lossy().into_owned();
    for (args, what) in [
        (vec!["model", "import", "--ddl", fifo_s.as_str()], "is a FIFO (named pipe)"),
        (vec!["model", "import", "--ddl", dir_s.as_str()], "is a directory"),
        (vec!["model", "import", "--sqlite", "/dev/null"], "is a character device"),
        (vec!["model", "import", "--sqlite", fifo_s.as_str()], "is a FIFO (named pipe)"),
        (vec!["model", "check", fifo_s.as_str()], "is a FIFO (named pipe)"),
    ] {
        let mut child = support::lucy()
            .args(&args)
            .stdout(std::process::Stdio::piped())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .unwrap();
        let start = std::time::Instant::now();
        while child.try_wait().unwrap().is_none() {
            if start.elapsed() > std::time::Duration::from_secs(20) {
                let _ = child.kill();
                panic!("{args:?} still runs after 20 s");
            }
            std::thread::sleep(std::time::Duration::from_millis(20));
        }
        let out = child.wait_with_output().unwrap();
        let err = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert!(err.contains(what), "{args:?}: {err}");
    }
}

/// DDO with its relationships (and the patterns naming them) removed, and
/// optionally its primary keys too (what a catalog import gives).
fn ddo_bare(dir: &std::path::Path, keys: bool) -> std::path::PathBuf {
    let mut m: Value = serde_json::from_str(&std::fs::read_to_string(DDO).unwrap()).unwrap();
    m["relationships"] = Value::Array(vec![]);
    m["patterns"] = Value::Array(vec![]);
    if !keys {
        for t in m["tables"].as_array_mut().unwrap() {
            t.as_object_mut().unwrap().remove("primary_key");
        }
    }
    let path = dir.join(if keys { "ddo_no_rels.json" } else { "ddo_no_keys.json" });
    std::fs::write(&path, m.to_string()).unwrap();
    path
}

/// The curated relationships of DDO a patch of proposals finds, as
/// unordered pairs of (table, column) sides.
fn found_in_ddo(patch: &[Value]) -> usize {
    let side = |t: &Value, c: &Value| format!("{}.{}", t.as_str().unwrap(), c.as_str().unwrap()).to_lowercase();
    let pair = |a: String, b: String| if a < b { (a, b) } else { (b, a) };
    let curated: Value = serde_json::from_str(&std::fs::read_to_string(DDO).unwrap()).unwrap();
    let truth: std::collections::HashSet<(String, String)> = curated["relationships"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| pair(side(&r["from"], &r["on"][0][0]), side(&r["to"], &r["on"][0][1])))
        .collect();
    patch
        .iter()
        .filter(|p| {
            let r = &p["value"];
            truth.contains(&pair(side(&r["from"], &r["on"][0][0]), side(&r["to"], &r["on"][0][1])))
        })
        .count()
}

#[test]
fn suggest_relationships_on_ddo_with_values() {
    let dir = tempfile::tempdir().unwrap();
    let db = concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels/ddo.sqlite");
    for (keys, expect_proposals, expect_found) in [(true, 20, 20), (false, 20, 20)] {
        let bare = ddo_bare(dir.path(), keys);
        let o = run(&["--json", "model", "suggest", "--relationships", "--execute", db, bare.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        let patch: Vec<Value> = serde_json::from_str(&stdout(&o)).unwrap();
        for p in &patch {
            assert_eq!((p["op"].as_str(), p["path"].as_str()), (Some("add"), Some("/relationships/-")));
            assert!(p["reason"].as_str().unwrap().contains("; values: "), "{p}");
        }
        // Recall with values, as measured in benchmarks/results/suggest.md.
        assert_eq!((patch.len(), found_in_ddo(&patch)), (expect_proposals, expect_found), "keys {keys}: {patch:#?}");
    }
    let dc = {
        let bare = ddo_bare(dir.path(), true);
        let o = run(&["model", "suggest", "--relationships", "--execute", db, bare.to_str().unwrap()]);
        assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
        stderr(&o)
    };
    assert!(
        dc.contains("COMPUTE(dc_id)->DATACENTER(id) M:1: names: COMPUTE.dc_id ~ DATACENTER.id (dc abbreviates DATACENTER); values: 16 of 16 non-null dc_id values found in DATACENTER.id"),
        "{dc}"
    );

    // --apply: the model with the relationships, valid, patterns proposable again.
    let bare = ddo_bare(dir.path(), true);
    let o = run(&["model", "suggest", "--relationships", "--apply", bare.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    let applied = dir.path().join("applied.json");
    std::fs::write(&applied, stdout(&o)).unwrap();
    let g = lucy::graph::load(&applied).unwrap();
    assert_eq!(g.model().relationships.len(), 20);
    let o = run(&["--json", "model", "suggest", applied.to_str().unwrap()]);
    let patterns: Vec<Value> = serde_json::from_str(&stdout(&o)).unwrap();
    assert!(patterns.iter().any(|p| p["value"]["junction"] == "RSPOOL2CLIENT"), "{patterns:?}");
    // Nothing new once applied.
    let o = run(&["--json", "model", "suggest", "--relationships", applied.to_str().unwrap()]);
    assert_eq!(serde_json::from_str::<Vec<Value>>(&stdout(&o)).unwrap(), Vec::<Value>::new());
}

#[test]
fn suggest_relationships_errors_are_clear() {
    let dir = tempfile::tempdir().unwrap();
    let bare = ddo_bare(dir.path(), true);
    // --execute belongs to --relationships.
    let o = run(&["model", "suggest", "--execute", "x.sqlite", bare.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(2), "{}", stderr(&o));
    assert!(stderr(&o).contains("--relationships"), "{}", stderr(&o));
    // A missing database is named, no panic.
    let missing = dir.path().join("missing.sqlite");
    let o =
        run(&["model", "suggest", "--relationships", "--execute", missing.to_str().unwrap(), bare.to_str().unwrap()]);
    assert_ne!(o.status.code(), Some(0));
    assert_ne!(o.status.code(), Some(101), "{}", stderr(&o));
    assert!(stderr(&o).contains("missing.sqlite: no such SQLite database file"), "{}", stderr(&o));
    // A database without the model's tables: proposals on names alone, each named in a warning.
    let empty = dir.path().join("empty.sqlite");
    write_empty_db(&empty);
    let o = run(&["model", "suggest", "--relationships", "--execute", empty.to_str().unwrap(), bare.to_str().unwrap()]);
    assert_eq!(o.status.code(), Some(0), "{}", stderr(&o));
    assert!(stderr(&o).contains("warning: not checked on the data: CLIENT.loc_id: "), "{}", stderr(&o));
}

/// An empty SQLite database file (the file format's header alone is not
/// needed: SQLite reads a zero-length file as an empty database).
fn write_empty_db(path: &std::path::Path) {
    std::fs::write(path, b"").unwrap();
}
