//! The ablation of issue 23, computed from the committed replay outcomes
//! (`benchmarks/cassettes/*.expected.json`, which `tests/bench_replay.rs`
//! reproduces from the cassettes) instead of typed by hand: each lever as
//! it was added, in the order the sessions added them, on DDO and ACME,
//! then the final default sent fresh and direct. benchmarks/results/
//! embedded.md carries it between `<!-- ablation-table:… -->` markers; this
//! test fails when it is stale. Regenerate with
//! `LUCY_UPDATE_DOCS=1 cargo test --test ablation_table`. The rows of
//! levers measured off and deleted since (issue 45) are recorded text: their
//! replays went with their code.

mod support;

use serde_json::Value;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// One committed run: a step of the ablation.
struct Step {
    suite: &'static str,
    /// What the step adds, and its flag.
    step: &'static str,
    source: Source,
}

/// Where a step's numbers come from.
enum Source {
    /// `benchmarks/cassettes/<file>.expected.json`, and the method's key in it.
    Replay { file: &'static str, key: &'static str },
    /// A lever measured off and deleted since (issue 45): its replay went
    /// with its code, and the row keeps the cells (questions to model time)
    /// its replay last generated.
    Deleted(&'static str),
}

const fn step(suite: &'static str, step: &'static str, file: &'static str, key: &'static str) -> Step {
    Step { suite, step, source: Source::Replay { file, key } }
}

const fn deleted(suite: &'static str, step: &'static str, cells: &'static str) -> Step {
    Step { suite, step, source: Source::Deleted(cells) }
}

const STEPS: &[Step] = &[
    step(
        "DDO",
        "the first recording (session 6; free names, re-attributed with the rename on)",
        "ddo-qwen2.5-coder-1.5b",
        "lucy",
    ),
    step(
        "DDO",
        "+ names forced by the grammar, the rename (session 8: `--query-names strict-derived --rename-unknown on`)",
        "ddo-levers-strict",
        "lucy",
    ),
    step(
        "DDO",
        "+ one row per listed entity, every view column (session 9: `--distinct auto --view-columns all`)",
        "ddo-defaults-s9",
        "lucy",
    ),
    deleted(
        "DDO",
        "+ verification of tables few samples named (session 9: `--prune 3`; off)",
        "24 | 11 | 11 | 11 / 1 / 1 / 0 | 7.9 | 3068 / 350 | 43.6 s / 290.2 s",
    ),
    step("DDO", "+ FROM names the view only (session 10: `--query-names strict`)", "ddo-defaults-s10", "lucy"),
    step("DDO", "+ values in the prompts (session 10: `--values on`; off)", "ddo-values-s10", "lucy"),
    step("DDO", "+ execution vote over 3 answers (session 10: `--exec-vote 3`; off)", "ddo-exec-vote-s10", "lucy"),
    step("DDO", "+ one column per equal set, kinds without the LLM (session 14)", "ddo-s14-kinds", "lucy"),
    step("DDO", "+ name hints (session 15: `--name-hints on`)", "ddo-s15-hints", "lucy"),
    deleted(
        "DDO",
        "+ named tables, group hints (session 16)",
        "24 | 13 | 14 | 9 / 1 / 1 / 0 | 7.9 | 3089 / 385 | 29.2 s / 168.5 s",
    ),
    step(
        "DDO",
        "+ counts of the counted table, an empty answer over a narrower view (session 17)",
        "ddo-s17-defaults",
        "lucy",
    ),
    step("DDO", "+ unread tables dropped, unjoinable tables dropped, kinds (session 18)", "ddo-s18-defaults", "lucy"),
    step(
        "DDO",
        "+ the named branch INNER-joined, named lookup rows as filters (session 19)",
        "ddo-s19-defaults",
        "lucy",
    ),
    step(
        "DDO",
        "+ entity literals, by-groups, shortened prompts; value literals (sessions 20–21): the final default",
        "ddo-s20-defaults",
        "lucy",
    ),
    step("DDO", "the final default, every call sent fresh (session 22)", "ddo-s22-fresh", "lucy"),
    step("DDO", "the final default + verified examples (in-database pool; session 23)", "ddo-s23-examples", "lucy"),
    deleted(
        "DDO",
        "the final default, no defined name a view column's lookalike (session 24: `--query-names scoped`; off)",
        "24 | 16 | 17 | 3 / 1 / 4 / 0 | 7.9 | 3088 / 384 | 30.1 s / 126.3 s",
    ),
    deleted(
        "DDO",
        "the final default + retrieval with values, yes/no verification (session 25: `--values on --retrieve on --verify 3`; off)",
        "24 | 12 | 13 | 6 / 2 / 4 / 0 | 16.4 | 5569 / 633 | 63.9 s / 162.1 s",
    ),
    step(
        "DDO",
        "the final default + execution vote over 3 answers (session 25: `--exec-vote 3`; off)",
        "ddo-s25-exec-vote",
        "lucy",
    ),
    deleted(
        "DDO",
        "… + 3 more over the runner-up view where phase 1 was uncertain (session 25: `--runner-up on`; off)",
        "24 | 15 | 16 | 4 / 1 / 4 / 0 | 8.0 | 3134 / 489 | 27.6 s / 94.2 s",
    ),
    step("DDO", "direct (the same model over the whole schema; session 9)", "ddo-defaults-s9", "direct"),
    step("ACME", "session 10's defaults (session 13's recording)", "acme-s13", "lucy"),
    step(
        "ACME",
        "+ one column per equal set, kinds without the LLM (session 14; the first 24)",
        "acme-s14-kinds",
        "lucy",
    ),
    step("ACME", "+ name hints (session 15; the first 24)", "acme-s15-hints", "lucy"),
    deleted(
        "ACME",
        "+ named tables, group hints (session 16; the first 24)",
        "24 | 4 | 4 | 15 / 0 / 4 / 1 | 11.3 | 9338 / 1297 | 270.2 s / 821.3 s",
    ),
    step("ACME", "session 17's defaults", "acme-s17-defaults", "lucy"),
    step(
        "ACME",
        "+ the named branch INNER-joined, named lookup rows as filters (session 19, with session 18's)",
        "acme-s19-defaults",
        "lucy",
    ),
    step(
        "ACME",
        "+ entity literals, by-groups, shortened prompts; value literals (sessions 20–21): the final default",
        "acme-s20-defaults",
        "lucy",
    ),
    step("ACME", "the final default over the fresh recording (sessions 20–21)", "acme-s21-fresh44", "lucy"),
    step(
        "ACME",
        "the final default + verified examples (in-database pool; sessions 23–24)",
        "acme-s24-examples",
        "lucy",
    ),
    step("ACME", "direct (session 19)", "acme-direct-s19", "direct"),
];

fn load(file: &str, key: &str) -> Value {
    let path = format!("{ROOT}/benchmarks/cassettes/{file}.expected.json");
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let v: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"));
    v[key].clone()
}

/// Misses per phase from the summary's attribution (`phase1_…`, `phase2_…`,
/// `phase3_…`; anything else that is not `correct` — an LLM error, a gold
/// that does not run — as other).
fn phases(summary: &Value) -> [u64; 4] {
    let mut n = [0; 4];
    for pair in summary["attribution"].as_array().into_iter().flatten() {
        let label = pair[0].as_str().unwrap_or("");
        let count = pair[1].as_u64().unwrap_or(0);
        let i = match label {
            "correct" => continue,
            l if l.starts_with("phase1") => 0,
            l if l.starts_with("phase2") => 1,
            l if l.starts_with("phase3") => 2,
            _ => 3,
        };
        n[i] += count;
    }
    n
}

fn secs(v: &Value) -> String {
    v.as_f64().map(|ms| format!("{:.1} s", ms / 1000.0)).unwrap_or_else(|| "–".into())
}

fn table() -> String {
    let mut o = String::from(
        "| suite | step | questions | ex | esx | misses: phase 1 / 2 / 3 / other | LLM calls / question | tokens / question (prompt / completion) | model time / question, median / p95 (calls' latencies summed) |\n|---|---|---|---|---|---|---|---|---|\n",
    );
    for s in STEPS {
        let (file, key) = match s.source {
            Source::Replay { file, key } => (file, key),
            Source::Deleted(cells) => {
                o.push_str(&format!("| {} | {} | {cells} |\n", s.suite, s.step));
                continue;
            }
        };
        let run = load(file, key);
        let sum = &run["summary"];
        let q = sum["questions"].as_f64().unwrap();
        let [p1, p2, p3, other] = phases(sum);
        o.push_str(&format!(
            "| {} | {} | {} | {} | {} | {p1} / {p2} / {p3} / {other} | {:.1} | {:.0} / {:.0} | {} / {} |\n",
            s.suite,
            s.step,
            q,
            sum["ex"],
            sum["esx"],
            sum["llm_calls"].as_f64().unwrap() / q,
            sum["prompt_tokens"].as_f64().unwrap() / q,
            sum["completion_tokens"].as_f64().unwrap() / q,
            secs(&sum["model_ms_median"]),
            secs(&sum["model_ms_p95"]),
        ));
    }
    o
}

#[test]
fn the_ablation_table_matches_the_committed_outcomes() {
    support::generated_block("benchmarks/results/embedded.md", "ablation-table", &table(), "ablation_table");
}

#[test]
fn every_step_names_a_committed_outcome_of_the_default_model() {
    for s in STEPS {
        let Source::Replay { file, key } = s.source else { continue };
        let run = load(file, key);
        assert!(run["questions"].as_array().is_some_and(|q| !q.is_empty()), "{file}: no `{key}` run");
        assert!(run["llm"].as_str().unwrap_or("").contains("sha256:cc324af070c2"), "{file}: {}", run["llm"]);
    }
}
