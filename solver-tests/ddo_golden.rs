//! Golden tests of GenerateView on the paper's DDO examples (Q1–Q3), run on
//! dbmodels/ddo.json and the sample database dbmodels/ddo.sqlite.

use lucy::graph::SchemaGraph;
use lucy::solve::generate_view;
use lucy::types::{ColumnRef, Dialect, JoinKind, Pattern, SolveStatus, ViewRequest, ViewResult};
use lucy::DbModel;

const DDO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels/ddo.json");
const DDO_DB: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels/ddo.sqlite");

fn ddo_model() -> DbModel {
    lucy::model::load(DDO).expect("dbmodels/ddo.json loads")
}

fn ddo() -> SchemaGraph {
    SchemaGraph::new(ddo_model()).expect("graph")
}

fn req(tables: &[&str]) -> ViewRequest {
    ViewRequest::new(tables.iter().map(|s| s.to_string()).collect())
}

fn solve(g: &SchemaGraph, r: &ViewRequest) -> ViewResult {
    generate_view(g, r).expect("generate_view")
}

/// Create the view in a private copy of ddo.sqlite and run `q` on it.
fn run_on_ddo(view_sql: &str, q: &str) -> Vec<Vec<String>> {
    let dir = tempfile::tempdir().unwrap();
    let copy = dir.path().join("ddo.sqlite");
    std::fs::copy(DDO_DB, &copy).expect("copy ddo.sqlite");
    let mem = rusqlite::Connection::open(&copy).expect("open ddo.sqlite copy");
    mem.execute_batch(view_sql).unwrap_or_else(|e| panic!("view does not run on SQLite: {e}\n{view_sql}"));
    let mut st = mem.prepare(q).unwrap();
    let ncol = st.column_count();
    let rows = st
        .query_map([], |row| {
            (0..ncol)
                .map(|i| {
                    let v: rusqlite::types::Value = row.get(i)?;
                    Ok(match v {
                        rusqlite::types::Value::Null => "NULL".to_string(),
                        rusqlite::types::Value::Integer(x) => x.to_string(),
                        rusqlite::types::Value::Real(x) => format!("{x:.2}"),
                        rusqlite::types::Value::Text(s) => s,
                        rusqlite::types::Value::Blob(_) => "<blob>".into(),
                    })
                })
                .collect::<Result<Vec<_>, _>>()
        })
        .unwrap()
        .collect::<Result<Vec<_>, _>>()
        .unwrap();
    rows
}

#[test]
fn q1_with_every_column_exposes_the_connecting_tables_too() {
    let g = ddo();
    let mut r = req(&["CLIENT", "DATACENTER"]);
    r.attributes = vec![ColumnRef::new("CLIENT", "name"), ColumnRef::new("DATACENTER", "name")];
    let selected = solve(&g, &r);
    r.columns = lucy::types::ViewColumns::All;
    let all = solve(&g, &r);
    // The same walk and joins: only the select list grows.
    assert_eq!(all.walk, selected.walk);
    assert_eq!(all.joins, selected.joins);
    let aliases: Vec<&str> = all.columns.iter().map(|c| c.alias.as_str()).collect();
    // Every column of every joined table, the solver's connectors included.
    let want: usize = all.tables.iter().map(|t| g.model().table(t).unwrap().columns.len()).sum();
    assert_eq!(aliases.len(), want, "{aliases:?}");
    for a in
        ["CLIENT_gender", "RSPOOL2CLIENT_rspool_id", "RESOURCEPOOL_compute_id", "COMPUTE_dc_id", "DATACENTER_loc_id"]
    {
        assert!(aliases.contains(&a), "{a} missing from {aliases:?}");
    }
    // The grain knows every instance's key now, and the answer is the same.
    assert!(all.grain.instances.iter().all(|i| !i.key.is_empty()), "{:?}", all.grain);
    let q = "SELECT DISTINCT CLIENT_name, DATACENTER_name FROM lucy_view WHERE DATACENTER_name LIKE 'dev%'";
    assert_eq!(run_on_ddo(&all.view_sql, q), run_on_ddo(&selected.view_sql, q));
    // The request says so in its JSON only when it is not the default.
    let json = serde_json::to_value(&r).unwrap();
    assert_eq!(json["columns"], "all");
    assert!(serde_json::to_value(req(&["CLIENT"])).unwrap().get("columns").is_none());
}

#[test]
fn q1_goes_through_the_junction_never_location() {
    let g = ddo();
    let mut r = req(&["CLIENT", "DATACENTER"]);
    r.attributes = vec![ColumnRef::new("CLIENT", "name"), ColumnRef::new("DATACENTER", "name")];
    let res = solve(&g, &r);
    assert_eq!(res.status, SolveStatus::Optimal);
    let fwd = ["DATACENTER", "COMPUTE", "RESOURCEPOOL", "RSPOOL2CLIENT", "CLIENT"];
    let mut back = fwd;
    back.reverse();
    assert!(res.walk == fwd || res.walk == back, "walk {:?}", res.walk);
    assert!(!res.tables.iter().any(|t| t == "LOCATION"));
    assert_eq!(res.objective, 3.0);
    assert_eq!(res.path_length, 5);
    assert!(res.joins.iter().all(|j| j.kind == JoinKind::Inner));
    assert!(res.n_bound.starts_with("n=5"), "{}", res.n_bound);
    // Requested attributes plus keys, aliased TABLE_column.
    let aliases: Vec<&str> = res.columns.iter().map(|c| c.alias.as_str()).collect();
    for a in ["CLIENT_id", "CLIENT_name", "DATACENTER_id", "DATACENTER_name"] {
        assert!(aliases.contains(&a), "{aliases:?}");
    }
    assert_eq!(aliases.len(), 4);
    // The paper's answer: 29 distinct (client, datacenter) pairs for 'dev%'.
    let rows = run_on_ddo(
        &res.view_sql,
        "SELECT DISTINCT CLIENT_name, DATACENTER_name FROM lucy_view WHERE DATACENTER_name LIKE 'dev%'",
    );
    assert_eq!(rows.len(), 29);
    assert!(rows.contains(&vec!["Juniper Labs".to_string(), "dev-apac-2".to_string()]));
    // The wrong LOCATION answer must not appear.
    assert!(!rows.contains(&vec!["Helix Biotech".to_string(), "dev-eu-central".to_string()]));
}

#[test]
fn q2_left_joins_both_snowflake_branches() {
    let g = ddo();
    let mut r = req(&["RESOURCEPOOL", "CCPU", "RCPU"]);
    r.attributes = vec![
        ColumnRef::new("RESOURCEPOOL", "name"),
        ColumnRef::new("CCPU", "overheadlimit"),
        ColumnRef::new("RCPU", "overallusage"),
    ];
    let res = solve(&g, &r);
    assert_eq!(res.status, SolveStatus::Optimal);
    assert_eq!(res.walk, vec!["RESOURCEPOOL"]);
    assert_eq!(res.objective, 0.0);
    let left: Vec<(&str, &str)> =
        res.joins.iter().filter(|j| j.kind == JoinKind::Left).map(|j| (j.left.as_str(), j.right.as_str())).collect();
    for pair in [("RESOURCEPOOL", "CONFIG"), ("CONFIG", "CCPU"), ("RESOURCEPOOL", "RUNTIME"), ("RUNTIME", "RCPU")] {
        assert!(left.contains(&pair), "{left:?}");
    }
    assert_eq!(res.joins.len(), 4);
    assert!(!res.tables.iter().any(|t| t == "CMEMORY" || t == "RMEMORY"));
    let rows = run_on_ddo(
        &res.view_sql,
        "SELECT DISTINCT RESOURCEPOOL_name FROM lucy_view WHERE CCPU_overheadlimit > RCPU_overallusage + 100 ORDER BY 1",
    );
    assert_eq!(rows.len(), 20, "{rows:?}");
    assert_eq!(rows[0][0], "rp-api-15");
    // LEFT JOIN keeps pools without a configuration: every pool is in the view.
    let all = run_on_ddo(&res.view_sql, "SELECT COUNT(DISTINCT RESOURCEPOOL_id) FROM lucy_view");
    assert_eq!(all[0][0], "40");
}

#[test]
fn q3_goes_through_payamount() {
    let g = ddo();
    let mut r = req(&["PAYMENT", "TAX", "SUPERCHARGE"]);
    r.attributes = vec![ColumnRef::new("PAYAMOUNT", "amount")];
    let res = solve(&g, &r);
    assert_eq!(res.status, SolveStatus::Optimal);
    assert_eq!(res.walk, vec!["PAYMENT"]);
    let pairs: Vec<(&str, &str)> = res.joins.iter().map(|j| (j.left.as_str(), j.right.as_str())).collect();
    assert_eq!(pairs, vec![("PAYMENT", "PAYAMOUNT"), ("PAYAMOUNT", "TAX"), ("PAYAMOUNT", "SUPERCHARGE")]);
    assert!(res.joins.iter().all(|j| j.kind == JoinKind::Left));
    let rows = run_on_ddo(
        &res.view_sql,
        "SELECT ROUND(SUM(CASE WHEN TAX_id IS NOT NULL OR SUPERCHARGE_id IS NOT NULL THEN PAYAMOUNT_amount END), 2) FROM lucy_view",
    );
    assert_eq!(rows[0][0], "12563.58");
}

#[test]
fn without_attributes_all_columns_of_relevant_tables() {
    let g = ddo();
    let res = solve(&g, &req(&["CLIENT", "DATACENTER"]));
    let n_cols =
        g.table(g.table_id("CLIENT").unwrap()).columns.len() + g.table(g.table_id("DATACENTER").unwrap()).columns.len();
    assert_eq!(res.columns.len(), n_cols);
    assert!(res.columns.iter().all(|c| c.table == "CLIENT" || c.table == "DATACENTER"));
    let rows = run_on_ddo(&res.view_sql, "SELECT COUNT(*) FROM lucy_view");
    assert_ne!(rows[0][0], "0");
}

#[test]
fn view_sql_parses_in_every_dialect() {
    use sqlparser::dialect::{MySqlDialect, PostgreSqlDialect, SQLiteDialect, SparkSqlDialect};
    use sqlparser::parser::Parser;
    let g = ddo();
    for tables in [
        &["CLIENT", "DATACENTER"][..],
        &["RESOURCEPOOL", "CCPU", "RCPU"],
        &["PAYMENT", "TAX", "SUPERCHARGE"],
        &["LOCATION", "COMPUTE"],
    ] {
        for d in [Dialect::Sqlite, Dialect::Mysql, Dialect::Postgres, Dialect::Spark] {
            let mut r = req(tables);
            r.dialect = d;
            r.view_name = "order".into(); // reserved: must be quoted
            let res = solve(&g, &r);
            let parsed = match d {
                Dialect::Sqlite => Parser::parse_sql(&SQLiteDialect {}, &res.view_sql),
                Dialect::Mysql => Parser::parse_sql(&MySqlDialect {}, &res.view_sql),
                Dialect::Postgres => Parser::parse_sql(&PostgreSqlDialect {}, &res.view_sql),
                Dialect::Spark => Parser::parse_sql(&SparkSqlDialect {}, &res.view_sql),
            };
            let stmts = parsed.unwrap_or_else(|e| panic!("{d:?}: {e}\n{}", res.view_sql));
            assert_eq!(stmts.len(), 1);
            assert!(matches!(stmts[0], sqlparser::ast::Statement::CreateView(_)));
            match d {
                Dialect::Mysql | Dialect::Spark => assert!(res.view_sql.contains("`order`")),
                _ => assert!(res.view_sql.contains("\"order\"")),
            }
            if d == Dialect::Postgres {
                assert!(res.view_sql.contains("\"CLIENT\"") || !tables.contains(&"CLIENT"));
            }
        }
    }
}

fn with_constraints(f: impl FnOnce(&mut DbModel)) -> SchemaGraph {
    let mut m = ddo_model();
    f(&mut m);
    SchemaGraph::new(m).expect("graph")
}

/// Add a nullable INTEGER column `column` to `from` and an M:1 relationship
/// `name` from it to `to`.id (a second foreign key, a shortcut, ...).
fn add_fk(m: &mut DbModel, from: &str, column: &str, to: &str, name: &str) {
    m.tables.iter_mut().find(|t| t.name == from).expect("table in DDO").columns.push(lucy::types::Column {
        name: column.into(),
        sql_type: "INTEGER".into(),
        nullable: true,
        description: None,
        synonyms: Vec::new(),
        origin: None,
    });
    m.relationships.push(lucy::types::Relationship {
        name: Some(name.into()),
        from: from.into(),
        to: to.into(),
        cardinality: lucy::types::Cardinality::ManyToOne,
        on: vec![[column.into(), "id".into()]],
        description: None,
        role: None,
        role_description: None,
        role_synonyms: Vec::new(),
        via: None,
        origin: None,
    });
}

#[test]
fn forbidding_compute_makes_q1_infeasible_and_explained() {
    let g = with_constraints(|m| m.constraints.forbid_tables.push("COMPUTE".into()));
    let res = solve(&g, &req(&["CLIENT", "DATACENTER"]));
    assert_eq!(res.status, SolveStatus::Infeasible);
    assert!(res.view_sql.is_empty());
    let why = res.explanation.expect("explanation");
    // With COMPUTE gone, only the lookup remains; relaxing either C4 or the
    // forbid restores a walk, so both ways out are named.
    assert!(why.contains("lookup LOCATION (C4)"), "{why}");
    assert!(why.contains("CLIENT") && why.contains("DATACENTER"), "{why}");
    assert!(why.contains("COMPUTE, forbidden by constraints.forbid_tables"), "{why}");
}

#[test]
fn lookup_only_connection_is_explained_with_c4() {
    // Remove the junction path entirely: only LOCATION connects them.
    let g = with_constraints(|m| m.constraints.forbid_relationships.push("RESOURCEPOOL-COMPUTE".into()));
    let res = solve(&g, &req(&["CLIENT", "DATACENTER"]));
    assert_eq!(res.status, SolveStatus::Infeasible);
    let why = res.explanation.unwrap();
    assert!(why.contains("can only be connected through lookup LOCATION (C4)"), "{why}");
}

#[test]
fn disconnected_tables_are_explained() {
    let g = with_constraints(|m| {
        m.constraints.forbid_tables.push("COMPUTE".into());
        m.constraints.forbid_tables.push("LOCATION".into());
    });
    let res = solve(&g, &req(&["CLIENT", "DATACENTER"]));
    assert_eq!(res.status, SolveStatus::Infeasible);
    let why = res.explanation.unwrap();
    assert!(why.contains("no relationship path between"), "{why}");
    assert!(why.contains("forbidden"), "{why}");
}

#[test]
fn requested_forbidden_table_is_explained() {
    let g = with_constraints(|m| m.constraints.forbid_tables.push("CLIENT".into()));
    let res = solve(&g, &req(&["CLIENT", "DATACENTER"]));
    assert_eq!(res.status, SolveStatus::Infeasible);
    assert!(res.explanation.unwrap().contains("CLIENT is requested but forbidden"));
}

#[test]
fn require_tables_is_honoured() {
    let g = with_constraints(|m| m.constraints.require_tables.push("PAYMENT".into()));
    let res = solve(&g, &req(&["DATACENTER"]));
    assert_eq!(res.status, SolveStatus::Optimal);
    assert!(res.walk.contains(&"PAYMENT".to_string()) && res.walk.contains(&"DATACENTER".to_string()));
    assert!(!res.walk.contains(&"LOCATION".to_string()), "{:?}", res.walk);
}

#[test]
fn junction_between_both_sides_is_required_even_if_a_shortcut_exists() {
    // A direct CLIENT–RESOURCEPOOL relationship would skip the junction: C3
    // still demands RSPOOL2CLIENT between them.
    let g = with_constraints(|m| {
        add_fk(m, "RESOURCEPOOL", "owner_client_id", "CLIENT", "pool_owner");
    });
    let res = solve(&g, &req(&["CLIENT", "RESOURCEPOOL"]));
    assert_eq!(res.status, SolveStatus::Optimal);
    assert!(res.walk.contains(&"RSPOOL2CLIENT".to_string()), "{:?}", res.walk);
}

#[test]
fn parallel_relationships_are_reported() {
    // A second FK from CLIENT to LOCATION (billing location).
    let g = with_constraints(|m| {
        add_fk(m, "CLIENT", "bill_loc_id", "LOCATION", "client_billing_location");
    });
    let res = solve(&g, &req(&["CLIENT", "LOCATION"]));
    assert_eq!(res.status, SolveStatus::Optimal);
    assert_eq!(res.ambiguities.len(), 1, "{:?}", res.ambiguities);
    let a = &res.ambiguities[0];
    assert_eq!(a.candidates.len(), 2);
    assert_eq!(a.chosen, "CLIENT(loc_id)->LOCATION(id)");
    assert!(a.reason.contains("first in dbModel order"));
    assert!(res.joins[0].on[0][0].ends_with("loc_id") || res.joins[0].on[0][1].ends_with("loc_id"));
    // Forbidding the first one selects the other, without ambiguity.
    let g2 = with_constraints(|m| {
        add_fk(m, "CLIENT", "bill_loc_id", "LOCATION", "client_billing_location");
        m.constraints.forbid_relationships.push("CLIENT(loc_id)->LOCATION(id)".into());
    });
    let res2 = solve(&g2, &req(&["CLIENT", "LOCATION"]));
    assert!(res2.ambiguities.is_empty());
    assert_eq!(res2.joins[0].relationship, "client_billing_location");
}

#[test]
fn lookup_reached_from_two_tables_gets_two_instances() {
    // A walk that uses LOCATION from CLIENT and again from DATACENTER: two
    // lookups (client's city, datacenter's city), never one shared row.
    let g = ddo();
    let id = |n: &str| g.table_id(n).unwrap();
    let walk: Vec<usize> = [
        "CLIENT",
        "LOCATION",
        "CLIENT",
        "RSPOOL2CLIENT",
        "RESOURCEPOOL",
        "COMPUTE",
        "DATACENTER",
        "LOCATION",
        "DATACENTER",
    ]
    .iter()
    .map(|n| id(n))
    .collect();
    let relevant: std::collections::BTreeSet<usize> = [id("CLIENT"), id("DATACENTER"), id("LOCATION")].into();
    let attrs = vec![g.names().column(id("LOCATION"), "city").unwrap()];
    let spec = lucy::view::ViewSpec {
        junction_children: &[],
        relevant: &relevant,
        roles: &[],
        inner: &[],
        attributes: &attrs,
        forbidden_rels: &Default::default(),
        dialect: Dialect::Sqlite,
        name: "v",
        keep: None,
        inner_branches: &[],
        filters: &[],
        all_columns: false,
        merge_equal: false,
    };
    let v = lucy::view::build(&g, &walk, &spec).unwrap();
    assert_eq!(
        v.tables,
        vec!["CLIENT", "LOCATION", "RSPOOL2CLIENT", "RESOURCEPOOL", "COMPUTE", "DATACENTER", "LOCATION_2"]
    );
    assert_eq!(v.joins.len(), 6, "retracing CLIENT-LOCATION is one join");
    assert!(v.sql.contains("LOCATION AS LOCATION_2"), "{}", v.sql);
    let aliases: Vec<&str> = v.columns.iter().map(|c| c.alias.as_str()).collect();
    assert!(aliases.contains(&"LOCATION_city") && aliases.contains(&"LOCATION_2_city"), "{aliases:?}");
    let rows = run_on_ddo(&v.sql, "SELECT COUNT(*) FROM v WHERE LOCATION_city <> LOCATION_2_city");
    assert_ne!(rows[0][0], "0");
}

#[test]
fn relevant_lookup_sits_at_an_end_of_the_walk() {
    let g = ddo();
    let res = solve(&g, &req(&["LOCATION", "CLIENT", "DATACENTER"]));
    assert_eq!(res.status, SolveStatus::Optimal);
    // LOCATION at one end (a lookup may end the walk), never in the middle.
    let w = &res.walk;
    let pos: Vec<usize> = (0..w.len()).filter(|&i| w[i] == "LOCATION").collect();
    for p in pos {
        assert!(p == 0 || p + 1 == w.len() || w[p - 1] == w[p + 1], "{w:?}");
    }
    let rows = run_on_ddo(&res.view_sql, "SELECT COUNT(*) FROM lucy_view");
    assert_ne!(rows[0][0], "0");
}

#[test]
fn unknown_names_are_input_errors() {
    let g = ddo();
    let e = generate_view(&g, &req(&["CLIENTS", "DATACENTER"])).unwrap_err();
    assert!(matches!(e, lucy::Error::Input(_)));
    assert!(e.to_string().contains("CLIENTS") && e.to_string().contains("CLIENT"), "{e}");
    let mut r = req(&["CLIENT"]);
    r.attributes = vec![ColumnRef::new("CLIENT", "nme")];
    let e = generate_view(&g, &r).unwrap_err();
    assert!(e.to_string().contains("nme"), "{e}");
    assert!(generate_view(&g, &req(&[])).is_err());
}

#[test]
fn ddo_model_has_the_patterns_the_goldens_rely_on() {
    let m = ddo_model();
    assert!(m
        .patterns
        .iter()
        .any(|p| matches!(p, Pattern::Lookup { tables, .. } if tables.contains(&"LOCATION".to_string()))));
    assert!(m
        .patterns
        .iter()
        .any(|p| matches!(p, Pattern::ManyToMany { junction, .. } if junction == "RSPOOL2CLIENT")));
}

/// ddo-20 ("clients using a resource pool hosted in a datacenter of their
/// own city"): two LOCATION instances, the client's and the datacenter's,
/// make "client city = datacenter city" a WHERE clause over the view. The
/// view is pinned byte for byte and answers the question like the gold SQL.
#[test]
fn ddo20_two_location_roles() {
    let g = ddo();
    let mut r = req(&["CLIENT", "DATACENTER", "LOCATION@CLIENT", "LOCATION@DATACENTER.loc_id"]);
    r.attributes = vec![
        ColumnRef::new("CLIENT", "name"),
        ColumnRef::new("DATACENTER", "name"),
        ColumnRef::new("LOCATION", "city"),
    ];
    r.view_name = "v".into();
    let v = solve(&g, &r);
    assert_eq!(v.status, SolveStatus::Optimal);
    assert_eq!((v.objective, v.path_length), (3.0, 7));
    assert_eq!(
        v.walk,
        [
            "LOCATION@CLIENT.loc_id",
            "CLIENT",
            "RSPOOL2CLIENT",
            "RESOURCEPOOL",
            "COMPUTE",
            "DATACENTER",
            "LOCATION@DATACENTER.loc_id"
        ]
    );
    assert_eq!(v.relevant, ["CLIENT", "DATACENTER", "LOCATION@CLIENT.loc_id", "LOCATION@DATACENTER.loc_id"]);
    let golden = "CREATE VIEW v AS
SELECT
  LOCATION_CLIENT.id AS LOCATION_CLIENT_id,
  LOCATION_CLIENT.city AS LOCATION_CLIENT_city,
  CLIENT.id AS CLIENT_id,
  CLIENT.name AS CLIENT_name,
  DATACENTER.id AS DATACENTER_id,
  DATACENTER.name AS DATACENTER_name,
  LOCATION_DATACENTER.id AS LOCATION_DATACENTER_id,
  LOCATION_DATACENTER.city AS LOCATION_DATACENTER_city
FROM LOCATION AS LOCATION_CLIENT
  INNER JOIN CLIENT ON LOCATION_CLIENT.id = CLIENT.loc_id
  INNER JOIN RSPOOL2CLIENT ON CLIENT.id = RSPOOL2CLIENT.client_id
  INNER JOIN RESOURCEPOOL ON RSPOOL2CLIENT.rspool_id = RESOURCEPOOL.id
  INNER JOIN COMPUTE ON RESOURCEPOOL.compute_id = COMPUTE.id
  INNER JOIN DATACENTER ON COMPUTE.dc_id = DATACENTER.id
  INNER JOIN LOCATION AS LOCATION_DATACENTER ON DATACENTER.loc_id = LOCATION_DATACENTER.id;";
    assert_eq!(v.view_sql, golden);
    let city = v.columns.iter().find(|c| c.alias == "LOCATION_DATACENTER_city").unwrap();
    assert_eq!(
        city.description.as_deref(),
        Some("LOCATION joined through DATACENTER(loc_id)->LOCATION(id): Where a datacenter is. — City name.")
    );
    // The role instances are the view's instances, with their relationships.
    let roles: Vec<(String, Option<String>)> =
        v.instances.iter().map(|i| (i.alias.clone(), i.role.map(|r| g.relationship(r).id()))).collect();
    assert_eq!(roles[0], ("LOCATION_CLIENT".to_string(), Some("CLIENT(loc_id)->LOCATION(id)".to_string())));
    assert_eq!(roles[6], ("LOCATION_DATACENTER".to_string(), Some("DATACENTER(loc_id)->LOCATION(id)".to_string())));
    // Same answer as the gold SQL of ddo-20 on the sample database.
    let over_view = run_on_ddo(
        &v.view_sql,
        "SELECT DISTINCT CLIENT_name, DATACENTER_name FROM v WHERE LOCATION_CLIENT_city = LOCATION_DATACENTER_city ORDER BY 1, 2",
    );
    let gold = run_on_ddo(
        "SELECT 1;",
        "SELECT DISTINCT CLIENT.name, DATACENTER.name FROM DATACENTER JOIN COMPUTE ON COMPUTE.dc_id = DATACENTER.id JOIN RESOURCEPOOL ON RESOURCEPOOL.compute_id = COMPUTE.id JOIN RSPOOL2CLIENT ON RSPOOL2CLIENT.rspool_id = RESOURCEPOOL.id JOIN CLIENT ON CLIENT.id = RSPOOL2CLIENT.client_id WHERE CLIENT.loc_id = DATACENTER.loc_id ORDER BY 1, 2",
    );
    assert!(!gold.is_empty(), "ddo-20 has answers on the sample database");
    assert_eq!(over_view, gold);
    // With the plain LOCATION instead, C4 keeps one LOCATION and the view cannot compare cities.
    let plain = solve(&g, &req(&["CLIENT", "DATACENTER", "LOCATION"]));
    assert_eq!(plain.tables.iter().filter(|t| t.starts_with("LOCATION")).count(), 1, "{:?}", plain.tables);
}

/// A role instance through a forbidden relationship cannot attach, and the
/// explanation says which instance and why; an unknown role is an input
/// error listing the table's relationships.
#[test]
fn role_instances_explain_per_instance_and_reject_unknown_roles() {
    let mut m = ddo_model();
    m.constraints.forbid_relationships = vec!["CLIENT(loc_id)->LOCATION(id)".into()];
    let g = SchemaGraph::new(m).unwrap();
    let v = solve(&g, &req(&["CLIENT", "LOCATION@CLIENT"]));
    assert_eq!(v.status, SolveStatus::Infeasible);
    let why = v.explanation.unwrap();
    assert!(
        why.contains(
            "LOCATION@CLIENT.loc_id cannot attach: its relationship CLIENT(loc_id)->LOCATION(id) is forbidden"
        ),
        "{why}"
    );
    // With COMPUTE forbidden, DATACENTER (the instance's anchor) reaches
    // CLIENT only through the LOCATION lookup (C4).
    let mut m = ddo_model();
    m.constraints.forbid_tables = vec!["COMPUTE".into()];
    let g = SchemaGraph::new(m).unwrap();
    let v = solve(&g, &req(&["CLIENT", "LOCATION@DATACENTER"]));
    assert_eq!(v.status, SolveStatus::Infeasible);
    let why = v.explanation.unwrap();
    assert!(why.contains("CLIENT and DATACENTER can only be connected through lookup LOCATION (C4)"), "{why}");
    let g = ddo();
    let e = generate_view(&g, &req(&["LOCATION@PAYMENT"])).unwrap_err().to_string();
    assert!(
        e.contains("no relationship of LOCATION is named by `PAYMENT`")
            && e.contains("DATACENTER(loc_id)->LOCATION(id)"),
        "{e}"
    );
    let e = generate_view(&g, &req(&["TAX@PAYAMOUNT"])).unwrap_err().to_string();
    assert!(e.contains("inner table of the pattern rooted at PAYMENT"), "{e}");
}
