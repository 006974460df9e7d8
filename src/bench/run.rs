//! The benchmark runner: every question of a suite through one mode, in
//! parallel, with results in suite order whatever `jobs` is.

use std::collections::{BTreeSet, HashMap};
use std::path::PathBuf;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::Instant;

use serde::{Deserialize, Serialize};

use super::attribution::{attribute, Attribution, Observed, ViewTables};
use super::engine::{exec_opts, gold_for, to_rows};
use super::metrics::{cov, esx, ex, JoinAccuracy, Rows};
use super::oracle::{oracle_case, oracle_request, MismatchClass};
use super::suite::{Question, Suite};
use crate::error::{Error, Result};
use crate::graph::SchemaGraph;
use crate::llm::ChatModel;
use crate::pipeline::{self, AskOptions};
use crate::sql::analyze::{analyze, analyze_view_query, QueryRefs};
use crate::sql::exec::{run, Database, ViewDef};
use crate::types::trace::{PhaseCost, Trace, ViewTrace};
use crate::types::{ColumnRef, SolveStatus, ViewResult};

/// What is measured.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Oracle {
    /// Phase 1 replaced by the gold SQL's tables and columns; GenerateView
    /// alone (no LLM).
    Tables,
    /// Phases 1–2 replaced by the view over the gold tables and columns;
    /// QueryView alone (needs an LLM or a cassette).
    View,
}

/// Which method answers the questions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Method {
    /// The three phases.
    Lucy,
    /// The PROMPTB baseline: the whole schema and the question, one SQL.
    Direct,
    /// PROMPTB, then `lucy check`'s findings on its SQL as the one repair
    /// message.
    DirectCheck,
    /// Dynamic few-shot vector search (DynVS): the top-k pool examples by
    /// MiniLM similarity, the schema and the question, one SQL call (the
    /// direct baseline's call with `fewshot_sql`'s prompt).
    Fewshot,
    /// CRUSH4SQL end to end: hallucinated schema, greedy selection of
    /// `budget` elements, the direct baseline's SQL call over their tables.
    Crush,
    /// RASL: keywords, keyword-level entity retrieval, top tables, a
    /// table-ranking call, the direct baseline's SQL call over them.
    Rasl,
    /// TA-SQL: a dummy SQL over the whole schema (TASL) whose names are
    /// the linked schema, a pandas-like symbolic representation (TALOG),
    /// then the direct baseline's call turning it into SQL over the linked
    /// tables.
    TaSql,
}

impl Method {
    /// Whether this is the direct baseline (with or without the check).
    pub fn is_direct(self) -> bool {
        matches!(
            self,
            Method::Direct | Method::DirectCheck | Method::Fewshot | Method::Crush | Method::Rasl | Method::TaSql
        )
    }

    /// Name in reports and output directories.
    pub fn name(self) -> &'static str {
        match self {
            Method::Lucy => "lucy",
            Method::Direct => "direct",
            Method::DirectCheck => "direct+check",
            Method::Fewshot => "fewshot",
            Method::Crush => "crush",
            Method::Rasl => "rasl",
            Method::TaSql => "ta-sql",
        }
    }
}

/// Runner settings.
#[derive(Clone)]
pub struct RunOptions {
    pub oracle: Option<Oracle>,
    pub method: Method,
    pub limit: Option<usize>,
    pub jobs: usize,
    /// Solver time limit per GenerateView call, seconds.
    pub time_limit_s: f64,
    /// Options passed to the pipeline (execution and evidence are set per question).
    pub ask: AskOptions,
    /// Write `traces/<id>.json` under this directory.
    pub trace_dir: Option<PathBuf>,
    pub progress: bool,
    pub llm: Option<Arc<dyn ChatModel>>,
    /// Run on this database instead of the suite's SQLite file: a server
    /// URL, `{db_id}` replaced per question (`lucy bench --database`).
    pub database: Option<String>,
    /// `--examples POOL`: retrieved per question for `fewshot` (its prompt)
    /// and `lucy` (QueryView's examples, as `lucy ask --examples`).
    pub examples: Option<Arc<super::methods::PoolIndex>>,
    /// How many pool examples a question gets.
    pub examples_k: usize,
    /// `--sample N --seed S`: a seeded sample of the questions (before `limit`).
    pub sample: Option<(usize, u64)>,
    /// `--method crush`: the embedder and the budget B.
    pub crush: Option<(Arc<dyn crate::crush::embed::Embedder>, usize)>,
}

/// The database a question runs on: `--database` (a server, `{db_id}`
/// filled in), else the suite's SQLite file.
pub fn question_database(suite: &Suite, q: &Question, opts: &RunOptions) -> Result<Option<Database>> {
    match &opts.database {
        Some(template) => {
            let url = match &q.db_id {
                Some(id) => template.replace("{db_id}", id),
                None if template.contains("{db_id}") => {
                    return Err(Error::Input(format!(
                        "question {} has no db_id but --database {template} needs one",
                        q.id
                    )))
                }
                None => template.clone(),
            };
            Database::parse(&url).map(Some)
        }
        None => Ok(suite.database_path(q)?.map(Database::Sqlite)),
    }
}

/// Execution-metric status of the gold query.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case", tag = "status", content = "reason")]
pub enum GoldStatus {
    Ok,
    NotExecutable(String),
    NoDatabase,
    Unparseable(String),
    NotRun,
}

/// What the method produced for one question.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Prediction {
    /// Tables chosen by phase 1 (or given by the oracle).
    pub tables: Vec<String>,
    pub attributes: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub view_status: Option<SolveStatus>,
    #[serde(default)]
    pub view_tables: Vec<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub view_sql: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sql: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub row_count: Option<usize>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

/// Metrics of one question; `None` where a metric does not apply.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QuestionMetrics {
    pub gold: GoldStatus,
    /// Number of base tables the gold SQL reads (0 when unparseable).
    #[serde(default)]
    pub gold_tables: usize,
    /// Table instances of the gold SQL beyond one per table (a table it
    /// uses in two roles adds one; see `bench::instances`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub gold_extra_instances: usize,
    pub ex: Option<bool>,
    pub esx: Option<bool>,
    pub cov_t: Option<f64>,
    pub cov_a: Option<f64>,
    /// Share of the gold's tables the method's linked schema holds: the
    /// view's tables for lucy (phase 1's where no view was built), the
    /// selected tables for crush, rasl and ta-sql; `None` for a method that
    /// links nothing (direct, fewshot: the whole schema) and for the oracles.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub linked_recall: Option<f64>,
    /// Phase-2 join accuracy against the gold (multi-table gold only).
    pub join: Option<JoinAccuracy>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub join_mismatch: Option<MismatchClass>,
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub join_detail: String,
    pub solve_ms: Option<f64>,
    /// The view SQL ran on the database (oracle tables, when a database exists).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub view_runs: Option<bool>,
    /// On a server (`--database`): the gold as is, ported, and vs SQLite.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub gold_engine: Option<super::engine::EngineGold>,
}

/// Cost of one question.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct Cost {
    pub wall_ms: f64,
    pub llm_calls: u32,
    pub prompt_tokens: u64,
    pub completion_tokens: u64,
    pub phases: Vec<(String, PhaseCost)>,
    /// The model's time: the latencies of every LLM call the trace records,
    /// summed. A replay reports the recording's (a cassette keeps each
    /// answer's latency), so a replayed run still says what its questions
    /// cost the model when they were sent. Calls that ran at once each
    /// count whole, so it can exceed `wall_ms`.
    #[serde(default, skip_serializing_if = "is_zero_ms")]
    pub model_ms: f64,
}

fn is_zero_ms(x: &f64) -> bool {
    *x == 0.0
}

/// The latencies of every answered LLM call `trace` records, summed (each
/// call's `latency_ms`, wherever a phase keeps its calls). A call that
/// failed is left out: its latency is the client's own wait, measured live
/// even in a replay, so a replay would not report the recording's time
/// (ACME's summary once differed in the tenth of a millisecond). Summed
/// smallest first, so the order concurrent prompts reached the trace does
/// not matter either.
pub fn model_ms(trace: &Trace) -> f64 {
    fn walk(v: &serde_json::Value, out: &mut Vec<f64>) {
        match v {
            serde_json::Value::Object(m)
                if m.get("error").is_some_and(|e| !e.is_null()) && m.contains_key("latency_ms") => {}
            serde_json::Value::Object(m) => {
                for (k, x) in m {
                    match (k.as_str(), x.as_f64()) {
                        ("latency_ms", Some(ms)) => out.push(ms),
                        _ => walk(x, out),
                    }
                }
            }
            serde_json::Value::Array(a) => a.iter().for_each(|x| walk(x, out)),
            _ => {}
        }
    }
    let mut all = Vec::new();
    if let Ok(v) = serde_json::to_value(trace) {
        walk(&v, &mut all);
    }
    all.sort_by(f64::total_cmp);
    all.iter().sum()
}

/// One row of `results.json`.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QuestionResult {
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub db_id: Option<String>,
    pub question: String,
    pub gold_sql: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    pub prediction: Prediction,
    pub metrics: QuestionMetrics,
    pub attribution: Attribution,
    pub cost: Cost,
    /// Trace file, relative to the output directory.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub trace: Option<String>,
}

/// Load every dbModel a suite needs (once per distinct path).
fn load_graphs(suite: &Suite, questions: &[Question]) -> Result<HashMap<PathBuf, Arc<SchemaGraph>>> {
    let mut graphs = HashMap::new();
    for q in questions {
        if let std::collections::hash_map::Entry::Vacant(e) = graphs.entry(suite.model_path(q)?) {
            let model = crate::model::load(e.key())?;
            e.insert(Arc::new(SchemaGraph::new(model)?));
        }
    }
    Ok(graphs)
}

/// Run a suite; results come back in suite order.
pub fn run_suite(suite: &Suite, opts: &RunOptions) -> Result<Vec<QuestionResult>> {
    let pool: Vec<Question> = match opts.sample {
        Some((n, seed)) => super::methods::sample(&suite.questions, n, seed),
        None => suite.questions.clone(),
    };
    let questions: Vec<Question> = match opts.limit {
        Some(n) => pool.into_iter().take(n).collect(),
        None => pool,
    };
    if opts.method == Method::Fewshot && opts.examples.is_none() {
        return Err(Error::Input(
            "--method fewshot needs an example pool: --examples POOL (see `lucy examples pool`)".into(),
        ));
    }
    let offline = opts.method == Method::Lucy && opts.oracle.is_none() && !opts.ask.linker.needs_llm();
    if opts.oracle != Some(Oracle::Tables) && opts.llm.is_none() && !offline {
        return Err(Error::Input(format!(
            "this mode needs an LLM: {} (or use --oracle tables, which needs none)",
            crate::llm::NOT_CONFIGURED_HINT
        )));
    }
    let graphs = load_graphs(suite, &questions)?;
    let mut pinged = BTreeSet::new();
    for q in &questions {
        suite.database_path(q)?;
        if let Some(db) = question_database(suite, q, opts)? {
            // A wrong URL, password or a down server stops the run here.
            if pinged.insert(db.to_string()) {
                crate::sql::exec::ping(&db, std::time::Duration::from_secs(10))?;
            }
        }
    }
    if let Some(dir) = &opts.trace_dir {
        std::fs::create_dir_all(dir).map_err(|e| Error::io(dir, e))?;
    }
    let bar = super::progress::progress_bar(questions.len() as u64, opts.progress);
    let results: Mutex<Vec<Option<QuestionResult>>> = Mutex::new(vec![None; questions.len()]);
    let next = AtomicUsize::new(0);
    let tally = Mutex::new((0usize, 0usize));
    let jobs = opts.jobs.max(1).min(questions.len().max(1));
    std::thread::scope(|s| {
        for _ in 0..jobs {
            s.spawn(|| loop {
                let i = next.fetch_add(1, Ordering::SeqCst);
                let Some(q) = questions.get(i) else { break };
                let r = match suite.model_path(q).map(|p| graphs.get(&p).cloned()) {
                    // One question's panic must not lose the other results.
                    Ok(Some(graph)) => {
                        std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| run_question(suite, q, &graph, opts)))
                            .unwrap_or_else(|p| {
                                let msg = p
                                    .downcast_ref::<String>()
                                    .cloned()
                                    .or_else(|| p.downcast_ref::<&str>().map(|s| s.to_string()))
                                    .unwrap_or_default();
                                error_result(q, format!("internal error (panic) on this question: {msg}"))
                            })
                    }
                    Ok(None) | Err(_) => error_result(q, "dbModel not loaded".into()),
                };
                if let Ok(mut t) = tally.lock() {
                    t.0 += 1;
                    if r.metrics.ex == Some(true)
                        || (opts.oracle == Some(Oracle::Tables)
                            && r.metrics.join_mismatch.is_none()
                            && r.metrics.join.is_some())
                    {
                        t.1 += 1;
                    }
                    let label = if opts.oracle == Some(Oracle::Tables) { "joins ok" } else { "ex" };
                    bar.set_message(format!("{label} {}/{}", t.1, t.0));
                }
                bar.inc(1);
                if let Ok(mut v) = results.lock() {
                    v[i] = Some(r);
                }
            });
        }
    });
    bar.finish_and_clear();
    let v = results.into_inner().map_err(|_| Error::Input("a benchmark worker panicked".into()))?;
    Ok(v.into_iter().zip(&questions).map(|(r, q)| r.unwrap_or_else(|| error_result(q, "not run".into()))).collect())
}

fn error_result(q: &Question, msg: String) -> QuestionResult {
    QuestionResult {
        id: q.id.clone(),
        db_id: q.db_id.clone(),
        question: q.question.clone(),
        gold_sql: q.gold_sql.clone(),
        note: q.note.clone(),
        prediction: Prediction { error: Some(msg), ..Default::default() },
        metrics: QuestionMetrics {
            gold: GoldStatus::NotRun,
            gold_tables: 0,
            gold_extra_instances: 0,
            ex: None,
            esx: None,
            cov_t: None,
            cov_a: None,
            linked_recall: None,
            join: None,
            join_mismatch: None,
            join_detail: String::new(),
            solve_ms: None,
            view_runs: None,
            gold_engine: None,
        },
        attribution: Attribution { label: super::attribution::Label::NotExecuted, findings: vec![] },
        cost: Cost::default(),
        trace: None,
    }
}

/// A file name for a question id.
fn trace_name(id: &str) -> String {
    let s: String =
        id.chars().map(|c| if c.is_ascii_alphanumeric() || c == '-' || c == '_' { c } else { '_' }).collect();
    format!("{s}.json")
}

fn write_trace(opts: &RunOptions, id: &str, trace: &Trace) -> Option<String> {
    let dir = opts.trace_dir.as_ref()?;
    let name = trace_name(id);
    let text = serde_json::to_string_pretty(trace).ok()?;
    std::fs::write(dir.join(&name), text).ok()?;
    Some(format!("traces/{name}"))
}

/// Gold status and rows for a question.
fn gold_rows(q: &Question, db: Option<&Database>, graph: &SchemaGraph) -> (GoldStatus, Option<Rows>) {
    if let Some(reason) = q.gold_not_executable() {
        return (GoldStatus::NotExecutable(reason.to_string()), None);
    }
    let Some(db) = db else { return (GoldStatus::NoDatabase, None) };
    match run(db, None, &gold_for(q, db, graph), &exec_opts()) {
        Ok(r) => (GoldStatus::Ok, Some(to_rows(&r))),
        Err(e) => (GoldStatus::NotExecutable(e.to_string()), None),
    }
}

/// The base columns a view holds (lower-case), those it left out as equal
/// to a view column (`--view-columns all-once`) included.
fn view_columns(v: &ViewResult) -> BTreeSet<ColumnRef> {
    let shown = v.columns.iter().map(|c| (&c.table, &c.column));
    let merged = v.merged.iter().map(|m| (&m.table, &m.column));
    shown.chain(merged).map(|(t, c)| ColumnRef::new(t.to_ascii_lowercase(), c.to_ascii_lowercase())).collect()
}

/// The view's base tables and instances, as attribution compares them with
/// the gold's. A view read back from JSON carries no instances: its tables
/// are then those of its columns and join pairs, each as a plain instance.
fn view_tables(graph: &SchemaGraph, v: &ViewResult) -> ViewTables {
    let mut out = ViewTables::default();
    if v.instances.is_empty() {
        let pairs = super::instances::view_instance_pairs(v, graph);
        let cols = v.columns.iter().map(|c| c.table.to_ascii_lowercase());
        let joined = pairs.iter().flatten().flat_map(|p| [p.left.table.clone(), p.right.table.clone()]);
        out.tables = cols.chain(joined).collect();
        out.instances = out.tables.clone();
        return out;
    }
    for i in &v.instances {
        out.tables.insert(graph.name(i.table).to_ascii_lowercase());
        out.instances.insert(super::instances::instance_key(graph, i.table, i.role, i.copy));
    }
    out
}

/// Share of `gold`'s tables (any case) that `linked` (lower-case) holds; 1
/// for a gold that reads no table.
fn linked_recall(gold: &BTreeSet<String>, linked: &BTreeSet<String>) -> f64 {
    if gold.is_empty() {
        return 1.0;
    }
    gold.iter().filter(|t| linked.contains(&t.to_ascii_lowercase())).count() as f64 / gold.len() as f64
}

/// The gold query's table instances, keyed as the view's.
fn gold_instance_keys(graph: &SchemaGraph, g: &QueryRefs) -> BTreeSet<String> {
    let gi = super::instances::gold_instances(graph, g);
    gi.instances.iter().map(|&(t, r, c)| super::instances::instance_key(graph, t, r, c)).collect()
}

/// What one mode produced for a question, before metrics.
#[derive(Default)]
struct Produced {
    prediction: Prediction,
    trace: Option<Trace>,
    rows: Option<Rows>,
    failure: Option<crate::types::trace::Failure>,
    /// Tables phase 1 chose (lower-case); None when the oracle gave them.
    phase1_tables: Option<BTreeSet<String>>,
    view: Option<ViewResult>,
    /// Oracle classification of a join mismatch.
    join_mismatch: Option<MismatchClass>,
    join_detail: String,
    view_runs: Option<bool>,
}

fn run_question(suite: &Suite, q: &Question, graph: &SchemaGraph, opts: &RunOptions) -> QuestionResult {
    let start = Instant::now();
    let db = question_database(suite, q, opts).ok().flatten();
    let gold_refs = analyze(&q.gold_sql, suite.file.dialect, Some(graph.model()));
    let mut r = error_result(q, String::new());
    r.prediction.error = None;
    let (gold_status, gold) = match &gold_refs {
        Err(e) => (GoldStatus::Unparseable(e.to_string()), None),
        Ok(_) => gold_rows(q, db.as_ref(), graph),
    };
    // On a server (not the suite's own SQLite file): the gold there too.
    if let (Some(db), Ok(refs)) = (db.as_ref().filter(|d| d.sqlite_path().is_none()), &gold_refs) {
        r.metrics.gold_engine = Some(super::engine::compare(suite, q, graph, db, refs.ordered));
    }
    let gold_ok = matches!(gold_status, GoldStatus::Ok);
    r.metrics.gold_tables = gold_refs.as_ref().map(|g| g.tables.len()).unwrap_or(0);
    r.metrics.gold_extra_instances =
        gold_refs.as_ref().map(|g| super::instances::extra_instances(graph, g)).unwrap_or(0);
    r.metrics.gold = gold_status;
    let g = gold_refs.as_ref().ok();
    let p = match opts.oracle {
        Some(Oracle::Tables) => oracle_tables(q, graph, suite, db.as_ref(), opts),
        _ => pipeline_question(suite, q, graph, db.as_ref(), opts, g),
    };
    // Execution metrics.
    if let (Some(gr), Some(pr)) = (&gold, &p.rows) {
        let ordered = g.is_some_and(|g| g.ordered);
        r.metrics.ex = Some(ex(gr, pr, ordered));
        r.metrics.esx = Some(esx(gr, pr, ordered));
    } else if gold.is_some() && opts.oracle != Some(Oracle::Tables) {
        // The method produced no rows (failure): counted as wrong.
        r.metrics.ex = Some(false);
        r.metrics.esx = Some(false);
    }
    // Coverage of the predicted SQL (over the view for lucy).
    if let (Some(g), Some(sql)) = (g, &p.prediction.sql) {
        let pred = match &p.view {
            Some(v) => analyze_view_query(sql, v, Some(graph)),
            None => analyze(sql, suite.file.dialect, Some(graph.model())),
        };
        let c = pred.map(|pr| cov(g, &pr)).unwrap_or(super::metrics::Coverage { cov_t: 0.0, cov_a: 0.0 });
        r.metrics.cov_t = Some(c.cov_t);
        r.metrics.cov_a = Some(c.cov_a);
    } else if g.is_some() && opts.oracle != Some(Oracle::Tables) {
        r.metrics.cov_t = Some(0.0);
        r.metrics.cov_a = Some(0.0);
    }
    // Join accuracy of the view (multi-table gold with join pairs).
    // Join accuracy of the view, per pair of table instances (multi-table
    // or self-joining gold).
    if let (Some(g), Some(v)) = (g, &p.view) {
        if r.metrics.gold_tables + r.metrics.gold_extra_instances >= 2 && v.status != SolveStatus::Infeasible {
            let gi = super::instances::gold_instances(graph, g);
            r.metrics.join = Some(super::instances::instance_join_accuracy(graph, &gi, v));
        }
        r.metrics.solve_ms = Some(v.solve_ms);
    }
    r.metrics.join_mismatch = p.join_mismatch;
    r.metrics.join_detail = p.join_detail.clone();
    r.metrics.view_runs = p.view_runs;
    let observed = Observed {
        failure: p.failure.as_ref(),
        phase1_tables: p.phase1_tables.clone(),
        view_tables: p.view.as_ref().filter(|v| v.status != SolveStatus::Infeasible).map(|v| view_tables(graph, v)),
        gold_instances: g.map(|g| gold_instance_keys(graph, g)).unwrap_or_default(),
        view_columns: p.view.as_ref().map(view_columns),
        join_matched: r.metrics.join.as_ref().map(|j| j.matched),
        ex: r.metrics.ex,
        esx: r.metrics.esx,
        gold_executable: gold_ok,
        has_database: db.is_some(),
        direct: opts.method.is_direct(),
        view_only: opts.oracle == Some(Oracle::Tables),
    };
    r.attribution = attribute(g, &observed);
    if opts.oracle.is_none() {
        let linked = match opts.method {
            Method::Lucy => {
                observed.view_tables.as_ref().map(|v| v.tables.clone()).or_else(|| observed.phase1_tables.clone())
            }
            Method::Crush | Method::Rasl | Method::TaSql => {
                Some(p.prediction.tables.iter().map(|t| t.to_ascii_lowercase()).collect())
            }
            Method::Direct | Method::DirectCheck | Method::Fewshot => None,
        };
        r.metrics.linked_recall = g.zip(linked).map(|(g, l)| linked_recall(&g.tables, &l));
    }
    if let Some(t) = &p.trace {
        r.cost.llm_calls = t.phase_costs().iter().map(|(_, c)| c.llm_calls).sum();
        r.cost.prompt_tokens = t.phase_costs().iter().map(|(_, c)| c.prompt_tokens).sum();
        r.cost.completion_tokens = t.phase_costs().iter().map(|(_, c)| c.completion_tokens).sum();
        r.cost.phases = t.phase_costs().into_iter().map(|(n, c)| (n.to_string(), c)).collect();
        r.cost.model_ms = model_ms(t);
        r.trace = write_trace(opts, &q.id, t);
    }
    r.prediction = p.prediction;
    r.cost.wall_ms = start.elapsed().as_secs_f64() * 1e3;
    r
}

/// `--oracle tables`: GenerateView on the gold tables and attributes.
fn oracle_tables(
    q: &Question,
    graph: &SchemaGraph,
    suite: &Suite,
    db: Option<&Database>,
    opts: &RunOptions,
) -> Produced {
    let case = oracle_case(graph, &q.id, q.db_id.as_deref(), &q.gold_sql, suite.file.dialect, opts.time_limit_s);
    let mut p = Produced { join_mismatch: case.mismatch, join_detail: case.detail.clone(), ..Default::default() };
    p.prediction.tables = case.gold_tables.clone();
    p.prediction.view_status = case.view_status;
    p.prediction.view_tables = case.view_tables.clone();
    if let Some(refs) = &case.gold_refs {
        p.prediction.attributes = refs.columns.iter().map(|c| c.to_string()).collect();
        let req = oracle_request(graph, refs, opts.time_limit_s);
        let mut trace = Trace {
            version: crate::types::trace::TRACE_VERSION,
            lucy_version: env!("CARGO_PKG_VERSION").to_string(),
            method: "oracle-tables".into(),
            question: q.question.clone(),
            evidence: q.evidence.clone(),
            model: graph.model().name.clone(),
            ..Default::default()
        };
        trace.generate_view = Some(ViewTrace {
            request: req,
            result: case.view.clone(),
            error: if case.view.is_none() && !case.detail.is_empty() { Some(case.detail.clone()) } else { None },
            cost: PhaseCost { ms: case.solve_ms, ..Default::default() },
        });
        trace.total_ms = case.solve_ms;
        p.trace = Some(trace);
    } else {
        p.prediction.error = Some(case.detail.clone());
    }
    if let (Some(v), Some(db)) = (&case.view, db) {
        if v.status != SolveStatus::Infeasible && !v.view_sql.is_empty() {
            // On a server, the same view written in the server's dialect.
            let engine_view = match (&case.gold_refs, db.dialect()) {
                (Some(refs), d) if d != crate::types::Dialect::Sqlite => {
                    let mut req = oracle_request(graph, refs, opts.time_limit_s);
                    req.dialect = d;
                    crate::solve::generate_view(graph, &req).ok()
                }
                _ => None,
            };
            let v = engine_view.as_ref().unwrap_or(v);
            let probe = format!("SELECT COUNT(*) FROM {}", v.view_name);
            let res = match &v.body {
                Some(body) => run(db, Some(ViewDef::from(body)), &probe, &exec_opts()),
                None => Err(crate::error::Error::Sql(
                    "the view has no definition to run (a view read back from JSON)".into(),
                )),
            };
            p.view_runs = Some(res.is_ok());
            if let Err(e) = res {
                p.join_detail = format!("{} view SQL failed: {e}", p.join_detail).trim().to_string();
            }
        }
    }
    p.prediction.view_sql = case.view.as_ref().map(|v| v.view_sql.clone()).filter(|s| !s.is_empty());
    p.view = case.view;
    p
}

/// Full pipeline (`--method lucy`), `--oracle view`, or `--method direct`
/// / `direct+check`.
fn pipeline_question(
    suite: &Suite,
    q: &Question,
    graph: &SchemaGraph,
    db: Option<&Database>,
    opts: &RunOptions,
    gold: Option<&QueryRefs>,
) -> Produced {
    let mut p = Produced::default();
    let llm = opts.llm.as_deref();
    let offline = opts.method == Method::Lucy && opts.oracle.is_none() && !opts.ask.linker.needs_llm();
    if llm.is_none() && !offline {
        p.prediction.error = Some("no LLM configured".into());
        return p;
    }
    let mut ask = opts.ask.clone();
    ask.execute = db.cloned();
    ask.evidence = q.evidence.clone();
    ask.limits.solver_time_limit_s = opts.time_limit_s;
    if ask.limits.rows.is_none() {
        ask.limits.rows = Some(100_000);
    }
    if let Some(ix) = &opts.examples {
        let retrieved = match ix.retrieve(suite, q, opts.examples_k) {
            Ok(r) => r,
            Err(e) => {
                p.prediction.error = Some(format!("example retrieval: {e}"));
                return p;
            }
        };
        let used = crate::examples::ExamplesUse {
            file: format!("{} ({})", ix.file, ix.pool.kind.as_str()),
            embedder: ix.embedder_id(),
            k: opts.examples_k,
            tables: crate::examples::ExampleTables::Off,
            retrieved,
        };
        match opts.method {
            Method::Fewshot => ask.fewshot = Some(used),
            Method::Lucy => ask.examples = Some(used),
            _ => {}
        }
    }
    if opts.method.is_direct() {
        ask.direct_check = opts.method == Method::DirectCheck;
        let out = match (&opts.crush, opts.method) {
            (Some((e, budget)), Method::Crush) => {
                pipeline::crush_sql(graph, &q.question, q.evidence.as_deref(), &ask, llm, e.as_ref(), *budget)
            }
            (Some((e, _)), Method::Rasl) => {
                pipeline::rasl::rasl_sql(graph, &q.question, q.evidence.as_deref(), &ask, llm, e.as_ref())
            }
            (None, Method::Crush | Method::Rasl) => Err(Error::Input("--method crush/rasl needs an embedder".into())),
            (_, Method::TaSql) => pipeline::tasql::tasql_sql(graph, &q.question, q.evidence.as_deref(), &ask, llm),
            _ => pipeline::direct_sql(graph, &q.question, q.evidence.as_deref(), &ask, llm),
        };
        match out {
            Ok(out) => {
                // The linked schema of a method with a phase 1 (crush's selection).
                if let Some(m) = &out.trace.match_tables {
                    p.prediction.tables = m.tables.clone();
                }
                p.prediction.sql = out.sql.clone();
                p.prediction.row_count = out.rows.as_ref().map(|r| r.rows.len());
                p.rows = out.rows.as_ref().map(to_rows);
                p.failure = out.failure.clone();
                p.trace = Some(out.trace);
            }
            Err(e) => p.prediction.error = Some(e.to_string()),
        }
        return p;
    }
    if opts.oracle == Some(Oracle::View) {
        let Some(g) = gold else {
            p.prediction.error = Some("gold SQL unparseable: no oracle view".into());
            return p;
        };
        let req = oracle_request(graph, g, opts.time_limit_s);
        ask.tables = req.tables.clone();
        ask.attrs = req.attributes.iter().map(|c| c.to_string()).collect();
    }
    match pipeline::ask(graph, &q.question, &ask, llm) {
        Ok(out) => {
            if opts.oracle != Some(Oracle::View) {
                p.phase1_tables = Some(out.tables.iter().map(|t| t.to_ascii_lowercase()).collect());
            }
            p.prediction.tables = out.tables.clone();
            p.prediction.attributes = out.attributes.iter().map(|c| c.to_string()).collect();
            if let Some(v) = &out.view {
                p.prediction.view_status = Some(v.status);
                p.prediction.view_tables = v.tables.clone();
                p.prediction.view_sql = Some(v.view_sql.clone()).filter(|s| !s.is_empty());
            }
            p.prediction.sql = out.sql.clone();
            p.prediction.row_count = out.rows.as_ref().map(|r| r.rows.len());
            p.rows = out.rows.as_ref().map(to_rows);
            p.failure = out.failure.clone();
            p.view = out.view.clone();
            p.trace = Some(out.trace);
        }
        Err(e) => p.prediction.error = Some(e.to_string()),
    }
    p
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(names: &[&str]) -> BTreeSet<String> {
        names.iter().map(|s| s.to_string()).collect()
    }

    #[test]
    fn linked_recall_is_the_share_of_gold_tables_the_linked_schema_holds() {
        // Gold names keep the model's case; linked names are lower-case.
        assert_eq!(linked_recall(&set(&["CLIENT", "DATACENTER"]), &set(&["client", "datacenter", "compute"])), 1.0);
        assert_eq!(linked_recall(&set(&["CLIENT", "DATACENTER"]), &set(&["client"])), 0.5);
        assert_eq!(linked_recall(&set(&["CLIENT"]), &set(&[])), 0.0);
        assert_eq!(linked_recall(&set(&[]), &set(&["client"])), 1.0);
    }
}
