//! Aggregates and the Markdown report of a benchmark run.

use std::fmt::Write as _;
use std::io::IsTerminal;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};
use serde::{Deserialize, Serialize};

use super::attribution::Label;
use super::oracle::MismatchClass;
use super::run::{GoldStatus, QuestionResult};

/// A progress bar on stderr, hidden when stderr is not a terminal or CI is set.
pub fn progress_bar(len: u64, wanted: bool) -> ProgressBar {
    let visible = wanted && std::io::stderr().is_terminal() && std::env::var_os("CI").is_none();
    let bar = ProgressBar::with_draw_target(
        Some(len),
        if visible { ProgressDrawTarget::stderr() } else { ProgressDrawTarget::hidden() },
    );
    if let Ok(style) = ProgressStyle::with_template("{bar:40} {pos}/{len} {msg} [{elapsed_precise}, eta {eta}]") {
        bar.set_style(style);
    }
    bar
}

/// Suite-level numbers (the paper's table plus join accuracy and cost).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Summary {
    pub questions: usize,
    /// Questions whose gold result could be computed.
    pub gold_executable: usize,
    pub ex: usize,
    pub esx: usize,
    /// Means over questions with a value.
    pub cov_t: Option<f64>,
    pub cov_a: Option<f64>,
    /// Questions whose gold SQL reads two or more tables.
    pub multi_table: usize,
    /// Multi-table questions whose view was compared with the gold joins.
    pub join_compared: usize,
    pub join_matched: usize,
    pub join_exact: usize,
    pub infeasible: usize,
    pub view_runs_ok: usize,
    pub view_runs_total: usize,
    pub solve_ms_median: Option<f64>,
    pub solve_ms_p95: Option<f64>,
    pub join_mismatch_classes: Vec<(MismatchClass, usize)>,
    pub attribution: Vec<(Label, usize)>,
    pub llm_calls: u64,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub wall_ms_total: f64,
}

fn mean(v: &[f64]) -> Option<f64> {
    if v.is_empty() { None } else { Some(v.iter().sum::<f64>() / v.len() as f64) }
}

fn pct(sorted: &[f64], p: f64) -> Option<f64> {
    if sorted.is_empty() { None } else { Some(sorted[((sorted.len() - 1) as f64 * p).round() as usize]) }
}

impl Summary {
    pub fn of(results: &[QuestionResult]) -> Summary {
        let covt: Vec<f64> = results.iter().filter_map(|r| r.metrics.cov_t).collect();
        let cova: Vec<f64> = results.iter().filter_map(|r| r.metrics.cov_a).collect();
        let mut solve: Vec<f64> = results.iter().filter_map(|r| r.metrics.solve_ms).collect();
        solve.sort_by(f64::total_cmp);
        let joins: Vec<_> = results.iter().filter_map(|r| r.metrics.join.as_ref()).collect();
        Summary {
            questions: results.len(),
            gold_executable: results.iter().filter(|r| r.metrics.gold == GoldStatus::Ok).count(),
            ex: results.iter().filter(|r| r.metrics.ex == Some(true)).count(),
            esx: results.iter().filter(|r| r.metrics.esx == Some(true)).count(),
            cov_t: mean(&covt),
            cov_a: mean(&cova),
            multi_table: results.iter().filter(|r| r.metrics.gold_tables >= 2).count(),
            join_compared: joins.len(),
            join_matched: joins.iter().filter(|j| j.matched).count(),
            join_exact: joins.iter().filter(|j| j.exact).count(),
            infeasible: results
                .iter()
                .filter(|r| r.prediction.view_status == Some(crate::types::SolveStatus::Infeasible))
                .count(),
            view_runs_ok: results.iter().filter(|r| r.metrics.view_runs == Some(true)).count(),
            view_runs_total: results.iter().filter(|r| r.metrics.view_runs.is_some()).count(),
            solve_ms_median: pct(&solve, 0.5),
            solve_ms_p95: pct(&solve, 0.95),
            join_mismatch_classes: MismatchClass::ALL
                .iter()
                .map(|&k| (k, results.iter().filter(|r| r.metrics.join_mismatch == Some(k)).count()))
                .filter(|(_, n)| *n > 0)
                .collect(),
            attribution: Label::ALL
                .iter()
                .map(|&k| (k, results.iter().filter(|r| r.attribution.label == k).count()))
                .filter(|(_, n)| *n > 0)
                .collect(),
            llm_calls: results.iter().map(|r| r.cost.llm_calls as u64).sum(),
            prompt_tokens: results.iter().map(|r| r.cost.prompt_tokens).sum(),
            completion_tokens: results.iter().map(|r| r.cost.completion_tokens).sum(),
            wall_ms_total: results.iter().map(|r| r.cost.wall_ms).sum(),
        }
    }
}

/// Everything `results.json` holds.
#[derive(Debug, Clone, Serialize, Deserialize)]
pub struct BenchRun {
    pub suite: String,
    /// `oracle-tables`, `oracle-view`, `full`.
    pub mode: String,
    /// `lucy` or `direct`.
    pub method: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub llm: Option<String>,
    pub date: String,
    pub commit: String,
    pub summary: Summary,
    pub questions: Vec<QuestionResult>,
}

/// `git rev-parse --short HEAD` of the working directory, or `unknown`.
pub fn git_commit() -> String {
    std::process::Command::new("git")
        .args(["rev-parse", "--short", "HEAD"])
        .output()
        .ok()
        .filter(|o| o.status.success())
        .map(|o| String::from_utf8_lossy(&o.stdout).trim().to_string())
        .unwrap_or_else(|| "unknown".into())
}

/// Today's UTC date, `YYYY-MM-DD`.
pub fn today_utc() -> String {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_secs() as i64)
        .unwrap_or(0);
    // Civil-from-days (Howard Hinnant's algorithm).
    let z = secs.div_euclid(86_400) + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + if m <= 2 { 1 } else { 0 };
    format!("{y:04}-{m:02}-{d:02}")
}

fn f2(v: Option<f64>) -> String {
    v.map(|x| format!("{x:.2}")).unwrap_or_else(|| "–".into())
}

fn ms(v: Option<f64>) -> String {
    v.map(|x| format!("{x:.1} ms")).unwrap_or_else(|| "–".into())
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
    let _ = writeln!(o, "## Slowest questions\n\n| id | wall | solve | LLM calls | tokens (prompt/completion) |\n|---|---|---|---|---|");
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
    o.push_str(&row("ex", &|s| s.ex.to_string()));
    o.push_str(&row("esx", &|s| s.esx.to_string()));
    o.push_str(&row("LLM calls", &|s| s.llm_calls.to_string()));
    o.push_str(&row("tokens (prompt/completion)", &|s| format!("{}/{}", s.prompt_tokens, s.completion_tokens)));
    let _ = writeln!(o, "\n## Failure attribution\n\n| label | {} |\n|---|{}", header.join(" | "), "---|".repeat(runs.len()));
    for k in Label::ALL {
        let counts: Vec<usize> =
            runs.iter().map(|r| r.summary.attribution.iter().find(|(l, _)| *l == k).map(|(_, n)| *n).unwrap_or(0)).collect();
        if counts.iter().any(|&n| n > 0) {
            let _ = writeln!(o, "| {} | {} |", k.as_str(), counts.iter().map(|n| n.to_string()).collect::<Vec<_>>().join(" | "));
        }
    }
    let _ = writeln!(o, "\nPer-method reports and results: `<method>/report.md`, `<method>/results.json`.");
    o
}
