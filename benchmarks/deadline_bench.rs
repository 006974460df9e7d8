//! Does GenerateView honour its time limit on large models? (issue #13: a
//! 12-table request on a random 2,000-table model ran 5.15 s under
//! `--time-limit 0.2` and reported "optimal".) Prints one markdown row per
//! (model, limit): requests run, worst and median wall time, worst overrun,
//! how many stayed within 10 % + 50 ms, and the statuses.
//!
//! `cargo run --example deadline_bench`
//! (`-- --quick`: the 2,000-table model and 0.2 / 1 s only; `-- --rows`:
//! one line per request as well; `--sizes 10000 --limits 0.2,1` to pick).
//!
//! Models: random schemas of 2,000 and 10,000 tables (`gen::random_schema`,
//! as in `solve_bench`, seed 11: a spanning tree plus n/2 extra foreign
//! keys, n/100 many-to-many and lookup patterns). Requests: 5–20 tables,
//! half drawn from a neighbourhood (BFS radius 3 around a random table),
//! half anywhere in the schema (the hard case: long walks), seeded.

use std::time::Instant;

use lucy::graph::SchemaGraph;
use lucy::solve::generate_view;
use lucy::types::{SolveStatus, ViewRequest};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;

#[path = "gen.rs"]
mod gen;

/// Seeded requests of 5–20 core tables: even ones from a BFS neighbourhood
/// of radius 3, odd ones from anywhere.
fn requests(g: &SchemaGraph, count: usize, seed: u64) -> Vec<Vec<String>> {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    let core = g.core_tables();
    let mut out = Vec::new();
    while out.len() < count {
        let k = rng.random_range(5..=20);
        let pool: Vec<usize> = if out.len() % 2 == 0 {
            let c = core[rng.random_range(0..core.len())];
            let mut dist = vec![u32::MAX; g.len()];
            dist[c] = 0;
            let mut queue = std::collections::VecDeque::from([c]);
            while let Some(u) = queue.pop_front() {
                if dist[u] >= 3 {
                    continue;
                }
                for (v, _) in g.neighbors(u) {
                    if dist[v] == u32::MAX {
                        dist[v] = dist[u] + 1;
                        queue.push_back(v);
                    }
                }
            }
            core.iter().copied().filter(|&t| dist[t] != u32::MAX).collect()
        } else {
            core.clone()
        };
        if pool.len() < k {
            continue;
        }
        let mut pick: Vec<usize> = Vec::new();
        while pick.len() < k {
            let t = pool[rng.random_range(0..pool.len())];
            if !pick.contains(&t) {
                pick.push(t);
            }
        }
        out.push(pick.into_iter().map(|t| g.name(t).to_string()).collect());
    }
    out
}

fn main() {
    let quick = std::env::args().any(|a| a == "--quick");
    let rows = std::env::args().any(|a| a == "--rows");
    let arg = |name: &str| {
        let args: Vec<String> = std::env::args().collect();
        args.iter()
            .position(|a| a == name)
            .and_then(|i| args.get(i + 1))
            .map(|v| v.split(',').filter_map(|x| x.parse::<f64>().ok()).collect::<Vec<f64>>())
    };
    let sizes: Vec<usize> = arg("--sizes").map(|v| v.into_iter().map(|x| x as usize).collect()).unwrap_or_else(|| {
        if quick {
            vec![2_000]
        } else {
            vec![2_000, 10_000]
        }
    });
    let limits: Vec<f64> = arg("--limits").unwrap_or_else(|| if quick { vec![0.2, 1.0] } else { vec![0.2, 1.0, 5.0] });
    let per = if quick { 6 } else { 10 };
    println!("| model | limit s | requests | worst s | median s | worst overrun s | within 10 % + 50 ms | optimal / feasible / infeasible / error |");
    println!("|---|---:|---:|---:|---:|---:|---:|---|");
    for &n in &sizes {
        let t = Instant::now();
        let g = SchemaGraph::new(gen::random_schema(n, 11)).expect("valid random model");
        eprintln!("random{n}: graph built in {:.2} s", t.elapsed().as_secs_f64());
        let reqs = requests(&g, per, 5);
        for &limit in &limits {
            let mut walls = Vec::new();
            let (mut opt, mut feas, mut inf, mut err, mut within) = (0, 0, 0, 0, 0);
            for tables in &reqs {
                let mut req = ViewRequest::new(tables.clone());
                req.time_limit_s = limit;
                let t = Instant::now();
                let r = generate_view(&g, &req);
                let wall = t.elapsed().as_secs_f64();
                let status = match &r {
                    Ok(v) if v.status == SolveStatus::Optimal => {
                        opt += 1;
                        "optimal".to_string()
                    }
                    Ok(v) if v.status == SolveStatus::Feasible => {
                        feas += 1;
                        "feasible".to_string()
                    }
                    Ok(_) => {
                        inf += 1;
                        "infeasible".to_string()
                    }
                    Err(e) => {
                        err += 1;
                        format!("error: {}", e.to_string().chars().take(80).collect::<String>())
                    }
                };
                if wall <= limit * 1.1 + 0.05 {
                    within += 1;
                }
                if rows {
                    println!("<!-- random{n} k={} limit={limit} wall={wall:.3} {status} -->", tables.len());
                }
                walls.push(wall);
            }
            walls.sort_by(f64::total_cmp);
            let worst = walls.last().copied().unwrap_or(0.0);
            println!(
                "| random{n} | {limit} | {} | {worst:.3} | {:.3} | {:.3} | {within}/{} | {opt} / {feas} / {inf} / {err} |",
                walls.len(),
                walls[walls.len() / 2],
                (worst - limit).max(0.0),
                walls.len()
            );
        }
    }
}
