//! `lucy mcp`: the planner as an MCP server over stdio (the official Rust
//! SDK, rmcp), for AI assistants. Tools: `list_models`, `describe_model`,
//! `view`, `ask`, `check`, `explain`. Their
//! input schemas are the HTTP API's request types, so both speak the same
//! fields; results are the same JSON as `lucy … --json` and `lucy serve`.
//!
//! stdout carries the protocol: nothing else may print there.

use std::sync::Arc;

use rmcp::handler::server::wrapper::Parameters;
use rmcp::model::{CallToolResult, Implementation, ServerCapabilities, ServerConfig};
use rmcp::{tool, tool_handler, tool_router, ErrorData as McpError, ServerHandler, ServiceExt};
use schemars::JsonSchema;
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::serve::api::{self, AskBody, CheckBody, ViewBody};
use crate::serve::error::ApiError;
use crate::serve::state::AppState;
use crate::types::trace::Trace;

/// Input of `describe_model`.
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ModelName {
    /// Model name, as listed by `list_models`.
    pub model: String,
}

/// Input of `explain`: a trace by id (from `ask` in this session) or the
/// trace itself (a file written by `lucy ask --trace`).
#[derive(Debug, Deserialize, JsonSchema)]
#[serde(deny_unknown_fields)]
pub struct ExplainInput {
    /// `trace_id` returned by `ask`.
    #[serde(default)]
    pub trace_id: Option<String>,
    /// A whole trace object, when it comes from a file.
    #[serde(default)]
    pub trace: Option<serde_json::Value>,
    /// Also return the join path as an SVG document.
    #[serde(default)]
    pub svg: bool,
}

/// Output of `explain`.
#[derive(Debug, Serialize, JsonSchema)]
pub struct Explained {
    /// `lucy explain`'s per-phase report.
    pub report: String,
    /// `lucy explain --json`'s summary.
    pub summary: serde_json::Value,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub svg: Option<String>,
}

/// The MCP server.
#[derive(Clone)]
pub struct LucyMcp {
    st: Arc<AppState>,
}

fn ok<T: Serialize>(v: &T) -> CallToolResult {
    CallToolResult::structured(serde_json::to_value(v).unwrap_or_default())
}

/// A tool error the assistant can read and act on (not a protocol error).
fn failed(e: ApiError) -> CallToolResult {
    CallToolResult::structured_error(serde_json::to_value(&e.body).unwrap_or_default())
}

fn done<T: Serialize>(r: std::result::Result<T, ApiError>) -> std::result::Result<CallToolResult, McpError> {
    Ok(match r {
        Ok(v) => ok(&v),
        Err(e) => failed(e),
    })
}

#[tool_router]
impl LucyMcp {
    pub fn new(st: Arc<AppState>) -> Self {
        LucyMcp { st }
    }

    #[tool(
        description = "List the dbModels (database schema models) this server plans queries for: name, description, table and pattern counts, whether a database is attached for execution."
    )]
    async fn list_models(&self) -> std::result::Result<CallToolResult, McpError> {
        done(Ok(api::model_list(&self.st)))
    }

    #[tool(
        description = "Describe one dbModel: its tables with columns and descriptions, relationships, design patterns (m:m junctions, lookups, stars, snowflakes), constraints and core tables."
    )]
    async fn describe_model(
        &self,
        Parameters(m): Parameters<ModelName>,
    ) -> std::result::Result<CallToolResult, McpError> {
        done(api::model_detail(&self.st, &m.model))
    }

    #[tool(
        description = "GenerateView without an LLM: for given relevant tables (and optional TABLE.column attributes) the constraint solver finds the join path that respects the model's keys and patterns and returns a CREATE VIEW statement, the joins, the walk and, when infeasible, why."
    )]
    async fn view(&self, Parameters(b): Parameters<ViewBody>) -> std::result::Result<CallToolResult, McpError> {
        done(api::view_core(&self.st, b).await)
    }

    #[tool(
        description = "Answer a natural-language question over a dbModel end to end: MatchTables (LLM picks relevant tables), GenerateView (solver picks the joins), QueryView (LLM writes SQL over that one view, checked read-only), optionally executed on the model's database. Returns tables, view, SQL, rows, failure and a trace_id for `explain`."
    )]
    async fn ask(&self, Parameters(b): Parameters<AskBody>) -> std::result::Result<CallToolResult, McpError> {
        done(api::ask_core(&self.st, b).await)
    }

    #[tool(
        description = "Check a SQL query over the model's base tables against the model: joins that are not declared relationships, m:m tables joined without their junction (C3), lookups passed through (C4), forbidden tables or relationships, unknown names, aggregates inflated by fan-out. Returns findings with hints (empty: clean)."
    )]
    async fn check(&self, Parameters(b): Parameters<CheckBody>) -> std::result::Result<CallToolResult, McpError> {
        done(api::check_core(&self.st, b).await)
    }

    #[tool(
        description = "Explain an ask phase by phase (what MatchTables voted, which join path the solver took and why, what SQL was accepted or rejected): give the trace_id from `ask`, or a trace object written by `lucy ask --trace`."
    )]
    async fn explain(&self, Parameters(e): Parameters<ExplainInput>) -> std::result::Result<CallToolResult, McpError> {
        done(explain(&self.st, e))
    }
}

fn explain(st: &AppState, e: ExplainInput) -> std::result::Result<Explained, ApiError> {
    let trace: Trace = match (e.trace_id, e.trace) {
        (Some(id), None) => st
            .trace(&id)
            .map(|t| (*t).clone())
            .ok_or_else(|| ApiError::not_found(format!("no trace `{id}` in this session (ids come from `ask`)")))?,
        (None, Some(v)) => serde_json::from_value(v).map_err(|err| {
            ApiError::bad_request(format!("trace: not a lucy trace ({err}); pass what `lucy ask --trace FILE` wrote"))
        })?,
        _ => return Err(ApiError::bad_request("give exactly one of trace_id and trace")),
    };
    let graph = st.model(&trace.model).ok().map(|m| m.graph.clone());
    Ok(Explained {
        report: crate::pipeline::explain::render(&trace),
        summary: serde_json::to_value(crate::pipeline::explain::summary(&trace)).unwrap_or_default(),
        svg: if e.svg { crate::render::trace_svg(&trace, graph.as_deref()) } else { None },
    })
}

#[tool_handler]
impl ServerHandler for LucyMcp {
    fn get_info(&self) -> ServerConfig {
        ServerConfig::new(ServerCapabilities::builder().enable_tools().build())
            .with_server_info(Implementation::new("lucy", env!("CARGO_PKG_VERSION")))
            .with_instructions(
                "lucy plans SQL over curated database models: call list_models, then describe_model; \
                 `view` builds a join view for known tables without an LLM; `ask` answers a question end to end; \
                 `explain` shows why an ask chose what it chose.",
            )
    }
}

/// Serve MCP on stdin/stdout until the client closes them.
pub fn run_stdio(st: Arc<AppState>) -> Result<()> {
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .map_err(|e| Error::Input(format!("cannot start the async runtime: {e}")))?;
    rt.block_on(async move {
        let service = LucyMcp::new(st)
            .serve(rmcp::transport::stdio())
            .await
            .map_err(|e| Error::Input(format!("MCP handshake failed: {e}")))?;
        service.waiting().await.map_err(|e| Error::Input(format!("MCP server stopped: {e}")))?;
        Ok(())
    })
}
