//! `lucy model …`: check, show, import, suggest, schema.

use std::path::PathBuf;

use super::Ctx;
use lucy::error::{Error, Result};
use lucy::graph::{fk, render, suggest};

#[derive(Debug, clap::Subcommand)]
pub enum ModelCommand {
    /// Validate dbModels (native or split-file form) and print a summary of
    /// each, warnings on stderr; exit 2 with every validation error on stderr.
    Check {
        #[arg(required = true)]
        files: Vec<PathBuf>,
    },
    /// List tables, columns, keys, relationships and patterns; with --json,
    /// print the normalized model.
    Show { file: PathBuf },
    /// Import a dbModel from DDL, a SQLite file, BIRD/Spider tables.json, a
    /// dbt project (manifest.json + catalog.json), or the live catalog of a
    /// PostgreSQL, MySQL or Spark server.
    Import(super::model_import::ImportArgs),
    /// Propose m:m, lookup, star and snowflake patterns from the keys, as a
    /// JSON patch (RFC 6902) to review and apply; with --relationships,
    /// propose relationships (foreign keys) from column names instead,
    /// tested on the data with --execute.
    Suggest {
        file: PathBuf,
        /// Print the whole model with every proposal applied instead of the
        /// patch (review it with a diff).
        #[arg(long)]
        apply: bool,
        /// Propose relationships (foreign keys) instead of patterns: a column
        /// whose name references another table's key (`dc_id` →
        /// DATACENTER.id, `Party_Identifier` → Party.Party_Identifier),
        /// keys inferred from names where a table declares none. Run
        /// `model suggest` again on the applied model for patterns.
        #[arg(long)]
        relationships: bool,
        /// With --relationships: test each candidate on this database
        /// (read-only): every non-null value must be found in the key, an
        /// inferred key must be unique; a rejected candidate gives way to the
        /// column's next one. A SQLite file or a server URL
        /// (postgresql://, mysql://, sc://).
        #[arg(long, value_name = "DB|URL", value_parser = super::num::database, requires = "relationships")]
        execute: Option<lucy::sql::exec::Database>,
        /// Time limit of one query of --execute, in seconds.
        #[arg(long, value_name = "SECS", default_value_t = 10.0, value_parser = super::num::seconds, requires = "execute")]
        query_timeout: f64,
        /// Time limit of all the queries of --execute, in seconds; candidates
        /// left when it is reached are proposed on names alone (their reason
        /// says so).
        #[arg(long, value_name = "SECS", default_value_t = 120.0, value_parser = super::num::seconds, requires = "execute")]
        time_limit: f64,
    },
    /// What moved between two dbModels (e.g. a curated model and a fresh
    /// `model import` of the warehouse): tables, columns, primary keys and
    /// relationships added (+), removed (-) or changed (~). Exit 0 when
    /// they match, 1 when they differ.
    Diff {
        /// The reference model (e.g. the curated one).
        old: PathBuf,
        /// The model to compare with it (e.g. a fresh import).
        new: PathBuf,
    },
    /// Print the JSON Schema of the dbModel format
    /// (docs/dbmodel.schema.json is this output).
    Schema,
    /// Fill the embedded model's prompt cache on disk for a dbModel: evaluate
    /// the question-independent part of every MatchTables prompt a question
    /// may ask (the schema listings, element lists and instructions), so the
    /// first `lucy ask` evaluates little more than its question. Answers
    /// nothing; the model decodes no token.
    Warm {
        file: PathBuf,
        /// Prompt templates directory (as `lucy ask --prompts`).
        #[arg(long, value_name = "DIR")]
        prompts: Option<PathBuf>,
        #[command(flatten)]
        llm: super::llm::LlmFlags,
    },
}

pub fn run(cmd: ModelCommand, ctx: Ctx) -> Result<i32> {
    match cmd {
        ModelCommand::Check { files } => {
            let mut summaries = Vec::new();
            let mut failed: Option<Error> = None;
            for file in &files {
                match check_one(file, ctx) {
                    Ok(v) => summaries.push(v),
                    // With one file the error is the command's error; with
                    // several, report each and carry on.
                    Err(e) if files.len() == 1 => return Err(e),
                    Err(e) => {
                        super::report_error(&e, ctx);
                        failed = Some(e);
                    }
                }
            }
            if ctx.json {
                match &summaries[..] {
                    [one] if files.len() == 1 => super::print_json(one)?,
                    _ => super::print_json(&summaries)?,
                }
            }
            Ok(failed.map_or(0, |e| e.exit_code()))
        }
        ModelCommand::Show { file } => {
            let g = lucy::graph::load(&file)?;
            if ctx.json {
                super::print_json(g.model())?;
            } else {
                print!("{}", render::show_text(&g));
            }
            Ok(0)
        }
        ModelCommand::Import(a) => super::model_import::run(a, ctx),
        ModelCommand::Warm { file, prompts, llm } => warm(&file, prompts.as_deref(), &llm.to_args(), ctx),
        ModelCommand::Diff { old, new } => {
            let (a, b) = (lucy::model::load(&old)?, lucy::model::load(&new)?);
            let changes = lucy::model::diff::diff(&a, &b);
            if ctx.json {
                super::print_json(&serde_json::json!({"old": old, "new": new, "changes": changes}))?;
            } else if changes.is_empty() {
                println!(
                    "{} and {}: no differences in tables, columns, keys or relationships",
                    old.display(),
                    new.display()
                );
            } else {
                println!("--- {}\n+++ {}", old.display(), new.display());
                for c in &changes {
                    println!("{c}");
                }
            }
            Ok(i32::from(!changes.is_empty()))
        }
        ModelCommand::Suggest { file, apply, relationships: true, execute, query_timeout, time_limit } => {
            let bounds = lucy::check::inclusion::InclusionBounds {
                query_timeout: std::time::Duration::from_secs_f64(query_timeout),
                budget: std::time::Duration::from_secs_f64(time_limit),
            };
            suggest_relationships(&file, apply, execute.as_ref(), &bounds, ctx)
        }
        ModelCommand::Suggest { file, apply, .. } => {
            let g = lucy::graph::load(&file)?;
            let proposals = suggest::suggest(&g);
            let roles = suggest::suggest_roles(&g);
            // One RFC 6902 patch: patterns, then relationship roles.
            let mut patch = serde_json::to_value(&proposals).map_err(|e| Error::Input(e.to_string()))?;
            if let (Some(list), Ok(serde_json::Value::Array(more))) =
                (patch.as_array_mut(), serde_json::to_value(&roles))
            {
                list.extend(more);
            }
            if apply {
                let mut m = g.model().clone();
                suggest::apply(&mut m, &proposals);
                suggest::apply_roles(&mut m, &roles);
                // Proposals are built to validate; check anyway before printing.
                lucy::model::validate::check(&m, Some(&file.display().to_string()))?;
                if !ctx.json {
                    eprintln!("{}: {} proposal(s) applied", file.display(), proposals.len() + roles.len());
                }
                super::print_json(&m)?;
            } else if ctx.json {
                super::print_json(&patch)?;
            } else {
                if proposals.is_empty() && roles.is_empty() {
                    eprintln!("{}: no new patterns to propose", file.display());
                } else {
                    eprintln!(
                        "{}: {} proposal(s); review, then add the chosen values to $.patterns (roles: to the relationships named by their path):",
                        file.display(),
                        proposals.len() + roles.len()
                    );
                    for (i, p) in proposals.iter().enumerate() {
                        eprintln!("  {}. {}: {}", i + 1, render::pattern_kind(&p.value), p.reason);
                    }
                    for (i, r) in roles.iter().enumerate() {
                        eprintln!("  {}. role {} at {}: {}", proposals.len() + i + 1, r.value, r.path, r.reason);
                    }
                }
                super::print_json(&patch)?;
            }
            Ok(0)
        }
        ModelCommand::Schema => {
            print!("{}", lucy::model::schema::json_schema_text());
            Ok(0)
        }
    }
}

/// `lucy model suggest --relationships`: the proposals from names, tested
/// on `db` when given; the patch (or the applied model) on stdout, the
/// reasons, rejections and unchecked candidates on stderr.
fn suggest_relationships(
    file: &std::path::Path,
    apply: bool,
    db: Option<&lucy::sql::exec::Database>,
    bounds: &lucy::check::inclusion::InclusionBounds,
    ctx: Ctx,
) -> Result<i32> {
    let g = lucy::graph::load(file)?;
    let shown = file.display();
    let (proposals, rejected, unchecked) = match db {
        None => (fk::suggest_relationships(g.model()), Vec::new(), Vec::new()),
        Some(db) => {
            let out = lucy::check::inclusion::suggest_checked(g.model(), db, bounds)?;
            if !ctx.json {
                eprintln!("{shown}: {} quer(ies) on {db} in {:.1} s", out.queries, out.elapsed.as_secs_f64());
            }
            (out.proposals, out.rejected, out.unchecked)
        }
    };
    if !ctx.json {
        for w in &unchecked {
            eprintln!("warning: not checked on the data: {w}");
        }
    }
    if apply {
        let mut m = g.model().clone();
        fk::apply(&mut m, &proposals);
        lucy::model::validate::check(&m, Some(&shown.to_string()))?;
        if !ctx.json {
            eprintln!("{shown}: {} relationship(s) applied", proposals.len());
        }
        super::print_json(&m)?;
        return Ok(0);
    }
    if !ctx.json {
        if proposals.is_empty() {
            eprintln!("{shown}: no new relationships to propose");
        } else {
            eprintln!(
                "{shown}: {} relationship(s); review, then add the chosen values to $.relationships:",
                proposals.len()
            );
            for (i, p) in proposals.iter().enumerate() {
                let cc = serde_json::to_value(p.value.cardinality).unwrap_or_default();
                eprintln!("  {}. {} {}: {}", i + 1, p.value.id(), cc.as_str().unwrap_or(""), p.reason);
            }
        }
        for (c, why) in &rejected {
            eprintln!("  rejected: {}({}) -> {}({}): {why}", c.from, c.from_cols.join(","), c.to, c.to_cols.join(","));
        }
    }
    super::print_json(&proposals)?;
    Ok(0)
}

/// Check one file: print its summary (text mode) and warnings; return the
/// JSON summary.
fn check_one(file: &std::path::Path, ctx: Ctx) -> Result<serde_json::Value> {
    let g = lucy::graph::load(file)?;
    let s = render::summary(&g);
    let shown = file.display().to_string();
    let warnings: Vec<_> = lucy::model::lint::warnings(g.model())
        .into_iter()
        .map(|mut w| {
            w.file = Some(shown.clone());
            w
        })
        .collect();
    let mut v = serde_json::to_value(&s).map_err(|e| Error::Input(e.to_string()))?;
    if let Some(o) = v.as_object_mut() {
        o.insert("file".into(), shown.clone().into());
        o.insert("valid".into(), true.into());
        o.insert("warnings".into(), serde_json::to_value(&warnings).unwrap_or_default());
    }
    if !ctx.json {
        print!("{}", render::summary_text(&s, &shown));
        for w in &warnings {
            eprintln!("warning: {w}");
        }
    }
    Ok(v)
}

/// Answers every list prompt with every offered element, after evaluating
/// its prompt into the embedded model's caches (no decoding): MatchTables
/// then asks every prompt a question could lead to.
struct Warmer<'a> {
    model: &'a lucy::llm::embedded::EmbeddedModel,
    costs: std::sync::Mutex<Vec<lucy::llm::LocalCost>>,
}

impl lucy::llm::ChatModel for Warmer<'_> {
    fn chat(&self, req: &lucy::llm::ChatRequest) -> Result<lucy::llm::ChatResponse> {
        let cost = self.model.prefill(req)?;
        self.costs.lock().unwrap_or_else(|p| p.into_inner()).push(cost);
        let all: Vec<String> = req
            .response_schema
            .as_ref()
            .and_then(|s| s["items"]["enum"].as_array().cloned())
            .unwrap_or_default()
            .iter()
            .filter_map(|v| v.as_str().map(String::from))
            .collect();
        let answer = if all.is_empty() { "yes".to_string() } else { serde_json::to_string(&all).unwrap_or_default() };
        Ok(lucy::llm::ChatResponse { choices: vec![answer; req.n.max(1)], requests: 1, ..Default::default() })
    }
    fn model_name(&self) -> String {
        lucy::llm::ChatModel::model_name(self.model)
    }
}

/// `lucy model warm`.
fn warm(file: &std::path::Path, prompts: Option<&std::path::Path>, args: &lucy::llm::LlmArgs, ctx: Ctx) -> Result<i32> {
    let graph = lucy::graph::load(file)?;
    let prompts = lucy::prompts::Prompts::load(prompts)?;
    let env = |k: &str| std::env::var(k).ok();
    let Some(choice) = args.gguf_from(&env)? else {
        return Err(Error::Input(format!(
            "lucy model warm fills the embedded model's prompt cache, and no embedded model is configured; {}",
            lucy::llm::embedded::FETCH_HINT
        )));
    };
    if choice.options.disk_cache.is_none() {
        return Err(Error::Input(
            "the prompt cache on disk is off (--llm-no-prefix-cache or --llm-no-prefix-disk, or no cache directory: set LUCY_CACHE or HOME)"
                .into(),
        ));
    }
    let model = lucy::llm::embedded::EmbeddedModel::load(&choice.options, &choice.fix, &env)?;
    let warmer = Warmer { model: &model, costs: std::sync::Mutex::new(Vec::new()) };
    let mut trace = lucy::types::trace::MatchTrace::default();
    // Every core table, one sample each (the answers are not decoded);
    // the attribute prompts only where `lucy ask`'s default view asks them.
    let attributes = !lucy::pipeline::ViewSettings::default().columns.every_table();
    let opts = lucy::link::MatchOptions { samples: 1, attributes, ..lucy::link::MatchOptions::default() };
    lucy::link::match_tables(&graph, "", &opts, &warmer, &prompts, &mut trace)?;
    let costs = warmer.costs.into_inner().unwrap_or_else(|p| p.into_inner());
    let evaluated: u64 = costs.iter().map(|c| c.prompt_evaluated).sum();
    let reused: u64 = costs.iter().map(|c| c.prompt_reused).sum();
    let ms: f64 = costs.iter().map(|c| c.prefill_ms).sum();
    let stats = model.cache_stats()?;
    let disk = stats.disk.unwrap_or_default();
    let dir = choice.options.disk_cache.as_deref().map(|d| d.display().to_string()).unwrap_or_default();
    if ctx.json {
        super::print_json(&serde_json::json!({
            "model": file, "prompts": costs.len(), "evaluated": evaluated, "reused": reused,
            "prefill_ms": ms, "files_written": disk.writes, "files": disk.files, "dir": dir,
        }))?;
    } else {
        println!(
            "{}: {} prompts, {evaluated} tokens evaluated, {reused} reused ({:.1} s); {} snapshot file(s) written, {} for this model in {dir}",
            file.display(),
            costs.len(),
            ms / 1000.0,
            disk.writes,
            disk.files
        );
    }
    Ok(0)
}
