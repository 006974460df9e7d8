//! The `/v1` handlers. Request bodies are typed (unknown fields are
//! errors); answers reuse the CLI's `--json` shapes (`ViewResult`,
//! `AskSummary`, `Trace`) so a script can switch between `lucy … --json`
//! and the API without a new parser.

use std::convert::Infallible;
use std::sync::Arc;
use std::time::Duration;

use axum::extract::rejection::JsonRejection;
use axum::extract::{Path, State};
use axum::http::{header, HeaderMap, StatusCode};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use axum::Json;
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use super::error::{ApiError, ErrorBody};
use super::state::{AppState, LoadedModel};
use crate::check::CheckReport;
use crate::link::MatchOptions;
use crate::pipeline::{self, AskOptions, AskSummary, StopAfter};
use crate::types::trace::Trace;
use crate::types::{ColumnRef, DbModel, Dialect, ViewRequest, ViewResult};

type St = State<Arc<AppState>>;

/// The body, or a JSON error with the extractor's status (400 syntax, 413
/// too large, 415 not JSON, 422 wrong fields).
fn body<T>(b: Result<Json<T>, JsonRejection>) -> Result<T, ApiError> {
    b.map(|Json(v)| v).map_err(|r| ApiError::new(r.status(), format!("bad request body: {}", r.body_text())))
}

/// Run blocking library work (solver, LLM calls, SQLite) off the async
/// threads, within the server's per-request time limit.
async fn run_blocking<T: Send + 'static>(
    st: &AppState,
    f: impl FnOnce() -> crate::Result<T> + Send + 'static,
) -> Result<T, ApiError> {
    let secs = st.opts.request_timeout;
    match tokio::time::timeout(Duration::from_secs_f64(secs), tokio::task::spawn_blocking(f)).await {
        Err(_) => Err(ApiError::timeout(secs)),
        Ok(Err(join)) => {
            Err(ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, format!("internal error: {join}; please report this")))
        }
        Ok(Ok(r)) => r.map_err(ApiError::from),
    }
}

/// A permit for an expensive request, or 429.
fn slot(st: &AppState) -> Result<tokio::sync::OwnedSemaphorePermit, ApiError> {
    st.slots.clone().try_acquire_owned().map_err(|_| ApiError::busy(st.opts.max_concurrent))
}

// ---------------------------------------------------------------- health

/// `GET /healthz`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Health {
    /// Always `ok` when the server answers.
    pub status: String,
    pub version: String,
    /// Number of loaded dbModels.
    pub models: usize,
    /// Whether an LLM is configured (asks need one unless tables are given).
    pub llm: bool,
}

pub async fn healthz(State(st): St) -> Json<Health> {
    Json(Health {
        status: "ok".into(),
        version: env!("CARGO_PKG_VERSION").into(),
        models: st.registry().models.len(),
        llm: st.llm.is_some(),
    })
}

// ---------------------------------------------------------------- models

/// A loaded dbModel, in brief.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ModelInfo {
    /// The model's name: what requests pass as `model`.
    pub name: String,
    pub description: Option<String>,
    /// File name of the model (not its full path).
    pub file: String,
    pub dialect: Option<Dialect>,
    pub tables: usize,
    pub relationships: usize,
    pub patterns: usize,
    pub core_tables: usize,
    /// Whether asks may `execute` on a database for this model.
    pub database: bool,
}

/// `GET /v1/models`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ModelList {
    pub models: Vec<ModelInfo>,
}

/// `GET /v1/models/{name}`: the model with its core tables.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ModelDetail {
    #[serde(flatten)]
    pub info: ModelInfo,
    /// Tables that are not inner tables of a star or snowflake: what
    /// MatchTables' first prompt offers.
    pub core_table_names: Vec<String>,
    /// The dbModel itself (tables, relationships, patterns, constraints).
    pub model: DbModel,
}

fn info(m: &LoadedModel) -> ModelInfo {
    let model = m.graph.model();
    ModelInfo {
        name: model.name.clone(),
        description: model.description.clone(),
        file: m.file.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default(),
        dialect: model.dialect,
        tables: model.tables.len(),
        relationships: model.relationships.len(),
        patterns: model.patterns.len(),
        core_tables: m.graph.core_tables().len(),
        database: m.database.is_some(),
    }
}

/// Every loaded model, in brief.
pub fn model_list(st: &AppState) -> ModelList {
    ModelList { models: st.registry().models.values().map(|m| info(m)).collect() }
}

/// One model in full, or 404.
pub fn model_detail(st: &AppState, name: &str) -> Result<ModelDetail, ApiError> {
    let m = st.model(name).map_err(|e| ApiError::not_found(e.to_string()))?;
    let core = m.graph.core_tables().into_iter().map(|t| m.graph.name(t).to_string()).collect();
    Ok(ModelDetail { info: info(&m), core_table_names: core, model: m.graph.model().clone() })
}

pub async fn models(State(st): St) -> Json<ModelList> {
    Json(model_list(&st))
}

pub async fn model(State(st): St, Path(name): Path<String>) -> Result<Json<ModelDetail>, ApiError> {
    model_detail(&st, &name).map(Json)
}

/// `POST /v1/models/reload`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Reloaded {
    /// Number of models now loaded.
    pub models: usize,
}

pub async fn reload(State(st): St) -> Result<Json<Reloaded>, ApiError> {
    let st2 = st.clone();
    match tokio::task::spawn_blocking(move || st2.reload()).await {
        Ok(Ok(n)) => Ok(Json(Reloaded { models: n })),
        Ok(Err(e)) => Err(ApiError::new(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("reload failed, the previous models stay loaded: {e}"),
        )),
        Err(e) => Err(ApiError::new(StatusCode::INTERNAL_SERVER_ERROR, format!("internal error: {e}"))),
    }
}

// ---------------------------------------------------------------- view

fn default_view_name() -> String {
    crate::types::default_view_name()
}
fn ten() -> f64 {
    10.0
}

/// `POST /v1/view`: GenerateView for given tables (no LLM), like `lucy view`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ViewBody {
    /// Model name, as listed by `GET /v1/models`.
    pub model: String,
    /// Relevant tables (inner pattern tables allowed).
    #[schemars(length(min = 1, max = 64))]
    pub tables: Vec<String>,
    /// Requested attributes `TABLE.column`. Empty: every column of the
    /// relevant tables.
    #[serde(default)]
    #[schemars(length(max = 256))]
    pub attributes: Vec<String>,
    /// Dialect of the `CREATE VIEW` (default sqlite, as `lucy view`).
    #[serde(default)]
    pub dialect: Dialect,
    /// Name of the view: letters, digits and `_`, at most 63 characters.
    #[serde(default = "default_view_name")]
    #[schemars(length(min = 1, max = 63), regex(pattern = r"^[A-Za-z_][A-Za-z0-9_]*$"))]
    pub view_name: String,
    /// Solver time limit in seconds (also bounded by the server's
    /// `--request-timeout`).
    #[serde(default = "ten")]
    #[schemars(range(min = 0.001, max = 600.0))]
    pub time_limit: f64,
    /// Also return the picture of the join path (`svg`).
    #[serde(default)]
    pub svg: bool,
    /// Columns of the view: `selected` (default: the attributes and the
    /// relevant tables' keys), `all` (every column of every joined table)
    /// or `all-once` (as `all`, one column per set an INNER join makes
    /// equal; the others are listed in `merged`).
    #[serde(default)]
    pub columns: crate::types::ViewColumns,
    /// Keep every row of this table: the view starts from it and reaches
    /// every other table by LEFT JOIN (`lucy view --keep`).
    #[serde(default)]
    pub keep: Option<String>,
    /// Pattern branches joined by INNER JOIN instead of LEFT JOIN, with the
    /// branches on the way to them (`lucy view --inner-branch`).
    #[serde(default)]
    #[schemars(length(max = 64))]
    pub inner_branches: Vec<String>,
    /// Row filters: the view keeps the rows where `column` equals one of
    /// `values` (`lucy view --filter`).
    #[serde(default)]
    #[schemars(length(max = 64))]
    pub filters: Vec<crate::types::ViewFilter>,
}

/// `POST /v1/view`'s answer: `lucy view --json`'s object, plus `svg` when asked.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ViewResponse {
    #[serde(flatten)]
    pub view: ViewResult,
    /// The join path as an SVG document (when `svg` was true).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub svg: Option<String>,
}

fn check_view_name(name: &str) -> Result<(), ApiError> {
    let ok = !name.is_empty()
        && name.len() <= 63
        && name.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if ok {
        Ok(())
    } else {
        Err(ApiError::bad_request(format!(
            "view_name `{name}`: use letters, digits and _ (at most 63, not starting with a digit)"
        )))
    }
}

fn check_time_limit(t: f64, st: &AppState) -> Result<f64, ApiError> {
    if !(t > 0.0 && t <= 600.0) {
        return Err(ApiError::bad_request(format!("time_limit must be in (0, 600] seconds, got {t}")));
    }
    Ok(t.min(st.opts.request_timeout))
}

impl ViewBody {
    fn request(&self, st: &AppState) -> Result<ViewRequest, ApiError> {
        check_view_name(&self.view_name)?;
        let mut attributes = Vec::new();
        for a in self.attributes.iter().map(|s| s.trim()).filter(|s| !s.is_empty()) {
            let Some((t, c)) = a.split_once('.') else {
                return Err(ApiError::bad_request(format!("attributes: `{a}` is not TABLE.column")));
            };
            attributes.push(ColumnRef::new(t, c));
        }
        let tables: Vec<String> = self.tables.iter().map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect();
        if tables.is_empty() {
            return Err(ApiError::bad_request("tables: name at least one relevant table"));
        }
        Ok(ViewRequest {
            tables,
            attributes,
            dialect: self.dialect,
            view_name: self.view_name.clone(),
            time_limit_s: check_time_limit(self.time_limit, st)?,
            keep: self.keep.clone(),
            inner_branches: self.inner_branches.clone(),
            filters: self.filters.clone(),
            columns: self.columns,
        })
    }
}

pub async fn view(State(st): St, b: Result<Json<ViewBody>, JsonRejection>) -> Result<Json<ViewResponse>, ApiError> {
    view_core(&st, body(b)?).await.map(Json)
}

/// GenerateView for a request body (the HTTP handler and the MCP tool).
pub async fn view_core(st: &Arc<AppState>, b: ViewBody) -> Result<ViewResponse, ApiError> {
    let m = st.model(&b.model)?;
    let req = b.request(st)?;
    let permit = slot(st)?;
    let graph = m.graph.clone();
    let svg = b.svg;
    let (view, svg) = run_blocking(st, move || {
        let _permit = permit;
        let v = crate::solve::generate_view(&graph, &req)?;
        let s = svg.then(|| crate::render::view_svg(&v, Some(&graph)));
        Ok((v, s))
    })
    .await?;
    Ok(ViewResponse { view, svg })
}

// ---------------------------------------------------------------- ask

fn d_samples() -> usize {
    5
}
fn d_temperature() -> f64 {
    0.2
}
fn d_one() -> usize {
    1
}
fn d_items() -> usize {
    8
}
fn d_limit() -> usize {
    50
}

/// `POST /v1/ask`: a question end to end, like `lucy ask`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct AskBody {
    /// Model name, as listed by `GET /v1/models`.
    pub model: String,
    /// The question, in natural language.
    #[schemars(length(min = 1, max = 4000))]
    pub question: String,
    /// Sampled answers per MatchTables prompt, voted (paper: 5).
    #[serde(default = "d_samples")]
    #[schemars(range(min = 1, max = 20))]
    pub samples: usize,
    /// Sampling temperature of every prompt (paper: 0.2).
    #[serde(default = "d_temperature")]
    #[schemars(range(min = 0.0, max = 2.0))]
    pub temperature: f64,
    /// Votes an item needs to be kept.
    #[serde(default = "d_one")]
    #[schemars(range(min = 1, max = 20))]
    pub min_votes: usize,
    /// At most this many tables (and attributes) kept per prompt (paper: 8).
    #[serde(default = "d_items")]
    #[schemars(range(min = 1, max = 50))]
    pub max_items: usize,
    /// Relevant tables: skip MatchTables.
    #[serde(default)]
    #[schemars(length(max = 64))]
    pub tables: Vec<String>,
    /// Relevant attributes `TABLE.column`: skip MatchTables.
    #[serde(default)]
    #[schemars(length(max = 256))]
    pub attrs: Vec<String>,
    /// Extra knowledge for the question (e.g. BIRD's evidence).
    #[serde(default)]
    #[schemars(length(max = 4000))]
    pub evidence: Option<String>,
    /// Show the relevant tables' DDL and descriptions to QueryView (PROMPTC').
    #[serde(default)]
    pub schema_context: bool,
    /// Run the SQL read-only on the model's database (`database: true` in
    /// `GET /v1/models`).
    #[serde(default)]
    pub execute: bool,
    /// Keep at most this many rows.
    #[serde(default = "d_limit")]
    #[schemars(range(min = 1, max = 1000))]
    pub limit: usize,
    /// Stop after a phase: match, view or sql.
    #[serde(default)]
    pub stop_after: Option<StopAfter>,
    /// SQL dialect of the view and the query (default: the model's).
    #[serde(default)]
    pub dialect: Option<Dialect>,
    /// Solver time limit per call, in seconds.
    #[serde(default = "ten")]
    #[schemars(range(min = 0.001, max = 600.0))]
    pub time_limit: f64,
    /// Also return the picture of the join path (`svg`).
    #[serde(default)]
    pub svg: bool,
    /// Use the model's verified queries (`MODEL.examples.jsonl`, see
    /// `/v1/models/{name}/examples`) when it has some: the nearest ones
    /// reach QueryView's prompt over the view, and the trace's `examples`
    /// lists them.
    #[serde(default = "yes")]
    pub examples: bool,
    /// How many verified queries (default: the server's `--examples-k`).
    #[serde(default)]
    #[schemars(range(min = 0, max = 20))]
    pub examples_k: Option<usize>,
    /// Execution-guided choice (`lucy ask --exec-vote K`): K QueryView
    /// answers sampled, each run read-only, the answer taken from the
    /// result most of them agree on; 0 or 1: off. Needs `execute`.
    #[serde(default)]
    #[schemars(range(min = 0, max = 16))]
    pub exec_vote: usize,
    /// QueryView's form (`lucy ask --query-form`): `auto` (the default:
    /// a typed query plan lucy compiles, free SQL where a plan cannot say
    /// it), `plan` or `sql`.
    #[serde(default)]
    pub query_form: Option<crate::query::plan::QueryForm>,
}

fn yes() -> bool {
    true
}

/// `POST /v1/ask`'s answer: `lucy ask --json`'s object, the id of the kept
/// trace, and `svg` when asked.
#[derive(Debug, Serialize, JsonSchema)]
pub struct AskResponse {
    #[serde(flatten)]
    pub summary: AskSummary,
    /// `GET /v1/traces/{trace_id}` returns the full trace.
    pub trace_id: String,
    /// The join path as an SVG document (when `svg` was true and a view was built).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub svg: Option<String>,
}

/// One server-sent event of a streamed ask: a phase that finished.
#[derive(Debug, Serialize, JsonSchema)]
pub struct PhaseEvent {
    /// `match_tables`, `generate_view` or `query_view`.
    pub phase: String,
    /// That phase's part of the trace (see `GET /v1/traces/{id}`).
    pub trace: serde_json::Value,
    /// After `generate_view`: the picture, with MatchTables' votes (when `svg` was true).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub svg: Option<String>,
    /// After `query_view`: the verified queries retrieved and how each was
    /// used (the trace's `examples`), when the ask used some.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub examples: Option<serde_json::Value>,
}

impl AskBody {
    fn options(&self, m: &LoadedModel, st: &AppState) -> Result<AskOptions, ApiError> {
        let trim = |v: &[String]| -> Vec<String> {
            v.iter().map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect()
        };
        if self.question.trim().is_empty() {
            return Err(ApiError::bad_request("question is empty"));
        }
        if !(0.0..=2.0).contains(&self.temperature) {
            return Err(ApiError::bad_request(format!("temperature must be in [0, 2], got {}", self.temperature)));
        }
        if !(1..=20).contains(&self.samples) || !(1..=50).contains(&self.max_items) || !(1..=1000).contains(&self.limit)
        {
            return Err(ApiError::bad_request("samples must be 1–20, max_items 1–50, limit 1–1000"));
        }
        if self.examples_k.is_some_and(|k| k > 20) {
            return Err(ApiError::bad_request("examples_k must be 0–20"));
        }
        let execute = if self.execute {
            Some(m.database.clone().ok_or_else(|| {
                ApiError::bad_request(format!(
                    "model `{}` has no database to execute on: start the server with --db {}=FILE.sqlite, or put {} beside its file",
                    m.graph.model().name,
                    m.graph.model().name,
                    m.file.with_extension("sqlite").file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default()
                ))
            })?)
        } else {
            None
        };
        let mut opts = AskOptions {
            link: MatchOptions::sampled(self.samples, self.temperature, self.min_votes, self.max_items),
            stop_after: self.stop_after,
            tables: trim(&self.tables),
            attrs: trim(&self.attrs),
            evidence: self.evidence.clone(),
            execute: execute.map(crate::sql::exec::target::Database::Sqlite),
            dialect: self.dialect,
            ..AskOptions::default()
        };
        opts.query.temperature = self.temperature;
        opts.query.schema_context = self.schema_context;
        opts.query.exec_vote = self.exec_vote;
        if let Some(f) = self.query_form {
            opts.query.form = f;
        }
        opts.limits.rows = Some(self.limit);
        opts.limits.solver_time_limit_s = check_time_limit(self.time_limit, st)?;
        opts.limits.exec_timeout_s = st.opts.request_timeout.min(30.0);
        Ok(opts)
    }
}

/// The verified queries of one ask (inside its blocking task: ranking
/// embeds the question).
fn with_examples(
    st: &AppState,
    m: &LoadedModel,
    question: &str,
    want: (bool, Option<usize>),
    mut opts: AskOptions,
) -> crate::error::Result<AskOptions> {
    if want.0 {
        let dialect = opts.dialect.or(m.graph.model().dialect).unwrap_or_default();
        opts.examples = st.examples.for_ask(&m.file, &m.graph, question, dialect, want.1)?;
    }
    Ok(opts)
}

fn wants_stream(headers: &HeaderMap) -> bool {
    headers
        .get(header::ACCEPT)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.split(',').any(|p| p.trim().starts_with("text/event-stream")))
}

fn phase_event(phase: &str, trace: &Trace, graph: &crate::graph::SchemaGraph, svg: bool) -> PhaseEvent {
    let part = match phase {
        "match_tables" => serde_json::to_value(&trace.match_tables),
        "generate_view" => serde_json::to_value(&trace.generate_view),
        _ => serde_json::to_value(&trace.query_view),
    };
    PhaseEvent {
        phase: phase.to_string(),
        trace: part.unwrap_or_default(),
        svg: if svg && phase == "generate_view" { crate::render::trace_svg(trace, Some(graph)) } else { None },
        examples: if phase == "query_view" {
            trace.examples.as_ref().and_then(|e| serde_json::to_value(e).ok())
        } else {
            None
        },
    }
}

pub async fn ask(
    State(st): St,
    headers: HeaderMap,
    b: Result<Json<AskBody>, JsonRejection>,
) -> Result<Response, ApiError> {
    let b = body(b)?;
    if !wants_stream(&headers) {
        return Ok(Json(ask_core(&st, b).await?).into_response());
    }
    let m = st.model(&b.model)?;
    let opts = b.options(&m, &st)?;
    let permit = slot(&st)?;
    let llm = st.llm.clone();
    let question = b.question.clone();
    let want_svg = b.svg;
    let want_examples = (b.examples, b.examples_k);
    // Streamed: `progress` events as steps start and prompts go and come
    // back, one event per finished phase, then `result` (or `error`).
    let (tx, rx) = tokio::sync::mpsc::unbounded_channel::<Event>();
    let graph = m.graph.clone();
    let st2 = st.clone();
    tokio::task::spawn_blocking(move || {
        let _permit = permit;
        let send = |name: &str, v: serde_json::Value| {
            let ev = Event::default().event(name).json_data(v).unwrap_or_else(|_| Event::default().event(name));
            // A closed channel means the client went away: nothing to do.
            let _ = tx.send(ev);
        };
        let json = |v: &dyn erased_serde_free::ToJson| v.to_json();
        let opts = match with_examples(&st2, &m, &question, want_examples, opts) {
            Ok(o) => o,
            Err(e) => return send("error", json(&ApiError::from(e).body)),
        };
        let mut observe = |phase: &str, trace: &Trace| send(phase, json(&phase_event(phase, trace, &graph, want_svg)));
        let progress = super::progress::StreamProgress::new(|e| send("progress", json(&e)));
        match pipeline::ask_with_progress(&graph, &question, &opts, llm.as_deref(), &mut observe, &progress) {
            Ok(o) => {
                let svg = if want_svg { crate::render::trace_svg(&o.trace, Some(&graph)) } else { None };
                let summary = AskSummary::from(&o);
                let trace_id = st2.keep_trace(o.trace);
                send("result", json(&AskResponse { summary, trace_id, svg }));
            }
            Err(e) => send("error", json(&ApiError::from(e).body)),
        }
    });
    let deadline = tokio::time::Instant::now() + Duration::from_secs_f64(st.opts.request_timeout);
    let secs = st.opts.request_timeout;
    let stream = futures_util::stream::unfold(Some(rx), move |rx| async move {
        let mut rx = rx?;
        match tokio::time::timeout_at(deadline, rx.recv()).await {
            Ok(Some(ev)) => Some((Ok::<Event, Infallible>(ev), Some(rx))),
            Ok(None) => None,
            Err(_) => {
                let body: ErrorBody = ApiError::timeout(secs).body;
                let ev = Event::default().event("error").json_data(&body).unwrap_or_default();
                Some((Ok(ev), None))
            }
        }
    });
    Ok(Sse::new(stream).keep_alive(KeepAlive::default()).into_response())
}

/// A question end to end for a request body (the HTTP handler without
/// streaming, and the MCP tool); the trace is kept for `GET /v1/traces/{id}`.
pub async fn ask_core(st: &Arc<AppState>, b: AskBody) -> Result<AskResponse, ApiError> {
    let m = st.model(&b.model)?;
    let opts = b.options(&m, st)?;
    let permit = slot(st)?;
    let llm = st.llm.clone();
    let graph = m.graph.clone();
    let st2 = st.clone();
    let (question, want_svg, want_examples) = (b.question, b.svg, (b.examples, b.examples_k));
    run_blocking(st, move || {
        let _permit = permit;
        let opts = with_examples(&st2, &m, &question, want_examples, opts)?;
        let o = pipeline::ask(&graph, &question, &opts, llm.as_deref())?;
        let svg = if want_svg { crate::render::trace_svg(&o.trace, Some(&graph)) } else { None };
        let summary = AskSummary::from(&o);
        let trace_id = st2.keep_trace(o.trace);
        Ok(AskResponse { summary, trace_id, svg })
    })
    .await
}

/// Event payloads of different types through one closure.
mod erased_serde_free {
    pub trait ToJson {
        fn to_json(&self) -> serde_json::Value;
    }
    impl<T: serde::Serialize> ToJson for T {
        fn to_json(&self) -> serde_json::Value {
            serde_json::to_value(self).unwrap_or_default()
        }
    }
}

// ---------------------------------------------------------------- check

/// `POST /v1/check`: SQL over the model's base tables checked against the
/// model (declared joins, C3, C4, forbids, names, fan-out), like `lucy check`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct CheckBody {
    /// Model name, as listed by `GET /v1/models`.
    pub model: String,
    /// One SELECT query over the model's tables.
    #[schemars(length(min = 1, max = 100000))]
    pub sql: String,
    /// SQL dialect to parse (default: the model's, else sqlite).
    #[serde(default)]
    pub dialect: Option<Dialect>,
}

/// Check a body (the HTTP handler and the MCP tool). SQL that does not
/// parse as one SELECT is a 400 with the CLI's message.
pub async fn check_core(st: &Arc<AppState>, b: CheckBody) -> Result<CheckReport, ApiError> {
    let m = st.model(&b.model)?;
    let dialect = b.dialect.or(m.graph.model().dialect).unwrap_or_default();
    let permit = slot(st)?;
    let graph = m.graph.clone();
    run_blocking(st, move || {
        let _permit = permit;
        crate::check::check_sql(&graph, &b.sql, dialect)
    })
    .await
    .map_err(|mut e| {
        if e.status == StatusCode::UNPROCESSABLE_ENTITY {
            // Unparseable SQL is bad input here, as `lucy check` exits 2 for it.
            e.status = StatusCode::BAD_REQUEST;
            e.body.exit_code = 2;
        }
        e
    })
}

pub async fn check(State(st): St, b: Result<Json<CheckBody>, JsonRejection>) -> Result<Json<CheckReport>, ApiError> {
    check_core(&st, body(b)?).await.map(Json)
}

// ---------------------------------------------------------------- examples

/// `GET /v1/models/{name}/examples`: the model's verified queries
/// (`MODEL.examples.jsonl` beside its file), like `lucy examples list --json`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ExampleList {
    /// The examples file's name (beside the model file).
    pub file: String,
    /// Whether the file exists yet (POST creates it).
    pub exists: bool,
    pub examples: Vec<crate::examples::Entry>,
}

/// `POST /v1/models/{name}/examples`: add a verified query, like `lucy
/// examples add`: checked against the model with `lucy check`'s rules (and
/// run on the model's database when `execute`), then appended.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExampleBody {
    /// The question, in natural language.
    #[schemars(length(min = 1, max = 4000))]
    pub question: String,
    /// SQL over the model's base tables that answers it.
    #[schemars(length(min = 1, max = 20000))]
    pub sql: String,
    /// Run the SQL read-only on the model's database first; refuse it if it fails.
    #[serde(default)]
    pub execute: bool,
}

/// `POST /v1/models/{name}/examples`'s answer.
#[derive(Debug, Serialize, JsonSchema)]
pub struct ExampleAdded {
    /// The examples file's name.
    pub file: String,
    /// The line the example was written to.
    pub line: usize,
    /// What the check found (clean, or it would not have been added).
    pub check: crate::examples::ExampleCheck,
}

/// One append at a time, so the duplicate check and the line number hold.
static EXAMPLES_WRITE: std::sync::Mutex<()> = std::sync::Mutex::new(());

fn examples_file(m: &LoadedModel) -> (std::path::PathBuf, String) {
    let path = crate::examples::default_path(&m.file);
    let name = path.file_name().map(|f| f.to_string_lossy().into_owned()).unwrap_or_default();
    (path, name)
}

/// Errors of the examples file name it by file name, not by its full path.
fn short_path(e: crate::Error, path: &std::path::Path, name: &str) -> ApiError {
    ApiError::bad_request(e.to_string().replace(&path.display().to_string(), name))
}

pub async fn examples_list(State(st): St, Path(name): Path<String>) -> Result<Json<ExampleList>, ApiError> {
    let m = st.model(&name).map_err(|e| ApiError::not_found(e.to_string()))?;
    let (path, file) = examples_file(&m);
    if !path.is_file() {
        return Ok(Json(ExampleList { file, exists: false, examples: Vec::new() }));
    }
    let text = crate::error::read_to_string(&path).map_err(|e| short_path(e, &path, &file))?;
    let parsed = crate::examples::ExamplesFile::parse(std::path::Path::new(&file), &text)?;
    Ok(Json(ExampleList { file, exists: true, examples: parsed.entries }))
}

pub async fn examples_add(
    State(st): St,
    Path(name): Path<String>,
    b: Result<Json<ExampleBody>, JsonRejection>,
) -> Result<Json<ExampleAdded>, ApiError> {
    let b = body(b)?;
    let m = st.model(&name).map_err(|e| ApiError::not_found(e.to_string()))?;
    if b.question.trim().is_empty() || b.sql.trim().is_empty() {
        return Err(ApiError::bad_request("question and sql must not be empty"));
    }
    let db = match (b.execute, &m.database) {
        (false, _) => None,
        (true, Some(p)) => Some(crate::sql::exec::target::Database::Sqlite(p.clone())),
        (true, None) => {
            return Err(ApiError::bad_request(format!(
                "model `{}` has no database to execute on: start the server with --db {}=FILE.sqlite",
                m.graph.model().name,
                m.graph.model().name
            )))
        }
    };
    let permit = slot(&st)?;
    let timeout = st.opts.request_timeout.min(30.0);
    run_blocking(&st, move || {
        let _permit = permit;
        let (path, file) = examples_file(&m);
        let graph = &m.graph;
        let dialect = graph.model().dialect.unwrap_or_default();
        let example =
            crate::examples::Example { question: b.question.trim().into(), sql: b.sql.trim().into(), database: None };
        let entry = crate::examples::Entry { line: 0, example: example.clone() };
        let exec = db
            .as_ref()
            .map(|db| crate::examples::validate::ExecCheck { db, timeout: crate::types::limits::duration(timeout) });
        let check = crate::examples::check_entry(graph, &entry, dialect, exec);
        if !check.ok {
            return Err(crate::Error::Input(format!("not added: {}", check.problems_at("the example").join("; "))));
        }
        let _guard = EXAMPLES_WRITE.lock().unwrap_or_else(|p| p.into_inner());
        let mut f = crate::examples::ExamplesFile::load_or_empty(&path)
            .map_err(|e| crate::Error::Input(e.to_string().replace(&path.display().to_string(), &file)))?;
        let line = f
            .append(example)
            .map_err(|e| crate::Error::Input(e.to_string().replace(&path.display().to_string(), &file)))?;
        Ok(ExampleAdded { file, line, check })
    })
    .await
    .map(Json)
}

// ---------------------------------------------------------------- traces

pub async fn trace(State(st): St, Path(id): Path<String>) -> Result<Json<Trace>, ApiError> {
    let t = st.trace(&id).ok_or_else(|| trace_gone(&id, &st))?;
    Ok(Json((*t).clone()))
}

fn trace_gone(id: &str, st: &AppState) -> ApiError {
    ApiError::not_found(format!(
        "no trace `{id}`: the server keeps the last {} asks' traces in memory (ids come from POST /v1/ask)",
        st.opts.trace_cap
    ))
}

fn svg_response(svg: String) -> Response {
    ([(header::CONTENT_TYPE, "image/svg+xml; charset=utf-8")], svg).into_response()
}

fn draw_trace(st: &AppState, t: &Trace) -> Result<Response, ApiError> {
    let graph = st.model(&t.model).ok().map(|m| m.graph.clone());
    let svg = crate::render::trace_svg(t, graph.as_deref()).ok_or_else(|| {
        ApiError::new(
            StatusCode::UNPROCESSABLE_ENTITY,
            "the trace has no GenerateView result (the run stopped or failed before phase 2), so there is no join path to draw",
        )
    })?;
    Ok(svg_response(svg))
}

/// `GET /v1/traces/{id}/svg`.
pub async fn trace_svg(State(st): St, Path(id): Path<String>) -> Result<Response, ApiError> {
    let t = st.trace(&id).ok_or_else(|| trace_gone(&id, &st))?;
    draw_trace(&st, &t)
}

/// `POST /v1/traces/svg`: the picture of a trace file sent in the body
/// (the web page's drag and drop).
pub async fn trace_svg_post(State(st): St, b: Result<Json<Trace>, JsonRejection>) -> Result<Response, ApiError> {
    let t = body(b)?;
    draw_trace(&st, &t)
}
