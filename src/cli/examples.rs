//! `lucy examples add|list|check`: a model's verified queries, kept in
//! `MODEL.examples.jsonl` beside the model (or the file given with
//! `--examples`), and the `lucy ask` flags that retrieve them.

use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::Subcommand;

use super::crush::{make_embedder, EmbedderKind};
use super::values::Dialect;
use super::{print_json, Ctx};
use lucy::error::{Error, Result};
use lucy::examples::validate::ExecCheck;
use lucy::examples::{check_entry, default_path, Entry, Example, ExampleTables, ExamplesFile, ExamplesUse};
use lucy::graph::SchemaGraph;
use lucy::sql::exec::Database;

#[derive(Debug, Subcommand)]
pub enum ExamplesCommand {
    /// Check a verified query against the model (and run it with --execute), then append it.
    Add(AddArgs),
    /// List the verified queries.
    List(FileArgs),
    /// Check every verified query against the model (and run it with --execute); exit 1 if any fails.
    Check(CheckArgs),
    /// Build a benchmark example pool for a suite (cross-database or in-database), checked for leakage.
    Pool(PoolArgs),
}

/// Pool kinds (`lucy examples pool --kind`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum PoolKindArg {
    /// The suite's questions of other databases (a question never sees its own database's).
    CrossDatabase,
    /// Templated (question, SQL) pairs from each database's schema and values only (DynVS).
    InDatabase,
}

#[derive(Debug, clap::Args)]
pub struct PoolArgs {
    /// Suite name (benchmarks/suites/<name>.json) or path to a suite file.
    #[arg(long)]
    pub suite: String,
    /// Which pool.
    #[arg(long, value_enum)]
    pub kind: PoolKindArg,
    /// Distinct values per text column (in-database).
    #[arg(long, default_value_t = 20, value_parser = super::num::count)]
    pub per_column: usize,
    /// Where to write the pool (JSON Lines).
    #[arg(long, value_name = "FILE")]
    pub out: PathBuf,
}

/// The model and its examples file.
#[derive(Debug, clap::Args)]
pub struct FileArgs {
    /// dbModel file (JSON).
    #[arg(long, value_name = "FILE")]
    pub model: PathBuf,
    /// Examples file (JSON Lines of {"question", "sql"}); default: MODEL.examples.jsonl beside the model.
    #[arg(help_heading = "Verified queries (examples)", long, value_name = "FILE")]
    pub examples: Option<PathBuf>,
    /// SQL dialect of the examples (default: the model's, else sqlite).
    #[arg(long, value_enum)]
    pub dialect: Option<Dialect>,
}

#[derive(Debug, clap::Args)]
pub struct AddArgs {
    #[command(flatten)]
    pub file: FileArgs,
    /// The question, in natural language.
    #[arg(long)]
    pub question: String,
    /// SQL over the model's base tables that answers it.
    #[arg(long)]
    pub sql: String,
    /// Run the SQL read-only on this database first (a SQLite file or a server URL); refuse it if it fails.
    #[arg(long, value_name = "DB|URL", value_parser = super::num::database)]
    pub execute: Option<Database>,
}

#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    #[command(flatten)]
    pub file: FileArgs,
    /// Also run every SQL read-only on this database (a SQLite file or a server URL).
    #[arg(long, value_name = "DB|URL", value_parser = super::num::database)]
    pub execute: Option<Database>,
    /// Time bound of each execution, in seconds.
    #[arg(long, default_value_t = 30.0, value_parser = super::num::seconds)]
    pub timeout: f64,
}

/// What `lucy ask` does with the examples' tables (see `ExampleTables`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum ExampleTablesArg {
    /// Only their SQL reaches QueryView.
    Off,
    /// Their core tables join the tables a prefilter (--prefilter crush) offers MatchTables.
    Offer,
    /// Their tables and the columns their SQL reads join MatchTables' answer.
    Add,
}

impl From<ExampleTablesArg> for ExampleTables {
    fn from(a: ExampleTablesArg) -> Self {
        match a {
            ExampleTablesArg::Off => ExampleTables::Off,
            ExampleTablesArg::Offer => ExampleTables::Offer,
            ExampleTablesArg::Add => ExampleTables::Add,
        }
    }
}

/// `lucy ask`'s example flags.
#[derive(Debug, Clone, clap::Args)]
pub struct AskExampleFlags {
    /// Verified queries to retrieve from (default: MODEL.examples.jsonl beside the model, when it exists).
    #[arg(help_heading = "Verified queries (examples)", long, value_name = "FILE", conflicts_with = "no_examples")]
    pub examples: Option<PathBuf>,
    /// Do not use MODEL.examples.jsonl even when it exists.
    #[arg(hide = true, help_heading = "Verified queries (examples)", long)]
    pub no_examples: bool,
    /// How many of the most similar examples to use.
    #[arg(hide = true, help_heading = "Verified queries (examples)", long, value_name = "K", default_value_t = lucy::examples::DEFAULT_K, value_parser = super::num::count)]
    pub examples_k: usize,
    /// What the examples' tables do in MatchTables.
    #[arg(hide = true, help_heading = "Verified queries (examples)", long, value_enum, default_value_t = ExampleTablesArg::Offer)]
    pub example_tables: ExampleTablesArg,
    /// Embedder that ranks the examples by question similarity.
    #[arg(hide = true, help_heading = "Verified queries (examples)", long, value_enum, default_value_t = EmbedderKind::Minilm)]
    pub examples_embedder: EmbedderKind,
}

impl AskExampleFlags {
    /// The examples for `question`, or `None` when there is no file to use.
    /// An auto-detected file without the MiniLM files is skipped with a
    /// note; an explicit `--examples` file must work.
    pub fn retrieve(
        &self,
        model: &Path,
        graph: &SchemaGraph,
        question: &str,
        dialect: lucy::types::Dialect,
    ) -> Result<Option<ExamplesUse>> {
        if self.no_examples {
            return Ok(None);
        }
        let path = match &self.examples {
            Some(p) => p.clone(),
            None => {
                let p = default_path(model);
                if !p.is_file() {
                    return Ok(None);
                }
                let dir = lucy::crush::embed::MiniLm::default_dir();
                if self.examples_embedder == EmbedderKind::Minilm && !lucy::crush::embed::MiniLm::available(&dir) {
                    eprintln!(
                        "note: {} not used: the MiniLM files are absent in {} (run scripts/fetch-minilm.sh; --no-examples hides this note)",
                        p.display(),
                        dir.display()
                    );
                    return Ok(None);
                }
                p
            }
        };
        let embedder = make_embedder(self.examples_embedder)?;
        let file = path.display().to_string();
        lucy::examples::use_file(
            &path,
            file,
            graph,
            question,
            dialect,
            embedder.as_ref(),
            self.examples_k,
            self.example_tables.into(),
        )
        .map(Some)
    }
}

pub fn run(cmd: ExamplesCommand, ctx: Ctx) -> Result<i32> {
    match cmd {
        ExamplesCommand::Add(a) => add(a, ctx),
        ExamplesCommand::List(a) => list(a, ctx),
        ExamplesCommand::Check(a) => check(a, ctx),
        ExamplesCommand::Pool(a) => pool(a, ctx),
    }
}

fn open(f: &FileArgs) -> Result<(SchemaGraph, PathBuf, lucy::types::Dialect)> {
    let graph = SchemaGraph::new(lucy::model::load(&f.model)?)?;
    let path = f.examples.clone().unwrap_or_else(|| default_path(&f.model));
    let dialect = f.dialect.map(Into::into).or(graph.model().dialect).unwrap_or_default();
    Ok((graph, path, dialect))
}

fn add(a: AddArgs, ctx: Ctx) -> Result<i32> {
    let (graph, path, dialect) = open(&a.file)?;
    let mut file = ExamplesFile::load_or_empty(&path)?;
    let example = Example { question: a.question.trim().to_string(), sql: a.sql.trim().to_string(), database: None };
    let entry = Entry { line: 0, example: example.clone() };
    let exec = a.execute.as_ref().map(|db| ExecCheck { db, timeout: Duration::from_secs(30) });
    let c = check_entry(&graph, &entry, dialect, exec);
    if !c.ok {
        let problems = c.problems_at("the new example");
        return Err(Error::Input(format!("not added to {}:\n{}", path.display(), problems.join("\n"))));
    }
    let line = file.append(example)?;
    if ctx.json {
        print_json(
            &serde_json::json!({"file": path.display().to_string(), "line": line, "tables": c.tables, "rows": c.rows}),
        )?;
    } else {
        let ran = c.rows.map(|n| format!("; ran: {n} row(s)")).unwrap_or_default();
        println!("added {}:{line} (reads {}{ran})", path.display(), c.tables.join(", "));
    }
    Ok(0)
}

fn list(a: FileArgs, ctx: Ctx) -> Result<i32> {
    let (_, path, _) = open(&a)?;
    let file = ExamplesFile::load(&path)?;
    if ctx.json {
        print_json(&serde_json::json!({"file": path.display().to_string(), "examples": file.entries}))?;
    } else {
        for e in &file.entries {
            println!("{}:{}: {}\n    {}", path.display(), e.line, e.example.question, e.example.sql.trim());
        }
        println!("{} example(s)", file.entries.len());
    }
    Ok(0)
}

fn check(a: CheckArgs, ctx: Ctx) -> Result<i32> {
    let (graph, path, dialect) = open(&a.file)?;
    let file = ExamplesFile::load(&path)?;
    let timeout = Duration::from_secs_f64(a.timeout);
    let exec = a.execute.as_ref().map(|db| ExecCheck { db, timeout });
    let results: Vec<_> = file.entries.iter().map(|e| check_entry(&graph, e, dialect, exec)).collect();
    let failed = results.iter().filter(|r| !r.ok).count();
    if ctx.json {
        print_json(&serde_json::json!({
            "file": path.display().to_string(),
            "checked": results.len(),
            "failed": failed,
            "executed": a.execute.is_some(),
            "results": results,
        }))?;
    } else {
        for r in &results {
            if r.ok {
                let ran = r.rows.map(|n| format!(", ran: {n} row(s)")).unwrap_or_default();
                println!("{}:{}: ok (reads {}{ran})", path.display(), r.line, r.tables.join(", "));
            } else {
                for p in r.problems(&path) {
                    println!("{p}");
                }
            }
        }
        let how = if a.execute.is_some() { "checked and ran" } else { "checked (add --execute DB to run them)" };
        println!("{} example(s) {how}: {} ok, {failed} failing", results.len(), results.len() - failed);
    }
    Ok(if failed > 0 { 1 } else { 0 })
}

fn pool(a: PoolArgs, ctx: Ctx) -> Result<i32> {
    use lucy::examples::pool::{leaks, PoolKind};
    let suite = lucy::bench::suite::Suite::load(&lucy::bench::suite::Suite::find(&a.suite)?)?;
    let kind = match a.kind {
        PoolKindArg::CrossDatabase => PoolKind::CrossDatabase,
        PoolKindArg::InDatabase => PoolKind::InDatabase,
    };
    let pool = lucy::bench::methods::build_pool(&suite, kind, a.per_column)?;
    let found = leaks(&pool, &lucy::bench::methods::suite_items(&suite));
    if let Some((id, q)) = found.first() {
        return Err(Error::Input(format!(
            "the {} pool leaks {} answer(s) of suite {}, e.g. question {id} sees `{q}`; not written",
            kind.as_str(),
            found.len(),
            suite.file.name
        )));
    }
    pool.save(&a.out)?;
    if ctx.json {
        print_json(
            &serde_json::json!({"file": a.out.display().to_string(), "kind": kind.as_str(), "entries": pool.entries.len()}),
        )?;
    } else {
        println!(
            "wrote {} ({} pool, {} entries; no leakage into suite {})",
            a.out.display(),
            kind.as_str(),
            pool.entries.len(),
            suite.file.name
        );
    }
    Ok(0)
}
