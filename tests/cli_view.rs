//! `lucy view` end to end: the real binary on dbmodels/ddo.json.

use std::process::Command;

const DDO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels/ddo.json");

fn lucy(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_lucy")).args(args).output().expect("run lucy");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[test]
fn json_output_has_the_documented_shape() {
    let (code, out, err) = lucy(&["--json", "view", "--model", DDO, "--tables", "CLIENT,DATACENTER", "--attrs", "CLIENT.name,DATACENTER.name"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(v["status"], "optimal");
    let tables: Vec<&str> = v["tables"].as_array().unwrap().iter().map(|t| t.as_str().unwrap()).collect();
    assert_eq!(tables.len(), 5);
    assert!(!tables.contains(&"LOCATION"));
    let j0 = &v["joins"][0];
    assert_eq!(j0["kind"], "inner");
    assert!(j0["left"].is_string() && j0["right"].is_string());
    assert!(j0["on"][0][0].as_str().unwrap().contains('.'));
    assert_eq!(v["objective"], 3.0);
    assert_eq!(v["path_length"], 5);
    assert!(v["solve_ms"].as_f64().unwrap() >= 0.0);
    assert!(v["view_sql"].as_str().unwrap().starts_with("CREATE VIEW lucy_view AS"));
}

#[test]
fn human_output_shows_walk_joins_and_sql() {
    let (code, out, _) = lucy(&["view", "--model", DDO, "--tables", "RESOURCEPOOL,CCPU,RCPU", "--dialect", "mysql", "--name", "q2"]);
    assert_eq!(code, 0);
    assert!(out.contains("status: optimal"));
    assert!(out.contains("walk: RESOURCEPOOL"));
    assert!(out.contains("LEFT  RESOURCEPOOL -> CONFIG"));
    assert!(out.contains("CREATE VIEW q2 AS"));
}

#[test]
fn unknown_table_is_exit_2_with_suggestion() {
    let (code, _, err) = lucy(&["view", "--model", DDO, "--tables", "CLIENTS,DATACENTER"]);
    assert_eq!(code, 2);
    assert!(err.contains("CLIENTS") && err.contains("did you mean"), "{err}");
}

#[test]
fn bad_attribute_and_time_limit_are_exit_2() {
    let (code, _, err) = lucy(&["view", "--model", DDO, "--tables", "CLIENT", "--attrs", "CLIENT"]);
    assert_eq!(code, 2, "{err}");
    let (code, _, _) = lucy(&["view", "--model", DDO, "--tables", "CLIENT", "--time-limit", "0"]);
    assert_eq!(code, 2);
}

#[test]
fn infeasible_is_exit_3_with_explanation() {
    let dir = tempfile::tempdir().unwrap();
    let mut m: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(DDO).unwrap()).unwrap();
    m["constraints"] = serde_json::json!({"forbid_tables": ["COMPUTE"]});
    let path = dir.path().join("ddo_forbid.json");
    std::fs::write(&path, serde_json::to_string(&m).unwrap()).unwrap();
    let (code, out, _) = lucy(&["--json", "view", "--model", path.to_str().unwrap(), "--tables", "CLIENT,DATACENTER"]);
    assert_eq!(code, 3);
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["status"], "infeasible");
    assert_eq!(v["view_sql"], "");
    assert!(v["explanation"].as_str().unwrap().contains("lookup LOCATION (C4)"));
}

#[test]
fn missing_model_file_is_exit_2() {
    let (code, _, err) = lucy(&["view", "--model", "/nonexistent/m.json", "--tables", "A"]);
    assert_eq!(code, 2, "{err}");
}
