//! Large-schema planning end to end without an LLM (issue 16, item 4): on
//! the enterprise-shaped synthetic model of `gen.rs` (10,000 tables by
//! default), the time from a question to its view with the CRUSH prefilter
//! and recorded probes, phase by phase, and the process's memory peak.
//! Prints markdown tables.
//!
//! cargo run --example plan_bench --
//!     [--tables N] [--queries K] [--budget B] [--time-limit S]
//!
//! Phases, as `lucy ask --prefilter crush --probes …` runs them:
//! 1. the model: JSON parse and validation (`lucy::model::load`, what
//!    `lucy model check` does before its report) and the graph build;
//! 2. the CRUSH index: MiniLM embeddings of every table and column document,
//!    cold (an empty embedding cache) and warm (the on-disk cache hit that
//!    every later question of the same model gets);
//! 3. per question: CRUSH retrieval (probe embeddings, candidates, the
//!    paper's greedy, budget B schema elements: the prefilter's setting);
//! 4. per question: GenerateView over the tables CRUSH picked (MatchTables
//!    would narrow them further; without an LLM the whole pick is relevant,
//!    which makes this the harder solve).
//!
//! Questions are `gen::queries` (the 5–20-table requests `solve_bench
//! --enterprise` times); the recorded probes are each request's tables with
//! their columns (`T(c1, c2); U(c3)`), i.e. a perfect hallucination, so
//! retrieval recall here says nothing about CRUSH's accuracy (the synthetic
//! names carry no meaning; see `crush_bench` for BirdUnion), only its cost.
//! MiniLM must be present (`scripts/fetch-minilm.sh`).

use std::time::Instant;

use lucy::crush::docs::{Corpus, DocOptions};
use lucy::crush::embed::{EmbeddingCache, MiniLm};
use lucy::crush::probes::parse_schema;
use lucy::crush::{crush, CrushConfig, Index, SolverKind};
use lucy::graph::SchemaGraph;
use lucy::solve::generate_view;
use lucy::types::{SolveStatus, ViewRequest};

#[path = "gen.rs"]
mod gen;

fn die(msg: &str) -> ! {
    eprintln!("plan_bench: {msg}");
    std::process::exit(2)
}

fn ms(t: Instant) -> f64 {
    t.elapsed().as_secs_f64() * 1e3
}

fn pct(v: &[f64], p: f64) -> f64 {
    let mut v = v.to_vec();
    v.sort_by(|a, b| a.total_cmp(b));
    if v.is_empty() {
        return f64::NAN;
    }
    v[((v.len() as f64 - 1.0) * p).round() as usize]
}

/// Peak resident set of this process (`VmHWM`), in MiB.
fn peak_rss_mib() -> Option<f64> {
    let s = std::fs::read_to_string("/proc/self/status").ok()?;
    let line = s.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: f64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some(kb / 1024.0)
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let flag = |name: &str| args.iter().position(|a| a == name).and_then(|i| args.get(i + 1)).cloned();
    let num = |name: &str, default: f64| {
        flag(name).map_or(default, |v| v.parse().unwrap_or_else(|_| die(&format!("{name}: a number"))))
    };
    let n = num("--tables", 10_000.0) as usize;
    let nq = num("--queries", 20.0) as usize;
    let budget = num("--budget", 20.0) as usize;
    let time_limit = num("--time-limit", 10.0);

    // 1. The model, as `lucy model check` reads it: a file, parsed and validated.
    let dir = tempfile::tempdir().unwrap_or_else(|e| die(&format!("temp dir: {e}")));
    let path = dir.path().join("enterprise.json");
    let t = Instant::now();
    let m = gen::enterprise(n, 7);
    let gen_ms = ms(t);
    let text = serde_json::to_string_pretty(&m).unwrap_or_else(|e| die(&e.to_string()));
    std::fs::write(&path, &text).unwrap_or_else(|e| die(&format!("{}: {e}", path.display())));
    drop(m);
    let t = Instant::now();
    let model = lucy::model::load(&path).unwrap_or_else(|e| die(&e.to_string()));
    let load_ms = ms(t);
    let (tables, rels, patterns) = (model.tables.len(), model.relationships.len(), model.patterns.len());
    let t = Instant::now();
    let g = SchemaGraph::new(model).unwrap_or_else(|e| die(&e.to_string()));
    let graph_ms = ms(t);

    // 2. The CRUSH index, cold and warm.
    let t = Instant::now();
    let emb = MiniLm::load_default().unwrap_or_else(|e| die(&format!("{e} (run scripts/fetch-minilm.sh)")));
    let minilm_ms = ms(t);
    let t = Instant::now();
    let corpus = Corpus::from_graph(&g, DocOptions::default());
    let corpus_ms = ms(t);
    let docs = corpus.docs.len();
    let cache = EmbeddingCache::new(dir.path().join("embeddings"));
    let t = Instant::now();
    Index::build(corpus.clone(), &emb, Some(&cache)).unwrap_or_else(|e| die(&e.to_string()));
    let cold_ms = ms(t);
    let t = Instant::now();
    let index = Index::build(corpus, &emb, Some(&cache)).unwrap_or_else(|e| die(&e.to_string()));
    let warm_ms = ms(t);

    // 3–4. Per question: retrieval, then GenerateView.
    let qs = gen::queries(&g, nq, (5, 20), Some(3), 42);
    let cfg = CrushConfig { budget, solver: SolverKind::Greedy, ..Default::default() };
    let (mut crush_ms, mut view_ms, mut total_ms, mut recall, mut picked) =
        (Vec::new(), Vec::new(), Vec::new(), Vec::new(), Vec::new());
    let (mut optimal, mut infeasible, mut errors) = (0, 0, Vec::new());
    for q in &qs {
        let probe_text: Vec<String> = q
            .iter()
            .map(|name| {
                let tid = g.require_table(name).unwrap_or_else(|e| die(&e.to_string()));
                let cols: Vec<String> = g.table(tid).columns.iter().map(|c| c.name.clone()).collect();
                format!("{name}({})", cols.join(", "))
            })
            .collect();
        let probes = parse_schema(&probe_text.join("; ")).unwrap_or_else(|e| die(&e.to_string()));
        let question = format!("a question about {}", q.join(", "));
        let t0 = Instant::now();
        let out = crush(&index, &emb, Some(&question), &probes, &cfg).unwrap_or_else(|e| die(&e.to_string()));
        crush_ms.push(ms(t0));
        recall.push(q.iter().filter(|t| out.tables.contains(t)).count() as f64 / q.len() as f64);
        picked.push(out.tables.len() as f64);
        let mut req = ViewRequest::new(out.tables.clone());
        req.time_limit_s = time_limit;
        let t = Instant::now();
        match generate_view(&g, &req) {
            Ok(r) => {
                match r.status {
                    SolveStatus::Optimal => optimal += 1,
                    SolveStatus::Infeasible => infeasible += 1,
                    _ => {}
                }
                view_ms.push(ms(t));
            }
            Err(e) => errors.push(format!("{} tables: {e}", out.tables.len())),
        }
        total_ms.push(ms(t0));
    }

    println!("Model: enterprise-shaped synthetic, {tables} tables, {rels} relationships, {patterns} patterns; {docs} CRUSH documents (tables and columns).\n");
    println!("| step (once per model) | ms |");
    println!("|---|---:|");
    println!("| generate the model (not part of planning) | {gen_ms:.0} |");
    println!("| model file: parse + validate (`lucy::model::load`) | {load_ms:.0} |");
    println!("| graph build (`SchemaGraph::new`) | {graph_ms:.0} |");
    println!("| load MiniLM | {minilm_ms:.0} |");
    println!("| CRUSH documents from the graph | {corpus_ms:.0} |");
    println!("| CRUSH index, cold (embed {docs} documents) | {cold_ms:.0} |");
    println!("| CRUSH index, warm (on-disk cache hit) | {warm_ms:.0} |");
    println!();
    println!("Per question ({} questions of 5–20 tables, CRUSH greedy budget {budget}, GenerateView limit {time_limit} s):\n", qs.len());
    println!("| phase | median ms | p95 ms | max ms |");
    println!("|---|---:|---:|---:|");
    for (label, v) in [
        ("CRUSH retrieval (embed probes, candidates, greedy)", &crush_ms),
        ("GenerateView over CRUSH's tables", &view_ms),
        ("question to view (both)", &total_ms),
    ] {
        println!("| {label} | {:.1} | {:.1} | {:.1} |", pct(v, 0.5), pct(v, 0.95), pct(v, 1.0));
    }
    println!();
    println!(
        "Tables CRUSH picked: median {:.0} (max {:.0}); request tables among them: median {:.0} %. Views: {optimal} optimal, {infeasible} infeasible (proved), {} errors.",
        pct(&picked, 0.5),
        pct(&picked, 1.0),
        100.0 * pct(&recall, 0.5),
        errors.len()
    );
    for e in &errors {
        println!("- error: {e}");
    }
    if let Some(p) = peak_rss_mib() {
        println!("\nPeak RSS of the whole run: {p:.0} MiB.");
    }
}
