//! The `lucy` command line. Each subcommand lives in its own module with its
//! own clap `Args`; this module only dispatches and maps errors to exit codes.

use std::path::{Path, PathBuf};

use clap::{CommandFactory, FromArgMatches, Parser, Subcommand};

use lucy::error::Error;

pub mod ask;
pub mod bench;
pub mod check;
pub mod config;
pub mod crush;
pub mod examples;
pub mod explain;
pub mod llm;
pub mod mcp;
pub mod model;
pub mod model_import;
pub mod num;
pub mod project;
pub mod serve;
pub mod values;
pub mod view;

/// lucy: text-to-SQL where an LLM understands the question and a constraint
/// solver owns the joins.
#[derive(Debug, Parser)]
#[command(name = "lucy", version, about, long_about = None)]
pub struct Cli {
    /// Machine-readable JSON output (errors too, on stderr).
    #[arg(long, global = true)]
    pub json: bool,
    /// Project file [default: lucy.toml here or in a parent; env: LUCY_CONFIG]
    #[arg(long, global = true, value_name = "FILE")]
    pub config: Option<PathBuf>,
    /// Print help with every option, grouped by phase (the levers too)
    #[arg(long, global = true)]
    pub help_all: bool,
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Write a commented project file (lucy.toml) for a model and database.
    Init(project::InitArgs),
    /// Show the effective settings and where each comes from; list the levers.
    #[command(subcommand)]
    Config(project::ConfigCommand),
    /// Check, show, import and annotate dbModels.
    #[command(subcommand)]
    Model(model::ModelCommand),
    /// GenerateView: solve the join path for given tables and print the view.
    View(view::ViewArgs),
    /// Answer a question end to end (MatchTables, GenerateView, QueryView).
    Ask(Box<ask::AskArgs>),
    /// Render a trace written by `lucy ask --trace` as a per-phase report.
    Explain(explain::ExplainArgs),
    /// Run a benchmark suite.
    Bench(bench::BenchArgs),
    /// CRUSH: retrieve a small connected schema subset for a question.
    Crush(crush::CrushArgs),
    /// Check SQL over the model's base tables against the model (joins, C3, C4, names, fan-out).
    Check(check::CheckArgs),
    /// Manage a model's verified queries (MODEL.examples.jsonl): add, list, check.
    #[command(subcommand)]
    Examples(examples::ExamplesCommand),
    /// Serve the planner over HTTP: JSON API, web page, OpenAPI document.
    Serve(serve::ServeArgs),
    /// Serve the planner to an AI assistant: MCP over stdio.
    Mcp(mcp::McpArgs),
}

/// Output settings shared by every subcommand.
#[derive(Debug, Clone, Copy)]
pub struct Ctx {
    pub json: bool,
}

/// What every subcommand may need of the invocation beyond its own flags:
/// the project file given with `--config`, and which flags were given
/// (rather than defaulted), for the precedence of settings.
#[derive(Debug, Default, Clone, Copy)]
pub struct Invocation<'a> {
    pub config: Option<&'a Path>,
    pub matches: Option<&'a clap::ArgMatches>,
}

/// `c` and its subcommands with lucy's help flags: `-h`/`--help` print the
/// one-line-per-option summary (the everyday options), the hidden
/// `--help-full` the long text `--help-all` asks for.
fn with_help(c: clap::Command) -> clap::Command {
    c.disable_help_flag(true)
        .arg(
            clap::Arg::new("help")
                .short('h')
                .long("help")
                .action(clap::ArgAction::HelpShort)
                .help("Print help (--help-all: every option, grouped by phase)"),
        )
        .arg(clap::Arg::new("help_full").long("help-full").hide(true).action(clap::ArgAction::HelpLong))
        .mut_subcommands(with_help)
}

/// The command line as `lucy` parses it.
pub fn command() -> clap::Command {
    with_help(Cli::command())
}

/// The command line with every hidden option shown, under its heading.
pub fn command_all() -> clap::Command {
    fn unhide(c: clap::Command) -> clap::Command {
        c.mut_args(|a| if a.is_hide_set() && a.get_id() != "help_full" { a.hide(false) } else { a })
            .mut_subcommands(unhide)
    }
    unhide(command())
}

/// Run the CLI; returns the process exit code.
pub fn main() -> i32 {
    let mut argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    // `--help-all`: the full help of the command it follows.
    let cmd = if let Some(i) = argv.iter().position(|a| a == "--help-all") {
        argv[i] = "--help-full".into();
        command_all()
    } else {
        command()
    };
    let matches = cmd.get_matches_from(argv);
    let cli = match Cli::from_arg_matches(&matches) {
        Ok(c) => c,
        Err(e) => e.exit(),
    };
    let ctx = Ctx { json: cli.json };
    let config = cli.config.clone();
    let sub = matches.subcommand().map(|(_, m)| m);
    let inv = Invocation { config: config.as_deref(), matches: sub };
    let result = match cli.command {
        Command::Init(a) => project::init(a, ctx),
        Command::Config(c) => project::config(c, ctx, &inv),
        Command::Model(c) => model::run(c, ctx),
        Command::View(a) => view::run(a, ctx),
        Command::Ask(a) => ask::run(*a, ctx, &inv),
        Command::Explain(a) => explain::run(a, ctx),
        Command::Bench(a) => bench::run(a, ctx),
        Command::Crush(a) => crush::run(a, ctx),
        Command::Check(a) => check::run(a, ctx),
        Command::Examples(c) => examples::run(c, ctx),
        Command::Serve(a) => serve::run(a, ctx),
        Command::Mcp(a) => mcp::run(a, ctx),
    };
    match result {
        Ok(code) => code,
        Err(e) => {
            report_error(&e, ctx);
            e.exit_code()
        }
    }
}

/// Print an error to stderr, as JSON when `--json` is set.
pub fn report_error(e: &Error, ctx: Ctx) {
    if ctx.json {
        let issues = match e {
            Error::Model(v) => serde_json::to_value(v).unwrap_or_default(),
            _ => serde_json::Value::Null,
        };
        let v = serde_json::json!({"error": e.to_string(), "exit_code": e.exit_code(), "issues": issues});
        eprintln!("{v}");
    } else {
        eprintln!("error: {e}");
    }
}

/// Print a serializable value as pretty JSON on stdout.
pub fn print_json<T: serde::Serialize>(v: &T) -> lucy::Result<()> {
    let s = serde_json::to_string_pretty(v).map_err(|e| Error::Input(e.to_string()))?;
    println!("{s}");
    Ok(())
}
