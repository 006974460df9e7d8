//! `lucy mcp`: the planner as an MCP server over stdio (see `crate::mcp`
//! and docs/serve.md for an assistant's configuration).

use std::path::PathBuf;

use super::Ctx;
use lucy::error::{Error, Result};
use lucy::llm::build_chat_model;

use super::llm::LlmFlags;
use lucy::serve::ServeOptions;

/// Serve MCP tools (list_models, describe_model, view, ask, explain) on stdin/stdout.
#[derive(Debug, clap::Args)]
pub struct McpArgs {
    /// dbModel files, or directories whose *.json files are all dbModels;
    /// every one is validated at start. A FILE.sqlite beside a model is its
    /// database for `execute`.
    #[arg(long, required = true, num_args = 1.., value_name = "DIR|FILE")]
    pub models: Vec<PathBuf>,
    /// SQLite database of a model for `execute`, as NAME=PATH (repeatable).
    #[arg(long = "db", value_name = "NAME=PATH")]
    pub dbs: Vec<String>,
    /// Tool calls (asks and views) run at once; more get an error result.
    #[arg(long, default_value_t = 4, value_name = "N")]
    pub max_concurrent: usize,
    /// Seconds one tool call may take.
    #[arg(long, default_value_t = 120.0, value_name = "SECS")]
    pub request_timeout: f64,
    #[command(flatten)]
    pub llm: LlmFlags,
}

pub fn run(args: McpArgs, _ctx: Ctx) -> Result<i32> {
    let mut dbs = Vec::new();
    for d in &args.dbs {
        let Some((name, path)) = d.split_once('=') else {
            return Err(Error::Input(format!("--db `{d}`: use NAME=PATH (the model's name, its SQLite file)")));
        };
        dbs.push((name.trim().to_string(), PathBuf::from(path.trim())));
    }
    let opts = ServeOptions {
        // Not used: MCP talks over stdio.
        addr: ([127, 0, 0, 1], 0).into(),
        models: args.models,
        dbs,
        token: None,
        max_concurrent: args.max_concurrent,
        request_timeout: args.request_timeout,
        max_body: 1 << 20,
        trace_cap: 200,
    };
    let llm = build_chat_model(&args.llm.to_args())?;
    let st = lucy::serve::state(opts, llm)?;
    lucy::mcp::run_stdio(st)?;
    Ok(0)
}
