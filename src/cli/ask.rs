//! `lucy ask`: a question end to end (MatchTables, GenerateView, QueryView,
//! optional execution), printing the view, the SQL and the rows, and
//! writing a trace for `lucy explain`.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::sync::Mutex;

use indicatif::{ProgressBar, ProgressDrawTarget, ProgressStyle};

use super::llm::LlmFlags;
use super::values::{
    Dialect, DistinctMode, FanoutMode, InnerBranches, LookupFilters, NarrowView, OnOff, Prefilter, QueryForm,
    QueryNames, StopAfter, ViewColumns,
};
use super::Ctx;
use lucy::error::{Error, Result};
use lucy::graph::SchemaGraph;
use lucy::link::MatchOptions;
use lucy::llm::{build_chat_model, NOT_CONFIGURED_HINT};
use lucy::pipeline::progress::{PromptInfo, PromptStats};
use lucy::pipeline::{self, AskOptions, AskOutcome, Linker, NoProgress, Progress, Step};
use lucy::sql::exec::{Database, QueryRows, DEFAULT_MAX_RESULT_BYTES};
use lucy::types::FanoutReport;

#[derive(Debug, clap::Args)]
pub struct AskArgs {
    /// dbModel file (JSON) [default: the project file's `model`; env: LUCY_MODEL]
    #[arg(long, value_name = "FILE")]
    pub model: Option<PathBuf>,
    /// The question, in natural language (optional with --sql).
    #[arg(required_unless_present = "sql")]
    pub question: Option<String>,
    #[command(flatten)]
    pub llm: LlmFlags,
    /// Sampled answers per MatchTables prompt, voted (paper: 5).
    #[arg(hide = true, help_heading = "MatchTables (phase 1)", long, default_value_t = 5, value_parser = super::num::samples)]
    pub samples: usize,
    /// Sampling temperature of every prompt (paper: 0.2).
    #[arg(hide = true, help_heading = "MatchTables (phase 1)", long, default_value_t = 0.2, value_parser = super::num::temperature)]
    pub temperature: f64,
    /// Votes an item needs to be kept (default 1: the paper keeps every named item, ranked by votes).
    #[arg(hide = true, help_heading = "MatchTables (phase 1)", long, default_value_t = 1, value_parser = super::num::count)]
    pub min_votes: usize,
    /// At most this many tables (and attributes) kept per prompt (paper: 8).
    #[arg(hide = true, help_heading = "MatchTables (phase 1)", long, default_value_t = 8, value_parser = super::num::count)]
    pub max_items: usize,
    #[command(flatten)]
    pub link: LinkFlags,
    /// Relevant tables, comma-separated: skip MatchTables (all their columns unless --attrs names some).
    #[arg(long, value_delimiter = ',', value_name = "T1,T2")]
    pub tables: Vec<String>,
    /// Relevant attributes TABLE.column, comma-separated: skip MatchTables.
    #[arg(hide = true, help_heading = "MatchTables (phase 1)", long, value_delimiter = ',', value_name = "T.c,…")]
    pub attrs: Vec<String>,
    /// Extra knowledge for the question (e.g. BIRD's evidence), shown to QueryView.
    #[arg(hide = true, help_heading = "QueryView (phase 3)", long)]
    pub evidence: Option<String>,
    /// Show the relevant tables' DDL and descriptions to QueryView (PROMPTC').
    #[arg(hide = true, help_heading = "QueryView (phase 3)", long)]
    pub schema_context: bool,
    /// Run the final SQL read-only and print the rows: a SQLite file, or a
    /// server URL postgresql://USER@HOST:PORT/DB or mysql://USER@HOST:PORT/DB
    /// (password in the URL or in PGPASSWORD / MYSQL_PWD; never printed).
    #[arg(long, value_name = "DB|URL", value_parser = super::num::database)]
    pub execute: Option<Database>,
    /// Print (and keep) at most this many rows (`limits.rows`).
    #[arg(long, default_value_t = 50)]
    pub limit: usize,
    /// Change a setting for this run, e.g. --set query.exec_vote=3 (`lucy config levers` lists them)
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    /// Stop reading rows once the result holds this many bytes (one cell
    /// holds at most a quarter of it, at most 1 MiB); a cut result says so.
    #[arg(hide = true, help_heading = "Execution and limits", long, value_name = "BYTES", default_value_t = DEFAULT_MAX_RESULT_BYTES, value_parser = super::num::result_bytes)]
    pub max_result_bytes: usize,
    /// Write the trace of every phase to this JSON file (read it with `lucy explain`).
    #[arg(long, value_name = "FILE")]
    pub trace: Option<PathBuf>,
    /// Stop after a phase: match, view, or sql (do not execute).
    #[arg(long, value_enum)]
    pub stop_after: Option<StopAfter>,
    /// Directory of prompt templates overriding the built-in ones (<name>.j2).
    #[arg(hide = true, help_heading = "Debugging and baselines", long, value_name = "DIR")]
    pub prompts: Option<PathBuf>,
    /// SQL dialect of the view and the query (default: the model's, else sqlite).
    #[arg(hide = true, help_heading = "GenerateView (phase 2)", long, value_enum)]
    pub dialect: Option<Dialect>,
    /// Solver time limit per call, in seconds.
    #[arg(hide = true, help_heading = "GenerateView (phase 2)", long, default_value_t = 10.0, value_parser = super::num::seconds)]
    pub time_limit: f64,
    /// Use the PROMPTB baseline (whole schema, no view) instead of lucy's phases.
    #[arg(long)]
    pub direct: bool,
    /// Shrink the core tables offered to MatchTables with CRUSH (for large
    /// models): `crush` keeps the tables of the --budget schema elements
    /// CRUSH's greedy picks.
    #[arg(hide = true, help_heading = "MatchTables (phase 1)", long, value_enum, default_value_t = Prefilter::None)]
    pub prefilter: Prefilter,
    /// CRUSH budget in schema elements (default 20 for --prefilter crush,
    /// 8 for the offline linker used when no LLM is configured).
    #[arg(hide = true, help_heading = "MatchTables (phase 1)", long, value_parser = super::num::count)]
    pub budget: Option<usize>,
    /// Run this SQL instead of asking the LLM for it: over the view built
    /// from --tables/--attrs (or over the model's tables with --direct),
    /// through the same guard and --execute; no LLM is needed.
    #[arg(long, value_name = "SQL")]
    pub sql: Option<String>,
    /// Aggregates (SUM, AVG, COUNT, …) over rows the view repeats: rewrite
    /// the query to count each row once, refuse it (error), or run it as
    /// written with a warning (warn).
    #[arg(hide = true, help_heading = "QueryView (phase 3)", long, value_enum, default_value_t = FanoutMode::Rewrite)]
    pub fanout: FanoutMode,
    /// Keep every row of this table in the view (it starts from it and
    /// reaches the others by LEFT JOIN): the entity a "for each …" question
    /// is about, so entities with no matching rows still get a row.
    #[arg(hide = true, help_heading = "GenerateView (phase 2)", long, value_name = "TABLE")]
    pub keep: Option<String>,
    /// CRUSH probes instead of the LLM's hallucinated schema, e.g. "T(c1, c2); U(c3)".
    #[arg(hide = true, help_heading = "MatchTables (phase 1)", long, value_name = "P")]
    pub probes: Option<String>,
    #[command(flatten)]
    pub examples: super::examples::AskExampleFlags,
    /// No status line on stderr while the phases run (it is shown only
    /// when stderr is a terminal, never with --json or in CI).
    #[arg(long)]
    pub quiet: bool,
    #[command(flatten)]
    pub names: NameFlags,
    /// Execution-guided choice: sample K QueryView answers in one call, run
    /// each read-only (needs --execute) and answer with the result most of
    /// them agree on; ties go to the first. 0 or 1: off (one answer).
    #[arg(hide = true, help_heading = "QueryView (phase 3)", long, value_name = "K", default_value_t = 0, value_parser = exec_vote)]
    pub exec_vote: usize,
    /// Show values of the --execute database that the question matches
    /// (e.g. `DATACENTER_name: e.g. 'dev-east-1'`) in the attribute and
    /// QueryView prompts: a value index of short text values, built once per
    /// database (read-only, bounded) and cached. Needs --execute.
    #[arg(hide = true, help_heading = "QueryView (phase 3)", long, value_enum, default_value_t = OnOff::Off)]
    pub values: OnOff,
}

/// MatchTables' levers (issue 23), shared by `lucy ask` and `lucy bench`.
#[derive(Debug, Clone, clap::Args)]
pub struct LinkFlags {
    /// At a star's root, also keep the kinds (subtype children) the
    /// question names word for word ("premiums" → Premium) although no
    /// sample listed them.
    #[arg(hide = true, help_heading = "MatchTables (phase 1)", long, value_enum, value_name = "ON|OFF", default_value_t = OnOff::from_bool(lucy::link::kinds::DEFAULT_ON))]
    pub kind_names: OnOff,
    /// One chosen kind that holds nothing but its key (a marker such as
    /// Premium): the view keeps only the root's rows of that kind (the
    /// instance ROOT@CHILD) instead of every row with a LEFT JOIN.
    #[arg(hide = true, help_heading = "MatchTables (phase 1)", long, value_enum, value_name = "ON|OFF", default_value_t = OnOff::from_bool(lucy::link::kinds::DEFAULT_ON))]
    pub kind_instance: OnOff,
    /// Also keep the core tables the question names word for word
    /// ("policies" → Policy, or a synonym) although no sample listed them;
    /// they are explored like the listed ones.
    #[arg(hide = true, help_heading = "MatchTables (phase 1)", long, value_enum, value_name = "ON|OFF", default_value_t = OnOff::from_bool(lucy::link::named::DEFAULT_ON))]
    pub table_names: OnOff,
    /// Which relevant core tables MatchTables' vote keeps: any that one
    /// sample named (--min-votes), or only those more than half the samples
    /// named, besides the tables the question names word for word (all of
    /// them when none has a majority).
    #[arg(hide = true, help_heading = "MatchTables (phase 1)", long, value_enum, value_name = "ANY|MAJORITY", default_value_t = CoreVotes::default_value())]
    pub core_votes: CoreVotes,
}

/// `--core-votes`: which core tables the first MatchTables vote keeps.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum CoreVotes {
    /// Any table a sample named (at least --min-votes samples).
    Any,
    /// Tables more than half the samples named, or the question names.
    Majority,
}

impl CoreVotes {
    fn default_value() -> Self {
        if lucy::link::CORE_MAJORITY {
            CoreVotes::Majority
        } else {
            CoreVotes::Any
        }
    }
}

impl LinkFlags {
    /// Set these options on `m`.
    pub fn apply(&self, m: &mut MatchOptions) {
        m.kind_names = self.kind_names.is_on();
        m.kind_instance = self.kind_instance.is_on();
        m.table_names = self.table_names.is_on();
        m.core_majority = self.core_votes == CoreVotes::Majority;
    }
}

/// QueryView's name rules, the view's columns and DISTINCT, shared by
/// `lucy ask` and `lucy bench`.
#[derive(Debug, Clone, clap::Args)]
pub struct NameFlags {
    /// Names QueryView's grammar admits where a column may be written:
    /// free (any name that is not a keyword or a model name) or strict (in
    /// a query without WITH, the select list, WHERE and ON name view
    /// columns only; the repair round cannot write a rejected name again).
    #[arg(hide = true, help_heading = "QueryView (phase 3)", long, value_enum, value_name = "RULE", default_value_t = QueryNames::from(lucy::query::grammar::QueryNames::default()))]
    pub query_names: QueryNames,
    /// Before any repair call, rename each column the guard rejects to the
    /// one view column it unambiguously means (CLIENT_CLIENT_name →
    /// CLIENT_name); an ambiguous name is left alone and noted in the trace.
    #[arg(hide = true, help_heading = "QueryView (phase 3)", long, value_enum, value_name = "ON|OFF", default_value_t = OnOff::from_bool(lucy::query::DEFAULT_RENAME_UNKNOWN))]
    pub rename_unknown: OnOff,
    /// A QueryView answer that lists columns whose rows the view repeats
    /// (a client once per resource pool it uses): auto adds DISTINCT, off
    /// runs it as written. Aggregates are --fanout's.
    #[arg(hide = true, help_heading = "QueryView (phase 3)", long, value_enum, value_name = "MODE", default_value_t = DistinctMode::Auto)]
    pub distinct: DistinctMode,
    /// Columns of the view: selected (the attributes MatchTables chose and
    /// the relevant tables' keys, as the paper), all (every column of
    /// every table the view joins, the connecting tables included) or
    /// all-once (as all, but of the columns an INNER join makes equal only
    /// the referenced key).
    #[arg(hide = true, help_heading = "GenerateView (phase 2)", long, value_enum, value_name = "WHICH", default_value_t = ViewColumns::All)]
    pub view_columns: ViewColumns,
    /// After the SQL runs (on: always; empty: only when it returned no
    /// row; unnamed: always, but never dropping a table the question names):
    /// drop the relevant tables it reads no column of, solve the view
    /// again without them and run the same SQL over it (a table listed in
    /// excess cannot remove or repeat rows); no LLM call.
    #[arg(hide = true, help_heading = "GenerateView (phase 2)", long, value_enum, value_name = "WHEN", default_value_t = NarrowView::Unnamed)]
    pub narrow_view: NarrowView,
    /// The form of QueryView's answer: a JSON query plan lucy compiles to
    /// SQL (plan), free SQL (sql), or the plan first and free SQL when it
    /// cannot answer (auto).
    #[arg(hide = true, help_heading = "QueryView (phase 3)", long, value_enum, value_name = "FORM", default_value_t = QueryForm::Auto)]
    pub query_form: QueryForm,
    /// QueryView's prompt lists the phrases of the question that spell one
    /// view column's name or synonym ("claim number":
    /// Claim_Company_Claim_Number); no LLM call, the grammar unchanged.
    #[arg(hide = true, help_heading = "QueryView (phase 3)", long, value_enum, value_name = "ON|OFF", default_value_t = OnOff::from_bool(lucy::link::hints::DEFAULT_ON))]
    pub name_hints: OnOff,
    /// A QueryView COUNT(*) over a view that repeats the rows of the table
    /// the question counts by name ("how many players", "the number of
    /// claims") counts that table's rows: COUNT(DISTINCT <its key>).
    #[arg(hide = true, help_heading = "QueryView (phase 3)", long, value_enum, value_name = "ON|OFF", default_value_t = OnOff::from_bool(lucy::check::counted::DEFAULT_ON))]
    pub count_names: OnOff,
    /// Drop a filter the SQL puts on a column that identifies or names a
    /// row (an id, a number, a name) when the question holds none of its
    /// values: the model copies example values from column descriptions.
    #[arg(hide = true, help_heading = "QueryView (phase 3)", long, value_enum, value_name = "ON|OFF", default_value_t = OnOff::from_bool(lucy::check::literals::DEFAULT_ON))]
    pub entity_literals: OnOff,
    /// When the question asks "by" or "per" a phrase that names one view
    /// column ("by policy number") and the SQL aggregates every row into
    /// one, group by that column (added in front of the select list).
    #[arg(hide = true, help_heading = "QueryView (phase 3)", long, value_enum, value_name = "ON|OFF", default_value_t = OnOff::from_bool(lucy::check::grouping::DEFAULT_ON))]
    pub by_groups: OnOff,
    /// Mend a text filter whose literal the database does not hold in that
    /// column: respell it to the one value it equals up to case and
    /// accents ('closed' → 'Closed'), or, when the question holds it, read
    /// it from the one other view column that does (countries_Continent =
    /// 'France' → countries_CountryName = 'france'). Needs the database
    /// (--execute); no LLM call.
    #[arg(hide = true, help_heading = "QueryView (phase 3)", long, value_enum, value_name = "ON|OFF", default_value_t = OnOff::from_bool(lucy::check::values::DEFAULT_ON))]
    pub value_literals: OnOff,
    /// When QueryView's prompt does not fit the model's context, ask once
    /// more with the view's column descriptions cut short (60 characters).
    #[arg(hide = true, help_heading = "QueryView (phase 3)", long, value_enum, value_name = "ON|OFF", default_value_t = OnOff::On)]
    pub shorten_prompt: OnOff,
    /// When the tables MatchTables found lie in parts of the model no
    /// relationship joins (no view can hold them all), keep the part the
    /// question names (then the larger part, then the vote's first table)
    /// and solve again without the rest; no LLM call.
    #[arg(hide = true, help_heading = "GenerateView (phase 2)", long, value_enum, value_name = "ON|OFF", default_value_t = OnOff::from_bool(lucy::pipeline::unjoinable::DEFAULT_ON))]
    pub drop_unjoinable: OnOff,
    /// After the SQL runs: join the pattern branch the answer is about (the
    /// question names it, the SQL reads its columns) by INNER JOIN instead
    /// of LEFT JOIN and run the same SQL again, so rows without that branch
    /// (NULLs the view added) drop out; never when the question negates or
    /// the SQL reads NULLs; no LLM call.
    #[arg(hide = true, help_heading = "GenerateView (phase 2)", long, value_enum, value_name = "WHEN", default_value_t = InnerBranches::default_value())]
    pub inner_branches: InnerBranches,
    /// After the SQL runs: a row of a lookup (code) table the question
    /// names word for word ("agents": Party_Role 'AG' Agent) keeps only the
    /// view rows whose foreign key points to it, and the same SQL runs
    /// again; never when the SQL reads that code or the lookup, when two of
    /// its rows are named, or when the question negates; no LLM call.
    #[arg(hide = true, help_heading = "GenerateView (phase 2)", long, value_enum, value_name = "WHEN", default_value_t = LookupFilters::default_value())]
    pub lookup_filters: LookupFilters,
}

impl NameFlags {
    /// Set these options on `opts`.
    pub fn apply(&self, opts: &mut AskOptions) {
        opts.query.names = self.query_names.into();
        opts.query.rename_unknown = self.rename_unknown.is_on();
        opts.query.distinct = self.distinct.into();
        opts.query.form = self.query_form.into();
        opts.view.columns = self.view_columns.into();
        opts.view.narrow = self.narrow_view.into();
        opts.query.name_hints = self.name_hints.is_on();
        opts.query.count_names = self.count_names.is_on();
        opts.query.entity_literals = self.entity_literals.is_on();
        opts.query.by_groups = self.by_groups.is_on();
        opts.query.value_literals = self.value_literals.is_on();
        opts.query.shorten_prompt = self.shorten_prompt.is_on();
        opts.view.drop_unjoinable = self.drop_unjoinable.is_on();
        opts.view.inner_branches = self.inner_branches.into();
        opts.view.lookup_filters = self.lookup_filters.into();
    }
}

/// `--exec-vote K`: 0 (off) to `query::choose::MAX_EXEC_VOTE`.
pub fn exec_vote(s: &str) -> std::result::Result<usize, String> {
    lucy::types::limits::parse_int("--exec-vote", s, 0, lucy::query::choose::MAX_EXEC_VOTE as u64).map(|v| v as usize)
}

impl AskArgs {
    /// The options the flags describe (their defaults where none was given).
    fn options(&self) -> AskOptions {
        let mut opts = AskOptions {
            link: MatchOptions::sampled(self.samples, self.temperature, self.min_votes, self.max_items),
            stop_after: self.stop_after.map(Into::into),
            tables: self.tables.iter().map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect(),
            attrs: self.attrs.iter().map(|s| s.trim().to_string()).filter(|s| !s.is_empty()).collect(),
            evidence: self.evidence.clone(),
            execute: self.execute.clone(),
            dialect: self.dialect.map(Into::into),
            prompts_dir: self.prompts.clone(),
            sql: self.sql.clone(),
            keep: self.keep.clone(),
            ..AskOptions::default()
        };
        opts.query.temperature = self.temperature;
        opts.query.schema_context = self.schema_context;
        opts.query.fanout = self.fanout.into();
        opts.query.exec_vote = self.exec_vote;
        opts.query.values = self.values == OnOff::On;
        opts.limits.result_bytes = self.max_result_bytes;
        opts.limits.rows = Some(self.limit);
        opts.limits.solver_time_limit_s = self.time_limit;
        self.link.apply(&mut opts.link);
        self.names.apply(&mut opts);
        opts
    }

    /// Whether this run can go without an LLM.
    fn offline_ok(&self) -> bool {
        if self.sql.is_some() {
            return true;
        }
        !self.direct
            && (!self.tables.is_empty() || !self.attrs.is_empty())
            && matches!(self.stop_after, Some(StopAfter::Match | StopAfter::View))
    }
}

/// The settings each lever flag sets (its clap id, its name, the keys).
/// `--temperature` is both phases' sampling temperature.
pub const FLAG_KEYS: &[(&str, &str, &[&str])] = &[
    ("samples", "--samples", &["link.samples"]),
    ("temperature", "--temperature", &["link.temperature", "query.temperature"]),
    ("min_votes", "--min-votes", &["link.min_votes"]),
    ("max_items", "--max-items", &["link.max_items"]),
    ("kind_names", "--kind-names", &["link.kind_names"]),
    ("kind_instance", "--kind-instance", &["link.kind_instance"]),
    ("table_names", "--table-names", &["link.table_names"]),
    ("core_votes", "--core-votes", &["link.core_majority"]),
    ("time_limit", "--time-limit", &["limits.solver_time_limit_s"]),
    ("view_columns", "--view-columns", &["view.columns"]),
    ("narrow_view", "--narrow-view", &["view.narrow"]),
    ("drop_unjoinable", "--drop-unjoinable", &["view.drop_unjoinable"]),
    ("inner_branches", "--inner-branches", &["view.inner_branches"]),
    ("lookup_filters", "--lookup-filters", &["view.lookup_filters"]),
    ("schema_context", "--schema-context", &["query.schema_context"]),
    ("query_names", "--query-names", &["query.names"]),
    ("rename_unknown", "--rename-unknown", &["query.rename_unknown"]),
    ("exec_vote", "--exec-vote", &["query.exec_vote"]),
    ("values", "--values", &["query.values"]),
    ("distinct", "--distinct", &["query.distinct"]),
    ("query_form", "--query-form", &["query.form"]),
    ("fanout", "--fanout", &["query.fanout"]),
    ("name_hints", "--name-hints", &["query.name_hints"]),
    ("count_names", "--count-names", &["query.count_names"]),
    ("entity_literals", "--entity-literals", &["query.entity_literals"]),
    ("by_groups", "--by-groups", &["query.by_groups"]),
    ("value_literals", "--value-literals", &["query.value_literals"]),
    ("shorten_prompt", "--shorten-prompt", &["query.shorten_prompt"]),
    ("limit", "--limit", &["limits.rows"]),
    ("max_result_bytes", "--max-result-bytes", &["limits.result_bytes"]),
];

/// Whether the flag with clap id `id` was given on the command line.
pub fn given(m: &clap::ArgMatches, id: &str) -> bool {
    m.ids().any(|i| i.as_str() == id) && m.value_source(id) == Some(clap::parser::ValueSource::CommandLine)
}

/// What [`resolve`] found: the options of the run and where each setting
/// came from (`lucy config show` prints it).
pub struct Resolved {
    /// The options of the run.
    pub opts: AskOptions,
    /// The lever settings with their origins.
    pub layers: super::config::Layers,
    /// The settings that are not levers, with their origins.
    pub sources: super::config::Sources,
    /// The project file used, if any.
    pub project: Option<PathBuf>,
}

/// The options of this run: the project file, the environment and the
/// flags layered (`super::config`); `args` gets the model, database, LLM
/// and examples the layers chose.
pub fn resolve(args: &mut AskArgs, inv: &super::Invocation) -> Result<Resolved> {
    let env = super::config::process_env;
    let cwd = std::env::current_dir().map_err(|e| Error::io(std::path::Path::new("."), e))?;
    let project = super::config::Project::find(inv.config, &env, &cwd)?;
    let given_arg = super::config::Given {
        model: args.model.clone(),
        database: args.execute.clone(),
        examples: args.examples.examples.clone(),
        llm_url: args.llm.llm_url.clone(),
        llm_model: args.llm.llm_model.clone(),
        llm_gguf: args.llm.llm_gguf.as_ref().map(|p| p.display().to_string()),
    };
    let src = super::config::sources(&given_arg, project.as_ref(), &env)?;
    args.model = src.model.as_ref().map(|m| m.value.clone());
    args.execute = src.database.as_ref().map(|d| d.value.clone());
    if args.examples.examples.is_none() && !args.examples.no_examples {
        args.examples.examples = src.examples.as_ref().map(|e| e.value.clone());
    }
    // The library reads the LLM's environment itself: only the file's
    // values need passing on.
    let from_file = |s: Option<super::config::Sourced<String>>| {
        s.filter(|s| matches!(s.origin, super::config::Origin::File { .. })).map(|s| s.value)
    };
    if let Some(u) = from_file(src.llm_url.clone()) {
        args.llm.llm_url = Some(u);
    }
    if let Some(m) = from_file(src.llm_model.clone()) {
        args.llm.llm_model = Some(m);
    }
    if let Some(g) = from_file(src.llm_gguf.clone()) {
        args.llm.llm_gguf = Some(PathBuf::from(g));
    }
    if let Some(t) = project.as_ref().and_then(|p| p.llm_max_tokens()) {
        args.llm.llm_max_tokens = args.llm.llm_max_tokens.or(Some(t.value));
    }
    let mut opts = args.options();
    let mut layers = super::config::Layers::new(&opts);
    if let Some(p) = &project {
        layers.file(p)?;
    }
    layers.env(&env)?;
    if let Some(m) = inv.matches {
        for (id, flag, keys) in FLAG_KEYS {
            if given(m, id) {
                for k in *keys {
                    layers.flag(k, flag)?;
                }
            }
        }
    }
    layers.set_flags(&args.set)?;
    layers.apply(&mut opts)?;
    Ok(Resolved { opts, layers, sources: src, project: project.map(|p| p.path) })
}

/// `lucy ask`.
pub fn run(mut args: AskArgs, ctx: Ctx, inv: &super::Invocation) -> Result<i32> {
    let Resolved { mut opts, .. } = resolve(&mut args, inv)?;
    let model_path = args.model.clone().ok_or_else(|| {
        Error::Input(
            "no dbModel: pass --model FILE, set LUCY_MODEL, or name it in a lucy.toml (`lucy init --model FILE` writes one)"
                .into(),
        )
    })?;
    if opts.query.values && opts.execute.is_none() && !args.direct {
        return Err(Error::Input(
            "--values on reads the values of the database given with --execute: add --execute DB|URL (or [database] in lucy.toml; the setting is query.values)"
                .into(),
        ));
    }
    let model = lucy::model::load(&model_path)?;
    if let Some(db) = &opts.execute {
        if args.stop_after.is_none() {
            lucy::sql::exec::ping(db, std::time::Duration::from_secs(10))?;
        }
    }
    let graph = SchemaGraph::new(model)?;
    // SQL given with --sql needs no LLM: do not even configure one.
    let llm = if args.sql.is_some() { None } else { build_chat_model(&args.llm.to_args())? };
    let question = args.question.clone().unwrap_or_default();
    if llm.is_none() && !args.offline_ok() {
        if args.direct || !args.tables.is_empty() || !args.attrs.is_empty() {
            return Err(Error::Input(format!(
                "{NOT_CONFIGURED_HINT}. Without an LLM, `lucy ask --tables T1,T2 --stop-after view` still builds the view"
            )));
        }
        // Phase 1 by the offline embedding linker, then stop after the view
        // (QueryView needs an LLM).
        opts.linker = Linker::Offline { budget: args.budget.unwrap_or(8) };
    } else if args.prefilter == Prefilter::Crush && args.sql.is_none() {
        opts.linker = Linker::CrushPrefilter { budget: args.budget.unwrap_or(20), probes: args.probes.clone() };
    }
    // Verified queries (not for --direct or --sql: no QueryView prompt).
    if !args.direct && args.sql.is_none() && llm.is_some() {
        let dialect = opts.dialect.or(graph.model().dialect).unwrap_or_default();
        opts.examples = args.examples.retrieve(&model_path, &graph, &question, dialect)?;
    }
    let status = Status::wanted(!args.quiet && !ctx.json).then(Status::new);
    let progress: &dyn Progress = match &status {
        Some(s) => s,
        None => &NoProgress,
    };
    if args.direct {
        if lucy::query::choose::is_on(opts.query.exec_vote) {
            return Err(Error::Input(
                "--exec-vote votes over QueryView's answers; the --direct baseline has none".into(),
            ));
        }
        let o = pipeline::direct_sql_with_progress(
            &graph,
            &question,
            args.evidence.as_deref(),
            &opts,
            llm.as_deref(),
            progress,
        )?;
        write_trace(args.trace.as_deref(), &o.trace)?;
        if ctx.json {
            super::print_json(&serde_json::json!({"sql": o.sql, "rows": o.rows, "failure": o.failure}))?;
        } else {
            if let Some(sql) = &o.sql {
                println!("-- SQL (direct baseline)\n{sql};");
            }
            if let Some(rows) = &o.rows {
                print_rows(rows);
            }
        }
        return Ok(report_failure(o.failure.as_ref(), ctx, args.trace.is_some()));
    }
    let o = pipeline::ask_with_progress(&graph, &question, &opts, llm.as_deref(), &mut |_, _| {}, progress)?;
    if matches!(opts.linker, Linker::Offline { .. }) && !ctx.json {
        eprintln!(
            "note: {NOT_CONFIGURED_HINT}.\nnote: phase 1 ran on the offline embedding linker (CRUSH over MiniLM); stopping after the view"
        );
    }
    write_trace(args.trace.as_deref(), &o.trace)?;
    if ctx.json {
        super::print_json(&json_summary(&o))?;
    } else {
        print_human(&o);
    }
    Ok(report_failure(o.failure.as_ref(), ctx, args.trace.is_some()))
}

fn write_trace(path: Option<&std::path::Path>, trace: &lucy::types::trace::Trace) -> Result<()> {
    let Some(p) = path else { return Ok(()) };
    let text =
        serde_json::to_string_pretty(trace).map_err(|e| Error::Input(format!("cannot serialize the trace: {e}")))?;
    std::fs::write(p, text + "\n").map_err(|e| Error::io(p, e))
}

fn report_failure(f: Option<&lucy::types::trace::Failure>, ctx: Ctx, traced: bool) -> i32 {
    let Some(f) = f else { return 0 };
    let hint = if traced {
        " (see the trace with `lucy explain`)"
    } else {
        " (rerun with --trace FILE and `lucy explain FILE` for details)"
    };
    if ctx.json {
        eprintln!(
            "{}",
            serde_json::json!({"error": f.message, "phase": f.phase, "kind": f.kind, "exit_code": f.exit_code()})
        );
    } else {
        eprintln!("error: {} failed ({}): {}{hint}", f.phase, f.kind, f.message);
    }
    f.exit_code()
}

/// The fan-out report of the accepted (or last) SQL attempt.
fn fanout_of(o: &AskOutcome) -> Option<&FanoutReport> {
    o.trace.query_view.as_ref()?.attempts.last()?.fanout.as_ref()
}

fn json_summary(o: &AskOutcome) -> pipeline::AskSummary {
    pipeline::AskSummary::from(o)
}

fn print_human(o: &AskOutcome) {
    if !o.tables.is_empty() {
        let attrs: Vec<String> = o.attributes.iter().map(|a| a.to_string()).collect();
        println!("-- relevant tables: {}", o.tables.join(", "));
        let shown = if o.trace.view_shows_every_column() {
            "every column of these tables (the view shows them all)".into()
        } else if attrs.is_empty() {
            "none".into()
        } else {
            attrs.join(", ")
        };
        println!("-- relevant attributes: {shown}");
    }
    if let Some(v) = &o.view {
        println!("-- view ({}, objective {}, {:.0} ms)", v.status.as_str(), v.objective, v.solve_ms);
        println!("{}", v.view_sql.trim());
    }
    for note in after_notes(o) {
        println!("-- {note}");
    }
    if let Some(f) = fanout_of(o) {
        for x in &f.findings {
            println!("-- fan-out: {}", x.message);
        }
        for x in &f.skipped {
            println!("-- fan-out: not checked: {x}");
        }
        if f.rewritten.is_some() && o.sql.is_some() {
            println!("-- SQL as written (not run: it counts repeated rows)");
            println!("{};", f.original.trim_end_matches(';'));
            println!("-- SQL rewritten to count each row once (--fanout rewrite)");
        }
    }
    if let Some(sql) = &o.sql {
        if fanout_of(o).is_none_or(|f| f.rewritten.is_none()) {
            println!("-- SQL");
        }
        println!("{};", sql.trim_end_matches(';'));
    }
    if let Some(rows) = &o.rows {
        print_rows(rows);
    }
}

/// What lucy changed without the LLM, for the human output: the rewrites
/// of the accepted SQL (filters dropped, a grouping added, `COUNT(*)`
/// read as a count of a table, `DISTINCT`) and the view solved again after
/// the answer (narrowed, a branch INNER-joined, a lookup filter) when its
/// rows are the answer. The trace and `lucy explain` say more.
fn after_notes(o: &AskOutcome) -> Vec<String> {
    let mut notes = Vec::new();
    let t = &o.trace;
    if let Some(a) = t.query_view.as_ref().and_then(|q| q.attempts.iter().rev().find(|a| a.validation.ok)) {
        if let Some(l) = &a.literals {
            notes.push(format!("SQL rewritten: {} (--entity-literals)", l.describe()));
        }
        if let Some(v) = &a.values {
            notes.push(format!("SQL rewritten: {} (--value-literals)", v.describe()));
        }
        if let Some(g) = &a.grouped {
            notes.push(format!("SQL rewritten: {} (--by-groups)", g.describe()));
        }
        if let Some(c) = &a.counted {
            notes.push(format!("SQL rewritten: {} (--count-names)", c.describe()));
        }
        if let Some(d) = &a.distinct {
            notes.push(format!("SQL rewritten: {} (--distinct)", d.describe()));
        }
    }
    if let Some(n) = t.narrowed.as_ref().filter(|n| n.rerun.used) {
        notes.push(format!(
            "view narrowed after the answer: without {} (the SQL reads nothing of them; --narrow-view)",
            n.dropped.join(", ")
        ));
    }
    if let Some(b) = t.inner_branches.as_ref().filter(|b| b.rerun.used) {
        notes.push(format!(
            "{} INNER-joined after the answer: the question is about them (--inner-branches)",
            b.tables.join(", ")
        ));
    }
    if let Some(l) = t.lookup_filters.as_ref().filter(|l| l.rerun.used) {
        let conds: Vec<String> =
            l.filters.iter().filter_map(|f| f.condition(&format!("{}.{}", f.column.table, f.column.column))).collect();
        notes.push(format!(
            "view filtered after the answer: {} (the question names {}; --lookup-filters)",
            conds.join(" AND "),
            l.because.join(", ")
        ));
    }
    notes
}

fn print_rows(rows: &QueryRows) {
    let cut = match (&rows.truncation, rows.truncated) {
        (Some(why), _) => format!(" (result cut: {why})"),
        (None, true) => " (more not shown: --limit)".to_string(),
        (None, false) => String::new(),
    };
    println!("-- {} row(s){cut}", rows.rows.len());
    let cells: Vec<Vec<String>> = rows.rows.iter().map(|r| r.iter().map(|v| v.to_string()).collect()).collect();
    let mut widths: Vec<usize> = rows.columns.iter().map(|c| c.chars().count()).collect();
    for r in &cells {
        for (i, c) in r.iter().enumerate() {
            if let Some(w) = widths.get_mut(i) {
                *w = (*w).max(c.chars().count()).min(60);
            }
        }
    }
    let line = |vals: &[String]| {
        vals.iter()
            .enumerate()
            .map(|(i, v)| format!("{:<w$}", v, w = widths.get(i).copied().unwrap_or(0)))
            .collect::<Vec<_>>()
            .join(" | ")
    };
    println!("{}", line(&rows.columns));
    println!("{}", widths.iter().map(|w| "-".repeat(*w)).collect::<Vec<_>>().join("-+-"));
    for r in &cells {
        println!("{}", line(r));
    }
}

/// The status line of `lucy ask` for a person waiting: the step, the
/// prompt in flight and the model's generation speed, redrawn in place on
/// stderr and cleared before the answer is printed.
struct Status {
    bar: ProgressBar,
    state: Mutex<StatusState>,
}

#[derive(Default)]
struct StatusState {
    step: Option<Step>,
    /// Prompts sent and not yet answered (concurrent explorations overlap).
    in_flight: Vec<PromptInfo>,
    /// Generated tokens and generation time over the answered prompts.
    tokens: u64,
    decode_ms: f64,
}

impl Status {
    /// Whether to show it: asked for, stderr is a terminal, not in CI.
    fn wanted(asked: bool) -> bool {
        asked && std::io::stderr().is_terminal() && std::env::var_os("CI").is_none()
    }

    fn new() -> Status {
        let bar = ProgressBar::with_draw_target(None, ProgressDrawTarget::stderr());
        if let Ok(style) = ProgressStyle::with_template("{spinner} {elapsed:>4} {msg}") {
            bar.set_style(style);
        }
        bar.enable_steady_tick(std::time::Duration::from_millis(200));
        Status { bar, state: Mutex::new(StatusState::default()) }
    }

    fn update(&self, f: impl FnOnce(&mut StatusState)) {
        let Ok(mut st) = self.state.lock() else { return };
        f(&mut st);
        self.bar.set_message(st.line());
    }
}

impl StatusState {
    /// `MatchTables · prompt 2: attributes of CLIENT · 41.5 tok/s`.
    fn line(&self) -> String {
        let mut s = self.step.map(Step::as_str).unwrap_or("starting").to_string();
        if let Some(p) = self.in_flight.last() {
            s.push_str(&format!(" · prompt {}: {}", p.index, p.describe()));
            if p.samples > 1 {
                s.push_str(&format!(" ({} samples)", p.samples));
            }
            if self.in_flight.len() > 1 {
                s.push_str(&format!(" (+{} in flight)", self.in_flight.len() - 1));
            }
        }
        if self.tokens > 0 && self.decode_ms > 0.0 {
            s.push_str(&format!(" · {:.1} tok/s", self.tokens as f64 * 1000.0 / self.decode_ms));
        }
        s
    }
}

impl Progress for Status {
    fn step(&self, step: Step) {
        self.update(|st| st.step = Some(step));
    }

    fn prompt_started(&self, prompt: &PromptInfo) {
        self.update(|st| st.in_flight.push(prompt.clone()));
    }

    fn prompt_finished(&self, prompt: &PromptInfo, stats: &PromptStats) {
        self.update(|st| {
            st.in_flight.retain(|p| p != prompt);
            if stats.completion_tokens > 0 {
                st.tokens += stats.completion_tokens;
                st.decode_ms += stats.decode_ms;
            }
        });
    }

    fn finished(&self) {
        self.bar.finish_and_clear();
    }
}
