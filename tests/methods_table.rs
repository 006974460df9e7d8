//! The comparison of every method on every suite (issue 24), computed from
//! the committed replay outcomes (`benchmarks/cassettes/*.expected.json`,
//! which `tests/bench_replay.rs` reproduces from the cassettes) instead of
//! typed by hand. benchmarks/results/methods.md carries the full table and
//! the README the headline, each between `<!-- methods-… -->` markers; this
//! test fails when either is stale. Regenerate with
//! `LUCY_UPDATE_DOCS=1 cargo test --test methods_table`.

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
    /// no model time).
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
        wall: "–",
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
        file: "ddo-examples-s12",
        key: "lucy",
        source: "session 12's defaults, in-database pool",
        wall: "21 s",
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
        wall: "– (builds beside the last stretch)",
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
        file: "spider-dev-s21-defaults",
        key: "lucy",
        source: "today's defaults over sessions 9 and 17's recordings",
        wall: "25 s / 16 s (questions 51–75 / 76–100, session 17)",
    },
    Cell {
        suite: Suite::Spider,
        method: "direct",
        file: "spider-dev-direct-s17",
        key: "direct",
        source: "sessions 9 and 17",
        wall: "–",
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
        source: "session 17",
        wall: "65 s (descriptions included, under load)",
    },
    Cell {
        suite: Suite::Spider,
        method: "fewshot",
        file: "spider-dev-fewshot-s15",
        key: "fewshot",
        source: "sessions 15 and 22, cross-database pool, k = 10",
        wall: "16 s / 9 s (the first 50 / 51–100)",
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
        "| suite | method | questions | ex | esx | linked schema: gold-table recall (questions holding every gold table) | LLM calls / question | tokens / question (prompt / completion) | median wall / question, recording run | run |\n|---|---|---|---|---|---|---|---|---|---|\n",
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
                o.push_str(&format!(
                    "| {} | {m} | {which} | {} | {} | {linked} | {:.1} | {} / {} | {} | {} |\n",
                    suite.name(),
                    x.ex,
                    x.esx,
                    x.calls,
                    thousands(x.prompt_tokens),
                    thousands(x.completion_tokens),
                    c.wall,
                    c.source
                ));
            }
        }
    }
    o
}

/// `text` with the block between `<!-- NAME:begin -->` and `<!-- NAME:end -->`
/// replaced by `body`.
fn splice(text: &str, name: &str, body: &str, file: &str) -> String {
    let begin = format!("<!-- {name}:begin -->\n");
    let end = format!("<!-- {name}:end -->");
    let b = text.find(&begin).unwrap_or_else(|| panic!("{file}: no `{}` marker", begin.trim()));
    let e = text.find(&end).unwrap_or_else(|| panic!("{file}: no `{end}` marker"));
    format!("{}{begin}{body}{}", &text[..b], &text[e..])
}

fn check(file: &str, name: &str, body: &str) {
    let path = format!("{ROOT}/{file}");
    let doc = std::fs::read_to_string(&path).unwrap();
    let fresh = splice(&doc, name, body, file);
    if std::env::var_os("LUCY_UPDATE_DOCS").is_some() {
        std::fs::write(&path, &fresh).unwrap();
        return;
    }
    assert!(
        fresh == doc,
        "{file}: the `{name}` table is stale: run `LUCY_UPDATE_DOCS=1 cargo test --test methods_table` and review the diff"
    );
}

#[test]
fn the_comparison_tables_match_the_committed_outcomes() {
    check("benchmarks/results/methods.md", "methods-table", &table());
    let headline = matrix();
    check("benchmarks/results/methods.md", "methods-matrix", &headline);
    check("README.md", "methods-matrix", &headline);
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
