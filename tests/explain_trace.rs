//! `lucy explain` on traces written by `lucy ask --trace`.

mod support;

use support::lucy;

const MODEL: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels/ddo.json");

#[test]
fn explains_an_offline_view_trace() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.json");
    let o = lucy()
        .args([
            "ask",
            "--model",
            MODEL,
            "Which pools are overloaded?",
            "--tables",
            "RESOURCEPOOL,RCPU",
            "--stop-after",
            "view",
            "--trace",
            trace.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let ex = lucy().args(["explain", trace.to_str().unwrap()]).output().unwrap();
    let report = String::from_utf8_lossy(&ex.stdout);
    assert!(ex.status.success());
    assert!(report.contains("RESULT: stopped after view, as asked"), "{report}");
    assert!(report.contains("skipped: relevant tables and attributes were given"), "{report}");
    assert!(report.contains("== Phase 2: GenerateView"), "{report}");
    assert!(report.contains("input: tables RESOURCEPOOL, RCPU"), "{report}");
    assert!(
        report.contains("Left join RCPU") || report.contains("Left join RUNTIME"),
        "pattern branches are LEFT JOINs: {report}"
    );
    let js = lucy().args(["--json", "explain", trace.to_str().unwrap()]).output().unwrap();
    let v: serde_json::Value = serde_json::from_slice(&js.stdout).unwrap();
    assert_eq!(v["stopped_after"], "view");
    assert_eq!(v["view_status"], "optimal");
    assert_eq!(v["tables"], serde_json::json!(["RESOURCEPOOL", "RCPU"]));
}

/// Table instances in the trace and in `lucy explain`: the request and the
/// walk name them `TABLE@role`, the joins say which table each instance is.
#[test]
fn explains_role_instances() {
    let dir = tempfile::tempdir().unwrap();
    let trace = dir.path().join("t.json");
    let tables = "CLIENT,DATACENTER,LOCATION@CLIENT,LOCATION@DATACENTER";
    let o = lucy()
        .args([
            "ask",
            "--model",
            MODEL,
            "Clients in their datacenter's city",
            "--tables",
            tables,
            "--stop-after",
            "view",
            "--trace",
            trace.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert!(o.status.success(), "{}", String::from_utf8_lossy(&o.stderr));
    let ex = lucy().args(["explain", trace.to_str().unwrap()]).output().unwrap();
    let report = String::from_utf8_lossy(&ex.stdout);
    assert!(
        report.contains("relevant tables: CLIENT, DATACENTER, LOCATION@CLIENT.loc_id, LOCATION@DATACENTER.loc_id"),
        "{report}"
    );
    assert!(
        report.contains("walk: LOCATION@CLIENT.loc_id -> CLIENT")
            || report.contains("walk: LOCATION@DATACENTER.loc_id -> DATACENTER"),
        "{report}"
    );
    assert!(report.contains("(an instance of LOCATION)"), "{report}");
    let t: serde_json::Value = serde_json::from_slice(&std::fs::read(&trace).unwrap()).unwrap();
    let req = &t["generate_view"]["request"]["tables"];
    assert!(req.as_array().unwrap().iter().any(|x| x == "LOCATION@CLIENT.loc_id"), "{req}");
}

#[test]
fn bad_trace_files_are_clear_errors() {
    let dir = tempfile::tempdir().unwrap();
    let p = dir.path().join("x.json");
    std::fs::write(&p, "{\"not\": \"a trace\"}").unwrap();
    let o = lucy().args(["explain", p.to_str().unwrap()]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(err.contains("not a lucy trace") && err.contains("lucy ask --trace"), "{err}");
    let o = lucy().args(["explain", dir.path().join("missing.json").to_str().unwrap()]).output().unwrap();
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("missing.json"));
}

#[test]
fn explains_why_generate_view_failed() {
    // Forbid the m:m junction: CLIENT and DATACENTER can no longer be joined
    // (LOCATION is a lookup and may not connect them).
    let mut m: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(MODEL).unwrap()).unwrap();
    m["constraints"] = serde_json::json!({"forbid_tables": ["RSPOOL2CLIENT"]});
    let dir = tempfile::tempdir().unwrap();
    let model = dir.path().join("ddo_no_junction.json");
    std::fs::write(&model, serde_json::to_string_pretty(&m).unwrap()).unwrap();
    let trace = dir.path().join("t.json");
    let o = lucy()
        .args([
            "ask",
            "--model",
            model.to_str().unwrap(),
            "Clients per datacenter?",
            "--tables",
            "CLIENT,DATACENTER",
            "--stop-after",
            "view",
            "--trace",
            trace.to_str().unwrap(),
        ])
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(3), "{}", String::from_utf8_lossy(&o.stderr));
    assert!(String::from_utf8_lossy(&o.stderr).contains("generate_view failed (infeasible)"));
    let ex = lucy().args(["explain", trace.to_str().unwrap()]).output().unwrap();
    let report = String::from_utf8_lossy(&ex.stdout);
    assert!(report.contains("RESULT: failed in generate_view (infeasible): GenerateView infeasible:"), "{report}");
    assert!(report.contains("status infeasible"), "{report}");
}
