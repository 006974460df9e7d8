//! Round trip of QueryView's plan form (issue 46): random plans over random
//! DDO views are sentences of their view's grammar, compile in every
//! dialect, pass the guard, go through the fan-out analysis (rewritten where
//! the view repeats rows, the rewrite through the guard again), and run on
//! DDO's SQLite database.

use std::path::Path;
use std::sync::OnceLock;

use lucy::graph::SchemaGraph;
use lucy::query::grammar::check_text;
use lucy::query::plan::ast::*;
use lucy::query::plan::grammar::plan_grammar;
use lucy::query::plan::Cues;
use lucy::query::plan::{compile, ColumnClass, ColumnValues, PlanView};
use lucy::sql::exec::run_readonly;
use lucy::sql::guard::check_query;
use lucy::types::{ColumnRef, Dialect, FanoutMode, ViewRequest, ViewResult};
use proptest::prelude::*;

const MODEL: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels/ddo.json");
const DB: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels/ddo.sqlite");

/// Table sets of DDO whose views the plans are written over: a lookup, a
/// 1:M chain, the m:m path, a star's branches.
const SETS: &[&[&str]] = &[
    &["CLIENT", "LOCATION"],
    &["CLIENT", "PAYMENT", "PAYAMOUNT"],
    &["CLIENT", "DATACENTER"],
    &["RESOURCEPOOL", "CONFIG", "CCPU"],
    &["RESOURCEPOOL", "RUNTIME", "RCPU", "RMEMORY"],
    &["PAYAMOUNT", "TAX", "SUPERCHARGE", "INCOME"],
    &["CLIENT", "RETENTION", "GIFT", "BONUS"],
    &["DATACENTER", "COMPUTE", "LOCATION"],
];

struct Fixture {
    graph: SchemaGraph,
    views: Vec<ViewResult>,
}

fn fixture() -> &'static Fixture {
    static F: OnceLock<Fixture> = OnceLock::new();
    F.get_or_init(|| {
        let graph = SchemaGraph::new(lucy::model::load(Path::new(MODEL)).unwrap()).unwrap();
        let views = SETS
            .iter()
            .map(|set| {
                let mut req = ViewRequest::new(set.iter().map(|t| t.to_string()).collect());
                // Every column of every table (as `lucy ask` does).
                req.attributes = set
                    .iter()
                    .flat_map(|t| {
                        let id = graph.table_id(t).unwrap();
                        graph.table(id).columns.iter().map(|c| ColumnRef::new(*t, &c.name)).collect::<Vec<_>>()
                    })
                    .collect();
                lucy::solve::generate_view(&graph, &req).unwrap()
            })
            .collect();
        Fixture { graph, views }
    })
}

/// Numbers drawn from proptest's vector, in turn.
struct Draw<'a> {
    n: &'a [u32],
    i: usize,
}

impl Draw<'_> {
    fn next(&mut self, below: usize) -> usize {
        let v = self.n[self.i % self.n.len()] as usize;
        self.i += 1;
        v % below.max(1)
    }
    fn pick<'b, T>(&mut self, xs: &'b [T]) -> &'b T {
        &xs[self.next(xs.len())]
    }
    fn coin(&mut self) -> bool {
        self.next(2) == 0
    }
}

const TEXTS: &[&str] = &["a", "dev%", "O'Neil", "back\\slash", "%e%", "Juniper Labs", "F", ""];

fn literal(c: &lucy::query::plan::PlanColumn, d: &mut Draw) -> Literal {
    match c.class {
        ColumnClass::Number => {
            let n: serde_json::Number = if d.coin() {
                (d.next(2000) as i64 - 500).into()
            } else {
                serde_json::Number::from_f64(d.next(100_000) as f64 / 100.0).unwrap()
            };
            Literal::Number(n)
        }
        ColumnClass::Date => Literal::Text(format!("2024-{:02}-{:02}", 1 + d.next(12), 1 + d.next(28))),
        _ if !c.values.is_empty() => Literal::Text(d.pick(&c.values).clone()),
        _ => Literal::Text(d.pick(TEXTS).to_string()),
    }
}

fn condition(v: &PlanView, d: &mut Draw) -> Filter {
    let c = d.pick(&v.columns);
    let col = c.alias.clone();
    let mut cond = Condition {
        col,
        part: None,
        op: Op::IsNull,
        value: None,
        values: None,
        low: None,
        high: None,
        other: None,
        plus: None,
    };
    match (c.class, d.next(6)) {
        (_, 0) => cond.op = if d.coin() { Op::IsNull } else { Op::IsNotNull },
        // Another column of the same class: ordered for numbers and dates
        // (numbers plus a number), equal or not for the rest.
        (class, 5) => {
            let same: Vec<&lucy::query::plan::PlanColumn> = v.columns.iter().filter(|o| o.class == class).collect();
            let o = d.pick(&same);
            cond.other = Some(o.alias.clone());
            if matches!(class, ColumnClass::Number | ColumnClass::Date) {
                cond.op = *d.pick(&Op::COMPARISONS);
                if class == ColumnClass::Number && d.coin() {
                    cond.plus = Some(Literal::Number((d.next(100) as i64).into()));
                }
            } else {
                cond.op = if d.coin() { Op::Eq } else { Op::Ne };
            }
        }
        (ColumnClass::Date, 1) => {
            cond.part = Some(*d.pick(&DatePart::ALL));
            cond.op = *d.pick(&Op::COMPARISONS);
            cond.value = Some(Literal::Number((1 + d.next(12) as i64).into()));
        }
        (ColumnClass::Number | ColumnClass::Date, 2) => {
            cond.op = Op::Between;
            cond.low = Some(literal(c, d));
            cond.high = Some(literal(c, d));
        }
        (ColumnClass::Text | ColumnClass::Other, 2) => {
            cond.op = if d.coin() { Op::Like } else { Op::NotLike };
            cond.value = Some(Literal::Text(d.pick(TEXTS).to_string()));
        }
        (ColumnClass::Number | ColumnClass::Text | ColumnClass::Other, 3) => {
            cond.op = if d.coin() { Op::In } else { Op::NotIn };
            cond.values = Some((0..1 + d.next(3)).map(|_| literal(c, d)).collect());
        }
        (ColumnClass::Number | ColumnClass::Date, _) => {
            cond.op = *d.pick(&Op::COMPARISONS);
            cond.value = Some(literal(c, d));
        }
        (_, _) => {
            cond.op = if d.coin() { Op::Eq } else { Op::Ne };
            cond.value = Some(literal(c, d));
        }
    }
    Filter::Cond(cond)
}

fn filter(v: &PlanView, d: &mut Draw, depth: usize) -> Filter {
    if depth >= 3 || d.next(3) != 0 {
        return condition(v, d);
    }
    let parts: Vec<Filter> = (0..1 + d.next(3)).map(|_| filter(v, d, depth + 1)).collect();
    if d.coin() {
        Filter::And { and: parts }
    } else {
        Filter::Or { or: parts }
    }
}

fn item(v: &PlanView, d: &mut Draw, plain: bool) -> Item {
    let c = &d.pick(&v.columns).alias.clone();
    if plain || d.next(3) == 0 {
        return Item::col(c);
    }
    let measures: Vec<&str> = v.columns.iter().filter(|c| c.measure).map(|c| c.alias.as_str()).collect();
    match d.next(6) {
        0 => Item::count_rows(),
        1 => Item::agg(Agg::Count, c),
        2 => Item::agg(Agg::CountDistinct, c),
        3 if !measures.is_empty() => {
            let m: &str = d.pick::<&str>(&measures);
            Item::agg(if d.coin() { Agg::Sum } else { Agg::Avg }, m)
        }
        _ => Item::agg(if d.coin() { Agg::Min } else { Agg::Max }, c),
    }
}

fn order(v: &PlanView, d: &mut Draw, plain: bool) -> Vec<OrderItem> {
    (0..d.next(3))
        .map(|_| {
            let i = item(v, d, plain);
            OrderItem { agg: i.agg, col: i.col, desc: d.coin() }
        })
        .collect()
}

fn plan(v: &PlanView, d: &mut Draw) -> Plan {
    let mut p = Plan::new(PlanKind::Query);
    let with_filter = d.coin();
    match d.next(8) {
        0 => {
            p.kind = PlanKind::TopPerGroup;
            p.select = (0..1 + d.next(3)).map(|_| item(v, d, true)).collect();
            p.per = Some(d.pick(&v.columns).alias.clone());
            p.order_by = order(v, d, true);
            if p.order_by.is_empty() {
                p.order_by.push(OrderItem { agg: None, col: Some(d.pick(&v.columns).alias.clone()), desc: true });
            }
            p.top = Some(1 + d.next(3) as u64);
        }
        1 => {
            // A column of an instance, without a column of another.
            let first = v.grain.columns[d.next(v.grain.columns.len())].instance.clone();
            let mine: Vec<String> =
                v.grain.columns.iter().filter(|c| c.instance == first).map(|c| c.alias.clone()).collect();
            let other: Vec<String> =
                v.grain.columns.iter().filter(|c| c.instance != first).map(|c| c.alias.clone()).collect();
            if other.is_empty() {
                p.select = vec![Item::col(&mine[0])];
            } else {
                let x: &String = d.pick(&mine[..]);
                p.kind = PlanKind::Without;
                p.select = vec![Item::col(x)];
                p.without = Some(d.pick(&other).clone());
                p.order_by = vec![OrderItem { agg: None, col: p.select[0].col.clone(), desc: d.coin() }];
            }
        }
        2 => {
            p.kind = PlanKind::CountOf;
            p.of = Some(d.pick(&v.countable()).clone());
            p.group_by = (0..d.next(3)).map(|_| d.pick(&v.columns).alias.clone()).collect();
            if d.coin() {
                p.order_by = vec![OrderItem { agg: Some(Agg::Count), col: None, desc: true }];
            }
        }
        _ => {
            p.select = (0..1 + d.next(4)).map(|_| item(v, d, false)).collect();
            p.distinct = d.coin();
            p.group_by = (0..d.next(3)).map(|_| d.pick(&v.columns).alias.clone()).collect();
            if (!p.group_by.is_empty() || p.select.iter().any(|i| i.agg.is_some())) && d.coin() {
                let i = item(v, d, false);
                if let Some(agg) = i.agg {
                    p.having = vec![Having {
                        agg,
                        col: i.col,
                        op: *d.pick(&Op::COMPARISONS),
                        value: Literal::Number(1.into()),
                    }];
                }
            }
            p.order_by = order(v, d, false);
        }
    }
    if with_filter {
        p.filter = Some(filter(v, d, 1));
    }
    if d.coin() {
        p.limit = Some(1 + d.next(50) as u64);
    }
    p
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 160, ..ProptestConfig::default() })]

    #[test]
    fn random_plans_compile_pass_the_guard_and_run(which in 0..SETS.len(), draws in proptest::collection::vec(any::<u32>(), 64)) {
        let f = fixture();
        let view = &f.views[which];
        // Offered values on one text column, so the grammar's value rules are exercised.
        let values: Vec<ColumnValues> = view.columns.iter().take(2).map(|c| ColumnValues {
            alias: c.alias.clone(), matched: vec!["Juniper Labs".into()], all: None }).collect();
        let pv = PlanView::of_view(&f.graph, view, Dialect::Sqlite, FanoutMode::Rewrite, None, &values);
        let mut d = Draw { n: &draws, i: 0 };
        let p = plan(&pv, &mut d);
        let json = p.to_json();
        let cols: Vec<String> = view.columns.iter().map(|c| c.alias.clone()).collect();
        // The plan is a sentence of its view's grammar.
        prop_assert!(check_text(&plan_grammar(&pv, &Cues::ALL), &json).is_ok(), "{json}: {:?}", check_text(&plan_grammar(&pv, &Cues::ALL), &json));
        for dialect in [Dialect::Sqlite, Dialect::Postgres, Dialect::Mysql, Dialect::Spark] {
            let mut pd = pv.clone();
            pd.dialect = dialect;
            let sql = compile(&p, &pd).map_err(|e| TestCaseError::fail(format!("{json}: {e}")))?;
            check_query(&sql, &view.view_name, &cols, dialect).map_err(|e| TestCaseError::fail(format!("{dialect:?} {sql}: {e}")))?;
        }
        // Tidied (with a question that anchors, qualifies and names
        // tables), the plan still compiles and the guard admits it.
        let question = "Output the number of clients with at least 2 payments, names starting with 'Ju'. Return the client, the datacenter and the total.";
        let (tidied, _) = lucy::query::plan::tidy::tidy(&p, question, Some(&pv));
        let tsql = compile(&tidied, &pv).map_err(|e| TestCaseError::fail(format!("tidied {}: {e}", tidied.to_json())))?;
        check_query(&tsql, &view.view_name, &cols, Dialect::Sqlite).map_err(|e| TestCaseError::fail(format!("tidied {tsql}: {e}")))?;
        let sql = compile(&p, &pv).unwrap();
        let report = lucy::check::fanout::analyze(&sql, view, Dialect::Sqlite, FanoutMode::Rewrite)
            .map_err(|e| TestCaseError::fail(format!("fan-out analysis of {sql}: {e}")))?;
        let mut run = vec![sql.clone()];
        if let Some(rw) = &report.rewritten {
            check_query(rw, &view.view_name, &cols, Dialect::Sqlite).map_err(|e| TestCaseError::fail(format!("rewrite {rw}: {e}")))?;
            run.push(rw.clone());
        }
        for q in run {
            run_readonly(Path::new(DB), view.body.as_ref(), &q, Some(1000))
                .map_err(|e| TestCaseError::fail(format!("{json}\n{q}: {e}")))?;
        }
    }
}
