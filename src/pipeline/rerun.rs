//! The step narrowing, inner branches and lookup filters share: solve a
//! changed view request again and run the answer's SQL, unchanged, over
//! the new view. No LLM call.

use std::collections::BTreeSet;

use crate::graph::SchemaGraph;
use crate::sql::exec::{run, Database, ExecOptions, QueryRows, ViewDef};
use crate::types::trace::ViewTrace;
use crate::types::{SolveStatus, ViewRequest, ViewResult};

/// GenerateView for `req` and `sql` over its view: the trace of the solve,
/// and the view with the rows, or why not (`what` names the view in the
/// reason: "narrower", "filtered", …). Not when the view is infeasible,
/// lacks a column of `used` (the view columns the SQL reads), or the SQL
/// fails on it.
pub fn solve_and_run(
    graph: &SchemaGraph,
    req: ViewRequest,
    used: &BTreeSet<String>,
    sql: &str,
    what: &str,
    db: &Database,
    exec: &ExecOptions,
) -> (ViewTrace, Result<(ViewResult, QueryRows), String>) {
    let t0 = std::time::Instant::now();
    let solved = crate::solve::generate_view(graph, &req);
    let mut vt = ViewTrace { request: req, result: None, error: None, cost: Default::default() };
    vt.cost.ms = t0.elapsed().as_secs_f64() * 1000.0;
    let v = match solved {
        Ok(v) if v.status != SolveStatus::Infeasible => v,
        Ok(v) => {
            let why = v.explanation.clone().unwrap_or_else(|| "infeasible".into());
            vt.result = Some(v);
            return (vt, Err(why));
        }
        Err(e) => {
            vt.error = Some(e.to_string());
            return (vt, Err("GenerateView failed".into()));
        }
    };
    vt.result = Some(v.clone());
    let have: BTreeSet<String> = v.columns.iter().map(|c| c.alias.to_ascii_lowercase()).collect();
    if let Some(missing) = used.iter().find(|c| !have.contains(&c.to_ascii_lowercase())) {
        return (vt, Err(format!("the {what} view lacks {missing}")));
    }
    let Some(body) = v.body.as_ref() else {
        return (vt, Err(format!("the {what} view has no SQL")));
    };
    match run(db, Some(ViewDef::from(body)), sql, exec) {
        Ok(rows) => (vt, Ok((v, rows))),
        Err(e) => (vt, Err(format!("the SQL failed on the {what} view: {e}"))),
    }
}
