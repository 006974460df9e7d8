//! Ground truth for the fan-out analysis and rewrite: random star and
//! snowflake schemas (random tree shape, random direction of every
//! relationship, random row counts and foreign keys, NULLs and rows without
//! a partner), loaded into SQLite; random aggregate queries over the view
//! lucy builds for all their tables. The reference answer is computed here,
//! in Rust, from the base tables' rows: the view's rows by nested loops over
//! the join tree, then every aggregate over the *distinct* rows of its
//! table within each group. Two properties:
//! - when the analysis reports nothing, the query as written equals the
//!   reference (no fan-out was missed);
//! - when it reports fan-out and rewrites, the rewritten query (admitted by
//!   the guard) equals the reference.
//!
//! Half the cases keep every row of a random table (`--keep`): the view
//! starts from it and LEFT JOINs the others, and the reference does too.

use std::collections::{BTreeMap, BTreeSet};

use lucy::check::fanout::analyze;
use lucy::sql::exec::{run_readonly, SqlValue};
use lucy::sql::guard::check_query;
use lucy::types::{Cardinality, Column, DbModel, Dialect, FanoutMode, Relationship, Table, ViewRequest};
use lucy::SchemaGraph;
use proptest::prelude::*;
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

/// A generated schema: a tree over tables `T0..Tn-1` with data.
#[derive(Debug)]
struct Schema {
    /// `parent[i]` for i ≥ 1.
    parent: Vec<usize>,
    /// For i ≥ 1: table i holds the foreign key to its parent (parent 1:M
    /// child) when true, else the parent holds one to table i.
    child_fk: Vec<bool>,
    /// rows[t][r] = (g, v, fk values by referenced table).
    rows: Vec<Vec<Row>>,
}

#[derive(Debug, Clone)]
struct Row {
    g: &'static str,
    v: Option<i64>,
    fk: BTreeMap<usize, Option<i64>>,
}

fn gen_schema(rng: &mut ChaCha8Rng) -> Schema {
    let n = rng.random_range(2..=5);
    let mut parent = vec![0];
    let mut child_fk = vec![false];
    for i in 1..n {
        parent.push(rng.random_range(0..i));
        child_fk.push(rng.random_bool(0.6));
    }
    let sizes: Vec<usize> = (0..n).map(|_| rng.random_range(1..=5)).collect();
    // Which table holds a foreign key to which.
    let mut fks: Vec<Vec<usize>> = vec![Vec::new(); n];
    for i in 1..n {
        if child_fk[i] {
            fks[i].push(parent[i]);
        } else {
            fks[parent[i]].push(i);
        }
    }
    let rows = (0..n)
        .map(|t| {
            (0..sizes[t])
                .map(|_| Row {
                    g: if rng.random_bool(0.5) { "a" } else { "b" },
                    v: if rng.random_bool(0.1) { None } else { Some(rng.random_range(0..10)) },
                    fk: fks[t]
                        .iter()
                        .map(|&o| {
                            // Mostly valid, sometimes dangling or NULL (rows the
                            // inner joins drop).
                            let x = rng.random_range(0..10);
                            let val = match x {
                                0 => None,
                                1 => Some(sizes[o] as i64 + 1),
                                _ => Some(rng.random_range(1..=sizes[o] as i64)),
                            };
                            (o, val)
                        })
                        .collect(),
                })
                .collect()
        })
        .collect();
    Schema { parent, child_fk, rows }
}

fn tname(t: usize) -> String {
    format!("T{t}")
}

impl Schema {
    fn n(&self) -> usize {
        self.rows.len()
    }

    fn model(&self) -> DbModel {
        let col = |name: &str, ty: &str| Column { name: name.into(), sql_type: ty.into(), ..Column::default() };
        let tables = (0..self.n())
            .map(|t| {
                let mut columns = vec![col("id", "INTEGER"), col("g", "TEXT"), col("v", "INTEGER")];
                for o in self.rows[t].first().map(|r| r.fk.keys().copied().collect::<Vec<_>>()).unwrap_or_default() {
                    columns.push(col(&format!("f{o}"), "INTEGER"));
                }
                Table { name: tname(t), primary_key: vec!["id".into()], columns, ..Table::default() }
            })
            .collect();
        let relationships = (1..self.n())
            .map(|i| {
                let (from, to) = if self.child_fk[i] { (i, self.parent[i]) } else { (self.parent[i], i) };
                Relationship {
                    name: None,
                    from: tname(from),
                    to: tname(to),
                    cardinality: Cardinality::ManyToOne,
                    on: vec![[format!("f{to}"), "id".into()]],
                    description: None,
                    role: None,
                    role_description: None,
                    role_synonyms: Vec::new(),
                    via: None,
                    origin: None,
                }
            })
            .collect();
        DbModel { name: "gen".into(), tables, relationships, ..DbModel::default() }
    }

    fn load(&self, path: &std::path::Path) {
        let c = rusqlite::Connection::open(path).unwrap();
        for t in 0..self.n() {
            let fks: Vec<usize> = self.rows[t][0].fk.keys().copied().collect();
            let mut cols = vec!["id INTEGER PRIMARY KEY".to_string(), "g TEXT".into(), "v INTEGER".into()];
            cols.extend(fks.iter().map(|o| format!("f{o} INTEGER")));
            c.execute_batch(&format!("CREATE TABLE {} ({});", tname(t), cols.join(", "))).unwrap();
            for (r, row) in self.rows[t].iter().enumerate() {
                let mut vals = vec![(r + 1).to_string(), format!("'{}'", row.g), opt(row.v)];
                vals.extend(fks.iter().map(|o| opt(row.fk[o])));
                c.execute_batch(&format!("INSERT INTO {} VALUES ({});", tname(t), vals.join(", "))).unwrap();
            }
        }
    }

    /// Whether row `ra` of table `a` and row `rb` of the adjacent table `b`
    /// join.
    fn linked(&self, a: usize, ra: usize, b: usize, rb: usize) -> bool {
        let ((child, rc), (par, rp)) =
            if a != 0 && self.parent[a] == b { ((a, ra), (b, rb)) } else { ((b, rb), (a, ra)) };
        if self.child_fk[child] {
            self.rows[child][rc].fk[&par] == Some(rp as i64 + 1)
        } else {
            self.rows[par][rp].fk[&child] == Some(rc as i64 + 1)
        }
    }

    /// The view's rows: one row index per table (`None`: NULLs from a LEFT
    /// JOIN). Without `keep`, inner joins along the tree; with `keep`, every
    /// row of that table, the others LEFT JOINed outward from it.
    fn view_rows(&self, keep: Option<usize>) -> Vec<Vec<Option<usize>>> {
        let n = self.n();
        let root = keep.unwrap_or(0);
        let mut out: Vec<Vec<Option<usize>>> = (0..self.rows[root].len())
            .map(|r| {
                let mut t = vec![None; n];
                t[root] = Some(r);
                t
            })
            .collect();
        let mut order = vec![root];
        let mut k = 0;
        while k < order.len() {
            let u = order[k];
            k += 1;
            let adjacent: Vec<usize> = (0..n)
                .filter(|&v| v != u && ((v != 0 && self.parent[v] == u) || (u != 0 && self.parent[u] == v)))
                .collect();
            for v in adjacent {
                if order.contains(&v) {
                    continue;
                }
                order.push(v);
                let mut next = Vec::new();
                for tuple in &out {
                    let matches: Vec<usize> = match tuple[u] {
                        Some(ru) => (0..self.rows[v].len()).filter(|&rv| self.linked(u, ru, v, rv)).collect(),
                        None => Vec::new(),
                    };
                    if matches.is_empty() {
                        if keep.is_some() {
                            next.push(tuple.clone());
                        }
                        continue;
                    }
                    for rv in matches {
                        let mut t = tuple.clone();
                        t[v] = Some(rv);
                        next.push(t);
                    }
                }
                out = next;
            }
        }
        out
    }
}

fn opt(v: Option<i64>) -> String {
    v.map(|x| x.to_string()).unwrap_or_else(|| "NULL".into())
}

#[derive(Debug, Clone, Copy, PartialEq)]
enum Agg {
    Sum,
    Avg,
    Count,
    Total,
    CountStar,
    GroupConcat,
}

#[derive(Debug)]
struct Query {
    /// Group on table k's `g` (false) or `id` (true).
    group: Option<(usize, bool)>,
    /// `T_w_v > c`.
    filter: Option<(usize, i64)>,
    aggs: Vec<(Agg, usize)>,
}

fn gen_query(rng: &mut ChaCha8Rng, n: usize) -> Query {
    let group = rng.random_bool(0.7).then(|| (rng.random_range(0..n), rng.random_bool(0.3)));
    let filter = rng.random_bool(0.4).then(|| (rng.random_range(0..n), rng.random_range(0..8)));
    let k = rng.random_range(1..=3);
    let all = [Agg::Sum, Agg::Avg, Agg::Count, Agg::Total, Agg::CountStar, Agg::GroupConcat];
    let aggs = (0..k).map(|_| (all[rng.random_range(0..all.len())], rng.random_range(0..n))).collect();
    Query { group, filter, aggs }
}

impl Query {
    fn sql(&self) -> String {
        let mut items = Vec::new();
        let gcol = self.group.map(|(k, key)| format!("T{k}_{}", if key { "id" } else { "g" }));
        if let Some(g) = &gcol {
            items.push(g.clone());
        }
        for (i, (a, t)) in self.aggs.iter().enumerate() {
            let e = match a {
                Agg::Sum => format!("SUM(T{t}_v)"),
                Agg::Avg => format!("AVG(T{t}_v)"),
                Agg::Count => format!("COUNT(T{t}_v)"),
                Agg::Total => format!("TOTAL(T{t}_v)"),
                Agg::CountStar => "COUNT(*)".into(),
                Agg::GroupConcat => format!("GROUP_CONCAT(T{t}_v)"),
            };
            items.push(format!("{e} AS a{i}"));
        }
        let mut sql = format!("SELECT {} FROM lucy_view", items.join(", "));
        if let Some((w, c)) = self.filter {
            sql.push_str(&format!(" WHERE T{w}_v > {c}"));
        }
        if let Some(g) = gcol {
            sql.push_str(&format!(" GROUP BY {g}"));
        }
        sql
    }

    /// The reference answer: group key → one normalised cell per aggregate.
    fn reference(&self, s: &Schema, keep: Option<usize>) -> BTreeMap<String, Vec<String>> {
        let rows: Vec<Vec<Option<usize>>> = s
            .view_rows(keep)
            .into_iter()
            .filter(|t| self.filter.is_none_or(|(w, c)| t[w].and_then(|r| s.rows[w][r].v).is_some_and(|v| v > c)))
            .collect();
        let mut groups: BTreeMap<String, Vec<&Vec<Option<usize>>>> = BTreeMap::new();
        for t in &rows {
            let key = match (self.group, self.group.and_then(|(k, _)| t[k])) {
                (Some((_, true)), Some(r)) => (r + 1).to_string(),
                (Some((k, false)), Some(r)) => s.rows[k][r].g.to_string(),
                (Some(_), None) => "NULL".to_string(),
                (None, _) => String::new(),
            };
            groups.entry(key).or_default().push(t);
        }
        if self.group.is_none() && groups.is_empty() {
            groups.insert(String::new(), Vec::new());
        }
        groups
            .into_iter()
            .map(|(key, ts)| {
                let cells = self
                    .aggs
                    .iter()
                    .map(|&(a, t)| {
                        if a == Agg::CountStar {
                            return ts.len().to_string();
                        }
                        // Each row of table t once per group.
                        let distinct: BTreeSet<usize> = ts.iter().filter_map(|x| x[t]).collect();
                        let vals: Vec<i64> = distinct.iter().filter_map(|&r| s.rows[t][r].v).collect();
                        let sum: i64 = vals.iter().sum();
                        match a {
                            Agg::Sum if vals.is_empty() => "NULL".into(),
                            Agg::Sum => sum.to_string(),
                            Agg::Avg if vals.is_empty() => "NULL".into(),
                            Agg::Avg => fmt_f(sum as f64 / vals.len() as f64),
                            Agg::Count => vals.len().to_string(),
                            Agg::Total => fmt_f(sum as f64),
                            Agg::GroupConcat if vals.is_empty() => "NULL".into(),
                            Agg::GroupConcat => {
                                let mut v: Vec<String> = vals.iter().map(|x| x.to_string()).collect();
                                v.sort();
                                v.join(",")
                            }
                            Agg::CountStar => unreachable!(),
                        }
                    })
                    .collect();
                (key, cells)
            })
            .collect()
    }
}

fn fmt_f(x: f64) -> String {
    format!("{x:.6}")
}

/// Rows of a result, normalised like `reference`.
fn normalise(q: &Query, rows: &lucy::sql::exec::QueryRows) -> BTreeMap<String, Vec<String>> {
    let off = usize::from(q.group.is_some());
    rows.rows
        .iter()
        .map(|r| {
            let key = if off == 1 { r[0].to_string() } else { String::new() };
            let cells = q
                .aggs
                .iter()
                .enumerate()
                .map(|(i, (a, _))| match (&r[off + i], a) {
                    (SqlValue::Null, _) => "NULL".into(),
                    (SqlValue::Real(f), _) => fmt_f(*f),
                    (SqlValue::Integer(x), Agg::Avg | Agg::Total) => fmt_f(*x as f64),
                    (SqlValue::Text(t), Agg::GroupConcat) => {
                        let mut v: Vec<&str> = t.split(',').collect();
                        v.sort();
                        v.join(",")
                    }
                    (other, _) => other.to_string(),
                })
                .collect();
            (key, cells)
        })
        .collect()
}

/// One generated case; returns whether the analysis rewrote the query.
fn run_case(seed: u64) -> Result<&'static str, TestCaseError> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let schema = gen_schema(&mut rng);
    let graph = SchemaGraph::new(schema.model()).map_err(|e| TestCaseError::fail(format!("model: {e}")))?;
    let mut req = ViewRequest::new((0..schema.n()).map(tname).collect());
    // Half the cases keep every row of one table (LEFT JOINs from it).
    let keep = rng.random_bool(0.5).then(|| rng.random_range(0..schema.n()));
    req.keep = keep.map(tname);
    let view = lucy::solve::generate_view(&graph, &req).map_err(|e| TestCaseError::fail(format!("view: {e}")))?;
    prop_assert_eq!(view.grain.instances.len(), schema.n(), "one instance per table: {:?}", view.grain);
    if let Some(k) = keep {
        prop_assert_eq!(&view.tables[0], &tname(k), "the view starts from the kept table");
        prop_assert!(view.view_sql.matches("LEFT JOIN").count() == schema.n() - 1, "{}", view.view_sql);
        prop_assert!(view.grain.instances.iter().skip(1).all(|i| i.outer));
    }
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("gen.sqlite");
    schema.load(&db);
    let aliases: Vec<String> = view.columns.iter().map(|c| c.alias.clone()).collect();
    let mut outcome = "clean";
    for _ in 0..4 {
        let q = gen_query(&mut rng, schema.n());
        let sql = q.sql();
        let want = q.reference(&schema, keep);
        let report = analyze(&sql, &view, Dialect::Sqlite, FanoutMode::Rewrite)
            .map_err(|e| TestCaseError::fail(e.to_string()))?;
        let ctx = format!(
            "seed {seed}\nkeep {keep:?}\nschema {schema:?}\nview {}\nsql {sql}\nreport {report:#?}",
            view.view_sql
        );
        if report.findings.is_empty() {
            let got =
                run_readonly(&db, view.body.as_ref(), &sql, None).map_err(|e| TestCaseError::fail(e.to_string()))?;
            prop_assert_eq!(normalise(&q, &got), want, "no fan-out reported, but the answer is wrong\n{}", ctx);
        } else if report.findings.iter().all(|f| f.rewritable) {
            let rw = report.rewritten.clone().ok_or_else(|| TestCaseError::fail(format!("no rewrite\n{ctx}")))?;
            check_query(&rw, &view.view_name, &aliases, Dialect::Sqlite)
                .map_err(|e| TestCaseError::fail(format!("guard: {e}\n{ctx}")))?;
            let got = run_readonly(&db, view.body.as_ref(), &rw, None)
                .map_err(|e| TestCaseError::fail(format!("{e}\n{rw}\n{ctx}")))?;
            prop_assert_eq!(normalise(&q, &got), want, "rewritten answer is wrong: {}\n{}", rw, ctx);
            outcome = "rewritten";
        } else {
            // Only COUNT(*) over a view with no grain table is refused.
            prop_assert!(
                report.findings.iter().filter(|f| !f.rewritable).all(|f| f.aggregate == "COUNT(*)"),
                "{}",
                ctx
            );
        }
    }
    Ok(outcome)
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 64, failure_persistence: None, ..ProptestConfig::default() })]
    #[test]
    fn rewritten_aggregates_match_the_base_tables(seed in any::<u64>()) {
        run_case(seed)?;
    }
}

/// The generator really produces fan-out: over fixed seeds, many queries
/// are rewritten (and all are right, by the property above).
#[test]
fn the_generator_exercises_the_rewrite() {
    let mut rewritten = 0;
    for seed in 0..40 {
        if run_case(seed).unwrap() == "rewritten" {
            rewritten += 1;
        }
    }
    assert!(rewritten >= 10, "only {rewritten} of 40 schemas needed a rewrite");
}

/// Seeds whose cases failed before an outer instance's key stopped counting
/// as fixed by a GROUP BY (the NULL group of a LEFT JOINed instance counted a
/// row once per unmatched child): `scan_seeds` over 0..3000 with that check
/// removed fails exactly these seven; with it, none.
#[test]
fn regression_seeds_outer_group_by() {
    for seed in [488, 739, 785, 1584, 1749, 1763, 2572] {
        if let Err(e) = run_case(seed) {
            panic!("seed {seed}: {e}");
        }
    }
}

/// Scans a range of seeds and reports every failing one (run by hand to find
/// regression seeds: `LUCY_FANOUT_SEEDS=0..3000 cargo test --test fanout_props
/// -- --ignored scan_seeds --nocapture`).
#[test]
#[ignore]
fn scan_seeds() {
    let range = std::env::var("LUCY_FANOUT_SEEDS").unwrap_or_else(|_| "0..500".into());
    let (a, b) = range.split_once("..").expect("LUCY_FANOUT_SEEDS=FROM..TO");
    let (a, b): (u64, u64) = (a.parse().unwrap(), b.parse().unwrap());
    let failing: Vec<u64> = (a..b).filter(|&s| run_case(s).is_err()).collect();
    println!("failing seeds in {a}..{b}: {failing:?}");
    assert!(failing.is_empty(), "failing seeds: {failing:?}");
}
