//! The plan form over the paper's DDO views: every kind compiled to each
//! dialect (golden SQL, admitted by the guard), the rows of each on DDO's
//! SQLite database against a gold query over the base tables, bad plans as
//! clear errors, and the grammar admitting exactly the view's columns and
//! measures.

use std::collections::BTreeSet;
use std::path::Path;

use super::ast::*;
use super::*;
use crate::graph::SchemaGraph;
use crate::query::grammar::check_text;
use crate::sql::exec::run_readonly;
use crate::sql::guard::check_query;
use crate::types::{ColumnRef, Dialect, FanoutMode, ViewRequest, ViewResult};

const MODEL: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels/ddo.json");
const DB: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels/ddo.sqlite");
const DIALECTS: [Dialect; 4] = [Dialect::Sqlite, Dialect::Postgres, Dialect::Mysql, Dialect::Spark];

fn graph() -> SchemaGraph {
    SchemaGraph::new(crate::model::load(Path::new(MODEL)).unwrap()).unwrap()
}

fn ddo_view(g: &SchemaGraph, tables: &[&str], attrs: &[(&str, &str)]) -> ViewResult {
    let mut req = ViewRequest::new(tables.iter().map(|t| t.to_string()).collect());
    req.attributes = attrs.iter().map(|(t, c)| ColumnRef::new(*t, *c)).collect();
    crate::solve::generate_view(g, &req).unwrap()
}

/// Clients, their payments and the payments' amounts (CLIENT 1:M PAYMENT
/// 1:M PAYAMOUNT: the view repeats clients and payments).
fn payments(g: &SchemaGraph) -> ViewResult {
    ddo_view(
        g,
        &["CLIENT", "PAYMENT", "PAYAMOUNT"],
        &[("CLIENT", "name"), ("CLIENT", "gender"), ("PAYMENT", "date"), ("PAYAMOUNT", "amount")],
    )
}

/// Clients and datacenters through the m:m resource pools (DDO Q1's view).
fn datacenters(g: &SchemaGraph) -> ViewResult {
    ddo_view(g, &["CLIENT", "DATACENTER"], &[("CLIENT", "name"), ("DATACENTER", "name")])
}

/// The same, keeping every client (LEFT JOINs from CLIENT, `--keep
/// CLIENT`): the view holds the clients without a datacenter.
fn every_client(g: &SchemaGraph) -> ViewResult {
    let mut req = ViewRequest::new(vec!["CLIENT".into(), "DATACENTER".into()]);
    req.attributes = vec![ColumnRef::new("CLIENT", "name"), ColumnRef::new("DATACENTER", "name")];
    req.keep = Some("CLIENT".into());
    crate::solve::generate_view(g, &req).unwrap()
}

fn pv(g: &SchemaGraph, v: &ViewResult, d: Dialect) -> PlanView {
    PlanView::of_view(g, v, d, FanoutMode::Rewrite, None, &[])
}

fn plan(json: &str) -> Plan {
    serde_json::from_str(json).unwrap_or_else(|e| panic!("{json}: {e}"))
}

/// Rows as a set of text tuples.
fn rows(view: Option<&ViewResult>, sql: &str) -> BTreeSet<Vec<String>> {
    let r = run_readonly(Path::new(DB), view.and_then(|v| v.body.as_ref()), sql, None)
        .unwrap_or_else(|e| panic!("{sql}: {e}"));
    r.rows.iter().map(|row| row.iter().map(|v| v.to_string()).collect()).collect()
}

/// Every plan kind: (name, view, plan, gold over the base tables).
fn kinds(g: &SchemaGraph) -> Vec<(&'static str, ViewResult, Plan, &'static str)> {
    vec![
        (
            "query",
            payments(g),
            plan(
                r#"{"kind": "query", "select": [{"col": "CLIENT_name"}, {"agg": "sum", "col": "PAYAMOUNT_amount"}],
                   "where": {"and": [{"col": "CLIENT_gender", "op": "=", "value": "F"},
                                     {"col": "PAYMENT_date", "part": "month", "op": "<=", "value": 6}]},
                   "group_by": ["CLIENT_name"],
                   "order_by": [{"agg": "sum", "col": "PAYAMOUNT_amount", "desc": true}], "limit": 3}"#,
            ),
            "SELECT c.name, SUM(a.amount) FROM CLIENT c JOIN PAYMENT p ON p.client_id = c.id \
             JOIN PAYAMOUNT a ON a.pay_id = p.id WHERE c.gender = 'F' AND CAST(strftime('%m', p.date) AS INTEGER) <= 6 \
             GROUP BY c.name ORDER BY SUM(a.amount) DESC LIMIT 3",
        ),
        (
            "top_per_group",
            payments(g),
            plan(
                r#"{"kind": "top_per_group", "select": [{"col": "CLIENT_name"}, {"col": "PAYAMOUNT_amount"}],
                   "per": "CLIENT_name", "order_by": [{"col": "PAYAMOUNT_amount", "desc": true}], "top": 1}"#,
            ),
            "SELECT name, amount FROM (SELECT c.name, a.amount, ROW_NUMBER() OVER (PARTITION BY c.name ORDER BY a.amount DESC) AS r \
             FROM CLIENT c JOIN PAYMENT p ON p.client_id = c.id JOIN PAYAMOUNT a ON a.pay_id = p.id) t WHERE r <= 1",
        ),
        (
            "without",
            every_client(g),
            plan(r#"{"kind": "without", "select": [{"col": "CLIENT_name"}], "without": "DATACENTER_name"}"#),
            "SELECT DISTINCT c.name FROM CLIENT c WHERE NOT EXISTS (SELECT 1 FROM RSPOOL2CLIENT j \
             JOIN RESOURCEPOOL p ON p.id = j.rspool_id JOIN COMPUTE k ON k.id = p.compute_id \
             JOIN DATACENTER d ON d.id = k.dc_id WHERE j.client_id = c.id)",
        ),
        (
            "count_of",
            payments(g),
            plan(
                r#"{"kind": "count_of", "of": "PAYMENT", "group_by": ["CLIENT_name"],
                   "order_by": [{"agg": "count", "desc": true}], "limit": 5}"#,
            ),
            "SELECT c.name, COUNT(*) FROM CLIENT c JOIN PAYMENT p ON p.client_id = c.id \
             GROUP BY c.name ORDER BY COUNT(*) DESC LIMIT 5",
        ),
    ]
}

#[test]
fn every_kind_compiles_in_every_dialect_and_the_guard_admits_it() {
    let g = graph();
    for (name, view, p, _) in kinds(&g) {
        let cols: Vec<String> = view.columns.iter().map(|c| c.alias.clone()).collect();
        for d in DIALECTS {
            let sql = compile(&p, &pv(&g, &view, d)).unwrap_or_else(|e| panic!("{name} {d:?}: {e}"));
            check_query(&sql, &view.view_name, &cols, d).unwrap_or_else(|e| panic!("{name} {d:?}: {sql}: {e}"));
        }
    }
}

#[test]
fn golden_sql_per_dialect() {
    let g = graph();
    let k = kinds(&g);
    let sql = |i: usize, d: Dialect| compile(&k[i].2, &pv(&g, &k[i].1, d)).unwrap();
    assert_eq!(
        sql(0, Dialect::Sqlite),
        "SELECT CLIENT_name, SUM(PAYAMOUNT_amount) FROM lucy_view WHERE CLIENT_gender = 'F' AND \
         CAST(strftime('%m', PAYMENT_date) AS INTEGER) <= 6 GROUP BY CLIENT_name ORDER BY SUM(PAYAMOUNT_amount) DESC LIMIT 3"
    );
    assert_eq!(
        sql(0, Dialect::Postgres),
        "SELECT CLIENT_name, SUM(PAYAMOUNT_amount) FROM lucy_view WHERE CLIENT_gender = 'F' AND \
         EXTRACT(MONTH FROM CAST(PAYMENT_date AS TIMESTAMP)) <= 6 GROUP BY CLIENT_name ORDER BY SUM(PAYAMOUNT_amount) DESC LIMIT 3"
    );
    assert_eq!(
        sql(0, Dialect::Mysql),
        "SELECT CLIENT_name, SUM(PAYAMOUNT_amount) FROM lucy_view WHERE CLIENT_gender = 'F' AND \
         MONTH(PAYMENT_date) <= 6 GROUP BY CLIENT_name ORDER BY SUM(PAYAMOUNT_amount) DESC LIMIT 3"
    );
    assert_eq!(sql(0, Dialect::Spark), sql(0, Dialect::Mysql));
    let top = "SELECT CLIENT_name, PAYAMOUNT_amount FROM (SELECT CLIENT_name, PAYAMOUNT_amount, ROW_NUMBER() OVER \
               (PARTITION BY CLIENT_name ORDER BY PAYAMOUNT_amount DESC) AS lucy_rank FROM lucy_view) AS lucy_ranked \
               WHERE lucy_rank <= 1 ORDER BY CLIENT_name, lucy_rank";
    for d in DIALECTS {
        assert_eq!(sql(1, d), top, "{d:?}");
    }
    let without = "SELECT DISTINCT CLIENT_name FROM lucy_view AS lucy_x WHERE NOT EXISTS (SELECT 1 FROM lucy_view AS \
                   lucy_y WHERE lucy_y.CLIENT_id = lucy_x.CLIENT_id AND lucy_y.DATACENTER_id IS NOT NULL)";
    for d in DIALECTS {
        assert_eq!(sql(2, d), without, "{d:?}");
    }
    let count =
        "SELECT CLIENT_name, COUNT(*) AS lucy_count FROM (SELECT DISTINCT CLIENT_name, PAYMENT_id FROM lucy_view \
                 WHERE PAYMENT_id IS NOT NULL) AS lucy_rows GROUP BY CLIENT_name ORDER BY lucy_count DESC LIMIT 5";
    for d in DIALECTS {
        assert_eq!(sql(3, d), count, "{d:?}");
    }
}

#[test]
fn literals_are_quoted_per_dialect() {
    let g = graph();
    let v = datacenters(&g);
    let p = plan(
        r#"{"kind": "query", "select": [{"col": "CLIENT_name"}], "where": {"col": "CLIENT_name", "op": "like", "value": "O'Brien\\%"}}"#,
    );
    assert_eq!(
        compile(&p, &pv(&g, &v, Dialect::Sqlite)).unwrap(),
        "SELECT CLIENT_name FROM lucy_view WHERE CLIENT_name LIKE 'O''Brien\\%'"
    );
    assert_eq!(
        compile(&p, &pv(&g, &v, Dialect::Mysql)).unwrap(),
        "SELECT CLIENT_name FROM lucy_view WHERE CLIENT_name LIKE 'O''Brien\\\\%'"
    );
    // A name that needs quotes is quoted the dialect's way.
    let mut v2 = v.clone();
    v2.view_name = "order".into();
    assert!(compile(&p, &pv(&g, &v2, Dialect::Mysql)).unwrap().contains("FROM `order`"));
    assert!(compile(&p, &pv(&g, &v2, Dialect::Postgres)).unwrap().contains("FROM \"order\""));
}

#[test]
fn every_kind_returns_the_gold_rows_on_ddo() {
    let g = graph();
    for (name, view, p, gold) in kinds(&g) {
        let sql = compile(&p, &pv(&g, &view, Dialect::Sqlite)).unwrap();
        let got = rows(Some(&view), &sql);
        let want = rows(None, gold);
        assert!(!want.is_empty(), "{name}: the gold query returns rows");
        assert_eq!(got, want, "{name}: {sql}");
    }
}

#[test]
fn an_aggregate_with_plain_columns_groups_by_them_and_shows_the_groups() {
    let g = graph();
    let v = payments(&g);
    let p = plan(
        r#"{"kind": "query", "select": [{"agg": "count_distinct", "col": "PAYMENT_id"}], "group_by": ["CLIENT_name"]}"#,
    );
    assert_eq!(
        compile(&p, &pv(&g, &v, Dialect::Sqlite)).unwrap(),
        "SELECT CLIENT_name, COUNT(DISTINCT PAYMENT_id) FROM lucy_view GROUP BY CLIENT_name"
    );
    let p = plan(r#"{"kind": "query", "select": [{"col": "CLIENT_gender"}, {"agg": "count"}]}"#);
    assert_eq!(
        compile(&p, &pv(&g, &v, Dialect::Sqlite)).unwrap(),
        "SELECT CLIENT_gender, COUNT(*) FROM lucy_view GROUP BY CLIENT_gender"
    );
    let p = plan(
        r#"{"kind": "query", "select": [{"col": "CLIENT_name"}], "group_by": ["CLIENT_name"],
            "having": [{"agg": "count_distinct", "col": "PAYMENT_id", "op": ">", "value": 2}],
            "where": {"or": [{"col": "PAYAMOUNT_amount", "op": "between", "low": 10, "high": 500.5},
                             {"col": "CLIENT_name", "op": "in", "values": ["a", "b"]}, {"col": "PAYMENT_date", "op": "is null"}]}}"#,
    );
    assert_eq!(
        compile(&p, &pv(&g, &v, Dialect::Sqlite)).unwrap(),
        "SELECT CLIENT_name FROM lucy_view WHERE PAYAMOUNT_amount BETWEEN 10 AND 500.5 OR CLIENT_name IN ('a', 'b') \
         OR PAYMENT_date IS NULL GROUP BY CLIENT_name HAVING COUNT(DISTINCT PAYMENT_id) > 2"
    );
}

fn err(g: &SchemaGraph, v: &ViewResult, fanout: FanoutMode, json: &str) -> String {
    let mut view = pv(g, v, Dialect::Sqlite);
    view.fanout = fanout;
    match compile(&plan(json), &view) {
        Ok(sql) => panic!("{json} compiled: {sql}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn bad_plans_are_clear_errors() {
    let g = graph();
    let v = payments(&g);
    let rw = FanoutMode::Rewrite;
    let e = err(&g, &v, rw, r#"{"kind": "query", "select": [{"col": "CLIENT_CLIENT_name"}]}"#);
    assert!(e.contains("select names CLIENT_CLIENT_name, which is not a column of the view lucy_view"), "{e}");
    assert!(e.contains("CLIENT_name"), "{e}");
    let e = err(&g, &v, rw, r#"{"kind": "query", "select": [{"agg": "sum", "col": "PAYMENT_id"}]}"#);
    assert!(e.contains("sum(PAYMENT_id) reads a column that is not a quantity"), "{e}");
    assert!(e.contains("PAYAMOUNT_amount"), "{e}");
    // Over rows the view repeats (a client per payment amount) with no
    // fan-out rewrite after it.
    let e = err(&g, &v, FanoutMode::Error, r#"{"kind": "query", "select": [{"agg": "count", "col": "CLIENT_id"}]}"#);
    assert!(e.contains("count(CLIENT_id) reads rows the view repeats"), "{e}");
    assert!(e.contains("--fanout is error"), "{e}");
    // Grouped by the payment amount's own rows, nothing repeats them.
    let mut view = pv(&g, &v, Dialect::Sqlite);
    view.fanout = FanoutMode::Error;
    let ok = plan(
        r#"{"kind": "query", "select": [{"agg": "sum", "col": "PAYAMOUNT_amount"}], "group_by": ["PAYAMOUNT_id"]}"#,
    );
    assert!(compile(&ok, &view).is_ok());
    let long = "x".repeat(MAX_TEXT_CHARS + 1);
    let e = err(
        &g,
        &v,
        rw,
        &format!(
            r#"{{"kind": "query", "select": [{{"col": "CLIENT_name"}}], "where": {{"col": "CLIENT_name", "op": "=", "value": "{long}"}}}}"#
        ),
    );
    assert!(e.contains("has 201 characters; a plan's literals have at most 200"), "{e}");
    let e = err(
        &g,
        &v,
        rw,
        r#"{"kind": "query", "select": [{"col": "CLIENT_name"}], "where": {"col": "PAYAMOUNT_amount", "op": "=", "value": "lots"}}"#,
    );
    assert!(e.contains("PAYAMOUNT_amount holds numbers; 'lots' is not one"), "{e}");
    let e = err(&g, &v, rw, r#"{"kind": "query", "select": [], "limit": 3}"#);
    assert!(e.contains("select is empty"), "{e}");
    let e = err(&g, &v, rw, r#"{"kind": "query", "select": [{"col": "CLIENT_name"}], "limit": 0}"#);
    assert!(e.contains("limit 0 is outside"), "{e}");
    let deep = r#"{"kind": "query", "select": [{"col": "CLIENT_name"}], "where": {"and": [{"or": [{"and": [{"col": "CLIENT_name", "op": "is null"}]}]}]}}"#;
    assert!(err(&g, &v, rw, deep).contains("nests and/or deeper than 3"));
    let e = err(&g, &v, rw, r#"{"kind": "count_of", "of": "DATACENTER"}"#);
    assert!(e.contains("DATACENTER is not a table of the view"), "{e}");
    let e = err(&g, &v, rw, r#"{"kind": "without", "select": [{"col": "CLIENT_name"}], "without": "CLIENT_gender"}"#);
    assert!(e.contains("is a column of CLIENT"), "{e}");
    let e = err(
        &g,
        &v,
        rw,
        r#"{"kind": "top_per_group", "select": [{"col": "CLIENT_name"}], "per": "CLIENT_name", "top": 2}"#,
    );
    assert!(e.contains("needs order_by"), "{e}");
    assert_eq!(compile(&Plan::new(PlanKind::NeedsSql), &pv(&g, &v, Dialect::Sqlite)), Err(PlanError::NeedsSql));
}

#[test]
fn answers_parse_with_or_without_a_fence_and_bad_ones_say_why() {
    let p = parse_answer("```json\n{\"kind\": \"needs_sql\"}\n```").unwrap();
    assert_eq!(p.kind, PlanKind::NeedsSql);
    let p = parse_answer("Here: {\"kind\":\"query\",\"select\":[{\"agg\":\"count\"}]} done").unwrap();
    assert_eq!(p.select, vec![Item::count_rows()]);
    assert!(parse_answer("SELECT 1").unwrap_err().contains("no JSON object"));
    assert!(parse_answer("{\"kind\": \"query\", \"select\": [{\"col\": 1}]}")
        .unwrap_err()
        .contains("not a query plan"));
    assert!(parse_answer("{\"kind\": \"delete\"}").unwrap_err().contains("not a query plan"));
    assert!(parse_answer("{\"kind\": \"query\"").unwrap_err().contains("does not parse"));
    // A plan round-trips through its JSON.
    let g = graph();
    for (_, _, p, _) in kinds(&g) {
        assert_eq!(parse_answer(&p.to_json()).unwrap(), p);
    }
}

#[test]
fn the_grammar_admits_the_views_columns_and_measures_only() {
    let g = graph();
    let v = payments(&g);
    // The measures as the value index tells them (text holding words is none).
    let measures = vec!["PAYAMOUNT_amount".to_string()];
    let gr = grammar::plan_grammar(
        &PlanView::of_view(&g, &v, Dialect::Sqlite, FanoutMode::Rewrite, Some(&measures), &[]),
        &Cues::ALL,
    );
    let ok = |t: &str| check_text(&gr, t).unwrap_or_else(|e| panic!("{t}: {e}\n{gr}"));
    let no = |t: &str| assert!(check_text(&gr, t).is_err(), "admitted: {t}");
    // Every golden plan, compact and as the prompt spells it.
    for (_, view, p, _) in kinds(&g) {
        let gv = grammar::plan_grammar(&pv(&g, &view, Dialect::Sqlite), &Cues::ALL);
        check_text(&gv, &p.to_json()).unwrap_or_else(|e| panic!("{}: {e}", p.to_json()));
        let pretty = serde_json::to_string_pretty(&p).unwrap();
        check_text(&gv, &pretty).unwrap_or_else(|e| panic!("{pretty}: {e}"));
    }
    ok(r#"{"kind": "needs_sql"}"#);
    ok(
        r#"{"kind": "query", "select": [{"agg": "avg", "col": "PAYAMOUNT_amount"}], "where": {"col": "PAYMENT_date", "op": ">", "value": "2020-01-31"}}"#,
    );
    // SUM over a key, a date or text; a name the view lacks; a string for a number.
    no(r#"{"kind": "query", "select": [{"agg": "sum", "col": "PAYMENT_id"}]}"#);
    no(r#"{"kind": "query", "select": [{"agg": "sum", "col": "PAYMENT_date"}]}"#);
    no(r#"{"kind": "query", "select": [{"agg": "avg", "col": "CLIENT_name"}]}"#);
    no(r#"{"kind": "query", "select": [{"col": "CLIENT_CLIENT_name"}]}"#);
    no(
        r#"{"kind": "query", "select": [{"col": "CLIENT_name"}], "where": {"col": "PAYAMOUNT_amount", "op": "=", "value": "x"}}"#,
    );
    // A literal past the bound, a ninth select item, a fourth level of nesting.
    let long = "y".repeat(MAX_TEXT_CHARS + 1);
    no(&format!(
        r#"{{"kind": "query", "select": [{{"col": "CLIENT_name"}}], "where": {{"col": "CLIENT_name", "op": "=", "value": "{long}"}}}}"#
    ));
    let nine = [r#"{"col": "CLIENT_name"}"#; 9].join(", ");
    no(&format!(r#"{{"kind": "query", "select": [{nine}]}}"#));
    no(
        r#"{"kind": "query", "select": [{"col": "CLIENT_name"}], "where": {"and": [{"or": [{"and": [{"col": "CLIENT_name", "op": "is null"}]}]}]}}"#,
    );
}

#[test]
fn the_questions_words_decide_which_clauses_the_grammar_offers() {
    let g = graph();
    let v = payments(&g);
    let view = pv(&g, &v, Dialect::Sqlite);
    let listing = grammar::plan_grammar(&view, &Cues::of("List the clients and their payment dates."));
    let ok = |gr: &str, t: &str| check_text(gr, t).unwrap_or_else(|e| panic!("{t}: {e}\n{gr}"));
    let no = |gr: &str, t: &str| assert!(check_text(gr, t).is_err(), "admitted: {t}");
    ok(&listing, r#"{"kind": "query", "select": [{"col": "CLIENT_name"}, {"col": "PAYMENT_date"}], "distinct": true}"#);
    // No aggregate, group, order, limit or other kind the question never asked for.
    no(&listing, r#"{"kind": "query", "select": [{"agg": "count_distinct", "col": "CLIENT_name"}]}"#);
    no(&listing, r#"{"kind": "query", "select": [{"col": "CLIENT_name"}], "group_by": ["CLIENT_name"]}"#);
    no(&listing, r#"{"kind": "query", "select": [{"col": "CLIENT_name"}], "order_by": [{"col": "CLIENT_name"}]}"#);
    no(&listing, r#"{"kind": "query", "select": [{"col": "CLIENT_name"}], "limit": 100}"#);
    no(&listing, r#"{"kind": "without", "select": [{"col": "CLIENT_name"}], "without": "PAYMENT_id"}"#);
    ok(&listing, r#"{"kind": "needs_sql"}"#);
    // "the 3 largest": aggregates, order and limit; "never": without.
    let top = grammar::plan_grammar(&view, &Cues::of("Which 3 clients paid the largest total?"));
    ok(
        &top,
        r#"{"kind": "query", "select": [{"col": "CLIENT_name"}, {"agg": "sum", "col": "PAYAMOUNT_amount"}], "order_by": [{"agg": "sum", "col": "PAYAMOUNT_amount", "desc": true}], "limit": 3}"#,
    );
    let never = grammar::plan_grammar(&view, &Cues::of("Which clients never paid?"));
    ok(&never, r#"{"kind": "without", "select": [{"col": "CLIENT_name"}], "without": "PAYMENT_id"}"#);
}

#[test]
fn offered_values_are_the_only_literals_of_their_column() {
    let g = graph();
    let v = datacenters(&g);
    let values = vec![ColumnValues { alias: "DATACENTER_name".into(), matched: vec!["dev-east".into()], all: None }];
    let view = PlanView::of_view(&g, &v, Dialect::Sqlite, FanoutMode::Rewrite, None, &values);
    let gr = grammar::plan_grammar(&view, &Cues::ALL);
    let with = |value: &str| {
        format!(
            r#"{{"kind": "query", "select": [{{"col": "CLIENT_name"}}], "where": {{"col": "DATACENTER_name", "op": "=", "value": "{value}"}}}}"#
        )
    };
    check_text(&gr, &with("dev-east")).unwrap();
    assert!(check_text(&gr, &with("dev-west")).is_err());
    // LIKE takes any pattern; another text column any string.
    check_text(
        &gr,
        r#"{"kind": "query", "select": [{"col": "CLIENT_name"}], "where": {"col": "DATACENTER_name", "op": "like", "value": "dev%"}}"#,
    )
    .unwrap();
    check_text(
        &gr,
        r#"{"kind": "query", "select": [{"col": "CLIENT_name"}], "where": {"col": "CLIENT_name", "op": "=", "value": "anything"}}"#,
    )
    .unwrap();
}

#[test]
fn without_the_fanout_rewrite_the_grammar_counts_no_repeated_column() {
    let g = graph();
    let v = payments(&g);
    let mut view = pv(&g, &v, Dialect::Sqlite);
    view.fanout = FanoutMode::Error;
    let gr = grammar::plan_grammar(&view, &Cues::ALL);
    assert!(check_text(&gr, r#"{"kind": "query", "select": [{"agg": "count", "col": "CLIENT_id"}]}"#).is_err());
    check_text(&gr, r#"{"kind": "query", "select": [{"agg": "count_distinct", "col": "CLIENT_id"}]}"#).unwrap();
    check_text(&gr, r#"{"kind": "query", "select": [{"agg": "sum", "col": "PAYAMOUNT_amount"}]}"#).unwrap();
}

#[test]
fn the_plan_table_reads_like_the_question() {
    let g = graph();
    let (_, _, p, _) = kinds(&g).remove(0);
    let t = describe::table(&p);
    let line = |part: &str| t.iter().find(|l| l.part == part).map(|l| l.text.clone()).unwrap_or_default();
    assert_eq!(line("kind"), "query");
    assert_eq!(line("select"), "CLIENT_name, sum(PAYAMOUNT_amount)");
    assert_eq!(line("filter"), "CLIENT_gender = 'F' and month of PAYMENT_date <= 6");
    assert_eq!(line("group"), "CLIENT_name");
    assert_eq!(line("order"), "sum(PAYAMOUNT_amount) desc");
    assert_eq!(line("limit"), "3");
}

/// A QueryView task over `view` with the rewrites `lucy ask` applies by
/// default (fan-out, DISTINCT, `COUNT(*)` by name), running on DDO.
fn task<'a>(
    view: &'a ViewResult,
    db: &'a crate::sql::exec::Database,
    counted: Option<&'a str>,
) -> crate::query::SqlTask<'a> {
    crate::query::SqlTask {
        prompt_name: "query_plan".into(),
        prompt: String::new(),
        allowed: crate::query::Allowed::View {
            name: view.view_name.clone(),
            columns: view.columns.iter().map(|c| c.alias.clone()).collect(),
        },
        dialect: Dialect::Sqlite,
        temperature: 0.0,
        execute: Some(crate::query::ExecTarget {
            db,
            view: view.body.as_ref(),
            limit: None,
            timeout: std::time::Duration::from_secs(10),
            max_result_bytes: 1 << 24,
        }),
        fanout: Some((view, FanoutMode::Rewrite)),
        distinct: Some(view),
        counted: counted.map(|c| (view, c)),
        grounding: None,
        model_check: None,
        grammar: None,
        repair_grammar: None,
        rename: None,
        feedback: crate::query::Feedback::default(),
    }
}

#[test]
fn every_kind_through_the_rewrites_and_the_run_keeps_the_gold_rows() {
    let g = graph();
    let db = crate::sql::exec::Database::Sqlite(DB.into());
    for (name, view, p, gold) in kinds(&g) {
        for counted in [None, Some("PAYMENT")] {
            let sql = compile(&p, &pv(&g, &view, Dialect::Sqlite)).unwrap();
            let t = task(&view, &db, counted);
            let mut attempt = crate::types::trace::SqlAttempt::default();
            let (out, _) = crate::query::check_and_run(&t, sql.clone(), &mut attempt);
            let out = out.unwrap_or_else(|e| panic!("{name}: {sql}: {e}"));
            let got: BTreeSet<Vec<String>> =
                out.rows.unwrap().rows.iter().map(|r| r.iter().map(|v| v.to_string()).collect()).collect();
            assert_eq!(got, rows(None, gold), "{name} ({counted:?}): {sql} ran as {}", out.checked.sql);
        }
    }
}

/// The plan step itself with a scripted model: a plan answered is the
/// answer (no SQL call); in `auto`, `needs_sql` runs the fallback; in
/// `plan`, it fails with the reason.
/// A plan task over `pview` whose prompt is "plan please" (what the fake
/// model answers), every clause allowed.
fn plan_task_over(pview: &PlanView, form: QueryForm, question: &str) -> PlanTask {
    PlanTask {
        form,
        question: question.into(),
        prompt: "plan please".into(),
        grammar: grammar::plan_grammar(pview, &Cues::ALL),
        view: pview.clone(),
        temperature: 0.0,
        max_tokens: PLAN_MAX_TOKENS,
        examples_shown: 0,
    }
}

#[test]
fn generate_answers_from_the_plan_or_falls_back() {
    use crate::llm::fake::FakeChat;
    let g = graph();
    let db = crate::sql::exec::Database::Sqlite(DB.into());
    let view = datacenters(&g);
    let t = task(&view, &db, None);
    let pview = pv(&g, &view, Dialect::Sqlite);
    let plan_task = |form| plan_task_over(&pview, form, "clients of dev datacenters");
    let answer = r#"{"kind": "query", "select": [{"col": "CLIENT_name"}], "where": {"col": "DATACENTER_name", "op": "like", "value": "dev%"}}"#;
    let llm = FakeChat::new().on(&["plan please"], &[answer]);
    let mut qt = QueryTrace::default();
    let o = generate(&plan_task(QueryForm::Plan), &t, &llm, &mut qt, |_| panic!("no fallback")).unwrap();
    assert!(o.checked.sql.contains("DATACENTER_name LIKE 'dev%'"), "{}", o.checked.sql);
    let pt = qt.plan.as_ref().unwrap();
    assert_eq!(pt.form, "plan");
    assert!(!pt.fell_back && pt.error.is_none(), "{pt:?}");
    assert_eq!(qt.attempts.len(), 1);
    assert_eq!(qt.attempts[0].extraction, "plan");
    assert_eq!(qt.sql.as_deref(), Some(o.checked.sql.as_str()));

    let llm = FakeChat::new().on(&["plan please"], &[r#"{"kind": "needs_sql"}"#]);
    let mut qt = QueryTrace::default();
    let mut called = false;
    let r = generate(&plan_task(QueryForm::Auto), &t, &llm, &mut qt, |qt| {
        called = true;
        let mut attempt = crate::types::trace::SqlAttempt::default();
        let sql = "SELECT CLIENT_name FROM lucy_view".to_string();
        let (o, _) = crate::query::check_and_run(&t, sql, &mut attempt);
        qt.attempts.push(attempt);
        o
    });
    assert!(r.is_ok() && called);
    let pt = qt.plan.as_ref().unwrap();
    assert!(pt.fell_back, "{pt:?}");
    assert!(pt.error.as_deref().unwrap().contains("needs free SQL"), "{pt:?}");

    let llm = FakeChat::new().on(&["plan please"], &[r#"{"kind": "needs_sql"}"#]);
    let mut qt = QueryTrace::default();
    let e = generate(&plan_task(QueryForm::Plan), &t, &llm, &mut qt, |_| panic!("no fallback")).unwrap_err();
    assert!(e.to_string().contains("needs free SQL"), "{e}");
    assert!(!qt.plan.as_ref().unwrap().fell_back);
}

#[test]
fn auto_asks_for_free_sql_when_the_plan_finds_no_row() {
    use crate::llm::fake::FakeChat;
    let g = graph();
    let db = crate::sql::exec::Database::Sqlite(DB.into());
    let view = datacenters(&g);
    let t = task(&view, &db, None);
    let pview = pv(&g, &view, Dialect::Sqlite);
    let plan_task = plan_task_over(&pview, QueryForm::Auto, "clients of datacenters named nowhere");
    let empty = r#"{"kind": "query", "select": [{"col": "CLIENT_name"}], "where": {"col": "DATACENTER_name", "op": "=", "value": "nowhere"}}"#;
    let run = |sql: &str, qt: &mut QueryTrace| {
        let mut attempt = crate::types::trace::SqlAttempt::default();
        let (o, _) = crate::query::check_and_run(&t, sql.to_string(), &mut attempt);
        qt.attempts.push(attempt);
        qt.sql = Some(sql.to_string());
        o
    };
    // The SQL finds rows: its answer wins.
    let llm = FakeChat::new().on(&["plan please"], &[empty]);
    let mut qt = QueryTrace::default();
    let o = generate(&plan_task, &t, &llm, &mut qt, |qt| run("SELECT CLIENT_name FROM lucy_view", qt)).unwrap();
    assert!(!o.rows.as_ref().unwrap().rows.is_empty());
    let pt = qt.plan.as_ref().unwrap();
    assert!(pt.fell_back && pt.error.as_deref() == Some("the plan's SQL returned no row"), "{pt:?}");
    // The SQL finds none either: the plan's answer stands, and the trace says so.
    let llm = FakeChat::new().on(&["plan please"], &[empty]);
    let mut qt = QueryTrace::default();
    let o = generate(&plan_task, &t, &llm, &mut qt, |qt| {
        run("SELECT CLIENT_name FROM lucy_view WHERE CLIENT_name = 'nobody'", qt)
    })
    .unwrap();
    assert!(o.checked.sql.contains("'nowhere'"), "{}", o.checked.sql);
    assert_eq!(qt.sql.as_deref(), Some(o.checked.sql.as_str()));
    let pt = qt.plan.as_ref().unwrap();
    assert!(!pt.fell_back && pt.error.as_deref().unwrap().contains("the plan's answer stands"), "{pt:?}");
}

#[test]
fn tidying_reads_the_views_keys_and_types() {
    let g = graph();
    let v = ddo_view(&g, &["CLIENT", "PAYMENT"], &[("CLIENT", "name"), ("PAYMENT", "date"), ("PAYMENT", "client_id")]);
    let view = pv(&g, &v, Dialect::Sqlite);
    let cols: Vec<&str> = view.columns.iter().map(|c| c.alias.as_str()).collect();
    assert!(cols.contains(&"PAYMENT_client_id") && cols.contains(&"CLIENT_id"), "{cols:?}");
    // A count of PAYMENT's reference to CLIENT, for "how many payments": PAYMENT's key.
    let p = plan(
        r#"{"kind":"query","select":[{"col":"CLIENT_name"},{"agg":"count","col":"PAYMENT_client_id"}],"group_by":["CLIENT_name"]}"#,
    );
    assert_eq!(view.column("PAYMENT_client_id").unwrap().refers_to.as_deref(), Some("CLIENT"));
    let (t, notes) = tidy::tidy(&p, "How many payments were made on each date?", Some(&view));
    assert_eq!(t.select[1], Item::agg(Agg::Count, "PAYMENT_id"), "{notes:?}");
    // The question does not name payments, or names the clients the column refers to: left alone.
    assert_eq!(tidy::tidy(&p, "How many rows per name?", Some(&view)).0, p);
    assert_eq!(tidy::tidy(&p, "How many payments did each client make?", Some(&view)).0, p);
    // Ids the question never holds are dropped; numbers it holds, and date parts, stay.
    let p = plan(
        r#"{"kind":"query","select":[{"col":"CLIENT_name"}],"where":{"and":[{"col":"PAYMENT_date","part":"month","op":"=","value":12},{"col":"PAYMENT_client_id","op":"in","values":[1,2,3,4]}]}}"#,
    );
    let (t, notes) = tidy::tidy(&p, "Which clients paid in December 2024?", Some(&view));
    assert_eq!(
        t.filter,
        plan(r#"{"kind":"query","where":{"col":"PAYMENT_date","part":"month","op":"=","value":12}}"#).filter,
        "{notes:?}"
    );
    let (t, _) = tidy::tidy(&p, "Which of clients 1, 2, 3 and 4 paid in December?", Some(&view));
    assert_eq!(t, p);
    // Only the numbers the question holds stay in the list; "at least one" holds 1.
    let (t, notes) = tidy::tidy(&p, "Which of clients 2 and 3 made at least one payment in December?", Some(&view));
    let Some(Filter::And { and }) = &t.filter else { panic!("{t:?}") };
    assert_eq!(
        and[1],
        plan(r#"{"kind":"query","where":{"col":"PAYMENT_client_id","op":"in","values":[1,2,3]}}"#).filter.unwrap(),
        "{notes:?}"
    );
    // The tidied plan compiles and runs.
    compile(&t, &view).unwrap();
}

#[test]
fn two_columns_compare_in_the_grammar_and_the_compiler() {
    let g = graph();
    // A pool's CPU overhead limit against its runtime usage (DDO Q2's shape).
    let v = ddo_view(
        &g,
        &["RESOURCEPOOL", "CCPU", "RCPU"],
        &[("RESOURCEPOOL", "name"), ("CCPU", "overheadlimit"), ("RCPU", "overallusage")],
    );
    let view = pv(&g, &v, Dialect::Sqlite);
    let gr = grammar::plan_grammar(
        &view,
        &Cues::of("List pools whose CPU overhead limit is greater than the usage by 100."),
    );
    let json = r#"{"kind": "query", "select": [{"col": "RESOURCEPOOL_name"}], "where": {"col": "CCPU_overheadlimit", "op": ">", "other": "RCPU_overallusage", "plus": 100}}"#;
    check_text(&gr, json).unwrap_or_else(|e| panic!("{e}\n{gr}"));
    // Text columns compare for equality only; plus needs numbers.
    assert!(check_text(&gr, r#"{"kind": "query", "select": [{"col": "RESOURCEPOOL_name"}], "where": {"col": "RESOURCEPOOL_name", "op": "=", "other": "RESOURCEPOOL_name"}}"#).is_ok());
    assert!(check_text(&gr, r#"{"kind": "query", "select": [{"col": "RESOURCEPOOL_name"}], "where": {"col": "RESOURCEPOOL_name", "op": ">", "other": "CCPU_overheadlimit"}}"#).is_err());
    let p = plan(json);
    let golden = [
        (Dialect::Sqlite, "SELECT RESOURCEPOOL_name FROM lucy_view WHERE CCPU_overheadlimit > RCPU_overallusage + 100"),
        (
            Dialect::Postgres,
            "SELECT RESOURCEPOOL_name FROM lucy_view WHERE CCPU_overheadlimit > RCPU_overallusage + 100",
        ),
        (
            Dialect::Mysql,
            "SELECT `RESOURCEPOOL_name` FROM `lucy_view` WHERE `CCPU_overheadlimit` > `RCPU_overallusage` + 100",
        ),
        (
            Dialect::Spark,
            "SELECT `RESOURCEPOOL_name` FROM `lucy_view` WHERE `CCPU_overheadlimit` > `RCPU_overallusage` + 100",
        ),
    ];
    for (d, want) in golden {
        let sql = compile(&p, &pv(&g, &v, d)).unwrap();
        let cols: Vec<String> = v.columns.iter().map(|c| c.alias.clone()).collect();
        check_query(&sql, &v.view_name, &cols, d).unwrap_or_else(|e| panic!("{d:?} {sql}: {e}"));
        if d == Dialect::Sqlite || d == Dialect::Postgres {
            assert_eq!(sql, want, "{d:?}");
        }
    }
    // The gold rows of DDO Q2 (every pool whose limit exceeds its usage by 100).
    let sql = compile(&p, &view).unwrap();
    let gold = "SELECT RESOURCEPOOL.name FROM RESOURCEPOOL JOIN CONFIG ON CONFIG.rspool_id = RESOURCEPOOL.id JOIN CCPU ON CCPU.config_id = CONFIG.id JOIN RUNTIME ON RUNTIME.rspool_id = RESOURCEPOOL.id JOIN RCPU ON RCPU.runtime_id = RUNTIME.id WHERE CCPU.overheadlimit > RCPU.overallusage + 100";
    assert_eq!(rows(Some(&v), &sql), rows(None, gold));
    // Bad: an ordering of text, a value beside the other column, a date part.
    let e = |j: &str| compile(&plan(j), &view).unwrap_err().to_string();
    assert!(e(r#"{"kind":"query","select":[{"col":"RESOURCEPOOL_name"}],"where":{"col":"RESOURCEPOOL_name","op":"<","other":"CCPU_overheadlimit"}}"#).contains("not both numbers"));
    assert!(e(r#"{"kind":"query","select":[{"col":"RESOURCEPOOL_name"}],"where":{"col":"CCPU_overheadlimit","op":"<","value":3,"other":"RCPU_overallusage"}}"#).contains("give no value"));
    assert!(e(r#"{"kind":"query","select":[{"col":"RESOURCEPOOL_name"}],"where":{"col":"CCPU_overheadlimit","op":"like","other":"RCPU_overallusage"}}"#).contains("takes ="));
    // The plan's table shows the comparison.
    assert!(
        describe::table(&p).iter().any(|l| l.text == "CCPU_overheadlimit > RCPU_overallusage + 100"),
        "{:?}",
        describe::table(&p)
    );
}

#[test]
fn auto_asks_no_plan_for_a_question_asking_for_arithmetic() {
    use crate::llm::fake::FakeChat;
    let g = graph();
    let db = crate::sql::exec::Database::Sqlite(DB.into());
    let view = datacenters(&g);
    let t = task(&view, &db, None);
    let pview = pv(&g, &view, Dialect::Sqlite);
    let plan_task =
        plan_task_over(&pview, QueryForm::Auto, "What is the number of clients plus the number of datacenters?");
    // The fake model answers nothing: a plan call would fail.
    let llm = FakeChat::new();
    let mut qt = QueryTrace::default();
    let mut called = false;
    let r = generate(&plan_task, &t, &llm, &mut qt, |qt| {
        called = true;
        let mut attempt = crate::types::trace::SqlAttempt::default();
        let (o, _) = crate::query::check_and_run(
            &t,
            "SELECT COUNT(DISTINCT CLIENT_id) + COUNT(DISTINCT DATACENTER_id) FROM lucy_view".into(),
            &mut attempt,
        );
        qt.attempts.push(attempt);
        o
    });
    assert!(r.is_ok() && called);
    let pt = qt.plan.as_ref().unwrap();
    assert!(pt.fell_back && pt.error.as_deref().unwrap().contains("arithmetic"), "{pt:?}");
    assert!(qt.attempts.iter().all(|a| a.extraction != "plan"));
}

#[test]
fn the_plan_prompt_shows_an_instance_note_once_and_first_sentences_only() {
    let g = graph();
    let mut v = payments(&g);
    let note = "CLIENT as payer: the client who pays. Curated: see the contract table.";
    for c in v.columns.iter_mut().filter(|c| c.table == "CLIENT") {
        c.description = Some(match &c.description {
            Some(d) => format!("{note} — {d} Declared NOT NULL but often empty."),
            None => note.to_string(),
        });
        c.note = Some(note.into());
    }
    let p = pv(&g, &v, Dialect::Sqlite);
    let prompt =
        plan_prompt(&Prompts::embedded(), &v, &p, "Payments per client?", PlanPromptExtras::default()).unwrap();
    // The note once, on the instance's table line, cut at its first sentence.
    assert_eq!(prompt.matches("CLIENT as payer").count(), 1, "{prompt}");
    assert!(prompt.contains("CLIENT (CLIENT as payer: the client who pays.)"), "{prompt}");
    assert!(!prompt.contains("Curated") && !prompt.contains("Declared NOT NULL"), "{prompt}");
    // The column's own description; `TABLE.column` only where the alias does not spell it.
    assert!(prompt.contains("- CLIENT_name (text, measure): Client (customer) name.\n"), "{prompt}");
    assert!(!prompt.contains("(CLIENT.name"), "{prompt}");
}

#[test]
fn a_first_sentence_ends_at_a_period_before_a_capital_not_at_eg() {
    assert_eq!(first_sentence("Name, e.g. 'dev-east-1'. Next one."), "Name, e.g. 'dev-east-1'.");
    assert_eq!(first_sentence("Status (e.g. Open, closed)."), "Status (e.g. Open, closed).");
    assert_eq!(first_sentence("One. Two."), "One.");
    assert_eq!(first_sentence("no end"), "no end");
    assert_eq!(first_sentence(""), "");
}

#[test]
fn a_cut_answer_is_closed_after_its_last_whole_item() {
    let cut = r#"{"kind": "query", "select": [{"col": "CLIENT_name"}], "where": {"and": [{"col": "A", "op": "=", "value": 1}, {"col": "B", "op": "=", "value": 1}, {"col": "B", "op": "=", "value": 1}, {"col": "RSPOOL2CLIENT_client"#;
    let closed = ast::close_cut(cut).unwrap();
    assert!(closed.ends_with(r#"{"col": "B", "op": "=", "value": 1}]}}"#), "{closed}");
    assert!(parse_answer(&closed).is_ok(), "{closed}");
    // Cut inside the second member: the first stays.
    let closed = ast::close_cut(r#"{"kind": "query", "select": [{"col": "X"}], "where": {"col": "Y", "op"#).unwrap();
    assert_eq!(closed, r#"{"kind": "query", "select": [{"col": "X"}]}"#);
    // A whole object, nothing ended inside a cut one, braces inside strings.
    assert_eq!(ast::close_cut(r#"{"kind": "needs_sql"}"#), None);
    assert_eq!(ast::close_cut(r#"{"kind": "que"#), None);
    let closed = ast::close_cut(r#"{"kind": "query", "select": [{"col": "a}]"}], "where": {"#).unwrap();
    assert_eq!(closed, r#"{"kind": "query", "select": [{"col": "a}]"}]}"#);
}

#[test]
fn a_listing_by_a_column_it_does_not_show_shows_it_first() {
    let g = graph();
    let v = ddo_view(&g, &["CLIENT", "PAYMENT"], &[("CLIENT", "name"), ("PAYMENT", "date")]);
    let p = pv(&g, &v, Dialect::Sqlite);
    let listing = plan(r#"{"kind": "query", "select": [{"col": "PAYMENT_date"}]}"#);
    let (t, notes) = tidy::tidy(&listing, "What are the payment dates of all clients by client name?", Some(&p));
    assert_eq!(t.select, vec![Item::col("CLIENT_name"), Item::col("PAYMENT_date")], "{notes:?}");
    // An ordering "by", or one word only: left alone.
    for q in ["Payment dates sorted by client name.", "Payment dates by name."] {
        assert_eq!(tidy::tidy(&listing, q, Some(&p)).0.select, listing.select, "{q}");
    }
}

#[test]
fn auto_asks_for_free_sql_when_the_plan_leaves_a_compared_count_out() {
    use crate::llm::fake::FakeChat;
    let g = graph();
    let db = crate::sql::exec::Database::Sqlite(DB.into());
    let view = datacenters(&g);
    let t = task(&view, &db, None);
    let pview = pv(&g, &view, Dialect::Sqlite);
    let q = "Which datacenters serve more than one client?";
    // The model listed the datacenters and left the comparison out.
    let listed = r#"{"kind": "query", "select": [{"col": "DATACENTER_name"}]}"#;
    let llm = FakeChat::new().on(&["plan please"], &[listed]);
    let mut qt = QueryTrace::default();
    let mut called = false;
    let r = generate(&plan_task_over(&pview, QueryForm::Auto, q), &t, &llm, &mut qt, |qt| {
        called = true;
        let mut attempt = crate::types::trace::SqlAttempt::default();
        let sql = "SELECT DATACENTER_name FROM lucy_view GROUP BY DATACENTER_name HAVING COUNT(DISTINCT CLIENT_id) > 1";
        let (o, _) = crate::query::check_and_run(&t, sql.to_string(), &mut attempt);
        qt.attempts.push(attempt);
        o
    });
    assert!(r.is_ok() && called);
    let pt = qt.plan.as_ref().unwrap();
    assert!(pt.fell_back && pt.error.as_deref().unwrap().contains("compares a count with 1"), "{pt:?}");
    // A plan holding the number (a having) answers.
    let held = r#"{"kind": "query", "select": [{"col": "DATACENTER_name"}], "group_by": ["DATACENTER_name"], "having": [{"agg": "count_distinct", "col": "CLIENT_id", "op": ">", "value": 1}]}"#;
    let llm = FakeChat::new().on(&["plan please"], &[held]);
    let mut qt = QueryTrace::default();
    let o = generate(&plan_task_over(&pview, QueryForm::Auto, q), &t, &llm, &mut qt, |_| panic!("no fallback"));
    assert!(o.is_ok() && !qt.plan.as_ref().unwrap().fell_back, "{:?}", qt.plan);
    assert_eq!(plan(held).numbers(), vec![1.0]);
}

#[test]
fn an_unasked_group_whose_value_the_question_names_becomes_a_filter() {
    let g = graph();
    let v = datacenters(&g);
    let values = [ColumnValues {
        alias: "DATACENTER_name".into(),
        matched: vec!["green park".into(), "green".into(), "park lane".into()],
        all: None,
    }];
    let pview = PlanView::of_view(&g, &v, Dialect::Sqlite, FanoutMode::Rewrite, None, &values);
    let p = plan(
        r#"{"kind":"query","select":[{"agg":"count_distinct","col":"CLIENT_id"}],"group_by":["DATACENTER_name"]}"#,
    );
    let (t, notes) = tidy::tidy(&p, "How many clients use the datacenter green park?", Some(&pview));
    assert!(t.group_by.is_empty(), "{notes:?}");
    let want = plan(r#"{"kind":"query","where":{"col":"DATACENTER_name","op":"=","value":"green park"}}"#);
    assert_eq!(t.filter, want.filter, "{notes:?}");
    // No value said: the group goes, no filter comes.
    let (t, _) = tidy::tidy(&p, "How many clients are there?", Some(&pview));
    assert!(t.group_by.is_empty() && t.filter.is_none());
    // The plan filters the column already: left as it is.
    let f = plan(
        r#"{"kind":"query","select":[{"agg":"count_distinct","col":"CLIENT_id"}],"where":{"col":"DATACENTER_name","op":"like","value":"green%"},"group_by":["DATACENTER_name"]}"#,
    );
    let (t, _) = tidy::tidy(&f, "How many clients use the datacenter green park?", Some(&pview));
    assert_eq!(t.filter, f.filter);
}

#[test]
fn a_list_the_question_names_one_of_is_an_enumeration() {
    let g = graph();
    let v = datacenters(&g);
    let pview = pv(&g, &v, Dialect::Sqlite);
    let p = plan(
        r#"{"kind":"query","select":[{"col":"DATACENTER_name"}],"where":{"col":"DATACENTER_id","op":"in","values":[1,2,3,4]}}"#,
    );
    let (t, notes) = tidy::tidy(&p, "Which datacenters serve more than one client?", Some(&pview));
    assert!(t.filter.is_none(), "{notes:?}");
    assert!(notes.iter().any(|n| n.contains("an enumeration")), "{notes:?}");
    // Two of the four said: the two stay.
    let (t, _) = tidy::tidy(&p, "Datacenters 1 and 3?", Some(&pview));
    let want = plan(r#"{"kind":"query","where":{"col":"DATACENTER_id","op":"in","values":[1,3]}}"#);
    assert_eq!(t.filter, want.filter);
}

#[test]
fn auto_follows_verified_queries_with_free_sql() {
    use crate::llm::fake::FakeChat;
    let g = graph();
    let db = crate::sql::exec::Database::Sqlite(DB.into());
    let view = datacenters(&g);
    let t = task(&view, &db, None);
    let pview = pv(&g, &view, Dialect::Sqlite);
    let p = PlanTask { examples_shown: 2, ..plan_task_over(&pview, QueryForm::Auto, "clients of dev datacenters") };
    // No plan is asked: the fake model knows no plan prompt.
    let llm = FakeChat::new();
    let mut qt = QueryTrace::default();
    let mut called = false;
    let r = generate(&p, &t, &llm, &mut qt, |qt| {
        called = true;
        let mut attempt = crate::types::trace::SqlAttempt::default();
        let (o, _) = crate::query::check_and_run(&t, "SELECT CLIENT_name FROM lucy_view".into(), &mut attempt);
        qt.attempts.push(attempt);
        o
    });
    assert!(r.is_ok() && called);
    let pt = qt.plan.as_ref().unwrap();
    assert!(pt.fell_back && pt.error.as_deref().unwrap().contains("2 verified queries"), "{pt:?}");
    assert!(llm.requests.lock().unwrap().is_empty());
}

/// "How many payments were made in each month of 2024?": a date bucket.
const PER_MONTH: &str = r#"{"kind": "query", "select": [{"col": "PAYMENT_date", "bucket": "month"}, {"agg": "count_distinct", "col": "PAYMENT_id"}], "where": {"col": "PAYMENT_date", "part": "year", "op": "=", "value": 2024}, "group_by": ["PAYMENT_date"], "order_by": [{"col": "PAYMENT_date"}]}"#;

#[test]
fn a_date_bucket_groups_and_orders_by_the_cut_date_in_every_dialect() {
    let g = graph();
    let v = payments(&g);
    let p = plan(PER_MONTH);
    let sqlite = compile(&p, &pv(&g, &v, Dialect::Sqlite)).unwrap();
    assert_eq!(
        sqlite,
        "SELECT strftime('%Y-%m', PAYMENT_date) AS PAYMENT_date_month, COUNT(DISTINCT PAYMENT_id) FROM lucy_view \
         WHERE CAST(strftime('%Y', PAYMENT_date) AS INTEGER) = 2024 GROUP BY strftime('%Y-%m', PAYMENT_date) \
         ORDER BY strftime('%Y-%m', PAYMENT_date)"
    );
    let pg = compile(&p, &pv(&g, &v, Dialect::Postgres)).unwrap();
    assert!(pg.contains("GROUP BY to_char(CAST(PAYMENT_date AS TIMESTAMP), 'YYYY-MM')"), "{pg}");
    let my = compile(&p, &pv(&g, &v, Dialect::Mysql)).unwrap();
    assert!(my.starts_with("SELECT DATE_FORMAT(PAYMENT_date, '%Y-%m') AS PAYMENT_date_month"), "{my}");
    let spark = compile(&p, &pv(&g, &v, Dialect::Spark)).unwrap();
    assert!(spark.contains("date_format(PAYMENT_date, 'yyyy-MM')"), "{spark}");
    let cols: Vec<String> = v.columns.iter().map(|c| c.alias.clone()).collect();
    for d in DIALECTS {
        let sql = compile(&p, &pv(&g, &v, d)).unwrap();
        check_query(&sql, &v.view_name, &cols, d).unwrap_or_else(|e| panic!("{d:?}: {sql}: {e}"));
    }
    // Through the rewrites and the run, the gold rows.
    let db = crate::sql::exec::Database::Sqlite(DB.into());
    let t = task(&v, &db, None);
    let mut attempt = crate::types::trace::SqlAttempt::default();
    let (out, _) = crate::query::check_and_run(&t, sqlite.clone(), &mut attempt);
    let out = out.unwrap_or_else(|e| panic!("{sqlite}: {e}"));
    let got: BTreeSet<Vec<String>> =
        out.rows.unwrap().rows.iter().map(|r| r.iter().map(|v| v.to_string()).collect()).collect();
    let gold = "SELECT strftime('%Y-%m', date), COUNT(*) FROM PAYMENT WHERE date >= '2024-01-01' AND date < '2025-01-01' GROUP BY 1";
    assert_eq!(got, rows(None, gold), "{sqlite} ran as {}", out.checked.sql);
    assert!(!got.is_empty());
    // A bucket reads a date column only.
    let bad_plan = plan(r#"{"kind": "query", "select": [{"col": "CLIENT_name", "bucket": "year"}]}"#);
    let e = compile(&bad_plan, &pv(&g, &v, Dialect::Sqlite)).unwrap_err().to_string();
    assert!(e.contains("not a date"), "{e}");
    // The table reads it.
    assert!(describe::table(&p).iter().any(|l| l.text.contains("PAYMENT_date by month")));
}

#[test]
fn the_grammar_offers_a_date_bucket_only_when_the_question_asks_per_period() {
    let g = graph();
    let v = payments(&g);
    let view = pv(&g, &v, Dialect::Sqlite);
    let per_month = grammar::plan_grammar(
        &view,
        &Cues::of("How many payments were made in each month of 2024, in calendar order?"),
    );
    check_text(&per_month, PER_MONTH).unwrap_or_else(|e| panic!("{e}\n{per_month}"));
    let total = grammar::plan_grammar(&view, &Cues::of("How many payments were made in 2024, in order?"));
    assert!(check_text(&total, PER_MONTH).is_err(), "admitted a bucket the question never asked for");
    // Over a number column, never.
    let num = r#"{"kind": "query", "select": [{"col": "PAYAMOUNT_amount", "bucket": "month"}]}"#;
    assert!(check_text(&per_month, num).is_err());
}
