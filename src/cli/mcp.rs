//! `lucy mcp`: the planner as an MCP server over stdio (see `crate::mcp`
//! and docs/serve.md for an assistant's configuration).

use super::serve::Served;
use super::Ctx;
use lucy::error::Result;
use lucy::llm::build_chat_model;

use super::llm::LlmFlags;
use lucy::serve::ServeOptions;

/// Serve MCP tools (list_models, describe_model, view, ask, explain) on stdin/stdout.
#[derive(Debug, clap::Args)]
pub struct McpArgs {
    #[command(flatten)]
    pub served: Served,
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
    let examples = args.served.example_retrieval();
    let (models, dbs) = args.served.split()?;
    let opts = ServeOptions {
        // Not used: MCP talks over stdio.
        addr: ([127, 0, 0, 1], 0).into(),
        models,
        dbs,
        token: None,
        max_concurrent: args.max_concurrent,
        request_timeout: args.request_timeout,
        max_body: 1 << 20,
        trace_cap: 200,
    };
    let llm = build_chat_model(&args.llm.to_args())?;
    let st = lucy::serve::state_with_examples(opts, llm, examples)?;
    lucy::mcp::run_stdio(st)?;
    Ok(0)
}
