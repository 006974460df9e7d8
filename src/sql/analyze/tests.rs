//! Unit tests of `sql::analyze` on hand-made queries.

use super::*;
use crate::types::{Column, Table};
use sqlparser::ast::{OrderBy, Select};

fn table(name: &str, cols: &[&str]) -> Table {
    Table {
        name: name.into(),
        columns: cols.iter().map(|c| Column { name: (*c).into(), ..Default::default() }).collect(),
        ..Default::default()
    }
}

fn model() -> DbModel {
    DbModel {
        name: "t".into(),
        tables: vec![
            table("CLIENT", &["id", "name", "district_id"]),
            table("ACCOUNT", &["id", "client_id", "kind", "district_id"]),
            table("LOAN", &["id", "account_id", "amount"]),
            table("EMP", &["id", "name", "manager_id"]),
        ],
        ..Default::default()
    }
}

fn cols(r: &QueryRefs) -> Vec<String> {
    r.columns.iter().map(|c| c.to_string()).collect()
}

fn pairs(r: &QueryRefs) -> Vec<String> {
    r.join_pairs.iter().map(|p| p.to_string()).collect()
}

fn tables(r: &QueryRefs) -> Vec<&str> {
    r.tables.iter().map(String::as_str).collect()
}

fn run(sql: &str) -> QueryRefs {
    analyze(sql, Dialect::Sqlite, Some(&model())).unwrap()
}

#[test]
fn aliases_resolve_to_base_tables() {
    let r = run("SELECT c.name FROM client AS c JOIN account a ON c.id = a.client_id WHERE a.kind = 'x'");
    assert_eq!(tables(&r), ["account", "client"]);
    assert_eq!(cols(&r), ["account.client_id", "account.kind", "client.id", "client.name"]);
    assert_eq!(pairs(&r), ["account.client_id = client.id"]);
    assert!(r.unresolved.is_empty());
    assert!(!r.ordered);
}

#[test]
fn pairs_are_normalized_and_deduplicated() {
    let r = run(
        "SELECT 1 FROM ACCOUNT a JOIN Client c ON C.ID = A.CLIENT_ID WHERE a.client_id = c.id AND c.id = a.client_id",
    );
    assert_eq!(pairs(&r), ["account.client_id = client.id"]);
}

#[test]
fn self_join_counts_two_uses() {
    let r = run("SELECT e1.name, e2.name FROM emp e1 JOIN emp e2 ON e1.manager_id = e2.id");
    assert_eq!(r.table_uses.get("emp"), Some(&2));
    assert_eq!(r.multi_use_tables(), ["emp"]);
    assert_eq!(pairs(&r), ["emp.id = emp.manager_id"]);
}

#[test]
fn same_relation_equality_is_not_a_join() {
    let r = run("SELECT name FROM emp WHERE emp.id = emp.manager_id");
    assert!(r.join_pairs.is_empty());
    assert_eq!(r.table_uses.get("emp"), Some(&1));
}

#[test]
fn derived_table_columns_map_through() {
    let r = run("SELECT s.n FROM (SELECT name AS n, id FROM client) s JOIN account a ON s.id = a.client_id");
    assert_eq!(tables(&r), ["account", "client"]);
    assert_eq!(pairs(&r), ["account.client_id = client.id"]);
    assert!(r.columns.contains(&ColumnRef::new("client", "name")));
}

#[test]
fn cte_columns_map_through() {
    let r = run("WITH big AS (SELECT account_id, SUM(amount) AS total FROM loan GROUP BY account_id) \
         SELECT a.kind, big.total FROM account a JOIN big ON big.account_id = a.id ORDER BY big.total DESC");
    assert_eq!(tables(&r), ["account", "loan"]);
    assert_eq!(pairs(&r), ["account.id = loan.account_id"]);
    assert_eq!(cols(&r), ["account.id", "account.kind", "loan.account_id", "loan.amount"]);
    assert!(r.ordered);
    assert_eq!(r.table_uses.get("loan"), Some(&1));
}

#[test]
fn using_and_natural_joins() {
    let r = run("SELECT name FROM client JOIN account USING (district_id)");
    assert_eq!(pairs(&r), ["account.district_id = client.district_id"]);
    let r = run("SELECT 1 FROM client NATURAL JOIN account");
    // CLIENT and ACCOUNT share id and district_id.
    assert_eq!(pairs(&r), ["account.district_id = client.district_id", "account.id = client.id"]);
    // Without a model USING still names the column on both sides.
    let r = analyze("SELECT * FROM x JOIN y USING (k)", Dialect::Sqlite, None).unwrap();
    assert_eq!(pairs(&r), ["x.k = y.k"]);
}

#[test]
fn implicit_comma_join() {
    let r = run("SELECT T1.name FROM client AS T1, account AS T2 WHERE T1.id = T2.client_id AND T2.kind > 3");
    assert_eq!(pairs(&r), ["account.client_id = client.id"]);
    // An equality under OR is a filter, not a join.
    let r = run("SELECT 1 FROM client c, account a WHERE c.id = a.client_id OR a.kind = 'x'");
    assert!(r.join_pairs.is_empty());
}

#[test]
fn unqualified_columns_resolve_through_the_model() {
    let r = run("SELECT name FROM client JOIN account ON client.id = account.client_id WHERE kind = 'x'");
    assert!(r.columns.contains(&ColumnRef::new("account", "kind")));
    assert!(r.columns.contains(&ColumnRef::new("client", "name")));
    assert!(r.unresolved.is_empty());
    // Without a model the same query cannot place `kind`.
    let r = analyze(
        "SELECT name FROM client JOIN account ON client.id = account.client_id WHERE kind = 'x'",
        Dialect::Sqlite,
        None,
    )
    .unwrap();
    assert!(r.unresolved.contains("kind"));
    // ...but a single-table query can.
    let r = analyze("SELECT name FROM client WHERE kind = 'x'", Dialect::Sqlite, None).unwrap();
    assert!(r.columns.contains(&ColumnRef::new("client", "kind")));
}

#[test]
fn set_operations_collect_both_branches() {
    let r = run("SELECT name FROM client UNION SELECT name FROM emp");
    assert!(r.set_operation);
    assert_eq!(tables(&r), ["client", "emp"]);
}

#[test]
fn in_subquery_is_a_semi_join() {
    let r = run("SELECT name FROM client WHERE id NOT IN (SELECT client_id FROM account)");
    assert!(r.join_pairs.is_empty());
    let semi: Vec<String> = r.semi_join_pairs.iter().map(|p| p.to_string()).collect();
    assert_eq!(semi, ["account.client_id = client.id"]);
    assert_eq!(r.all_pairs().len(), 1);
    let r = run("SELECT name FROM client WHERE id = (SELECT client_id FROM account ORDER BY kind LIMIT 1)");
    let semi: Vec<String> = r.semi_join_pairs.iter().map(|p| p.to_string()).collect();
    assert_eq!(semi, ["account.client_id = client.id"], "scalar subquery compared with a column");
    assert!(r.columns.contains(&ColumnRef::new("account", "kind")));
}

#[test]
fn correlated_subquery_equality_is_a_join() {
    let r = run("SELECT c.name FROM client c WHERE EXISTS (SELECT 1 FROM account a WHERE a.client_id = c.id)");
    assert_eq!(pairs(&r), ["account.client_id = client.id"]);
    // A table reused inside a subquery counts as a second use.
    let r = run("SELECT name FROM emp WHERE id = (SELECT MAX(id) FROM emp)");
    assert_eq!(r.table_uses.get("emp"), Some(&2));
}

#[test]
fn quoted_and_mixed_case_identifiers() {
    let r = run("SELECT \"Client\".\"NAME\" FROM \"CLIENT\" WHERE `client`.Id = 3");
    assert_eq!(cols(&r), ["client.id", "client.name"]);
}

#[test]
fn double_quoted_strings_are_not_columns() {
    // SQLite reads "France" as a string when no column has that name.
    let r = run("SELECT COUNT(*) FROM client WHERE name = \"France\"");
    assert_eq!(cols(&r), ["client.name"]);
    assert!(r.unresolved.is_empty());
    let r = analyze("SELECT COUNT(*) FROM singer WHERE country = \"France\"", Dialect::Sqlite, None).unwrap();
    assert_eq!(cols(&r), ["singer.country"]);
    // With a model, a name the table lacks is not invented as a column.
    let r = run("SELECT nosuch FROM client");
    assert!(r.columns.is_empty());
    assert!(r.unresolved.contains("nosuch"));
}

#[test]
fn select_aliases_are_not_columns() {
    let r = run("SELECT kind, COUNT(*) AS n FROM account GROUP BY kind ORDER BY n DESC");
    assert!(r.unresolved.is_empty());
    assert_eq!(cols(&r), ["account.kind"]);
}

#[test]
fn wildcard_expands_with_model() {
    let r = run("SELECT * FROM loan");
    assert_eq!(cols(&r), ["loan.account_id", "loan.amount", "loan.id"]);
    let r = run("SELECT COUNT(*) FROM loan");
    assert!(r.columns.is_empty());
}

#[test]
fn bad_sql_is_a_clear_error() {
    assert!(matches!(analyze("DELETE FROM client", Dialect::Sqlite, None), Err(Error::Sql(m)) if m.contains("SELECT")));
    assert!(
        matches!(analyze("SELECT 1; SELECT 2", Dialect::Sqlite, None), Err(Error::Sql(m)) if m.contains("one statement"))
    );
    assert!(
        matches!(analyze("SELEC name FROM", Dialect::Sqlite, None), Err(Error::Sql(m)) if m.contains("cannot parse"))
    );
}

#[test]
fn view_columns_map_back_to_base_columns() {
    // A view as `lucy view --json` writes it (no ids: read from its text).
    let view: ViewResult = serde_json::from_value(serde_json::json!({
        "status": "optimal", "tables": ["CLIENT", "ACCOUNT"],
        "joins": [{"left": "CLIENT", "right": "ACCOUNT", "kind": "inner", "on": [["CLIENT.id", "ACCOUNT.client_id"]], "relationship": "r"}],
        "objective": 0.0, "path_length": 2, "solve_ms": 0.0, "view_name": "lucy_view", "view_sql": "",
        "columns": [
            {"alias": "CLIENT_name", "table": "CLIENT", "column": "name"},
            {"alias": "ACCOUNT_kind", "table": "ACCOUNT", "column": "kind"}
        ],
        "walk": []
    }))
    .unwrap();
    let r = analyze_view_query("SELECT v.CLIENT_name FROM lucy_view v WHERE ACCOUNT_kind = 'x'", &view, None).unwrap();
    assert_eq!(tables(&r), ["account", "client"]);
    assert_eq!(cols(&r), ["account.client_id", "account.kind", "client.id", "client.name"]);
    assert_eq!(pairs(&r), ["account.client_id = client.id"]);
    assert!(r.unresolved.is_empty());
}

#[test]
fn view_aliases_of_a_repeated_table_map_to_the_base_table() {
    let mut view: ViewResult = serde_json::from_value(serde_json::json!({
        "status": "optimal", "tables": ["results", "races", "laptimes", "races_2"],
        "joins": [
            {"left": "results", "right": "races", "kind": "inner", "on": [["results.raceId", "races.raceId"]], "relationship": "r1"},
            {"left": "laptimes", "right": "races_2", "kind": "inner", "on": [["laptimes.raceId", "races_2.raceId"]], "relationship": "r2"}
        ],
        "objective": 1.0, "path_length": 4, "solve_ms": 0.0, "view_name": "lucy_view", "view_sql": "",
        "columns": [{"alias": "races_2_name", "table": "races", "column": "name"}],
        "walk": ["results", "races", "laptimes", "races"]
    }))
    .unwrap();
    let pairs: Vec<String> = view_pairs(&view, None).into_iter().flatten().map(|p| p.to_string()).collect();
    assert_eq!(pairs, ["races.raceid = results.raceid", "laptimes.raceid = races.raceid"]);
    let r = analyze_view_query("SELECT races_2_name FROM lucy_view", &view, None).unwrap();
    assert_eq!(tables(&r), ["laptimes", "races", "results"]);
    assert!(r.columns.contains(&ColumnRef::new("races", "name")));
    // A table literally named like an alias stays itself.
    view.walk.push("races_2".into());
    assert_eq!(view_base_table(&view, "races_2"), "races_2");
}

#[test]
fn role_aliases_of_a_view_read_from_json_map_to_their_table() {
    // Role instances are named by role, not `<table>_<n>`: the grain says
    // which table each instance is.
    let view: ViewResult = serde_json::from_value(serde_json::json!({
        "status": "optimal", "tables": ["LOCATION_CLIENT", "CLIENT", "EMPLOYEE_manager"],
        "joins": [
            {"left": "LOCATION_CLIENT", "right": "CLIENT", "kind": "inner", "on": [["LOCATION_CLIENT.id", "CLIENT.loc_id"]], "relationship": "r1"},
            {"left": "CLIENT", "right": "EMPLOYEE_manager", "kind": "inner", "on": [["CLIENT.rep_id", "EMPLOYEE_manager.id"]], "relationship": "r2"}
        ],
        "objective": 0.0, "path_length": 3, "solve_ms": 0.0, "view_name": "lucy_view", "view_sql": "",
        "columns": [{"alias": "LOCATION_CLIENT_city", "table": "LOCATION", "column": "city"}],
        "walk": ["LOCATION@CLIENT", "CLIENT", "EMPLOYEE@manager"],
        "grain": {"instances": [
            {"instance": "LOCATION_CLIENT", "table": "LOCATION", "key": [], "multiplied_by": []},
            {"instance": "CLIENT", "table": "CLIENT", "key": [], "multiplied_by": []},
            {"instance": "EMPLOYEE_manager", "table": "EMPLOYEE", "key": [], "multiplied_by": []}
        ], "links": [], "columns": []}
    }))
    .unwrap();
    assert_eq!(view_base_table(&view, "LOCATION_CLIENT"), "LOCATION");
    assert_eq!(view_base_table(&view, "employee_MANAGER"), "EMPLOYEE");
    let pairs: Vec<String> = view_pairs(&view, None).into_iter().flatten().map(|p| p.to_string()).collect();
    assert_eq!(pairs, ["client.loc_id = location.id", "client.rep_id = employee.id"]);
    let r = analyze_view_query("SELECT LOCATION_CLIENT_city FROM lucy_view", &view, None).unwrap();
    assert_eq!(tables(&r), ["client", "employee", "location"]);
}

#[test]
fn occurrences_are_aliases_with_their_select() {
    let r = run("SELECT e.name FROM emp e JOIN emp m ON e.manager_id = m.id \
                 WHERE e.id IN (SELECT a.client_id FROM account a WHERE a.kind = 'x')");
    let occ: Vec<String> = r.occurrences.iter().map(|o| format!("{}:{}@{}", o.alias, o.table, o.select)).collect();
    assert_eq!(occ, ["e:emp@0", "m:emp@0", "a:account@1"]);
    let pairs: Vec<String> = r
        .occurrence_pairs
        .iter()
        .map(|p| format!("{}.{}={}.{}{}", p.a, p.left.column, p.b, p.right.column, if p.semi { " semi" } else { "" }))
        .collect();
    assert_eq!(pairs, ["0.manager_id=1.id", "0.id=2.client_id semi"]);
}

/// Records what `observe_selects` reports, one line per SELECT.
struct Seen(Vec<String>);

impl SelectObserver for Seen {
    fn select(
        &mut self,
        _sel: &Select,
        order: Option<&OrderBy>,
        scope: &SelectScope,
        columns: &[ColumnUse],
        lookup: &dyn Fn(Option<&str>, &str) -> Option<ScopeColumn>,
    ) {
        let rels: Vec<String> =
            scope.relations.iter().map(|r| format!("{}:{}", r.display, r.table.as_deref().unwrap_or("-"))).collect();
        let eqs: Vec<String> = scope
            .equalities
            .iter()
            .map(|e| format!("[{}] {} ({}/{} {}/{})", e.clause, e.text, e.a.up, e.a.rel, e.b.up, e.b.rel))
            .collect();
        let uses: Vec<String> =
            columns.iter().map(|u| format!("{}@{}", u.written, u.clause.as_deref().unwrap_or("-"))).collect();
        let name = lookup(None, "name").map(|c| format!("{}/{}", c.up, c.rel)).unwrap_or_default();
        self.0.push(format!(
            "#{} rels {} | eqs {} | links {:?} | uses {} | name {name} | order {}",
            scope.id,
            rels.join(","),
            eqs.join(","),
            scope.links,
            uses.join(","),
            order.is_some()
        ));
    }
}

#[test]
fn observers_see_every_select_after_the_ones_inside_it() {
    // Column uses come in the walk's order (ON, WHERE, then the select
    // list), each with its clause; `up` counts scopes out (2: the outer
    // SELECT, past the subquery's WITH scope).
    let sql = "SELECT c.name FROM CLIENT c JOIN ACCOUNT a USING (id) JOIN LOAN l ON l.account_id = a.id \
               WHERE c.id IN (SELECT client_id FROM ACCOUNT x WHERE x.district_id = c.district_id) \
               AND (a.kind = 'x' OR l.amount > a.id) ORDER BY 1";
    let q = parse_query(sql, Dialect::Sqlite).unwrap();
    let mut seen = Seen(Vec::new());
    observe_selects(&q, Dialect::Sqlite, &model(), &mut seen);
    assert_eq!(
        seen.0,
        [
            "#1 rels x:account | eqs [WHERE] x.district_id = c.district_id (0/0 2/0) | links [] \
             | uses x.district_id@WHERE,c.district_id@WHERE,client_id@SELECT | name 2/0 | order false",
            "#0 rels c:client,a:account,l:loan | eqs [JOIN l ON] l.account_id = a.id (0/2 0/1),[JOIN a USING] USING (id) (0/0 0/1) \
             | links [(1, 2)] | uses l.account_id@JOIN l ON,a.id@JOIN l ON,c.id@WHERE,a.kind@WHERE,l.amount@WHERE,a.id@WHERE,c.name@SELECT \
             | name 0/0 | order true",
        ]
    );
}
