//! `ask`: the three phases end to end (Lucy, Algorithm 1), and the direct
//! PROMPTB baseline, each producing a [`Trace`] that says what every phase
//! saw, chose and why a question failed.
//!
//! Phase failures (an LLM error, nothing matched, an infeasible view, SQL
//! still rejected after the repair round, an execution error) are not
//! `Err`: they come back as `Ok` with [`AskOutcome::failure`] set, so the
//! caller always has the trace. `Err` is reserved for bad input (unknown
//! `--tables`, bad options, no LLM where one is needed, broken prompt files).

pub mod branches;
pub mod ddl;
pub mod explain;
pub mod linker;
pub mod lookups;
pub mod measures;
pub mod narrow;
mod phases;
mod plan_form;
pub mod progress;
pub mod rasl;
pub mod rerun;
pub mod settings;
pub mod tasql;
pub mod unjoinable;

pub use linker::Linker;
pub use phases::ask_with_progress;
pub use progress::{NoProgress, Progress, Step};
pub use settings::{Limits, QuerySettings, ViewSettings};
pub mod summary;

/// Moved to [`crate::llm::traced`]; this alias keeps old paths working.
pub use crate::llm::traced as llm_call;
pub use summary::AskSummary;

use std::path::PathBuf;
use std::time::Instant;

use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::examples::{ExampleTables, ExamplesUse};
use crate::graph::{ColumnId, SchemaGraph, TableId};
use crate::link::{self, MatchOptions};
use crate::llm::ChatModel;
use crate::prompts::{dialect_label, Prompts};
use crate::query::grammar::NameRules;
use crate::query::{self, Allowed, ExecTarget, RepairGrammar, SqlTask};
use crate::sql::exec::{Database, QueryRows};
use crate::types::trace::{
    ExamplesTrace, Failure, MatchTrace, QueryTrace, Rerun, Trace, UnjoinableTrace, UsedExample, ViewTrace,
    TRACE_VERSION,
};
use crate::types::{ColumnRef, Dialect, DistinctMode, FanoutMode, Relevance, SolveStatus, ViewRequest, ViewResult};

/// Where to stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, schemars::JsonSchema)]
#[serde(rename_all = "lowercase")]
pub enum StopAfter {
    /// After MatchTables.
    Match,
    /// After GenerateView.
    View,
    /// After QueryView, without executing.
    Sql,
}

impl StopAfter {
    pub fn as_str(self) -> &'static str {
        match self {
            StopAfter::Match => "match",
            StopAfter::View => "view",
            StopAfter::Sql => "sql",
        }
    }
}

/// Options of [`ask`] and [`direct_sql`]: each phase's settings
/// ([`settings`]: `link`, `view`, `query`, `limits`, the keys of `--set`
/// and of the trace's `options`), then what this one run is given.
#[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
#[serde(default)]
pub struct AskOptions {
    /// MatchTables' sampling, voting and levers.
    pub link: MatchOptions,
    /// GenerateView's settings.
    pub view: ViewSettings,
    /// QueryView's settings.
    pub query: QuerySettings,
    /// The bounds of the run.
    pub limits: Limits,
    pub stop_after: Option<StopAfter>,
    /// Given relevant tables: MatchTables is skipped.
    pub tables: Vec<String>,
    /// Given relevant attributes `TABLE.column`: MatchTables is skipped.
    pub attrs: Vec<String>,
    /// Extra knowledge for the question (BIRD's evidence), shown to the
    /// SQL-writing prompt.
    pub evidence: Option<String>,
    /// Run the final SQL read-only on this database (a SQLite file or a
    /// PostgreSQL/MySQL server; serialised without its password).
    pub execute: Option<Database>,
    /// Dialect of the view and the SQL (default: the model's, else SQLite).
    pub dialect: Option<Dialect>,
    /// Prefilter hook (e.g. CRUSH): offer only these core tables.
    pub restrict_core_tables: Option<Vec<String>>,
    /// Who runs phase 1 when no tables are given (default: the LLM).
    #[serde(skip_serializing_if = "Linker::is_llm")]
    pub linker: Linker,
    /// Where given `tables`/`attrs` came from, for the trace (default
    /// `given`; e.g. the offline embedding linker).
    pub given_source: Option<String>,
    /// Directory overriding prompt templates.
    pub prompts_dir: Option<PathBuf>,
    /// SQL given instead of written by the LLM (`lucy ask --sql`): over the
    /// view for [`ask`] (which then needs `tables`/`attrs`), over the
    /// model's tables for [`direct_sql`]. It goes through the same guard
    /// and execution; no LLM is called and there is no repair round.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub sql: Option<String>,
    /// The direct baseline with `lucy check`: findings on its first SQL are
    /// the repair round's message (`lucy bench --method direct+check`).
    #[serde(skip_serializing_if = "std::ops::Not::not")]
    pub direct_check: bool,
    /// Keep every row of this table in the view (LEFT JOINs from it): the
    /// entity a "for each …" question is about.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub keep: Option<String>,
    /// Verified examples retrieved for the question (`lucy ask --examples`):
    /// their tables for MatchTables, their SQL (over the view) for
    /// QueryView. Not serialized: the trace's `examples` section lists them.
    #[serde(skip)]
    pub examples: Option<crate::examples::ExamplesUse>,
    /// The `fewshot` method (DynVS): [`direct_sql`] with these retrieved
    /// pool examples in its prompt (`fewshot_sql`). Not serialized: the
    /// trace's `examples` section lists them.
    #[serde(skip)]
    pub fewshot: Option<crate::examples::ExamplesUse>,
}

/// The table MatchTables' first prompt (`match_tables`) gave the most votes,
/// the first of them in vote order on a tie; `None` when the phase did not
/// ask it (given tables).
pub fn top_voted(mt: &MatchTrace) -> Option<String> {
    let step = mt.listing_step()?;
    let best = step.votes.iter().filter(|v| v.kept).map(|v| v.votes).max()?;
    step.votes.iter().find(|v| v.kept && v.votes == best).map(|v| v.item.clone())
}

/// What [`ask`] produced.
#[derive(Debug, Clone)]
pub struct AskOutcome {
    pub trace: Trace,
    pub tables: Vec<String>,
    pub attributes: Vec<ColumnRef>,
    pub view: Option<ViewResult>,
    pub sql: Option<String>,
    pub rows: Option<QueryRows>,
    pub stopped_after: Option<StopAfter>,
    /// Set when a phase failed (also in `trace.failure`).
    pub failure: Option<Failure>,
}

/// What [`direct_sql`] produced.
#[derive(Debug, Clone)]
pub struct DirectOutcome {
    pub trace: Trace,
    pub sql: Option<String>,
    pub rows: Option<QueryRows>,
    pub failure: Option<Failure>,
}

fn no_llm(phase: &str) -> Error {
    Error::Input(format!(
        "{phase} needs an LLM. {}; or give --tables/--attrs with --stop-after view to build the view offline",
        crate::llm::NOT_CONFIGURED_HINT
    ))
}

fn new_trace(
    graph: &SchemaGraph,
    method: &str,
    question: &str,
    opts: &AskOptions,
    llm: Option<&dyn ChatModel>,
) -> Trace {
    Trace {
        version: TRACE_VERSION,
        lucy_version: env!("CARGO_PKG_VERSION").into(),
        method: method.into(),
        question: question.into(),
        evidence: opts.evidence.clone(),
        model: graph.model().name.clone(),
        llm: llm.map(|l| l.model_name()),
        options: serde_json::to_value(opts).unwrap_or_default(),
        ..Trace::default()
    }
}

fn failure(phase: &str, kind: &str, message: impl Into<String>) -> Failure {
    Failure { phase: phase.into(), kind: kind.into(), message: message.into() }
}

fn kind_of(e: &Error) -> &'static str {
    match e {
        Error::Llm { .. } => "llm",
        Error::Infeasible(_) => "infeasible",
        Error::Sql(_) => "sql_rejected",
        Error::Db(_) => "execution",
        Error::Input(_) | Error::Model(_) | Error::Io { .. } => "input",
        Error::Solver(_) => "solver",
    }
}

/// The dialect of the view and the SQL: `--dialect`, else the database's
/// engine when executing, else the model's, else SQLite. An explicit
/// dialect must match the engine the SQL runs on.
fn dialect_for(graph: &SchemaGraph, opts: &AskOptions) -> Result<Dialect> {
    let engine = opts.execute.as_ref().map(Database::dialect);
    let d = opts.dialect.or(engine).or(graph.model().dialect).unwrap_or_default();
    if let (Some(db), Some(e)) = (&opts.execute, engine) {
        if d != e {
            return Err(Error::Input(format!(
                "--execute {db} runs the SQL on {}, but the dialect is {}; pass --dialect {} (or leave it out)",
                e.as_str(),
                d.as_str(),
                e.as_str()
            )));
        }
    }
    Ok(d)
}

/// `--tables` / `--attrs` resolved to ids: tables (those of the attributes,
/// then the given ones), attributes (given ones; all columns of a given
/// table that no `--attrs` entry names).
pub fn given_relevance(graph: &SchemaGraph, tables: &[String], attrs: &[String]) -> Result<Relevance> {
    let mut cols = Vec::new();
    for a in attrs {
        cols.push(graph.column_ref(a).map_err(|e| Error::Input(format!("--attrs: {e}")))?);
    }
    let mut ts = Vec::new();
    let mut roles = Vec::new();
    for t in tables {
        match graph.instance_copy(t)? {
            (id, None, _) => ts.push(id),
            (table, Some(rel), copy) => roles.push(crate::types::RoleInstance { table, rel, copy }),
        }
    }
    let mut rel = relevance_of(graph, &ts, &cols);
    // An attribute of a table given only in roles belongs to those instances,
    // not to a plain instance.
    rel.tables.retain(|t| ts.contains(t) || !roles.iter().any(|r: &crate::types::RoleInstance| r.table == *t));
    // Role instances (`TABLE@role`): like a given table, all columns unless
    // an `--attrs` entry names one of the table's.
    for r in roles {
        if !rel.columns.iter().any(|c| c.table == r.table) {
            rel.columns
                .extend((0..graph.table(r.table).columns.len()).map(|column| ColumnId { table: r.table, column }));
        }
        rel.add_role(r);
    }
    Ok(rel)
}

/// Given tables and columns as a [`Relevance`]: the columns' tables, then
/// the given tables; the given columns, then every column of a given table
/// that no given column belongs to.
fn relevance_of(graph: &SchemaGraph, tables: &[TableId], columns: &[ColumnId]) -> Relevance {
    let mut rel = Relevance::default();
    for &c in columns {
        rel.add_table(c.table);
        rel.columns.push(c);
    }
    for &id in tables {
        rel.add_table(id);
        if !rel.columns.iter().any(|c| c.table == id) {
            rel.columns.extend((0..graph.table(id).columns.len()).map(|column| ColumnId { table: id, column }));
        }
    }
    rel
}

/// Relevant tables and attributes by name (for traces and output).
pub fn relevance_names(graph: &SchemaGraph, rel: &Relevance) -> (Vec<String>, Vec<ColumnRef>) {
    let tables = rel
        .tables
        .iter()
        .map(|&t| graph.name(t).to_string())
        .chain(rel.roles.iter().map(|r| graph.copy_label(r.table, Some(r.rel), r.copy)))
        .collect();
    let cols = rel.columns.iter().map(|&c| graph.column_names(c)).map(|(t, c)| ColumnRef::new(t, c)).collect();
    (tables, cols)
}

/// Answer `question` end to end: MatchTables (or the given tables),
/// GenerateView, QueryView, and optionally execution.
pub fn ask(graph: &SchemaGraph, question: &str, opts: &AskOptions, llm: Option<&dyn ChatModel>) -> Result<AskOutcome> {
    ask_observed(graph, question, opts, llm, &mut |_, _| {})
}

/// [`ask`], calling `observe(phase, trace)` as each phase finishes
/// (`match_tables`, `generate_view`, `query_view`; the trace then holds that
/// phase), so a server can stream the phases as they arrive.
pub fn ask_observed(
    graph: &SchemaGraph,
    question: &str,
    opts: &AskOptions,
    llm: Option<&dyn ChatModel>,
    observe: &mut dyn FnMut(&str, &Trace),
) -> Result<AskOutcome> {
    ask_with_progress(graph, question, opts, llm, observe, &NoProgress)
}

/// Calls [`Progress::finished`] when dropped, whichever way a run ends.
struct Finish<'a>(&'a dyn Progress);

impl Drop for Finish<'_> {
    fn drop(&mut self) {
        self.0.finished();
    }
}

/// The model's table names (for [`progress::Reporting`]).
/// The view instance the question counts by name (`--count-names`):
/// among the tables the view holds exactly once, the one
/// [`link::named::counted`] finds.
fn counted_instance(graph: &SchemaGraph, question: &str, view: &ViewResult) -> Option<String> {
    let once: Vec<TableId> = view
        .grain
        .instances
        .iter()
        .filter(|i| view.grain.instances.iter().filter(|j| j.table == i.table).count() == 1)
        .filter_map(|i| graph.table_id(&i.table))
        .collect();
    let t = link::named::counted(graph, question, &once)?;
    view.grain.instances.iter().find(|i| i.table == graph.name(t)).map(|i| i.instance.clone())
}

fn table_names(graph: &SchemaGraph) -> Vec<String> {
    graph.model().tables.iter().map(|t| t.name.clone()).collect()
}

/// What the question's words and the database's values say about
/// QueryView's query (`--entity-literals`, `--by-groups`,
/// `--value-literals`), or `None` when all are off.
fn grounding(graph: &SchemaGraph, question: &str, view: &ViewResult, opts: &AskOptions) -> Option<query::Grounding> {
    if !opts.query.entity_literals && !opts.query.by_groups && !opts.query.value_literals {
        return None;
    }
    let entities = if opts.query.entity_literals {
        view.columns
            .iter()
            .filter(|c| crate::check::literals::is_entity_name(&c.column) || is_single_key(graph, &c.table, &c.column))
            .map(|c| c.alias.clone())
            .collect()
    } else {
        Vec::new()
    };
    let by = if opts.query.by_groups {
        link::hints::view_hints(graph, question, &view.columns)
            .into_iter()
            .filter(|h| h.by)
            .filter_map(|h| match h.aliases.as_slice() {
                [a] => Some((h.phrase.clone(), a.clone())),
                _ => None,
            })
            .collect()
    } else {
        Vec::new()
    };
    let values = if opts.query.value_literals { complete_values(graph, view, opts) } else { Vec::new() };
    Some(query::Grounding {
        view_name: view.view_name.clone(),
        question: question.to_string(),
        entities,
        by,
        values,
        fold: link::values::fold,
    })
}

/// The view's text columns whose values the database's value index holds
/// completely, and its numeric columns (`--value-literals`); none without
/// a database or when the index cannot be read.
fn complete_values(
    graph: &SchemaGraph,
    view: &ViewResult,
    opts: &AskOptions,
) -> Vec<crate::check::values::ValueColumn> {
    use crate::check::values::ValueColumn;
    let Some(db) = &opts.execute else { return Vec::new() };
    let Ok((index, _)) = link::values::shared(graph, db) else { return Vec::new() };
    view.columns
        .iter()
        .filter_map(|c| {
            let sql_type = graph
                .table_id(&c.table)
                .and_then(|t| graph.table(t).columns.iter().find(|x| x.name == c.column))
                .map(|x| x.sql_type.as_str())?;
            if measures::type_class(sql_type) == measures::TypeClass::Number {
                return Some(ValueColumn { alias: c.alias.clone(), values: Vec::new(), numeric: true });
            }
            let cv = index.columns.iter().find(|x| x.complete && x.table == c.table && x.column == c.column)?;
            Some(ValueColumn { alias: c.alias.clone(), values: cv.values.clone(), numeric: false })
        })
        .collect()
}

/// Whether `column` alone is the primary key of `table`.
fn is_single_key(graph: &SchemaGraph, table: &str, column: &str) -> bool {
    graph.table_id(table).is_some_and(|t| match graph.table(t).primary_key.as_slice() {
        [k] => k.eq_ignore_ascii_case(column),
        _ => false,
    })
}

/// A step after the answer: its view and rows become the answer when it
/// was used; its trace section, if it was tried.
fn take<T>(r: rerun::Reran<T>, out: &mut AskOutcome) -> Option<T> {
    match r {
        rerun::Reran::NotTried => None,
        rerun::Reran::Tried(t) => Some(t),
        rerun::Reran::Used(v, rows, t) => {
            out.rows = Some(rows);
            out.view = Some(*v);
            Some(t)
        }
    }
}

/// The answer a step after it works on: its view and that view's request
/// (the last of the first solve, the narrowed one and the one with inner
/// branches that was used), its SQL after lucy's rewrites and as QueryView
/// wrote it, and the view columns the SQL reads.
struct Answer {
    view: ViewResult,
    request: ViewRequest,
    sql: String,
    written: String,
    used: std::collections::BTreeSet<String>,
}

impl Answer {
    /// `None` without a view, with `--keep` (every row is kept on purpose)
    /// or when the SQL selects `*`.
    fn of(out: &AskOutcome, first: &ViewRequest) -> Option<Answer> {
        let view = out.view.clone()?;
        let t = &out.trace;
        let used = |r: Option<&Rerun>| r.filter(|r| r.used).and_then(|r| r.view.as_ref()).map(|v| v.request.clone());
        let request = used(t.inner_branches.as_ref().map(|b| &b.rerun))
            .or_else(|| used(t.narrowed.as_ref().map(|n| &n.rerun)))
            .unwrap_or_else(|| first.clone());
        if request.keep.is_some() {
            return None;
        }
        let (sql, written) = answer_sql(out);
        let used = narrow::used_columns(&sql, &written, &view)?;
        Some(Answer { view, request, sql, written, used })
    }
}

/// The answer's SQL after lucy's rewrites, and as QueryView wrote it (the
/// last accepted attempt's extraction).
fn answer_sql(out: &AskOutcome) -> (String, String) {
    let sql = out.sql.clone().unwrap_or_default();
    let written = out
        .trace
        .query_view
        .as_ref()
        .and_then(|q| q.attempts.iter().rev().find(|a| a.validation.ok))
        .and_then(|a| a.extracted.clone())
        .unwrap_or_else(|| sql.clone());
    (sql, written)
}

/// Where QueryView's SQL runs over `view` (`None` without a database, or
/// when the run stops at the SQL).
fn exec_target<'a>(opts: &'a AskOptions, view: &'a ViewResult, run_it: bool) -> Option<ExecTarget<'a>> {
    opts.execute.as_ref().filter(|_| run_it).map(|db| ExecTarget {
        db,
        view: view.body.as_ref(),
        limit: opts.limits.rows,
        timeout: crate::types::limits::duration(opts.limits.exec_timeout_s.max(0.001)),
        max_result_bytes: opts.limits.result_bytes,
    })
}

/// The names SQL over `view` may read: the view and its columns.
fn allowed_over(view: &ViewResult) -> Allowed {
    Allowed::View { name: view.view_name.clone(), columns: view.columns.iter().map(|c| c.alias.clone()).collect() }
}

/// QueryView's task over one view: what it needs beside the view.
struct ViewAt<'a> {
    graph: &'a SchemaGraph,
    question: &'a str,
    opts: &'a AskOptions,
    prompts: &'a Prompts,
    dialect: Dialect,
    values: &'a [link::values::ValueMatch],
}

impl<'a> ViewAt<'a> {
    /// The task over `view` and its prompt with the column descriptions cut
    /// short; the name hints go into `qt`.
    fn task<'v>(
        &self,
        view: &'v ViewResult,
        counted: Option<&'v str>,
        examples: Option<&mut ExamplesTrace>,
        qt: &mut QueryTrace,
        execute: Option<ExecTarget<'v>>,
        allowed: Allowed,
    ) -> Result<(SqlTask<'v>, String)>
    where
        'a: 'v,
    {
        let (graph, question, opts, dialect) = (self.graph, self.question, self.opts, self.dialect);
        let ddl_text;
        let schema = if opts.query.schema_context {
            let ids: Vec<TableId> = view.tables.iter().filter_map(|t| graph.table_id(t)).collect();
            ddl_text = ddl::ddl(graph, Some(&ids), true);
            Some(ddl_text.as_str())
        } else {
            None
        };
        let shown = examples_over_view(graph, view, dialect, examples);
        let name_rules = NameRules::new(opts.query.names);
        let notes = link::values::view_notes(graph, self.values, &view.columns);
        if opts.query.name_hints {
            qt.hints =
                link::hints::view_hints(graph, question, &view.columns).iter().map(link::hints::Hint::line).collect();
        }
        let render = |description_chars| {
            let extras = query::PromptExtras { examples: &shown, values: &notes, hints: &qt.hints, description_chars };
            query::view_prompt_full(self.prompts, view, question, dialect, schema, opts.evidence.as_deref(), extras)
        };
        let (prompt_name, prompt) = render(None)?;
        let compact = render(Some(query::COMPACT_DESCRIPTIONS))?.1;
        let view_columns: Vec<String> = view.columns.iter().map(|c| c.alias.clone()).collect();
        let task = SqlTask {
            prompt_name,
            prompt,
            allowed,
            dialect,
            temperature: opts.query.temperature,
            execute,
            fanout: Some((view, opts.query.fanout)),
            model_check: None,
            grammar: Some(query::grammar::view_grammar_with(
                &view.view_name,
                &view_columns,
                &model_names(graph),
                dialect,
                &name_rules,
            )),
            repair_grammar: Some(RepairGrammar { reserved: model_names(graph), rules: name_rules.clone() }),
            rename: opts.query.rename_unknown.then_some(view.columns.as_slice()),
            distinct: (opts.query.distinct == DistinctMode::Auto).then_some(view),
            counted: counted.map(|i| (view, i)),
            grounding: grounding(graph, question, view, opts),
            feedback: query::Feedback::default(),
        };
        Ok((task, compact))
    }
}

/// The execution bounds of the answer's query.
fn answer_exec(opts: &AskOptions) -> crate::sql::exec::ExecOptions {
    crate::sql::exec::ExecOptions {
        limit: opts.limits.rows,
        timeout: crate::types::limits::duration(opts.limits.exec_timeout_s.max(0.001)),
        max_result_bytes: opts.limits.result_bytes,
    }
}

/// `--inner-branches named`: over the answer's view (the narrowed one when
/// narrowing was used), INNER-join the branch the answer is about and run
/// the same SQL again ([`branches`]).
fn inner_branches(
    graph: &SchemaGraph,
    question: &str,
    opts: &AskOptions,
    first: &ViewRequest,
    db: &Database,
    out: &mut AskOutcome,
) {
    let Some(a) = Answer::of(out, first) else { return };
    let in_view: Vec<TableId> = a.view.instances.iter().map(|i| i.table).collect();
    let named = link::named::core_tables(graph, question, &in_view, &[]);
    let Some(t) = branches::chosen(&a.view, &a.used, &named, question, &a.written) else { return };
    let inner = branches::inner(graph, &a.request, t, &a.used, &a.sql, db, &answer_exec(opts));
    out.trace.inner_branches = take(inner, out);
}

/// `--lookup-filters named`: the lookup rows the question names filter the
/// answer's view, and the same SQL runs again ([`lookups`]).
fn lookup_filters(
    graph: &SchemaGraph,
    question: &str,
    opts: &AskOptions,
    first: &ViewRequest,
    db: &Database,
    out: &mut AskOutcome,
) {
    let Some(a) = Answer::of(out, first) else { return };
    let Some(read) = narrow::used_columns(&a.written, &a.written, &a.view) else { return };
    let exec = answer_exec(opts);
    let found = lookups::filters(graph, &a.view, &read, question, db, &exec);
    if found.is_empty() {
        return;
    }
    let applied = lookups::apply(graph, &a.request, &found, &a.used, &a.sql, db, &exec);
    out.trace.lookup_filters = take(applied, out);
}

/// The trace section of the retrieved examples (before any is used).
fn examples_trace(ex: &ExamplesUse) -> ExamplesTrace {
    ExamplesTrace {
        file: ex.file.clone(),
        embedder: ex.embedder.clone(),
        k: ex.k,
        tables_mode: ex.tables.as_str().into(),
        tables: Vec::new(),
        used: ex
            .retrieved
            .iter()
            .map(|r| UsedExample {
                line: r.line,
                question: r.question.clone(),
                sql: r.sql.clone(),
                score: r.score,
                tables: r.tables.clone(),
                in_prompt: None,
                left_out: None,
            })
            .collect(),
    }
}

/// `--example-tables offer`: the examples' core tables join the core tables
/// a prefilter offers MatchTables. Returns the ones it added.
fn offer_example_tables(graph: &SchemaGraph, ex: &ExamplesUse, offered: &mut Vec<String>) -> Vec<String> {
    let core: Vec<String> = graph.core_tables().into_iter().map(|t| graph.name(t).to_string()).collect();
    let mut added = Vec::new();
    for t in ex.retrieved.iter().flat_map(|r| &r.tables) {
        let Some(name) = core.iter().find(|c| c.eq_ignore_ascii_case(t)) else { continue };
        if !offered.iter().any(|o| o.eq_ignore_ascii_case(name)) {
            offered.push(name.clone());
            added.push(name.clone());
        }
    }
    added
}

/// `--example-tables add`: the examples' tables, with the columns their SQL
/// reads, join MatchTables' answer. Returns the tables it added.
fn add_example_tables(graph: &SchemaGraph, ex: &ExamplesUse, dialect: Dialect, found: &mut Relevance) -> Vec<String> {
    let mut added = Vec::new();
    for r in &ex.retrieved {
        let Ok(refs) = crate::sql::analyze::analyze(&r.sql, dialect, Some(graph.model())) else { continue };
        for c in &refs.columns {
            let Ok(id) = graph.column_ref(&format!("{}.{}", c.table, c.column)) else { continue };
            if !found.tables.contains(&id.table) {
                added.push(graph.name(id.table).to_string());
            }
            found.add_table(id.table);
            found.add_column(id);
        }
    }
    added.dedup();
    added
}

/// The retrieved examples QueryView sees: each one's SQL rewritten over the
/// view, or left out (the reason goes to the trace).
fn examples_over_view(
    graph: &SchemaGraph,
    view: &ViewResult,
    dialect: Dialect,
    trace: Option<&mut ExamplesTrace>,
) -> Vec<query::PromptExample> {
    let Some(t) = trace else { return Vec::new() };
    let mut shown = Vec::new();
    for u in &mut t.used {
        match crate::examples::rewrite_over_view(graph, &u.sql, view, dialect) {
            Ok(sql) => {
                shown.push(query::PromptExample { question: u.question.clone(), sql: sql.clone() });
                u.in_prompt = Some(sql);
            }
            Err(why) => u.left_out = Some(format!("its SQL {why}")),
        }
    }
    shown
}

/// With `--values on` and a database: the values of its index (built once
/// per database, cached) that the question matches. Without them, or when
/// the index cannot be read, none; `warnings` says why.
fn matched_values(
    graph: &SchemaGraph,
    question: &str,
    opts: &AskOptions,
    warnings: &mut Vec<String>,
) -> Vec<link::values::ValueMatch> {
    if !opts.query.values {
        return Vec::new();
    }
    let Some(db) = &opts.execute else {
        warnings.push("--values on: no database to read values from (give --execute); no values shown".into());
        return Vec::new();
    };
    match link::values::shared(graph, db) {
        Ok((index, _)) => link::values::match_question(graph, &index, question),
        Err(e) => {
            warnings.push(format!("--values on: the value index of {db} could not be read: {e}; no values shown"));
            Vec::new()
        }
    }
}

/// Every table and column name of the model: names a query over the view
/// may not define (see `query::grammar`).
fn model_names(graph: &SchemaGraph) -> Vec<String> {
    graph
        .model()
        .tables
        .iter()
        .flat_map(|t| std::iter::once(t.name.clone()).chain(t.columns.iter().map(|c| c.name.clone())))
        .collect()
}

/// The PROMPTB baseline (Appendix C.1.1): the whole schema's DDL and the
/// question, one SQL query back, checked by the same guard (any model table
/// and its columns instead of the view), one repair round, optional execution.
pub fn direct_sql(
    graph: &SchemaGraph,
    question: &str,
    evidence: Option<&str>,
    opts: &AskOptions,
    llm: Option<&dyn ChatModel>,
) -> Result<DirectOutcome> {
    direct_sql_with_progress(graph, question, evidence, opts, llm, &NoProgress)
}

/// [`direct_sql`], telling `progress` about its one step and its prompts.
pub fn direct_sql_with_progress(
    graph: &SchemaGraph,
    question: &str,
    evidence: Option<&str>,
    opts: &AskOptions,
    llm: Option<&dyn ChatModel>,
    progress: &dyn Progress,
) -> Result<DirectOutcome> {
    let _finish = Finish(progress);
    progress.step(Step::DirectSql);
    let reporting = llm.map(|l| progress::Reporting::new(l, progress, Step::DirectSql, table_names(graph)));
    let llm = reporting.as_ref().map(|r| r as &dyn ChatModel);
    let method = match (&opts.fewshot, opts.direct_check) {
        (Some(_), _) => "fewshot",
        (None, true) => "direct+check",
        (None, false) => "direct",
    };
    let trace = new_trace(graph, method, question, opts, llm.filter(|_| opts.sql.is_none()));
    direct_over(graph, question, evidence, opts, llm, None, trace, Instant::now(), None)
}

/// CRUSH4SQL end to end (Kothyari et al., 2023, §3 and §4.3): one
/// hallucination call (`crush_hallucinate`, the paper's 6-shot prompt), its
/// tables and columns as probes, the entropy-weighted greedy selection of
/// `budget` schema elements over `embedder`'s embeddings, then the direct
/// baseline's SQL call over the chosen elements' tables only. The
/// hallucination and the selection are recorded as phase 1
/// (`match_tables`, source `crush …`); a malformed hallucination is a phase
/// failure there.
pub fn crush_sql(
    graph: &SchemaGraph,
    question: &str,
    evidence: Option<&str>,
    opts: &AskOptions,
    llm: Option<&dyn ChatModel>,
    embedder: &dyn crate::crush::embed::Embedder,
    budget: usize,
) -> Result<DirectOutcome> {
    let started = Instant::now();
    let Some(llm) = llm else { return Err(no_llm("the crush method")) };
    let prompts = Prompts::load(opts.prompts_dir.as_deref())?;
    let mut trace = new_trace(graph, "crush", question, opts, Some(llm));
    let mut mt = MatchTrace {
        source: format!("crush (hallucinated schema, greedy, {}, budget {budget})", embedder.id()),
        ..MatchTrace::default()
    };
    let req = crate::llm::ChatRequest::greedy(
        "crush_hallucinate",
        prompts.render("crush_hallucinate", serde_json::json!({ "question": question }))?,
    );
    let (call, result) = crate::llm::traced::call(llm, &req);
    mt.cost.add_call(&call);
    let answer = result.map(|r| r.choices.into_iter().next().unwrap_or_default());
    let probes = answer.and_then(|a| {
        let body = a.replace("```", "\n");
        let body = body.trim().trim_start_matches("Schema:").trim().to_string();
        crate::crush::probes::parse_schema(&body).map_err(|_| {
            Error::llm(
                "crush_hallucinate",
                format!(
                    "answer is not a schema like `T(c1, c2); U(c3)`: {:?}",
                    a.chars().take(200).collect::<String>()
                ),
            )
        })
    });
    mt.steps.push(crate::types::trace::ListStep { prompt: "crush_hallucinate".into(), call, ..Default::default() });
    let chosen = probes.and_then(|p| {
        let index = crate::crush::model_index(graph, embedder)?;
        let cfg = crate::crush::CrushConfig { budget, solver: crate::crush::SolverKind::Greedy, ..Default::default() };
        crate::crush::crush(&index, embedder, Some(question), &p, &cfg)
    });
    let out = match chosen {
        Ok(o) if !o.tables.is_empty() => o,
        other => {
            let f = match other {
                Err(e) => failure("match_tables", kind_of(&e), e.to_string()),
                Ok(_) => failure("match_tables", "nothing_matched", "CRUSH chose no schema element"),
            };
            return Ok(phase1_failed(trace, mt, f, started));
        }
    };
    let mut ids = Vec::new();
    for t in &out.tables {
        ids.push(graph.require_table(t)?);
    }
    mt.tables = out.tables.clone();
    mt.attributes = out.columns.clone();
    mt.cost.ms = started.elapsed().as_secs_f64() * 1000.0;
    trace.match_tables = Some(mt);
    direct_over(graph, question, evidence, opts, Some(llm), Some(&ids), trace, started, None)
}

/// A seed method's outcome when its phase 1 (`mt`) failed with `f`.
fn phase1_failed(mut trace: Trace, mut mt: MatchTrace, f: Failure, started: Instant) -> DirectOutcome {
    mt.cost.ms = started.elapsed().as_secs_f64() * 1000.0;
    trace.match_tables = Some(mt);
    trace.failure = Some(f.clone());
    trace.total_ms = started.elapsed().as_secs_f64() * 1000.0;
    DirectOutcome { trace, sql: None, rows: None, failure: Some(f) }
}

/// A method's own SQL prompt for [`direct_over`]: its name and variables
/// (`dialect` is added).
pub(crate) struct SqlPrompt {
    pub name: &'static str,
    pub vars: serde_json::Value,
}

/// A task for SQL given instead of written (`--sql`): no prompt, no
/// grammar, no rewrite but the fan-out one over a view.
fn given_task<'a>(
    allowed: Allowed,
    dialect: Dialect,
    execute: Option<ExecTarget<'a>>,
    fanout: Option<(&'a ViewResult, FanoutMode)>,
) -> SqlTask<'a> {
    SqlTask {
        prompt_name: "given".into(),
        prompt: String::new(),
        allowed,
        dialect,
        temperature: 0.0,
        execute,
        fanout,
        model_check: None,
        grammar: None,
        repair_grammar: None,
        rename: None,
        distinct: None,
        counted: None,
        grounding: None,
        feedback: query::Feedback::default(),
    }
}

/// The direct baseline's prompt: a method's own (`prompt`), the few-shot
/// one with retrieved examples, or PROMPTB; its name and text.
#[allow(clippy::too_many_arguments)]
fn direct_prompt(
    graph: &SchemaGraph,
    question: &str,
    evidence: &str,
    opts: &AskOptions,
    only: Option<&[TableId]>,
    dialect: Dialect,
    prompt: Option<SqlPrompt>,
    prompts: &Prompts,
) -> Result<(&'static str, String)> {
    let mut vars = serde_json::json!({
        "question": question,
        "dialect": dialect_label(dialect),
        "ddl": ddl::ddl(graph, only, opts.query.schema_context),
        "evidence": evidence,
    });
    let name = match (&opts.fewshot, prompt) {
        (_, Some(p)) => {
            let mut v = p.vars;
            v["dialect"] = vars["dialect"].clone();
            vars = v;
            p.name
        }
        (Some(ex), None) => {
            vars["examples"] =
                ex.retrieved.iter().map(|r| serde_json::json!({"question": r.question, "sql": r.sql.trim()})).collect();
            "fewshot_sql"
        }
        (None, None) => "direct_sql",
    };
    Ok((name, prompts.render(name, &vars)?))
}

/// The direct baseline's SQL call over `tables` (all of the model's when
/// `None`), into `trace`; with `prompt`, that prompt instead of
/// `direct_sql`/`fewshot_sql` (same grammar, guard and execution).
#[allow(clippy::too_many_arguments)]
fn direct_over(
    graph: &SchemaGraph,
    question: &str,
    evidence: Option<&str>,
    opts: &AskOptions,
    llm: Option<&dyn ChatModel>,
    only: Option<&[TableId]>,
    mut trace: Trace,
    started: Instant,
    prompt: Option<SqlPrompt>,
) -> Result<DirectOutcome> {
    let prompts = Prompts::load(opts.prompts_dir.as_deref())?;
    let dialect = dialect_for(graph, opts)?;
    if opts.sql.is_none() && llm.is_none() {
        return Err(no_llm("the direct baseline"));
    }
    if let Some(ex) = &opts.fewshot {
        let mut et = examples_trace(ex);
        for u in &mut et.used {
            u.in_prompt = Some(u.sql.clone());
        }
        trace.examples = Some(et);
    }
    trace.evidence = evidence.map(str::to_string).or(trace.evidence.take());
    let tables: Vec<(String, Vec<String>)> = graph
        .model()
        .tables
        .iter()
        .enumerate()
        .filter(|(i, _)| only.is_none_or(|o| o.contains(i)))
        .map(|(_, t)| (t.name.clone(), t.columns.iter().map(|c| c.name.clone()).collect()))
        .collect();
    let run_it = opts.stop_after != Some(StopAfter::Sql);
    let exec = opts.execute.as_ref().filter(|_| run_it).map(|db| ExecTarget {
        db,
        view: None,
        limit: opts.limits.rows,
        timeout: crate::types::limits::duration(opts.limits.exec_timeout_s.max(0.001)),
        max_result_bytes: opts.limits.result_bytes,
    });
    let mut qt = QueryTrace::default();
    let r = match (&opts.sql, llm) {
        (Some(sql), _) => query::run_given(&given_task(Allowed::Tables(tables), dialect, exec, None), sql, &mut qt),
        (None, Some(llm)) => {
            let evidence = trace.evidence.clone().unwrap_or_default();
            let (prompt_name, prompt) =
                direct_prompt(graph, question, &evidence, opts, only, dialect, prompt, &prompts)?;
            let rules = NameRules::new(opts.query.names);
            let direct_grammar = query::grammar::tables_grammar_with(&tables, dialect, &rules);
            let task = SqlTask {
                prompt_name: prompt_name.into(),
                prompt,
                allowed: Allowed::Tables(tables),
                dialect,
                temperature: opts.query.temperature,
                execute: exec,
                fanout: None,
                model_check: opts.direct_check.then_some(graph),
                grammar: Some(direct_grammar),
                repair_grammar: Some(RepairGrammar { reserved: Vec::new(), rules }),
                rename: None,
                distinct: None,
                counted: None,
                grounding: None,
                feedback: opts.query.feedback,
            };
            query::generate_sql(&task, llm, &prompts, &mut qt)
        }
        (None, None) => return Err(no_llm("the direct baseline")),
    };
    trace.query_view = Some(qt);
    let (sql, rows, fail) = match r {
        Ok(o) => (Some(o.checked.sql), o.rows, None),
        Err(e) => {
            let phase = if matches!(e, Error::Db(_)) { "execute" } else { "direct_sql" };
            (None, None, Some(failure(phase, kind_of(&e), e.to_string())))
        }
    };
    trace.failure = fail.clone();
    trace.total_ms = started.elapsed().as_secs_f64() * 1000.0;
    Ok(DirectOutcome { trace, sql, rows, failure: fail })
}

#[cfg(test)]
#[path = "tests.rs"]
mod tests;
