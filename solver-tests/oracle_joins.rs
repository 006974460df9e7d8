//! Oracle join accuracy on real benchmarks (issue 3): GenerateView on the
//! tables of every gold SQL of ACME and Spider dev, compared with the gold
//! join pairs. A MEASUREMENT: it fails only when the harness breaks (a
//! suite or model cannot be loaded, nothing processed), never on the match
//! rate. The numbers are printed; with `LUCY_ORACLE_REPORT=FILE` the
//! Markdown report (benchmarks/results/oracle-joins.md) is written there:
//!
//! `LUCY_ORACLE_REPORT=benchmarks/results/oracle-joins.md cargo test --test solver_tests oracle_joins -- --nocapture`

use std::collections::HashMap;
use std::path::{Path, PathBuf};

use lucy::bench::meta::{git_commit, today_utc};
use lucy::bench::oracle::{oracle_case, OracleCase, OracleSummary};
use lucy::bench::Suite;
use lucy::SchemaGraph;

const SUITES: [&str; 2] = ["acme", "spider-dev"];

fn suite_path(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("benchmarks/suites").join(format!("{name}.json"))
}

/// Run the oracle over one suite; panics with a clear message when the
/// harness cannot run (missing suite, question file or model).
fn run(name: &str) -> Vec<OracleCase> {
    let suite = Suite::load(&suite_path(name)).unwrap_or_else(|e| panic!("cannot load suite {name}: {e}"));
    let mut graphs: HashMap<PathBuf, SchemaGraph> = HashMap::new();
    let mut cases = Vec::new();
    for q in &suite.questions {
        let mp = suite.model_path(q).unwrap_or_else(|e| panic!("{e}"));
        if !graphs.contains_key(&mp) {
            let model = lucy::model::load(&mp).unwrap_or_else(|e| panic!("cannot load {}: {e}", mp.display()));
            graphs.insert(mp.clone(), SchemaGraph::new(model).unwrap_or_else(|e| panic!("{}: {e}", mp.display())));
        }
        let graph = &graphs[&mp];
        cases.push(oracle_case(graph, &q.id, q.db_id.as_deref(), &q.gold_sql, suite.file.dialect, 5.0));
    }
    cases
}

fn markdown(all: &[(&str, Vec<OracleCase>)]) -> String {
    let mut o = format!(
        "# Oracle join accuracy (GenerateView on the gold SQL's tables)\n\n{} · commit `{}` · \
         `LUCY_ORACLE_REPORT=benchmarks/results/oracle-joins.md cargo test --test solver_tests oracle_joins -- --nocapture`\n\n\
         For every multi-table gold query: its tables and attributes go to GenerateView, and the view's join column pairs \
         are compared with the gold's (JOIN … ON, USING, WHERE equalities, correlated subqueries, IN-subqueries). \
         *Match*: every gold pair is in the view and every view join uses a gold pair. Instance-aware (issue 17): each alias \
         of a table the gold uses more than once in one SELECT is requested as a table instance in the role of the join \
         that attaches it (`bench::instances`), and pairs are compared per pair of instances (`table@role.column`).\n\n\
         | suite | questions | multi-table | match | rate | exact pair sets | infeasible | solve median | solve p95 | solve max |\n\
         |---|---|---|---|---|---|---|---|---|---|\n",
        today_utc(),
        git_commit()
    );
    for (name, cases) in all {
        let s = OracleSummary::of(cases);
        o.push_str(&format!(
            "| {name} | {} | {} | {} | {:.1}% | {} | {} | {:.1} ms | {:.1} ms | {:.1} ms |\n",
            s.questions,
            s.multi_table,
            s.matched,
            100.0 * s.match_rate(),
            s.exact,
            s.infeasible,
            s.solve_ms_median,
            s.solve_ms_p95,
            s.solve_ms_max
        ));
    }
    o.push_str("\n## Mismatches by class\n\n| class |");
    for (name, _) in all {
        o.push_str(&format!(" {name} |"));
    }
    o.push_str("\n|---|");
    o.push_str(&"---|".repeat(all.len()));
    o.push('\n');
    for k in lucy::bench::oracle::MismatchClass::ALL {
        let counts: Vec<usize> = all.iter().map(|(_, c)| c.iter().filter(|x| x.mismatch == Some(k)).count()).collect();
        if counts.iter().any(|&n| n > 0) {
            o.push_str(&format!("| {} |", k.as_str()));
            for n in counts {
                o.push_str(&format!(" {n} |"));
            }
            o.push('\n');
        }
    }
    for (name, cases) in all {
        o.push_str(&format!(
            "\n## Mismatches: {name}\n\n| id | class | gold pairs missing from the view | view pairs not in gold | detail |\n|---|---|---|---|---|\n"
        ));
        for c in cases.iter().filter(|c| c.mismatch.is_some()) {
            let (miss, extra) = match &c.accuracy {
                Some(a) => (
                    a.missing.iter().map(|p| p.to_string()).collect::<Vec<_>>().join("; "),
                    a.extra.iter().map(|p| p.to_string()).collect::<Vec<_>>().join("; "),
                ),
                None => (String::new(), String::new()),
            };
            let id = match &c.db_id {
                Some(db) => format!("{} ({db})", c.id),
                None => c.id.clone(),
            };
            let detail: String = c.detail.replace('|', "\\|").replace('\n', " ").chars().take(300).collect();
            o.push_str(&format!(
                "| {id} | {} | {miss} | {extra} | {detail} |\n",
                c.mismatch.map(|k| k.as_str()).unwrap_or("")
            ));
        }
    }
    o
}

#[test]
fn oracle_joins_acme_and_spider() {
    let mut all = Vec::new();
    for name in SUITES {
        let cases = run(name);
        let s = OracleSummary::of(&cases);
        assert!(s.questions > 0, "{name}: no questions processed");
        assert!(s.multi_table > 0, "{name}: no multi-table gold query found: the SQL analysis is broken");
        println!(
            "{name}: {} questions, {} multi-table, {} match ({:.1}%), {} infeasible, classes {:?}",
            s.questions,
            s.multi_table,
            s.matched,
            100.0 * s.match_rate(),
            s.infeasible,
            s.by_class
        );
        all.push((name, cases));
    }
    let md = markdown(&all);
    if let Ok(path) = std::env::var("LUCY_ORACLE_REPORT") {
        std::fs::write(&path, &md).unwrap_or_else(|e| panic!("cannot write {path}: {e}"));
    }
}
