//! Raw speed of the embedded model: prompt evaluation (prefill) and
//! generation (decode) tokens per second at several thread counts, timed by
//! lucy (wall clock around its calls) and by llama.cpp's own performance
//! counters (`llama_perf_context`) for the same work, so lucy's overhead is
//! visible.
//!
//! Two workloads per thread count, each after a prefill of the direct
//! baseline's prompt (the whole DDO schema as DDL, the longest prompt lucy
//! sends for DDO):
//! - `1 × free (SQL)`: one greedy sample, no grammar, asked for a SQL query
//!   (llama.cpp's own decode rate; it stops at the end of the answer);
//! - `5 × list grammar`: five samples at temperature 0.2 decoded together
//!   under MatchTables' list grammar over the DDO tables, exactly as a
//!   MatchTables call decodes them (one batch per step after one prompt
//!   evaluation).
//!
//!   cargo run --example llm_speed -- [--gguf FILE] [--threads 1,2,auto] [--gen 64] [--reps 3]
//!
//! `--threads` takes numbers (fixed counts) and `auto` (the default: one
//! thread per generated token, every core for prompts and batched steps).
//!
//! Prints a Markdown table; note the machine load (`uptime`) beside it. The
//! per-question wall time of `lucy bench` (median, p95, with and without the
//! prefix cache) comes from `benchmarks/llm-speed.sh`, which runs this too.

use std::path::PathBuf;

use lucy::graph::SchemaGraph;
use lucy::llm::embedded::{default_model_path, EmbeddedModel, EmbeddedOptions, SpeedSample};
use lucy::llm::Constraint;

fn arg(args: &[String], name: &str) -> Option<String> {
    args.iter().position(|a| a == name).and_then(|i| args.get(i + 1).cloned())
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let args: Vec<String> = std::env::args().collect();
    let env = |k: &str| std::env::var(k).ok();
    let gguf: PathBuf = match arg(&args, "--gguf") {
        Some(p) => p.into(),
        None => default_model_path(&env).ok_or("no HOME: pass --gguf")?,
    };
    // A number fixes llama.cpp's threads for everything; `auto` is the
    // default (single-token steps on one thread, batches on every core).
    let threads: Vec<Option<usize>> = arg(&args, "--threads")
        .unwrap_or_else(|| "1,2,auto".into())
        .split(',')
        .map(|t| if t.trim() == "auto" { Ok(None) } else { t.trim().parse().map(Some) })
        .collect::<Result<_, _>>()?;
    let gen: usize = arg(&args, "--gen").map_or(Ok(64), |g| g.parse())?;
    let reps: usize = arg(&args, "--reps").map_or(Ok(3), |g| g.parse())?;
    if reps == 0 || gen == 0 {
        return Err("--reps and --gen must be at least 1".into());
    }

    let model = lucy::model::load(concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels/ddo.json"))?;
    let graph = SchemaGraph::new(model)?;
    let ddl = lucy::pipeline::ddl::ddl(&graph, None, false);
    let ask = |task: &str| {
        format!("<|im_start|>user\nGiven the database described by the following DDL:\n```sql\n{ddl}\n```\n{task}<|im_end|>\n<|im_start|>assistant\n")
    };
    // Free decoding answers with SQL (a few dozen tokens); the list row with
    // the MatchTables answer format.
    let sql_text = ask("Write a SQLite query that lists customers who use datacenters with names starting with 'dev', with their locations' cities. Return just the query, in a ```sql block.");
    let list_text = ask("Which tables does a query need that lists customers who use datacenters with names starting with 'dev'? Output only a list of table names, [element, element, ...].");
    let names: Vec<String> = graph.model().tables.iter().map(|t| t.name.clone()).collect();
    let list = Constraint::JsonSchema(serde_json::json!({"type": "array", "items": {"type": "string", "enum": names}}));

    println!("model: {}", gguf.display());
    println!("| threads | decode | prompt tokens | prefill tok/s lucy | prefill tok/s llama.cpp | tokens (steps) | decode tok/s lucy | decode tok/s llama.cpp | lucy's loop per step |");
    println!("|---:|---|---:|---:|---:|---:|---:|---:|---:|");
    for &choice in &threads {
        let mut o = EmbeddedOptions::new(&gguf);
        if let Some(n) = choice {
            o.threads = n;
            o.auto_threads = false;
        }
        let t = match choice {
            Some(n) => n.to_string(),
            None => format!("auto (1 per token, {} per batch)", o.threads),
        };
        let m = EmbeddedModel::load(&o, "pass --gguf FILE or run scripts/fetch-model.sh", &env)?;
        for (label, text, n, c) in
            [("1 × free (SQL)", &sql_text, 1usize, None), ("5 × list grammar", &list_text, 5, Some(&list))]
        {
            let s: Vec<SpeedSample> =
                (0..reps).map(|_| m.measure(text, gen, n, c.cloned())).collect::<Result<_, _>>()?;
            let rate = |tok: u64, ms: f64| if ms > 0.0 { tok as f64 / ms * 1000.0 } else { 0.0 };
            let per_step = |x: &SpeedSample| {
                if x.decode_steps > 0 {
                    (x.decode_ms - x.llama_decode_ms) / x.decode_steps as f64
                } else {
                    0.0
                }
            };
            println!(
                "| {t} | {label} | {} | {:.1} | {:.1} | {} ({}) | {:.1} | {:.1} | {:.1} ms |",
                s[0].prompt_tokens,
                median(s.iter().map(|x| rate(x.prompt_tokens, x.prefill_ms)).collect()),
                median(s.iter().map(|x| rate(x.prompt_tokens, x.llama_prefill_ms)).collect()),
                s[0].decode_tokens,
                s[0].decode_steps,
                median(s.iter().map(|x| rate(x.decode_tokens, x.decode_ms)).collect()),
                median(s.iter().map(|x| rate(x.decode_tokens, x.llama_decode_ms)).collect()),
                median(s.iter().map(per_step).collect()),
            );
        }
    }
    println!("(median of {reps} runs; at most {gen} tokens per sample; llama.cpp's times are its own compute counters for the same calls)");
    Ok(())
}
