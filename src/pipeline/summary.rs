//! The JSON answer of one ask, shared by `lucy ask --json`, `POST /v1/ask`
//! and the MCP `ask` tool, so all three print the same shape.

use schemars::JsonSchema;
use serde::Serialize;

use super::{AskOutcome, StopAfter};
use crate::sql::exec::QueryRows;
use crate::types::grain::FanoutReport;
use crate::types::trace::Failure;
use crate::types::{ColumnRef, ViewResult};

/// What an ask produced (the trace holds the details).
#[derive(Debug, Clone, PartialEq, Serialize, JsonSchema)]
pub struct AskSummary {
    /// The fan-out report of the accepted (or last) SQL attempt.
    pub fanout: Option<FanoutReport>,
    /// Relevant tables chosen by MatchTables (or given).
    pub tables: Vec<String>,
    /// Relevant attributes.
    pub attributes: Vec<ColumnRef>,
    /// GenerateView's result, when phase 2 ran.
    pub view: Option<ViewResult>,
    /// The accepted SQL over the view, when phase 3 ran.
    pub sql: Option<String>,
    /// Rows of the SQL, when it was executed.
    #[schemars(with = "Option<RowsSchema>")]
    pub rows: Option<QueryRows>,
    /// The phase the run stopped after on request.
    pub stopped_after: Option<StopAfter>,
    /// Where and why the run failed, if it did.
    pub failure: Option<Failure>,
}

/// Schema of [`QueryRows`] (cells are JSON scalars: null, number, text).
#[derive(JsonSchema)]
#[allow(dead_code)]
struct RowsSchema {
    columns: Vec<String>,
    rows: Vec<Vec<serde_json::Value>>,
    truncated: bool,
    /// How the view reached the connection: `temp_view`, `cte` or `none`.
    view_mode: String,
}

impl From<&AskOutcome> for AskSummary {
    fn from(o: &AskOutcome) -> Self {
        AskSummary {
            fanout: o.trace.query_view.as_ref().and_then(|q| q.attempts.last()).and_then(|a| a.fanout.clone()),
            tables: o.tables.clone(),
            attributes: o.attributes.clone(),
            view: o.view.clone(),
            sql: o.sql.clone(),
            rows: o.rows.clone(),
            stopped_after: o.stopped_after,
            failure: o.failure.clone(),
        }
    }
}
