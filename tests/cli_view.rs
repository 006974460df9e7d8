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

/// A model whose table names hold `-` and `.`: `ORDER-LINE` reaches
/// `PRODUCT` directly or through `sales.catalog`; the direct relationship
/// is forbidden with the `"A-B"` form.
fn punctuated_model(dir: &std::path::Path) -> String {
    let model = serde_json::json!({
        "name": "punctuated",
        "tables": [
            {"name": "ORDER-LINE", "primary_key": ["id"], "columns": [{"name": "id"}, {"name": "product"}, {"name": "entry"}]},
            {"name": "PRODUCT", "primary_key": ["id"], "columns": [{"name": "id"}, {"name": "unit.price"}]},
            {"name": "sales.catalog", "primary_key": ["id"], "columns": [{"name": "id"}, {"name": "product"}]}
        ],
        "relationships": [
            {"from": "ORDER-LINE", "to": "PRODUCT", "cardinality": "M:1", "on": [["product", "id"]]},
            {"from": "ORDER-LINE", "to": "sales.catalog", "cardinality": "M:1", "on": [["entry", "id"]]},
            {"from": "sales.catalog", "to": "PRODUCT", "cardinality": "M:1", "on": [["product", "id"]]}
        ],
        "constraints": {"forbid_relationships": ["ORDER-LINE-PRODUCT"]}
    });
    let path = dir.join("punctuated.json");
    std::fs::write(&path, model.to_string()).unwrap();
    path.display().to_string()
}

/// `"A-B"` in `forbid_relationships` with a dash inside a table name: `lucy
/// model check` accepted it and `lucy view` used to reject it (the solver
/// split at the first `-`); both now read it the same way.
#[test]
fn forbid_a_b_with_a_dash_in_a_table_name() {
    let dir = tempfile::tempdir().unwrap();
    let m = punctuated_model(dir.path());
    let (code, _, err) = lucy(&["model", "check", &m]);
    assert_eq!(code, 0, "{err}");
    let (code, out, err) = lucy(&["--json", "view", "--model", &m, "--tables", "ORDER-LINE,PRODUCT"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let walk: Vec<&str> = v["walk"].as_array().unwrap().iter().map(|t| t.as_str().unwrap()).collect();
    assert_eq!(walk.len(), 3, "{walk:?}");
    assert_eq!(walk[1], "sales.catalog", "the forbidden direct join is avoided: {walk:?}");
}

/// `TABLE.column` with a dot in the table or the column name resolves the
/// same in `lucy view --attrs` and `lucy ask --attrs` (they used to split
/// at the first and at the last dot respectively).
#[test]
fn attrs_with_dots_resolve_the_same_in_view_and_ask() {
    let dir = tempfile::tempdir().unwrap();
    let m = punctuated_model(dir.path());
    let attrs = "sales.catalog.id,PRODUCT.unit.price";
    let (code, out, err) = lucy(&["--json", "view", "--model", &m, "--tables", "sales.catalog", "--attrs", attrs]);
    assert_eq!(code, 0, "{err}");
    let view: serde_json::Value = serde_json::from_str(&out).unwrap();
    let (code, out, err) = lucy(&["--json", "ask", "--model", &m, "--tables", "sales.catalog", "--attrs", attrs, "--stop-after", "view", "x"]);
    assert_eq!(code, 0, "{err}");
    let asked: serde_json::Value = serde_json::from_str(&out).unwrap();
    let cols = |v: &serde_json::Value| -> Vec<String> {
        v["columns"].as_array().unwrap().iter().map(|c| format!("{}.{}", c["table"].as_str().unwrap(), c["column"].as_str().unwrap())).collect()
    };
    assert!(cols(&view).contains(&"PRODUCT.unit.price".to_string()), "{view}");
    assert_eq!(cols(&view), cols(&asked["view"]));
    for cmd in [&["view", "--model", &m, "--tables", "PRODUCT", "--attrs", "PRODUCT.unit.cost"][..], &["ask", "--model", &m, "--attrs", "PRODUCT.unit.cost", "--stop-after", "view", "x"]] {
        let (code, _, err) = lucy(cmd);
        assert_eq!(code, 2, "{err}");
        assert!(err.contains("unknown column `unit.cost` in table PRODUCT") && err.contains("did you mean unit.price"), "{err}");
    }
}
