//! `--view-columns all-once` cross-checked against the `all` view on the
//! data: for every pair of tables of DDO and ACME (and ACME's claim amounts
//! by kind), the view that keeps one column per set of INNER-join-equal
//! columns joins the same tables the same way, returns as many rows, shows
//! every column of the `all` view except the ones it left out, and each
//! left-out column equals the column standing for it on every row of the
//! `all` view (checked by SQLite, not by the rule that chose it).

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use lucy::sql::exec::run_readonly_with;
use lucy::sql::exec::ExecOptions;
use lucy::types::{SolveStatus, SqlValue, ViewColumns, ViewRequest, ViewResult};
use lucy::SchemaGraph;

fn root() -> &'static Path {
    Path::new(env!("CARGO_MANIFEST_DIR"))
}

fn graph(model: &str) -> SchemaGraph {
    let path = root().join("dbmodels").join(model);
    SchemaGraph::new(lucy::model::load(&path).unwrap_or_else(|e| panic!("{}: {e}", path.display())))
        .unwrap_or_else(|e| panic!("{}: {e}", path.display()))
}

fn view(g: &SchemaGraph, tables: &[String], columns: ViewColumns) -> ViewResult {
    let req = ViewRequest { columns, ..ViewRequest::new(tables.to_vec()) };
    lucy::solve::generate_view(g, &req).unwrap_or_else(|e| panic!("{tables:?}: {e}"))
}

fn count(db: &Path, v: &ViewResult, sql: &str) -> i64 {
    let opts = ExecOptions { limit: Some(2), ..ExecOptions::default() };
    let rows = run_readonly_with(db, v.body.as_ref(), sql, &opts).unwrap_or_else(|e| panic!("{sql}: {e}"));
    match rows.rows.first().and_then(|r| r.first()) {
        Some(SqlValue::Integer(n)) => *n,
        other => panic!("{sql}: not a count: {other:?}"),
    }
}

/// (instance, table, column) of every column a view shows.
fn shown(v: &ViewResult) -> BTreeSet<(String, String, String)> {
    v.columns
        .iter()
        .zip(&v.grain.columns)
        .map(|(c, g)| (g.instance.clone(), c.table.clone(), c.column.clone()))
        .collect()
}

fn quote(alias: &str) -> String {
    format!("\"{}\"", alias.replace('"', "\"\""))
}

/// Checks one table set; returns how many columns the view left out.
fn check(g: &SchemaGraph, db: &Path, tables: &[String]) -> usize {
    let all = view(g, tables, ViewColumns::All);
    let once = view(g, tables, ViewColumns::AllOnce);
    assert_eq!(all.status, once.status, "{tables:?}");
    if all.status == SolveStatus::Infeasible {
        return 0;
    }
    assert!(all.merged.is_empty(), "{tables:?}: `all` leaves nothing out");
    assert_eq!(all.tables, once.tables, "{tables:?}");
    assert_eq!(all.joins, once.joins, "{tables:?}");
    // The shown columns plus the left-out ones are the `all` view's.
    let mut both = shown(&once);
    let once_aliases: BTreeSet<&str> = once.columns.iter().map(|c| c.alias.as_str()).collect();
    for m in &once.merged {
        assert!(once_aliases.contains(m.same_as.as_str()), "{tables:?}: {m:?} stands in a column the view lacks");
        assert!(both.insert((m.instance.clone(), m.table.clone(), m.column.clone())), "{tables:?}: {m:?} shown");
    }
    assert_eq!(both, shown(&all), "{tables:?}");
    // A key left out still keys its instance.
    for (a, o) in all.grain.instances.iter().zip(&once.grain.instances) {
        assert_eq!(a.key.is_empty(), o.key.is_empty(), "{tables:?}: {}", a.instance);
    }
    // The same rows.
    let n = |v: &ViewResult| count(db, v, "SELECT COUNT(*) FROM lucy_view");
    assert_eq!(n(&all), n(&once), "{tables:?}");
    // Each left-out column equals its stand-in on every row of `all`.
    for m in &once.merged {
        let gone = all
            .columns
            .iter()
            .zip(&all.grain.columns)
            .find(|(c, gc)| gc.instance == m.instance && c.table == m.table && c.column == m.column)
            .map(|(c, _)| c.alias.clone())
            .unwrap_or_else(|| panic!("{tables:?}: {m:?} not in the all view"));
        // The stand-in's alias in `all`: the same instance and column.
        let (keep_inst, keep_col) = once
            .columns
            .iter()
            .zip(&once.grain.columns)
            .find(|(c, _)| c.alias == m.same_as)
            .map(|(c, gc)| (gc.instance.clone(), (c.table.clone(), c.column.clone())))
            .unwrap();
        let keep = all
            .columns
            .iter()
            .zip(&all.grain.columns)
            .find(|(c, gc)| gc.instance == keep_inst && (c.table.clone(), c.column.clone()) == keep_col)
            .map(|(c, _)| c.alias.clone())
            .unwrap();
        let (a, b) = (quote(&gone), quote(&keep));
        let differ = format!("SELECT COUNT(*) FROM lucy_view WHERE {a} IS NULL OR {b} IS NULL OR {a} <> {b}");
        assert_eq!(count(db, &all, &differ), 0, "{tables:?}: {gone} and {keep} differ on some row");
    }
    once.merged.len()
}

fn pairs(g: &SchemaGraph) -> Vec<Vec<String>> {
    let names: Vec<String> = g.model().tables.iter().map(|t| t.name.clone()).collect();
    let mut out = Vec::new();
    for (i, a) in names.iter().enumerate() {
        for b in &names[i + 1..] {
            out.push(vec![a.clone(), b.clone()]);
        }
    }
    out
}

#[test]
fn all_once_equals_all_on_the_data_ddo() {
    let g = graph("ddo.json");
    let db = root().join("dbmodels/ddo.sqlite");
    let mut left_out = 0;
    let mut sets = pairs(&g);
    sets.push(["CLIENT", "DATACENTER", "PAYMENT"].map(String::from).to_vec());
    sets.push(["CLIENT", "RESOURCEPOOL", "RCPU"].map(String::from).to_vec());
    for t in &sets {
        left_out += check(&g, &db, t);
    }
    assert!(left_out > sets.len(), "only {left_out} columns left out over {} views", sets.len());
}

#[test]
fn all_once_equals_all_on_the_data_acme() {
    let g = graph("acme.json");
    let db: PathBuf = root().join("../shared/benchmarks/acme/acme_small.sqlite");
    assert!(db.is_file(), "{} is missing: the ACME data sits in ../shared beside the clone", db.display());
    let mut sets = pairs(&g);
    let kinds = ["Loss_Payment", "Loss_Reserve", "Expense_Payment", "Expense_Reserve"];
    let mut by_kind = vec!["Claim".to_string(), "Policy".to_string()];
    by_kind.extend(kinds.iter().map(|k| format!("Claim_Amount@{k}")));
    sets.push(by_kind);
    let mut left_out = 0;
    for t in &sets {
        left_out += check(&g, &db, t);
    }
    assert!(left_out > sets.len(), "only {left_out} columns left out over {} views", sets.len());
    // The subtype's key is left out for the key of its kind's instance.
    let once = view(&g, &sets[sets.len() - 1], ViewColumns::AllOnce);
    let lp = once.merged.iter().find(|m| m.table == "Loss_Payment").expect("Loss_Payment's key left out");
    assert_eq!(lp.column, "Claim_Amount_Identifier");
    assert!(lp.same_as.starts_with("Claim_Amount") && lp.same_as.ends_with("Claim_Amount_Identifier"), "{lp:?}");
    assert!(!once.columns.iter().any(|c| c.table == "Loss_Payment"), "Loss_Payment shows no column");
}
