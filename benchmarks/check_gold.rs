//! `lucy check` over every gold query of the benchmark suites: how often
//! hand-written gold SQL leaves the model (undeclared joins, C3, C4,
//! unknown names, fan-out), per suite and per finding kind.
//!
//! ```sh
//! cargo run --example check_gold -- [SUITE …] [--out benchmarks/results]
//! ```
//!
//! Writes `check-<suite>.md` per suite (summary, counts per kind, every
//! finding) and `check.md` (the summary over the suites run, the section
//! `benchmarks/make-results.sh` puts into RESULTS.md), and prints it.

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write as _;
use std::path::PathBuf;
use std::process::Command;

use lucy::bench::Suite;
use lucy::check::{check_sql, CheckReport};
use lucy::SchemaGraph;

const DEFAULT: &[&str] = &["ddo", "acme", "bird-financial", "bird-formula1", "spider-dev"];

enum Outcome {
    Clean,
    Findings(CheckReport),
    Unparsable(String),
    NoModel(String),
}

fn main() {
    let mut suites: Vec<String> = Vec::new();
    let mut out = PathBuf::from("benchmarks/results");
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if a == "--out" {
            out = PathBuf::from(args.next().expect("--out DIR"));
        } else {
            suites.push(a);
        }
    }
    if suites.is_empty() {
        suites = DEFAULT.iter().map(|s| s.to_string()).collect();
    }
    let commit = run(&["git", "rev-parse", "--short", "HEAD"]);
    let load = std::fs::read_to_string("/proc/loadavg")
        .unwrap_or_default()
        .split_whitespace()
        .take(3)
        .collect::<Vec<_>>()
        .join(" ");
    let mut summary = String::from(
        "| suite | gold queries | clean | with findings | unparsable | no model | findings by kind (queries) |\n|---|---|---|---|---|---|---|\n",
    );
    for name in &suites {
        let path = Suite::find(name).unwrap_or_else(|e| panic!("{e}"));
        let suite = Suite::load(&path).unwrap_or_else(|e| panic!("{e}"));
        let mut graphs: HashMap<PathBuf, Result<SchemaGraph, String>> = HashMap::new();
        let started = std::time::Instant::now();
        let mut outcomes: Vec<(String, Outcome)> = Vec::new();
        for q in &suite.questions {
            let mp = match suite.model_path(q) {
                Ok(p) => p,
                Err(e) => {
                    outcomes.push((q.id.clone(), Outcome::NoModel(e.to_string())));
                    continue;
                }
            };
            let g = graphs
                .entry(mp.clone())
                .or_insert_with(|| lucy::load_model(&mp).and_then(SchemaGraph::new).map_err(|e| e.to_string()));
            let g = match g {
                Ok(g) => g,
                Err(e) => {
                    outcomes.push((q.id.clone(), Outcome::NoModel(e.clone())));
                    continue;
                }
            };
            let o = match check_sql(g, &q.gold_sql, suite.file.dialect) {
                Ok(r) if r.is_clean() => Outcome::Clean,
                Ok(r) => Outcome::Findings(r),
                Err(e) => Outcome::Unparsable(e.to_string()),
            };
            outcomes.push((q.id.clone(), o));
        }
        let ms = started.elapsed().as_secs_f64() * 1000.0;
        let count = |f: fn(&Outcome) -> bool| outcomes.iter().filter(|(_, o)| f(o)).count();
        let (clean, dirty, bad, nomodel) = (
            count(|o| matches!(o, Outcome::Clean)),
            count(|o| matches!(o, Outcome::Findings(_))),
            count(|o| matches!(o, Outcome::Unparsable(_))),
            count(|o| matches!(o, Outcome::NoModel(_))),
        );
        let n = outcomes.len();
        let mut kinds: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
        for (_, o) in &outcomes {
            if let Outcome::Findings(r) = o {
                let mut seen = Vec::new();
                for f in &r.findings {
                    let e = kinds.entry(f.kind.as_str()).or_default();
                    e.0 += 1;
                    if !seen.contains(&f.kind) {
                        e.1 += 1;
                        seen.push(f.kind);
                    }
                }
            }
        }
        let by_kind: Vec<String> = kinds.iter().map(|(k, (_, q))| format!("{k} {q}")).collect();
        let _ = writeln!(
            summary,
            "| {name} | {n} | {clean} | {dirty} | {bad} | {nomodel} | {} |",
            if by_kind.is_empty() { "—".to_string() } else { by_kind.join(", ") }
        );
        let mut md = String::new();
        let _ = writeln!(md, "# `lucy check` over the gold SQL of `{name}`\n");
        let _ = writeln!(
            md,
            "Command: `cargo run --example check_gold -- {name}` · commit {commit} · load average {load} · {:.0} ms for {n} queries.\n",
            ms
        );
        let _ = writeln!(md, "Suite: {} ({}).\n", suite.file.description, suite.path.display());
        let _ =
            writeln!(md, "| gold queries | clean (exit 0) | with findings (exit 1) | unparsable (exit 2) | no model |");
        let _ = writeln!(md, "|---|---|---|---|---|");
        let _ = writeln!(md, "| {n} | {clean} | {dirty} | {bad} | {nomodel} |\n");
        if !kinds.is_empty() {
            let _ = writeln!(md, "| finding kind | findings | queries |\n|---|---|---|");
            for (k, (f, qn)) in &kinds {
                let _ = writeln!(md, "| {k} | {f} | {qn} |");
            }
            let _ = writeln!(md);
        }
        let _ = writeln!(md, "## Findings per query\n");
        for (id, o) in &outcomes {
            let sql = suite.questions.iter().find(|q| &q.id == id).map(|q| q.gold_sql.as_str()).unwrap_or_default();
            match o {
                Outcome::Clean => {}
                Outcome::Findings(r) => {
                    let _ = writeln!(md, "### {id}\n\n```sql\n{}\n```\n", sql.trim());
                    for f in &r.findings {
                        let _ = writeln!(
                            md,
                            "- **{}** ({}): {}  \n  fix: {}",
                            f.kind.as_str(),
                            f.clause,
                            f.message,
                            f.hint
                        );
                    }
                    let _ = writeln!(md);
                }
                Outcome::Unparsable(e) => {
                    let _ = writeln!(md, "### {id} (unparsable)\n\n```sql\n{}\n```\n\n- {e}\n", sql.trim());
                }
                Outcome::NoModel(e) => {
                    let _ = writeln!(md, "### {id} (no model)\n\n- {e}\n");
                }
            }
        }
        std::fs::create_dir_all(&out).expect("create the output directory");
        let file = out.join(format!("check-{name}.md"));
        std::fs::write(&file, md).expect("write the report");
        eprintln!("{name}: {n} queries, {clean} clean, {dirty} with findings, {bad} unparsable, {nomodel} without model ({ms:.0} ms) -> {}", file.display());
    }
    let mut all = String::new();
    let _ = writeln!(all, "# `lucy check` over the gold SQL\n");
    let _ = writeln!(
        all,
        "Command: `cargo run --example check_gold -- {}` · commit {commit} · load average {load}. Each gold query is checked against its suite's dbModel (`lucy check`: joins must be declared relationships, C3, C4, forbidden tables/relationships, unknown names, cross joins, counting aggregates over rows the joins repeat). A finding says the SQL leaves the model, not that its answer is wrong on the data: the data may happen to hold no repeated row or no second partner. Every finding, per query: `benchmarks/results/check-<suite>.md`.\n",
        suites.join(" ")
    );
    all.push_str(&summary);
    std::fs::write(out.join("check.md"), &all).expect("write check.md");
    println!("{summary}");
}

fn run(cmd: &[&str]) -> String {
    Command::new(cmd[0])
        .args(&cmd[1..])
        .output()
        .ok()
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_default()
}
