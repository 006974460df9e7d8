//! The Markdown report of a benchmark run (one method, or a comparison).

use std::fmt::Write as _;

use super::attribution::Label;
use super::meta::BenchRun;
use super::run::QuestionResult;
use super::summary::Summary;

fn f2(v: Option<f64>) -> String {
    v.map(|x| format!("{x:.2}")).unwrap_or_else(|| "–".into())
}

fn ms(v: Option<f64>) -> String {
    v.map(|x| format!("{x:.1} ms")).unwrap_or_else(|| "–".into())
}

const LINKED: &str = "linked schema: gold-table recall (questions holding every gold table)";

/// The linked schema's recall and the questions holding every gold table.
fn linked(s: &Summary) -> String {
    match (s.linked_recall, s.linked_complete) {
        (Some(r), Some(n)) => format!("{r:.2} ({n})"),
        _ => "–".into(),
    }
}

/// The Markdown report.
pub fn render(run: &BenchRun) -> String {
    let s = &run.summary;
    let mut o = String::new();
    let _ = writeln!(o, "# lucy bench `{}` — {} ({})\n", run.suite, run.mode, run.method);
    let _ = writeln!(
        o,
        "{} · commit `{}` · {} questions{}\n",
        run.date,
        run.commit,
        s.questions,
        run.llm.as_ref().map(|l| format!(" · LLM `{l}`")).unwrap_or_default()
    );
    if run.mode != "oracle-tables" {
        let _ = writeln!(o, "| | {} |\n|---|---|", run.method);
        let _ = writeln!(o, "| cov_t | {} |", f2(s.cov_t));
        let _ = writeln!(o, "| cov_a | {} |", f2(s.cov_a));
        if s.linked_recall.is_some() {
            let _ = writeln!(o, "| {LINKED} | {} |", linked(s));
        }
        let _ = writeln!(o, "| ex | {} |", s.ex);
        let _ = writeln!(o, "| esx | {} |", s.esx);
        let _ = writeln!(o, "| gold executable | {} / {} |\n", s.gold_executable, s.questions);
    }
    let _ = writeln!(o, "## Phase 2: join accuracy\n");
    let rate = if s.multi_table == 0 { 0.0 } else { 100.0 * s.join_matched as f64 / s.multi_table as f64 };
    let _ = writeln!(o, "| multi-table gold queries | with a view | joins match gold | exact pair sets | infeasible | view SQL runs | solve median | solve p95 |");
    let _ = writeln!(o, "|---|---|---|---|---|---|---|---|");
    let _ = writeln!(
        o,
        "| {} | {} | {} ({rate:.1}%) | {} | {} | {} | {} | {} |\n",
        s.multi_table,
        s.join_compared,
        s.join_matched,
        s.join_exact,
        s.infeasible,
        if s.view_runs_total == 0 { "–".to_string() } else { format!("{} / {}", s.view_runs_ok, s.view_runs_total) },
        ms(s.solve_ms_median),
        ms(s.solve_ms_p95)
    );
    if !s.join_mismatch_classes.is_empty() {
        let _ = writeln!(o, "| join mismatch class | questions |\n|---|---|");
        for (k, n) in &s.join_mismatch_classes {
            let _ = writeln!(o, "| {} | {n} |", k.as_str());
        }
        o.push('\n');
    }
    if run.mode != "oracle-tables" {
        let _ = writeln!(o, "## Failure attribution\n\n| label | questions |\n|---|---|");
        for (k, n) in &s.attribution {
            let _ = writeln!(o, "| {} | {n} |", k.as_str());
        }
        let _ = writeln!(
            o,
            "\nLLM calls {}, prompt tokens {}, completion tokens {}.\n",
            s.llm_calls, s.prompt_tokens, s.completion_tokens
        );
        if let (Some(m), Some(p)) = (s.model_ms_median, s.model_ms_p95) {
            let _ = writeln!(
                o,
                "The model's time per question (its calls' latencies summed; a replay reports the recording's): median {:.1} s, p95 {:.1} s.\n",
                m / 1000.0,
                p / 1000.0
            );
        }
    }
    let mismatches: Vec<&QuestionResult> = run.questions.iter().filter(|r| r.metrics.join_mismatch.is_some()).collect();
    if !mismatches.is_empty() {
        let _ = writeln!(o, "## Join mismatches\n\n| id | class | gold pairs missing from the view | view pairs not in gold | detail |\n|---|---|---|---|---|");
        for r in mismatches {
            let (miss, extra) = match &r.metrics.join {
                Some(j) => (
                    j.missing.iter().map(|p| p.to_string()).collect::<Vec<_>>().join("; "),
                    j.extra.iter().map(|p| p.to_string()).collect::<Vec<_>>().join("; "),
                ),
                None => (String::new(), String::new()),
            };
            let id = match &r.db_id {
                Some(db) => format!("{} ({db})", r.id),
                None => r.id.clone(),
            };
            let _ = writeln!(
                o,
                "| {id} | {} | {miss} | {extra} | {} |",
                r.metrics.join_mismatch.map(|k| k.as_str()).unwrap_or(""),
                r.metrics.join_detail.replace('|', "\\|").replace('\n', " ")
            );
        }
        o.push('\n');
    }
    let mut slow: Vec<&QuestionResult> = run.questions.iter().collect();
    slow.sort_by(|a, b| b.cost.wall_ms.total_cmp(&a.cost.wall_ms).then_with(|| a.id.cmp(&b.id)));
    let _ = writeln!(
        o,
        "## Slowest questions\n\n| id | wall | solve | LLM calls | tokens (prompt/completion) |\n|---|---|---|---|---|"
    );
    for r in slow.iter().take(5) {
        let _ = writeln!(
            o,
            "| {} | {:.1} ms | {} | {} | {}/{} |",
            r.id,
            r.cost.wall_ms,
            ms(r.metrics.solve_ms),
            r.cost.llm_calls,
            r.cost.prompt_tokens,
            r.cost.completion_tokens
        );
    }
    o
}

/// Several methods on the same suite: the paper's table with one column
/// per method, and the failure attribution side by side.
pub fn render_comparison(runs: &[BenchRun]) -> String {
    let mut o = String::new();
    let Some(first) = runs.first() else { return o };
    let _ = writeln!(o, "# lucy bench `{}` — {}\n", first.suite, first.mode);
    let _ = writeln!(
        o,
        "{} · commit `{}` · {} questions{}\n",
        first.date,
        first.commit,
        first.summary.questions,
        first.llm.as_ref().map(|l| format!(" · LLM `{l}`")).unwrap_or_default()
    );
    let header: Vec<&str> = runs.iter().map(|r| r.method.as_str()).collect();
    let _ = writeln!(o, "| | {} |\n|---|{}", header.join(" | "), "---|".repeat(runs.len()));
    let row = |name: &str, f: &dyn Fn(&Summary) -> String| {
        format!("| {name} | {} |\n", runs.iter().map(|r| f(&r.summary)).collect::<Vec<_>>().join(" | "))
    };
    o.push_str(&row("cov_t", &|s| f2(s.cov_t)));
    o.push_str(&row("cov_a", &|s| f2(s.cov_a)));
    o.push_str(&row(LINKED, &linked));
    o.push_str(&row("ex", &|s| s.ex.to_string()));
    o.push_str(&row("esx", &|s| s.esx.to_string()));
    o.push_str(&row("LLM calls", &|s| s.llm_calls.to_string()));
    o.push_str(&row("tokens (prompt/completion)", &|s| format!("{}/{}", s.prompt_tokens, s.completion_tokens)));
    let _ = writeln!(
        o,
        "\n## Failure attribution\n\n| label | {} |\n|---|{}",
        header.join(" | "),
        "---|".repeat(runs.len())
    );
    for k in Label::ALL {
        let counts: Vec<usize> = runs
            .iter()
            .map(|r| r.summary.attribution.iter().find(|(l, _)| *l == k).map(|(_, n)| *n).unwrap_or(0))
            .collect();
        if counts.iter().any(|&n| n > 0) {
            let _ = writeln!(
                o,
                "| {} | {} |",
                k.as_str(),
                counts.iter().map(|n| n.to_string()).collect::<Vec<_>>().join(" | ")
            );
        }
    }
    let _ = writeln!(o, "\nPer-method reports and results: `<method>/report.md`, `<method>/results.json`.");
    o
}
