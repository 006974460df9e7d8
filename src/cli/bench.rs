//! `lucy bench SUITE`: run a benchmark suite and write `results.json`,
//! `report.md` and one trace per question.

use std::path::PathBuf;
use std::sync::Arc;

use super::llm::LlmFlags;
use super::values::OnOff;
use super::values::{Method, Oracle, Prefilter};
use super::Ctx;
use lucy::bench::meta::{git_commit, today_utc};
use lucy::bench::report::{render, render_comparison};
use lucy::bench::{run_suite, BenchRun, RunOptions, Suite, Summary};
use lucy::error::{Error, Result};
use lucy::link::MatchOptions;
use lucy::llm::build_chat_model;
use lucy::pipeline::{AskOptions, Linker};

#[derive(Debug, clap::Args)]
pub struct BenchArgs {
    /// Suite name (benchmarks/suites/<name>.json) or path to a suite file.
    pub suite: String,
    /// Replace phases by the gold SQL: `tables` measures GenerateView alone
    /// (no LLM), `view` measures QueryView alone.
    #[arg(long, value_enum)]
    pub oracle: Option<Oracle>,
    /// lucy (the three phases), direct (the PROMPTB baseline) and/or
    /// direct+check (PROMPTB with `lucy check`'s findings as the repair
    /// message); `lucy,direct,direct+check` runs them on the same questions
    /// and writes a comparison.
    #[arg(long, value_enum, value_delimiter = ',', default_value = "lucy")]
    pub method: Vec<Method>,
    /// Only the first N questions.
    #[arg(long)]
    pub limit: Option<usize>,
    /// Questions run in parallel (results keep suite order).
    #[arg(long, default_value_t = 1, value_parser = super::num::workers)]
    pub jobs: usize,
    /// Output directory (default: bench-out/<suite>-<mode>).
    #[arg(long, value_name = "DIR")]
    pub out: Option<PathBuf>,
    /// Solver time limit per GenerateView call, in seconds.
    #[arg(long, default_value_t = 10.0, value_parser = super::num::seconds)]
    pub time_limit: f64,
    /// Sampled answers per MatchTables prompt (paper: 5).
    #[arg(hide = true, help_heading = "MatchTables (phase 1)", long, default_value_t = 5, value_parser = super::num::samples)]
    pub samples: usize,
    /// Sampling temperature (paper: 0.2).
    #[arg(hide = true, help_heading = "MatchTables (phase 1)", long, default_value_t = 0.2, value_parser = super::num::temperature)]
    pub temperature: f64,
    /// Votes an item needs to be kept (default 1: the paper keeps every named item, ranked by votes).
    #[arg(hide = true, help_heading = "MatchTables (phase 1)", long, default_value_t = 1, value_parser = super::num::count)]
    pub min_votes: usize,
    #[command(flatten)]
    pub link: super::ask::LinkFlags,
    /// Show relevant tables' DDL and the evidence to QueryView (PROMPTC').
    #[arg(hide = true, help_heading = "QueryView (phase 3)", long)]
    pub schema_context: bool,
    /// Run on this server instead of the suite's SQLite file:
    /// postgresql://… or mysql://… (`{db_id}` is replaced per question, e.g.
    /// `…/spider_{db_id}`; password in the URL or PGPASSWORD / MYSQL_PWD).
    /// Gold SQL runs with its names ported to the server's spelling and is
    /// compared with SQLite's rows (report section "Gold SQL on …").
    #[arg(long, value_name = "URL")]
    pub database: Option<String>,
    /// Do not draw a progress bar.
    #[arg(long)]
    pub no_progress: bool,
    /// Shrink the core tables offered to MatchTables with CRUSH, as `lucy
    /// ask --prefilter crush` does.
    #[arg(long, value_enum, default_value_t = Prefilter::None)]
    pub prefilter: Prefilter,
    /// Phase 1 by the offline embedding linker `lucy ask` uses without an
    /// LLM (CRUSH's greedy over MiniLM); each question stops after its view.
    #[arg(long, conflicts_with = "prefilter")]
    pub offline_linker: bool,
    /// CRUSH budget in schema elements (default 20 for --prefilter crush, 8
    /// for --offline-linker, 10 for --method crush).
    #[arg(long)]
    pub budget: Option<usize>,
    /// Example pool (`lucy examples pool`): for --method fewshot (its prompt)
    /// and lucy (QueryView's examples over the view). Results name its kind.
    #[arg(long, value_name = "POOL")]
    pub examples: Option<PathBuf>,
    /// Pool examples per question (default 10 for fewshot, as DynVS; 3 for lucy).
    #[arg(long, value_name = "K", value_parser = super::num::count)]
    pub examples_k: Option<usize>,
    /// Embedder of the pool's examples (--examples) and of --method crush's selection.
    #[arg(long, value_enum, default_value_t = super::crush::EmbedderKind::Minilm)]
    pub embedder: super::crush::EmbedderKind,
    /// A seeded sample of N questions (in suite order; --limit applies after it).
    #[arg(long, value_name = "N", requires = "seed", value_parser = super::num::count)]
    pub sample: Option<usize>,
    /// Seed of --sample.
    #[arg(long, value_name = "S", requires = "sample")]
    pub seed: Option<u64>,
    /// Execution-guided choice in QueryView, as `lucy ask --exec-vote K`
    /// (a question without a database fails); --method direct ignores it.
    /// 0 or 1: off.
    #[arg(hide = true, help_heading = "QueryView (phase 3)", long, value_name = "K", default_value_t = 0, value_parser = super::ask::exec_vote)]
    pub exec_vote: usize,
    /// Show values of the suite's database (or --database) that each
    /// question matches in the attribute and QueryView prompts, as `lucy ask
    /// --values on` does (a value index built once per database, cached).
    #[arg(hide = true, help_heading = "QueryView (phase 3)", long, value_enum, default_value_t = OnOff::Off)]
    pub values: OnOff,
    /// Change a setting of every question's run, as `lucy ask --set` (`lucy config levers` lists them)
    #[arg(long = "set", value_name = "KEY=VALUE")]
    pub set: Vec<String>,
    #[command(flatten)]
    pub llm: LlmFlags,
    #[command(flatten)]
    pub names: super::ask::NameFlags,
}

fn mode_name(oracle: Option<Oracle>) -> &'static str {
    match oracle {
        Some(Oracle::Tables) => "oracle-tables",
        Some(Oracle::View) => "oracle-view",
        None => "full",
    }
}

/// The "gold SQL on ENGINE vs SQLite" section (`--database` on a server).
fn engine_section(results: &[lucy::bench::QuestionResult]) -> String {
    let gs: Vec<(&str, &lucy::bench::engine::EngineGold)> =
        results.iter().filter_map(|r| r.metrics.gold_engine.as_ref().map(|g| (r.id.as_str(), g))).collect();
    lucy::bench::engine::render(&gs)
}

fn method_name(m: Method) -> &'static str {
    lucy::bench::Method::from(m).name()
}

pub fn run(args: BenchArgs, ctx: Ctx) -> Result<i32> {
    if args.jobs == 0 {
        return Err(Error::Input("--jobs must be at least 1".into()));
    }
    let mut methods: Vec<Method> = Vec::new();
    for m in &args.method {
        if !methods.contains(m) {
            methods.push(*m);
        }
    }
    if (methods.contains(&Method::Direct)
        || methods.contains(&Method::DirectCheck)
        || methods.contains(&Method::Fewshot)
        || methods.contains(&Method::Crush)
        || methods.contains(&Method::Rasl)
        || methods.contains(&Method::TaSql))
        && args.oracle.is_some()
    {
        return Err(Error::Input("--method direct has no phases to replace: drop --oracle".into()));
    }
    // Before any model loads: --min-votes above --samples keeps nothing.
    let mut matching = MatchOptions {
        samples: args.samples,
        temperature: args.temperature,
        min_votes: args.min_votes,
        ..MatchOptions::default()
    };
    args.link.apply(&mut matching);
    matching.check()?;
    let path = Suite::find(&args.suite)?;
    let suite = Suite::load(&path)?;
    let linker = if args.offline_linker {
        Linker::Offline { budget: args.budget.unwrap_or(8) }
    } else if args.prefilter == Prefilter::Crush {
        Linker::CrushPrefilter { budget: args.budget.unwrap_or(20), probes: None }
    } else {
        Linker::Llm
    };
    if linker != Linker::Llm && (args.oracle.is_some() || methods != [Method::Lucy]) {
        return Err(Error::Input(
            "--prefilter and --offline-linker choose phase 1 of --method lucy without --oracle".into(),
        ));
    }
    if methods.contains(&Method::Fewshot) && args.examples.is_none() {
        return Err(Error::Input(
            "--method fewshot needs an example pool: --examples POOL (see `lucy examples pool`)".into(),
        ));
    }
    let pool = match &args.examples {
        Some(p) => {
            let pool = lucy::examples::pool::Pool::load(p)?;
            // A pool made elsewhere is checked as `lucy examples pool`
            // checks the ones it builds: no question may see an answer of
            // the suite.
            let found = lucy::examples::pool::leaks(&pool, &lucy::bench::methods::suite_items(&suite));
            if let Some((id, q)) = found.first() {
                return Err(Error::Input(format!(
                    "{}: the {} pool leaks {} answer(s) of suite {}, e.g. question {id} sees `{q}`: remove those entries (or build the pool with `lucy examples pool`)",
                    p.display(),
                    pool.kind.as_str(),
                    found.len(),
                    suite.file.name
                )));
            }
            let embedder: Arc<dyn lucy::crush::embed::Embedder> =
                Arc::from(super::crush::make_embedder(args.embedder)?);
            Some(Arc::new(lucy::bench::methods::PoolIndex::new(pool, p.display().to_string(), embedder)?))
        }
        None => None,
    };
    // CRUSH4SQL's selection budget B (the paper reports 5, 10 and 20; SQL accuracy at 10).
    let crush = if methods.contains(&Method::Crush) || methods.contains(&Method::Rasl) {
        let e: Arc<dyn lucy::crush::embed::Embedder> = Arc::from(super::crush::make_embedder(args.embedder)?);
        Some((e, args.budget.unwrap_or(10)))
    } else {
        None
    };
    let llm = if args.oracle == Some(Oracle::Tables) || args.offline_linker {
        None
    } else {
        build_chat_model(&args.llm.to_args())?.map(Arc::from)
    };
    let mode = if args.offline_linker { "offline-linker" } else { mode_name(args.oracle) };
    let multi = methods.len() > 1;
    let out = args.out.clone().unwrap_or_else(|| {
        let tag = if multi {
            "compare".to_string()
        } else if methods == [Method::Direct]
            || methods == [Method::DirectCheck]
            || methods == [Method::Fewshot]
            || methods == [Method::Crush]
            || methods == [Method::Rasl]
            || methods == [Method::TaSql]
        {
            method_name(methods[0]).to_string()
        } else {
            mode.to_string()
        };
        PathBuf::from("bench-out").join(format!("{}-{tag}", suite.file.name))
    });
    let mut ask = AskOptions { link: matching, linker, ..AskOptions::default() };
    ask.query.temperature = args.temperature;
    ask.query.schema_context = args.schema_context;
    ask.query.exec_vote = args.exec_vote;
    ask.query.values = args.values == OnOff::On;
    ask.limits.solver_time_limit_s = args.time_limit;
    args.names.apply(&mut ask);
    if !args.set.is_empty() {
        let mut layers = super::config::Layers::new(&ask);
        layers.set_flags(&args.set)?;
        layers.apply(&mut ask)?;
    }
    let mut runs = Vec::new();
    let mut written = Vec::new();
    for &m in &methods {
        let dir = if multi { out.join(method_name(m)) } else { out.clone() };
        std::fs::create_dir_all(&dir).map_err(|e| Error::io(&dir, e))?;
        let opts = RunOptions {
            oracle: args.oracle.map(Into::into),
            method: m.into(),
            limit: args.limit,
            jobs: args.jobs,
            time_limit_s: args.time_limit,
            ask: ask.clone(),
            trace_dir: Some(dir.join("traces")),
            progress: !args.no_progress && !ctx.json,
            llm: llm.clone(),
            database: args.database.clone(),
            examples: pool.clone(),
            examples_k: args.examples_k.unwrap_or(if m == Method::Fewshot { 10 } else { 3 }),
            sample: args.sample.zip(args.seed),
            crush: crush.clone(),
        };
        let results = run_suite(&suite, &opts)?;
        let run = BenchRun {
            suite: suite.file.name.clone(),
            mode: mode.into(),
            method: method_name(m).into(),
            llm: llm.as_ref().map(|l| l.model_name()),
            examples: pool.as_ref().map(|p| format!("{}:{}", p.pool.kind.as_str(), p.file)),
            sample: args.sample.zip(args.seed).map(|(n, s)| format!("{n}@{s}")),
            date: today_utc(),
            commit: git_commit(),
            summary: Summary::of(&results),
            questions: results,
        };
        let json = serde_json::to_string_pretty(&run).map_err(|e| Error::Input(e.to_string()))?;
        let results_path = dir.join("results.json");
        std::fs::write(&results_path, json).map_err(|e| Error::io(&results_path, e))?;
        let report_path = dir.join("report.md");
        std::fs::write(&report_path, render(&run) + &engine_section(&run.questions))
            .map_err(|e| Error::io(&report_path, e))?;
        written.push(serde_json::json!({"method": run.method, "results": results_path, "report": report_path, "summary": run.summary}));
        runs.push(run);
    }
    let report = if multi { render_comparison(&runs) } else { render(&runs[0]) + &engine_section(&runs[0].questions) };
    let report_path = out.join("report.md");
    if multi {
        std::fs::write(&report_path, &report).map_err(|e| Error::io(&report_path, e))?;
    }
    if ctx.json {
        super::print_json(&serde_json::json!({"report": report_path, "runs": written}))?;
    } else {
        print!("{report}");
        eprintln!("wrote {}", out.display());
    }
    if args.llm.replay.is_some() {
        let misses = llm.as_ref().map(|l| l.replay_misses()).unwrap_or_default();
        return Ok(replay_misses(&runs, &misses));
    }
    Ok(0)
}

/// After `--replay`: `misses` are the replayer's own record of the prompts
/// the cassette does not hold (their error messages); any miss means the run
/// did not reproduce the recording. Say so, naming the question runs whose
/// failure is one of those errors (the first one's message names the prompt
/// and how to re-record), and exit 1.
fn replay_misses(runs: &[BenchRun], misses: &[String]) -> i32 {
    let Some(first_miss) = misses.first() else { return 0 };
    let missed: Vec<(&str, &str, &str)> = runs
        .iter()
        .flat_map(|r| r.questions.iter().map(move |q| (r.method.as_str(), q)))
        .filter_map(|(m, q)| {
            q.attribution
                .findings
                .iter()
                .find(|f| misses.iter().any(|miss| f.contains(miss.as_str())))
                .map(|f| (m, q.id.as_str(), f.as_str()))
        })
        .collect();
    let total: usize = runs.iter().map(|r| r.questions.len()).sum();
    match missed.first() {
        Some((method, id, first)) => eprintln!(
            "lucy: the replay did not reproduce the recording: {} of {total} question run(s) asked a prompt the cassette does not hold (first: {method} {id}: {first})",
            missed.len()
        ),
        // A miss no question reports as its failure (a phase that went on
        // without the answer, or a message cut to the error length limit).
        None => eprintln!(
            "lucy: the replay did not reproduce the recording: {} prompt(s) the cassette does not hold were asked (first: {first_miss})",
            misses.len()
        ),
    }
    1
}
