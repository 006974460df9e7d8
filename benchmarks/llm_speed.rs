//! Raw speed of the embedded model: prompt evaluation (prefill) and
//! generation (decode) tokens per second at several thread counts, timed by
//! lucy (wall clock around its calls) and by llama.cpp's own performance
//! counters for the same work, so lucy's overhead is visible.
//!
//! The prompt is the direct baseline's (the whole DDO schema as DDL): the
//! longest prompt lucy sends for DDO.
//!
//!   cargo run --config 'profile.dev.package.lucy.opt-level=3' --example llm_speed -- \
//!       [--gguf FILE] [--threads 1,2] [--gen 64] [--reps 3]
//!
//! Prints a Markdown table; note the machine load (`uptime`) beside it. The
//! per-question wall time of `lucy ask` (median, p95, with and without the
//! prefix cache) comes from `benchmarks/llm-speed.sh`, which runs `lucy bench`.

use std::path::PathBuf;

use lucy::graph::SchemaGraph;
use lucy::llm::embedded::{default_model_path, EmbeddedModel, EmbeddedOptions, SpeedSample};

fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1).cloned())
}

fn median(v: &mut [f64]) -> f64 {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let env = |k: &str| std::env::var(k).ok();
    let gguf: PathBuf = match arg(&args, "--gguf") {
        Some(p) => p.into(),
        None => default_model_path(&env).ok_or("no HOME: pass --gguf")?,
    };
    let threads: Vec<usize> = arg(&args, "--threads").unwrap_or_else(|| "1,2".into()).split(',').map(|t| t.trim().parse()).collect::<Result<_, _>>()?;
    let gen: usize = arg(&args, "--gen").map_or(Ok(64), |g| g.parse())?;
    let reps: usize = arg(&args, "--reps").map_or(Ok(3), |g| g.parse())?;

    let model = lucy::model::load(concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels/ddo.json"))?;
    let graph = SchemaGraph::new(model)?;
    let text = format!(
        "<|im_start|>user\nGiven the database described by the following DDL:\n```sql\n{}\n```\nWrite a SQLite query that lists customers who use datacenters with names starting with 'dev'.<|im_end|>\n<|im_start|>assistant\n",
        lucy::pipeline::ddl::ddl(&graph, None, false)
    );

    println!("model: {}", gguf.display());
    println!("| threads | prompt tokens | prefill tok/s (lucy) | prefill tok/s (llama.cpp) | decode tok/s (lucy) | decode tok/s (llama.cpp) |");
    println!("|---:|---:|---:|---:|---:|---:|");
    for &t in &threads {
        let mut o = EmbeddedOptions::new(&gguf);
        o.threads = t;
        let m = EmbeddedModel::load(&o, "pass --gguf FILE or run scripts/fetch-model.sh", &env)?;
        let samples: Vec<SpeedSample> = (0..reps).map(|_| m.measure(&text, gen)).collect::<Result<_, _>>()?;
        let rate = |tok: u64, ms: f64| tok as f64 / ms * 1000.0;
        let mut pl: Vec<f64> = samples.iter().map(|s| rate(s.prompt_tokens, s.prefill_ms)).collect();
        let mut pc: Vec<f64> = samples.iter().map(|s| rate(s.prompt_tokens, s.llama_prefill_ms)).collect();
        let mut dl: Vec<f64> = samples.iter().map(|s| rate(s.decode_tokens, s.decode_ms)).collect();
        let mut dc: Vec<f64> = samples.iter().map(|s| rate(s.decode_tokens, s.llama_decode_ms)).collect();
        println!(
            "| {t} | {} | {:.1} | {:.1} | {:.1} | {:.1} |",
            samples[0].prompt_tokens,
            median(&mut pl),
            median(&mut pc),
            median(&mut dl),
            median(&mut dc)
        );
    }
    println!("(median of {reps} runs; {gen} generated tokens per run)");
    Ok(())
}
