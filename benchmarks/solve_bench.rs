//! GenerateView solve time vs schema size. Prints a markdown table.
//!
//! `cargo run --example solve_bench` (add `-- --quick` for fewer queries,
//! `-- --no-before` to skip the slow plain-MILP column, `-- --export FILE`
//! to write every solved instance as JSON lines for
//! `benchmarks/cpsat_baseline.py`, `-- --sizes 200,1000,10000` for the random
//! schemas, `-- --only LABEL,...` to run some models only, `-- --enterprise`
//! to add the 10,000-table enterprise-shaped model of `gen.rs`,
//! `-- --dump-enterprise FILE` to write that model as a dbModel file,
//! `-- --pick 8,11` to run only those query indices, `-- --diag` to print
//! each query's solve on stderr, with `-- --diag-states N --diag-limit S`
//! for that solve's state budget and time limit).
//!
//! Models: DDO, ACME and BIRD formula1 (when present in dbmodels/), a
//! 52-table synthetic model shaped like the paper's Cloud Resources benchmark
//! (benchmarks/models/cloud52.json, written here deterministically), and
//! random schemas of 200 and 1,000 tables (`gen::random_schema`, seeded).
//! Queries are seeded random relevant sets: 2–4 tables on the curated
//! models, 5–10 tables drawn from a neighbourhood (BFS radius 3 around a
//! random table) on the random schemas — a question touches related tables,
//! not ten random corners of a warehouse.

use std::time::Instant;

use lucy::graph::SchemaGraph;
use lucy::solve::relevant::{core_problem, scope, Relax};
use lucy::solve::{generate_view, milp::solve_milp, preprocess::prune, solve_core, CoreOptions};
use lucy::types::{DbModel, Pattern, PatternNode, SolveStatus, ViewRequest};

#[path = "gen.rs"]
mod gen;

#[path = "cpsat_export.rs"]
mod cpsat_export;

/// 52 tables like the paper's Cloud Resources model: 2 stars, 5 snowflakes,
/// 2 m:m, one lookup, around a core of managed objects.
pub fn cloud52() -> DbModel {
    let mut spec: Vec<(String, Vec<String>)> = Vec::new();
    let s = |x: &str| x.to_string();
    let core = [
        ("LOCATION", vec![]),
        ("DATACENTER", vec!["LOCATION"]),
        ("FOLDER", vec!["DATACENTER"]),
        ("CLUSTER", vec!["DATACENTER"]),
        ("HOST", vec!["CLUSTER"]),
        ("DATASTORE", vec!["DATACENTER"]),
        ("NETWORK", vec!["DATACENTER"]),
        ("RESOURCEPOOL", vec!["CLUSTER"]),
        ("VM", vec!["HOST", "RESOURCEPOOL", "FOLDER"]),
        ("VM2DATASTORE", vec!["VM", "DATASTORE"]),
        ("VM2NETWORK", vec!["VM", "NETWORK"]),
        ("TENANT", vec!["LOCATION"]),
        ("ALARM", vec!["VM"]),
        ("EVENT", vec!["HOST"]),
    ];
    for (t, f) in core {
        spec.push((s(t), f.into_iter().map(s).collect()));
    }
    let mut patterns = vec![
        Pattern::Lookup { tables: vec![s("LOCATION")], description: None },
        Pattern::ManyToMany {
            junction: s("VM2DATASTORE"),
            sides: [s("VM"), s("DATASTORE")],
            relationships: None,
            description: None,
        },
        Pattern::ManyToMany {
            junction: s("VM2NETWORK"),
            sides: [s("VM"), s("NETWORK")],
            relationships: None,
            description: None,
        },
    ];
    // 5 snowflakes (root -> 2 children -> 2 grandchildren each = 6 inner) on
    // VM, HOST, RESOURCEPOOL, CLUSTER, DATASTORE; 2 stars (root -> 4 leaves)
    // on ALARM and EVENT: 5*6 + 2*4 = 38 inner tables, 14 + 38 = 52.
    for root in ["VM", "HOST", "RESOURCEPOOL", "CLUSTER", "DATASTORE"] {
        let mut children = Vec::new();
        for c in ["CONFIG", "RUNTIME"] {
            let mid = format!("{root}_{c}");
            spec.push((mid.clone(), vec![s(root)]));
            let mut leaves = Vec::new();
            for l in ["CPU", "MEM"] {
                let leaf = format!("{mid}_{l}");
                spec.push((leaf.clone(), vec![mid.clone()]));
                leaves.push(PatternNode { table: leaf, children: vec![], relationship: None, exclusive: false });
            }
            children.push(PatternNode { table: mid, children: leaves, relationship: None, exclusive: false });
        }
        patterns.push(Pattern::Snowflake { root: s(root), children, description: None, exclusive: false });
    }
    for root in ["ALARM", "EVENT"] {
        let mut children = Vec::new();
        for l in ["SEVERITY", "SOURCE", "ACTION", "STATE"] {
            let leaf = format!("{root}_{l}");
            spec.push((leaf.clone(), vec![s(root)]));
            children.push(PatternNode { table: leaf, children: vec![], relationship: None, exclusive: false });
        }
        patterns.push(Pattern::Star { root: s(root), children, description: None, exclusive: false });
    }
    assert_eq!(spec.len(), 52);
    gen::model_of("cloud52", &spec, patterns)
}

fn pct(v: &mut [f64], p: f64) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    if v.is_empty() {
        return f64::NAN;
    }
    let i = ((v.len() as f64 - 1.0) * p).round() as usize;
    v[i]
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let quick = args.iter().any(|a| a == "--quick");
    let diag = args.iter().any(|a| a == "--diag");
    let before = !args.iter().any(|a| a == "--no-before");
    let flag = |name: &str| args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned();
    let mut export = flag("--export")
        .map(|p| std::io::BufWriter::new(std::fs::File::create(&p).unwrap_or_else(|e| panic!("--export {p}: {e}"))));
    let sizes: Vec<usize> = flag("--sizes")
        .map(|s| s.split(',').filter_map(|x| x.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![200, 1000]);
    if let Some(path) = flag("--dump-enterprise") {
        // The 10,000-table model as a dbModel file, for `lucy model check`
        // and `lucy view` timings.
        let m = gen::enterprise(10_000, 7);
        std::fs::write(&path, serde_json::to_string_pretty(&m).expect("serialize") + "\n")
            .unwrap_or_else(|e| panic!("{path}: {e}"));
        eprintln!(
            "wrote {path}: {} tables, {} relationships, {} patterns",
            m.tables.len(),
            m.relationships.len(),
            m.patterns.len()
        );
        return;
    }
    // `--pick 8,11` runs only those query indices of each model (to study
    // single requests with `--diag`).
    let pick: Option<Vec<usize>> = flag("--pick").map(|s| s.split(',').filter_map(|x| x.trim().parse().ok()).collect());
    // `--diag-states N --diag-limit S`: the diag solve's state budget and
    // time limit (to study a request beyond production's limits).
    let diag_states: usize =
        flag("--diag-states").and_then(|s| s.parse().ok()).unwrap_or(CoreOptions::default().exact_states);
    let diag_limit: f64 = flag("--diag-limit").and_then(|s| s.parse().ok()).unwrap_or(10.0);
    let only: Option<Vec<String>> = flag("--only").map(|s| s.split(',').map(|x| x.trim().to_string()).collect());
    let root = env!("CARGO_MANIFEST_DIR");
    let cloud = cloud52();
    let cloud_path = format!("{root}/benchmarks/models/cloud52.json");
    if let Ok(text) = serde_json::to_string_pretty(&cloud) {
        let _ = std::fs::write(&cloud_path, text + "\n");
    }
    let mut models: Vec<(String, DbModel, (usize, usize), Option<u32>, usize)> = Vec::new();
    let nq = if quick { 10 } else { 40 };
    for (label, file) in [("DDO", "ddo.json"), ("ACME", "acme.json"), ("BIRD formula1", "bird_formula1.json")] {
        match lucy::model::load(format!("{root}/dbmodels/{file}")) {
            Ok(m) => models.push((label.into(), m, (2, 4), None, nq)),
            Err(e) => eprintln!("skipping {label}: {e}"),
        }
    }
    models.push(("cloud52 (synthetic)".into(), cloud, (2, 4), None, nq));
    for n in sizes {
        models.push((format!("random {n}"), gen::random_schema(n, n as u64), (5, 10), Some(3), nq / 2));
    }
    if args.iter().any(|a| a == "--enterprise") {
        models.push(("enterprise 10000".into(), gen::enterprise(10_000, 7), (5, 20), Some(3), nq / 2));
    }
    if let Some(only) = &only {
        models.retain(|(label, ..)| only.iter().any(|o| label.starts_with(o.as_str())));
    }

    println!("| model | tables (core) | queries | median ms | p95 ms | n (median / max) | optimal | core solve with the MILP re-run after an exact proof (as before #16): median / p95 ms | exact search / reductions / MILP, median ms | tables kept (median) | MILP vars / rows after reductions (median) | MILP after reductions, cold (no start, no bound row): median ms | plain MILP at the same n: median ms, vars / rows (median) |");
    println!("|---|---|---|---|---|---|---|---|---|---|---|---|---|");
    for (label, m, size, radius, count) in models {
        let g = match SchemaGraph::new(m) {
            Ok(g) => g,
            Err(e) => {
                eprintln!("{label}: {e}");
                continue;
            }
        };
        let qs = gen::queries(&g, count, size, radius, 42);
        let (mut times, mut ns, mut vars, mut rows) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let mut optimal = 0;
        let (mut plain_ms, mut plain_vars, mut plain_rows) = (Vec::new(), Vec::new(), Vec::new());
        let mut plain_note = String::new();
        let mut cold_ms: Vec<f64> = Vec::new();
        let (mut exact_ms, mut prune_ms, mut milp_ms, mut kept) = (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        let mut with_milp_ms: Vec<f64> = Vec::new();
        for (qi, q) in qs.iter().enumerate() {
            if pick.as_ref().is_some_and(|p| !p.contains(&qi)) {
                continue;
            }
            let mut req = ViewRequest::new(q.clone());
            req.time_limit_s = 10.0;
            let t = Instant::now();
            let res = match generate_view(&g, &req) {
                Ok(r) => r,
                Err(e) => {
                    eprintln!("{label} {q:?}: {e}");
                    continue;
                }
            };
            times.push(t.elapsed().as_secs_f64() * 1e3);
            {
                let sc = scope(&g, &req).expect("scope");
                let cm = core_problem(&g, &sc, Relax::NONE);
                if let (Some(w), SolveStatus::Optimal) = (export.as_mut(), res.status) {
                    use std::io::Write;
                    let line = cpsat_export::instance_line(&label, q, &cm.problem, &res, times[times.len() - 1]);
                    let _ = writeln!(w, "{line}");
                }
                // The core solve as it was before #16 cut the tail: the MILP
                // runs even after the exact search has proved the optimum.
                let t = Instant::now();
                let core = solve_core(
                    &cm.problem,
                    diag_limit,
                    CoreOptions { milp_when_proven: true, exact_states: diag_states, ..CoreOptions::default() },
                );
                with_milp_ms.push(t.elapsed().as_secs_f64() * 1e3);
                if let Ok(c) = core {
                    exact_ms.push(c.exact_ms);
                    prune_ms.push(c.prune_ms);
                    milp_ms.push(c.milp_ms);
                    kept.push(c.kept as f64);
                    if diag {
                        let lookups = (0..cm.problem.len())
                            .filter(|&i| cm.problem.relevant[i] && cm.problem.is_active_lookup(i))
                            .count();
                        eprintln!(
                            "{label} q{qi} |T|={} ({lookups} lookups) n={} status={:?} exact {:.1} ms, prune {:.1} ms, milp {:.1} ms, kept {} of {}; {}",
                            q.len(), c.n, c.status, c.exact_ms, c.prune_ms, c.milp_ms, c.kept, cm.problem.len(), c.n_bound
                        );
                    }
                }
            }
            if res.status == SolveStatus::Optimal {
                optimal += 1;
            }
            ns.push(res.path_length as f64);
            vars.push(res.model_size.variables as f64);
            rows.push(res.model_size.constraints as f64);
            // Before: the plain layered MILP at the same n, no reductions.
            let limit_plain = if g.len() >= 1000 {
                3
            } else if g.len() >= 200 {
                5
            } else {
                count
            };
            if before && res.status != SolveStatus::Infeasible && qi < limit_plain {
                let sc = scope(&g, &req).expect("scope");
                let cm = core_problem(&g, &sc, Relax::NONE);
                let n = res.path_length;
                let pr = prune(&cm.problem, n);
                if let Ok(out) = solve_milp(&cm.problem, n, Some(&pr.allowed), 20.0) {
                    cold_ms.push(out.ms);
                }
                match solve_milp(&cm.problem, n, None, 20.0) {
                    Ok(out) => {
                        plain_ms.push(out.ms);
                        plain_vars.push(out.variables as f64);
                        plain_rows.push(out.constraints as f64);
                        if !matches!(out.status, lucy::solve::milp::MilpStatus::Optimal) {
                            plain_note = " (some hit the 20 s limit)".into();
                        }
                    }
                    Err(e) => eprintln!("plain MILP: {e}"),
                }
            }
        }
        let max_n = ns.iter().cloned().fold(0.0, f64::max);
        let plain = if plain_ms.is_empty() {
            "—".to_string()
        } else {
            format!(
                "{:.1} ms, {:.0} / {:.0} over {} queries{plain_note}",
                pct(&mut plain_ms.clone(), 0.5),
                pct(&mut plain_vars, 0.5),
                pct(&mut plain_rows, 0.5),
                plain_ms.len()
            )
        };
        println!(
            "| {label} | {} ({}) | {} | {:.2} | {:.2} | {:.0} / {:.0} | {}/{} | {:.2} / {:.2} | {:.2} / {:.2} / {:.2} | {:.0} | {:.0} / {:.0} | {} | {plain} |",
            g.len(),
            g.core_tables().len(),
            times.len(),
            pct(&mut times.clone(), 0.5),
            pct(&mut times.clone(), 0.95),
            pct(&mut ns.clone(), 0.5),
            max_n,
            optimal,
            times.len(),
            pct(&mut with_milp_ms.clone(), 0.5),
            pct(&mut with_milp_ms, 0.95),
            pct(&mut exact_ms, 0.5),
            pct(&mut prune_ms, 0.5),
            pct(&mut milp_ms, 0.5),
            pct(&mut kept, 0.5),
            pct(&mut vars, 0.5),
            pct(&mut rows, 0.5),
            if cold_ms.is_empty() { "—".to_string() } else { format!("{:.1} ms over {}", pct(&mut cold_ms.clone(), 0.5), cold_ms.len()) },
        );
    }
}
