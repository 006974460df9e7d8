//! The comparison of every method on every suite (issue 24), computed from
//! the committed replay outcomes (`benchmarks/cassettes/*.expected.json`,
//! which `tests/bench_replay.rs` reproduces from the cassettes) instead of
//! typed by hand. benchmarks/results/methods.md carries the full table and
//! the README the headline, each between `<!-- methods-… -->` markers; this
//! test fails when either is stale. Regenerate with
//! `LUCY_UPDATE_DOCS=1 cargo test --test methods_table`.

mod support;

use serde_json::Value;

const ROOT: &str = env!("CARGO_MANIFEST_DIR");

/// One method's committed run on one suite.
struct Cell {
    suite: Suite,
    /// The name in the tables.
    method: &'static str,
    /// `benchmarks/cassettes/<file>.expected.json`, and the method's key in it.
    file: &'static str,
    key: &'static str,
    /// Where it comes from, for the full table.
    source: &'static str,
    /// The median wall per question of the recording run, as its section
    /// reports it (machine and load differ between runs; a replay takes
    /// no model time). Where a run's section has none, the median over its
    /// questions of the recorded calls' latencies summed (a replayed trace
    /// keeps each call's `latency_ms`): the model's time, without the
    /// solver's and the database's, which are small beside it.
    wall: &'static str,
}

#[derive(Clone, Copy, PartialEq)]
enum Suite {
    Ddo,
    Acme,
    Spider,
}

impl Suite {
    fn name(self) -> &'static str {
        match self {
            Suite::Ddo => "DDO (24)",
            Suite::Acme => "ACME (44)",
            Suite::Spider => "Spider sample (seed 1)",
        }
    }
}

const METHODS: &[&str] = &["lucy", "direct", "crush", "rasl", "ta-sql", "fewshot", "lucy + examples"];

const CELLS: &[Cell] = &[
    Cell {
        suite: Suite::Ddo,
        method: "lucy",
        file: "ddo-s22-fresh",
        key: "lucy",
        source: "today's defaults, every call sent fresh (session 22; the replay of session 9's recording: 16 too)",
        wall: "19 s (p95 90 s; nothing else running)",
    },
    Cell {
        suite: Suite::Ddo,
        method: "direct",
        file: "ddo-defaults-s9",
        key: "direct",
        source: "session 9",
        wall: "8 s (its recorded calls' latencies summed)",
    },
    Cell {
        suite: Suite::Ddo,
        method: "crush",
        file: "ddo-crush-s12",
        key: "crush",
        source: "session 12, budget 10",
        wall: "50 s",
    },
    Cell {
        suite: Suite::Ddo,
        method: "rasl",
        file: "ddo-methods-s11",
        key: "rasl",
        source: "session 11",
        wall: "160 s",
    },
    Cell {
        suite: Suite::Ddo,
        method: "ta-sql",
        file: "ddo-methods-s11",
        key: "ta-sql",
        source: "session 11",
        wall: "45 s",
    },
    Cell {
        suite: Suite::Ddo,
        method: "fewshot",
        file: "ddo-fewshot-s12",
        key: "fewshot",
        source: "session 12, in-database pool, k = 10",
        wall: "39 s",
    },
    Cell {
        suite: Suite::Ddo,
        method: "lucy + examples",
        file: "ddo-s23-examples",
        key: "lucy",
        source: "today's defaults over the fresh recording, in-database pool, k = 3 (session 23; session 12's defaults: 13)",
        wall: "11 s (QueryView sent, phase 1 replayed; builds beside)",
    },
    Cell {
        suite: Suite::Acme,
        method: "lucy",
        file: "acme-s20-defaults",
        key: "lucy",
        source: "today's defaults over the suite's recording (fresh, all 44: 20; 21 replayed)",
        wall: "72 s (questions 21–44 fresh, session 21, builds beside)",
    },
    Cell {
        suite: Suite::Acme,
        method: "lucy + examples",
        file: "acme-s24-examples",
        key: "lucy",
        source: "today's defaults over the fresh recording, in-database pool, k = 3 (sessions 23–24; without examples: 21)",
        wall: "73 s a QueryView call sent (median; max 371 s; phase 1 replayed; builds beside)",
    },
    Cell {
        suite: Suite::Acme,
        method: "direct",
        file: "acme-direct-s19",
        key: "direct",
        source: "session 19",
        wall: "20 s",
    },
    Cell {
        suite: Suite::Acme,
        method: "crush",
        file: "acme-crush-s18",
        key: "crush",
        source: "session 18, budget 10",
        wall: "37 s",
    },
    Cell {
        suite: Suite::Acme,
        method: "rasl",
        file: "acme-rasl-s21",
        key: "rasl",
        source: "sessions 19–21",
        wall: "115 s (its recorded calls' latencies summed; builds beside the last stretch)",
    },
    Cell {
        suite: Suite::Acme,
        method: "ta-sql",
        file: "acme-tasql-s22",
        key: "ta-sql",
        source: "session 22",
        wall: "48 s (tests beside)",
    },
    Cell {
        suite: Suite::Acme,
        method: "fewshot",
        file: "acme-fewshot-s19",
        key: "fewshot",
        source: "session 19, in-database pool, k = 10",
        wall: "43 s (builds beside)",
    },

    Cell {
        suite: Suite::Spider,
        method: "lucy",
        file: "spider-dev-s23-fresh",
        key: "lucy",
        source:
            "today's defaults, every call sent fresh (session 23; the replay of sessions 9 and 17's recordings: 64 too)",
        wall: "16 s (p95 64 s; builds beside, niced)",
    },
    Cell {
        suite: Suite::Spider,
        method: "direct",
        file: "spider-dev-direct-s23-fresh",
        key: "direct",
        source:
            "today's defaults, every call sent fresh after lucy's (session 23; sessions 9 and 17's recording: 62 too)",
        wall: "3.6 s (p95 12.6 s; tests beside)",
    },
    Cell {
        suite: Suite::Spider,
        method: "crush",
        file: "spider-dev-crush-s15",
        key: "crush",
        source: "sessions 15, 16 and 22, budget 10",
        wall: "26 s / 13 s (questions 26–50 / 51–100)",
    },
    Cell {
        suite: Suite::Spider,
        method: "rasl",
        file: "spider-dev-rasl-s16",
        key: "rasl",
        source: "sessions 16, 17 and 22",
        wall: "62 s / 29 s (the first 25 / 51–100)",
    },
    Cell {
        suite: Suite::Spider,
        method: "ta-sql",
        file: "spider-dev-tasql-s17",
        key: "ta-sql",
        source: "sessions 17, 22 and 23",
        wall: "65 s / 19 s (the first 50, descriptions included, under load / 51–100)",
    },
    Cell {
        suite: Suite::Spider,
        method: "fewshot",
        file: "spider-dev-fewshot-s15",
        key: "fewshot",
        source: "sessions 15 and 22, cross-database pool, k = 10",
        wall: "16 s / 9 s (the first 50 / 51–100)",
    },
    Cell {
        suite: Suite::Spider,
        method: "lucy + examples",
        file: "spider-dev-s23-examples",
        key: "lucy",
        source: "today's defaults over the fresh recording, in-database pool, k = 3 (session 23; the cross-database pool changes no answer: 64)",
        wall: "6.6 s (QueryView sent, phase 1 replayed; nothing else heavy)",
    },
];

/// The numbers of one cell, over its first `n` questions where given.
struct Numbers {
    questions: usize,
    ex: usize,
    esx: usize,
    /// Mean gold-table recall of the linked schema, and the questions
    /// holding every gold table (`None`: the method links nothing).
    linked: Option<(f64, usize)>,
    calls: f64,
    prompt_tokens: f64,
    completion_tokens: f64,
    /// The model's time per question over the whole recorded run (the
    /// summary's `model_ms_median` / `model_ms_p95`: its calls' latencies
    /// summed, as recorded; overlapping calls each count whole), in ms.
    model_ms: (Option<f64>, Option<f64>),
}

fn load(cell: &Cell) -> Value {
    let path = format!("{ROOT}/benchmarks/cassettes/{}.expected.json", cell.file);
    let text = std::fs::read_to_string(&path).unwrap_or_else(|e| panic!("{path}: {e}"));
    let v: Value = serde_json::from_str(&text).unwrap_or_else(|e| panic!("{path}: {e}"));
    v[cell.key].clone()
}

fn numbers(run: &Value, first: Option<usize>) -> Numbers {
    let all = run["questions"].as_array().expect("questions");
    let qs = &all[..first.unwrap_or(all.len()).min(all.len())];
    let flag = |q: &Value, k: &str| q["metrics"][k].as_bool() == Some(true);
    let linked: Vec<f64> = qs.iter().filter_map(|q| q["metrics"]["linked_recall"].as_f64()).collect();
    let s = &run["summary"];
    // Calls and tokens per question over the whole recorded run (the
    // outcome keeps no per-question cost).
    let n = s["questions"].as_u64().unwrap() as f64;
    Numbers {
        questions: qs.len(),
        ex: qs.iter().filter(|q| flag(q, "ex")).count(),
        esx: qs.iter().filter(|q| flag(q, "esx")).count(),
        linked: (!linked.is_empty())
            .then(|| (linked.iter().sum::<f64>() / linked.len() as f64, linked.iter().filter(|&&x| x >= 1.0).count())),
        calls: s["llm_calls"].as_f64().unwrap() / n,
        prompt_tokens: s["prompt_tokens"].as_f64().unwrap() / n,
        completion_tokens: s["completion_tokens"].as_f64().unwrap() / n,
        model_ms: (s["model_ms_median"].as_f64(), s["model_ms_p95"].as_f64()),
    }
}

/// A Spider column over all 100 questions that the run does not cover
/// (recorded on its first 50 only) is left out.
fn uncovered(suite: Suite, first: Option<usize>, x: &Numbers) -> bool {
    first.is_none() && suite == Suite::Spider && x.questions < 100
}

fn cell(suite: Suite, method: &str) -> Option<&'static Cell> {
    CELLS.iter().find(|c| c.suite == suite && c.method == method)
}

fn thousands(x: f64) -> String {
    let n = x.round() as u64;
    if n >= 1000 {
        format!("{},{:03}", n / 1000, n % 1000)
    } else {
        n.to_string()
    }
}

/// The headline: ex per method and suite.
fn matrix() -> String {
    let mut o = String::from(
        "| method | DDO, 24 | ACME, 44 | Spider sample, first 50 | Spider sample, 100 |\n|---|---|---|---|---|\n",
    );
    for m in METHODS {
        let mut row = format!("| {m} |");
        for (suite, first) in
            [(Suite::Ddo, None), (Suite::Acme, None), (Suite::Spider, Some(50)), (Suite::Spider, None)]
        {
            let text = match cell(suite, m) {
                Some(c) => {
                    let run = load(c);
                    let x = numbers(&run, first);
                    if uncovered(suite, first, &x) {
                        "–".to_string()
                    } else if *m == "lucy" {
                        format!("**{}**", x.ex)
                    } else {
                        x.ex.to_string()
                    }
                }
                None => "–".to_string(),
            };
            row.push_str(&format!(" {text} |"));
        }
        o.push_str(&row);
        o.push('\n');
    }
    o
}

/// The full table: one row per suite and method.
fn table() -> String {
    let mut o = String::from(
        "| suite | method | questions | ex | esx | linked schema: gold-table recall (questions holding every gold table) | LLM calls / question | tokens / question (prompt / completion) | model time / question, median / p95 (calls' latencies summed, as recorded) | median wall / question, recording run | run |\n|---|---|---|---|---|---|---|---|---|---|---|\n",
    );
    for suite in [Suite::Ddo, Suite::Acme, Suite::Spider] {
        for m in METHODS {
            let Some(c) = cell(suite, m) else { continue };
            let run = load(c);
            let firsts: &[Option<usize>] = if suite == Suite::Spider { &[Some(50), None] } else { &[None] };
            for &first in firsts {
                let x = numbers(&run, first);
                if uncovered(suite, first, &x) {
                    continue;
                }
                let which = match (suite, first) {
                    (Suite::Spider, Some(_)) => "first 50".to_string(),
                    (Suite::Spider, None) => "all 100".to_string(),
                    _ => x.questions.to_string(),
                };
                let linked =
                    x.linked.map(|(r, n)| format!("{r:.2} ({n})")).unwrap_or_else(|| "– (whole schema)".into());
                let secs = |v: Option<f64>| v.map(|ms| format!("{:.1} s", ms / 1000.0)).unwrap_or_else(|| "–".into());
                o.push_str(&format!(
                    "| {} | {m} | {which} | {} | {} | {linked} | {:.1} | {} / {} | {} / {} | {} | {} |\n",
                    suite.name(),
                    x.ex,
                    x.esx,
                    x.calls,
                    thousands(x.prompt_tokens),
                    thousands(x.completion_tokens),
                    secs(x.model_ms.0),
                    secs(x.model_ms.1),
                    c.wall,
                    c.source
                ));
            }
        }
    }
    o
}

#[test]
fn the_comparison_tables_match_the_committed_outcomes() {
    support::generated_block("benchmarks/results/methods.md", "methods-table", &table(), "methods_table");
    let headline = matrix();
    support::generated_block("benchmarks/results/methods.md", "methods-matrix", &headline, "methods_table");
    support::generated_block("README.md", "methods-matrix", &headline, "methods_table");
}

#[test]
fn every_cell_names_a_committed_outcome_with_its_method() {
    for c in CELLS {
        let run = load(c);
        assert!(run["questions"].as_array().is_some_and(|q| !q.is_empty()), "{}: no `{}` run", c.file, c.key);
        // The same model for every row.
        assert!(run["llm"].as_str().unwrap_or("").contains("sha256:cc324af070c2"), "{}: {}", c.file, run["llm"]);
    }
}
