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
    let (code, out, err) = lucy(&[
        "--json",
        "view",
        "--model",
        DDO,
        "--tables",
        "CLIENT,DATACENTER",
        "--attrs",
        "CLIENT.name,DATACENTER.name",
    ]);
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
    let (code, out, _) =
        lucy(&["view", "--model", DDO, "--tables", "RESOURCEPOOL,CCPU,RCPU", "--dialect", "mysql", "--name", "q2"]);
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
    let (code, out, err) = lucy(&[
        "--json",
        "ask",
        "--model",
        &m,
        "--tables",
        "sales.catalog",
        "--attrs",
        attrs,
        "--stop-after",
        "view",
        // `lucy view`'s paper view (ask's default is every column).
        "--view-columns",
        "selected",
        "x",
    ]);
    assert_eq!(code, 0, "{err}");
    let asked: serde_json::Value = serde_json::from_str(&out).unwrap();
    let cols = |v: &serde_json::Value| -> Vec<String> {
        v["columns"]
            .as_array()
            .unwrap()
            .iter()
            .map(|c| format!("{}.{}", c["table"].as_str().unwrap(), c["column"].as_str().unwrap()))
            .collect()
    };
    assert!(cols(&view).contains(&"PRODUCT.unit.price".to_string()), "{view}");
    assert_eq!(cols(&view), cols(&asked["view"]));
    for cmd in [
        &["view", "--model", &m, "--tables", "PRODUCT", "--attrs", "PRODUCT.unit.cost"][..],
        &["ask", "--model", &m, "--attrs", "PRODUCT.unit.cost", "--stop-after", "view", "x"],
    ] {
        let (code, _, err) = lucy(cmd);
        assert_eq!(code, 2, "{err}");
        assert!(
            err.contains("unknown column `unit.cost` in table PRODUCT") && err.contains("did you mean unit.price"),
            "{err}"
        );
    }
}

/// A tiny staff model: EMPLOYEE with a self-relationship to its manager
/// (role `manager`), two addresses per employee (home with a role, work
/// without), and an isolated table.
fn staff_model() -> serde_json::Value {
    serde_json::json!({
        "name": "staff",
        "tables": [
            {"name": "EMPLOYEE", "primary_key": ["id"], "columns": [
                {"name": "id", "type": "INTEGER"}, {"name": "name", "type": "TEXT", "description": "Full name."},
                {"name": "manager_id", "type": "INTEGER"}, {"name": "home_address_id", "type": "INTEGER"},
                {"name": "work_address_id", "type": "INTEGER"}]},
            {"name": "ADDRESS", "primary_key": ["id"], "columns": [
                {"name": "id", "type": "INTEGER"}, {"name": "city", "type": "TEXT", "description": "City name."}]},
            {"name": "ISLAND", "primary_key": ["id"], "columns": [{"name": "id", "type": "INTEGER"}]}
        ],
        "relationships": [
            {"from": "EMPLOYEE", "to": "EMPLOYEE", "cardinality": "M:1", "on": [["manager_id", "id"]],
             "role": "manager", "role_description": "the employee's manager"},
            {"from": "EMPLOYEE", "to": "ADDRESS", "cardinality": "M:1", "on": [["home_address_id", "id"]],
             "role": "home_address", "role_description": "where the employee lives"},
            {"from": "EMPLOYEE", "to": "ADDRESS", "cardinality": "M:1", "on": [["work_address_id", "id"]]}
        ]
    })
}

fn staff_db(dir: &std::path::Path) -> (String, String) {
    let model = dir.join("staff.json");
    std::fs::write(&model, staff_model().to_string()).unwrap();
    let db = dir.join("staff.sqlite");
    let c = rusqlite::Connection::open(&db).unwrap();
    c.execute_batch(
        "CREATE TABLE EMPLOYEE (id INTEGER PRIMARY KEY, name TEXT, manager_id INTEGER, home_address_id INTEGER, work_address_id INTEGER);
         CREATE TABLE ADDRESS (id INTEGER PRIMARY KEY, city TEXT);
         CREATE TABLE ISLAND (id INTEGER PRIMARY KEY);
         INSERT INTO ADDRESS VALUES (1, 'Lyon'), (2, 'Paris'), (3, 'Nice');
         INSERT INTO EMPLOYEE VALUES (1, 'Ada', NULL, 1, 2), (2, 'Bob', 1, 2, 2), (3, 'Cy', 1, 3, 1), (4, 'Di', 2, 2, 3);",
    )
    .unwrap();
    (model.to_str().unwrap().to_string(), db.to_str().unwrap().to_string())
}

fn query(db: &str, view_sql: &str, q: &str) -> Vec<String> {
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("copy.sqlite");
    std::fs::copy(db, &copy).unwrap();
    let c = rusqlite::Connection::open(&copy).unwrap();
    c.execute_batch(view_sql).unwrap_or_else(|e| panic!("{e}\n{view_sql}"));
    let mut st = c.prepare(q).unwrap();
    let rows = st.query_map([], |r| {
        Ok((0..r.as_ref().column_count()).map(|i| r.get::<_, String>(i).unwrap()).collect::<Vec<_>>().join("|"))
    });
    rows.unwrap().map(Result::unwrap).collect()
}

#[test]
fn self_join_view_of_a_manager_relationship_runs_on_sqlite() {
    let dir = tempfile::tempdir().unwrap();
    let (model, db) = staff_db(dir.path());
    let (code, out, err) = lucy(&[
        "--json",
        "view",
        "--model",
        &model,
        "--tables",
        "EMPLOYEE,EMPLOYEE@manager",
        "--attrs",
        "EMPLOYEE.name",
        "--name",
        "v",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["tables"], serde_json::json!(["EMPLOYEE", "EMPLOYEE_manager"]));
    assert_eq!(v["walk"], serde_json::json!(["EMPLOYEE", "EMPLOYEE@manager"]));
    assert_eq!(v["joins"][0]["on"], serde_json::json!([["EMPLOYEE.manager_id", "EMPLOYEE_manager.id"]]));
    let sql = v["view_sql"].as_str().unwrap();
    assert!(
        sql.contains("INNER JOIN EMPLOYEE AS EMPLOYEE_manager ON EMPLOYEE.manager_id = EMPLOYEE_manager.id"),
        "{sql}"
    );
    let col = v["columns"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["alias"] == "EMPLOYEE_manager_name")
        .expect("manager's name");
    assert_eq!(col["description"], "EMPLOYEE as manager: the employee's manager — Full name.");
    // Employees with their managers (Ada has none: the walk's join is INNER).
    let rows = query(&db, sql, "SELECT EMPLOYEE_name, EMPLOYEE_manager_name FROM v ORDER BY 1");
    assert_eq!(rows, ["Bob|Ada", "Cy|Ada", "Di|Bob"]);
    // The same instance written as OTHER.column, the other end of the walk first.
    let (code, out, err) = lucy(&[
        "--json",
        "view",
        "--model",
        &model,
        "--tables",
        "EMPLOYEE@EMPLOYEE.manager_id,EMPLOYEE",
        "--attrs",
        "EMPLOYEE.name",
        "--name",
        "v",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let rows =
        query(&db, v["view_sql"].as_str().unwrap(), "SELECT EMPLOYEE_name, EMPLOYEE_manager_name FROM v ORDER BY 1");
    assert_eq!(rows, ["Bob|Ada", "Cy|Ada", "Di|Bob"]);
}

#[test]
fn two_address_roles_are_named_by_role_and_join_their_own_relationships() {
    let dir = tempfile::tempdir().unwrap();
    let (model, db) = staff_db(dir.path());
    let (code, out, err) = lucy(&[
        "--json",
        "view",
        "--model",
        &model,
        "--tables",
        "EMPLOYEE,ADDRESS@home_address,ADDRESS@EMPLOYEE.work_address_id",
        "--attrs",
        "EMPLOYEE.name,ADDRESS.city",
        "--name",
        "v",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    let tables: Vec<&str> = v["tables"].as_array().unwrap().iter().map(|t| t.as_str().unwrap()).collect();
    assert_eq!(tables.len(), 3, "{tables:?}");
    assert!(tables.contains(&"ADDRESS_home") && tables.contains(&"ADDRESS_work"), "{tables:?}");
    assert!(!tables.contains(&"ADDRESS"), "the plain ADDRESS is not requested: {tables:?}");
    let sql = v["view_sql"].as_str().unwrap();
    let rows = query(&db, sql, "SELECT EMPLOYEE_name, ADDRESS_home_city, ADDRESS_work_city FROM v ORDER BY 1");
    assert_eq!(rows, ["Ada|Lyon|Paris", "Bob|Paris|Paris", "Cy|Nice|Lyon", "Di|Paris|Nice"]);
    // Who works in another city than they live in.
    let rows = query(&db, sql, "SELECT EMPLOYEE_name FROM v WHERE ADDRESS_home_city <> ADDRESS_work_city ORDER BY 1");
    assert_eq!(rows, ["Ada", "Cy", "Di"]);
    // The human output shows the role instances in the walk.
    let (code, out, _) = lucy(&["view", "--model", &model, "--tables", "EMPLOYEE,ADDRESS@home_address"]);
    assert_eq!(code, 0);
    assert!(
        out.contains("walk: EMPLOYEE -> ADDRESS@home_address")
            || out.contains("walk: ADDRESS@home_address -> EMPLOYEE"),
        "{out}"
    );
}

#[test]
fn role_errors_and_per_instance_infeasibility() {
    let dir = tempfile::tempdir().unwrap();
    let (model, _) = staff_db(dir.path());
    // ADDRESS@EMPLOYEE matches two relationships.
    let (code, _, err) = lucy(&["view", "--model", &model, "--tables", "ADDRESS@EMPLOYEE"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("ambiguous") && err.contains("EMPLOYEE(work_address_id)->ADDRESS(id)"), "{err}");
    let (code, _, err) = lucy(&["view", "--model", &model, "--tables", "ADDRESS@boss"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("ADDRESS joins through: home_address (EMPLOYEE(home_address_id)->ADDRESS(id))"), "{err}");
    // An instance whose anchor cannot reach the rest: exit 3, said per instance.
    let (code, out, _) = lucy(&["view", "--model", &model, "--tables", "ISLAND,EMPLOYEE@manager"]);
    assert_eq!(code, 3, "{out}");
    assert!(
        out.contains("EMPLOYEE@manager cannot attach: it joins only through EMPLOYEE (EMPLOYEE(manager_id)->EMPLOYEE(id)), and there is no relationship path between EMPLOYEE and ISLAND"),
        "{out}"
    );
}

/// A subtype instance (`ROOT@CHILD`, issue 17): ACME's claim amounts of two
/// kinds side by side, each joined with its kind; and C3 case b: BIRD
/// financial's card, which hangs off the client–account junction disp, is
/// joined to it (card–disp–client).
#[test]
fn subtype_instances_and_tables_hanging_off_a_junction() {
    let acme = concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels/acme.json");
    let (code, out, err) = lucy(&[
        "--json",
        "view",
        "--model",
        acme,
        "--tables",
        "Claim,Claim_Amount@Loss_Payment,Claim_Amount@Loss_Reserve",
        "--attrs",
        "Claim_Amount.Claim_Amount",
    ]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(
        v["tables"],
        serde_json::json!([
            "Claim_Amount_Loss_Payment",
            "Claim",
            "Claim_Amount_Loss_Reserve",
            "Loss_Payment",
            "Loss_Reserve"
        ])
    );
    let sql = v["view_sql"].as_str().unwrap();
    assert!(sql.contains("INNER JOIN Loss_Payment ON Claim_Amount_Loss_Payment.Claim_Amount_Identifier = Loss_Payment.Claim_Amount_Identifier"), "{sql}");
    assert!(sql.contains("INNER JOIN Claim_Amount AS Claim_Amount_Loss_Reserve ON Claim.Claim_Identifier = Claim_Amount_Loss_Reserve.Claim_Identifier"), "{sql}");
    let col = v["columns"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["alias"] == "Claim_Amount_Loss_Reserve_Claim_Amount")
        .expect("the reserve's amount");
    assert!(col["description"].as_str().unwrap().starts_with("Claim_Amount that is a Loss_Reserve: "), "{col}");
    let db = rusqlite::Connection::open_in_memory().unwrap();
    db.execute_batch(
        "CREATE TABLE Claim (Claim_Identifier INTEGER); CREATE TABLE Claim_Amount (Claim_Amount_Identifier INTEGER, Claim_Identifier INTEGER, Claim_Amount REAL);
         CREATE TABLE Loss_Payment (Claim_Amount_Identifier INTEGER); CREATE TABLE Loss_Reserve (Claim_Amount_Identifier INTEGER);
         INSERT INTO Claim VALUES (1); INSERT INTO Claim_Amount VALUES (10, 1, 5.0), (11, 1, 7.0), (12, 1, 100.0);
         INSERT INTO Loss_Payment VALUES (10); INSERT INTO Loss_Reserve VALUES (11);",
    )
    .unwrap();
    db.execute_batch(sql).unwrap();
    let total: f64 = db
        .query_row(
            "SELECT Claim_Amount_Loss_Payment_Claim_Amount + Claim_Amount_Loss_Reserve_Claim_Amount FROM lucy_view",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(total, 12.0, "one row per claim: its loss payment plus its loss reserve");

    let fin = concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels/bird_financial.json");
    let (code, out, err) = lucy(&["--json", "view", "--model", fin, "--tables", "card,client"]);
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&out).unwrap();
    assert_eq!(v["status"], "optimal", "{v}");
    assert_eq!(v["walk"], serde_json::json!(["client", "disp"]));
    let last = v["joins"].as_array().unwrap().last().unwrap().clone();
    assert_eq!(
        (last["left"].as_str(), last["right"].as_str(), last["kind"].as_str()),
        (Some("disp"), Some("card"), Some("inner")),
        "{v}"
    );
}

#[test]
fn all_once_lists_the_columns_it_leaves_out() {
    let args = ["view", "--model", DDO, "--tables", "CLIENT,RESOURCEPOOL", "--view-columns"];
    let (code, all, err) = lucy(&[&args[..], &["all"]].concat());
    assert_eq!(code, 0, "{err}");
    let (code, once, err) = lucy(&[&args[..], &["all-once"]].concat());
    assert_eq!(code, 0, "{err}");
    // The junction's keys repeat CLIENT's and RESOURCEPOOL's: left out.
    assert!(all.contains("AS RSPOOL2CLIENT_client_id") && !all.contains("left out"), "{all}");
    assert!(!once.contains("AS RSPOOL2CLIENT_client_id"), "{once}");
    assert!(once.contains("left out (an INNER join makes each equal to the view column named):"), "{once}");
    assert!(once.contains("  RSPOOL2CLIENT.client_id (RSPOOL2CLIENT) = CLIENT_id"), "{once}");
    // The joins are the same.
    let from = |s: &str| s[s.find("FROM ").unwrap()..].to_string();
    assert_eq!(from(&all), from(&once));
    let (code, json, err) = lucy(&[&["--json"][..], &args[..], &["all-once"]].concat());
    assert_eq!(code, 0, "{err}");
    let v: serde_json::Value = serde_json::from_str(&json).unwrap();
    let merged = v["merged"].as_array().unwrap();
    let found = merged
        .iter()
        .any(|m| m["table"] == "RSPOOL2CLIENT" && m["column"] == "client_id" && m["same_as"] == "CLIENT_id");
    assert!(found, "{v}");
}
