//! The step narrowing, inner branches and lookup filters share: solve a
//! changed view request again and run the answer's SQL, unchanged, over
//! the new view. No LLM call.

use std::collections::BTreeSet;

use crate::graph::SchemaGraph;
use crate::sql::exec::{run, Database, ExecOptions, QueryRows, ViewDef};
use crate::types::trace::{Rerun, ViewTrace};
use crate::types::{SolveStatus, ViewRequest, ViewResult};

/// What a step after the answer did; `T` is its trace section.
#[derive(Debug)]
pub enum Reran<T> {
    /// Nothing to change.
    NotTried,
    /// Tried; the first answer stands (the trace says why).
    Tried(T),
    /// The new view and the SQL's rows over it: the answer.
    Used(Box<ViewResult>, QueryRows, T),
}

impl<T> Reran<T> {
    /// The outcome of [`solve_and_run`] with its trace section, `section`
    /// built around the [`Rerun`] part.
    pub fn from_run(
        (rerun, answer): (Rerun, Option<(ViewResult, QueryRows)>),
        section: impl FnOnce(Rerun) -> T,
    ) -> Self {
        match answer {
            Some((v, rows)) => Reran::Used(Box::new(v), rows, section(rerun)),
            None => Reran::Tried(section(rerun)),
        }
    }
}

/// GenerateView for `req` and `sql` over its view: the trace part, and the
/// view with the rows when they are the answer (`what` names the view in
/// the reason: "narrower", "filtered", …). Not when the view is
/// infeasible, lacks a column of `used` (the view columns the SQL reads),
/// or the SQL fails on it.
pub fn solve_and_run(
    graph: &SchemaGraph,
    req: ViewRequest,
    used: &BTreeSet<String>,
    sql: &str,
    what: &str,
    db: &Database,
    exec: &ExecOptions,
) -> (Rerun, Option<(ViewResult, QueryRows)>) {
    let t0 = std::time::Instant::now();
    let solved = crate::solve::generate_view(graph, &req);
    let mut vt = ViewTrace { request: req, result: None, error: None, cost: Default::default() };
    vt.cost.ms = t0.elapsed().as_secs_f64() * 1000.0;
    let failed = |vt: ViewTrace, note: String| (Rerun { view: Some(vt), note: Some(note), ..Rerun::default() }, None);
    let v = match solved {
        Ok(v) if v.status != SolveStatus::Infeasible => v,
        Ok(v) => {
            let why = v.explanation.clone().unwrap_or_else(|| "infeasible".into());
            vt.result = Some(v);
            return failed(vt, why);
        }
        Err(e) => {
            vt.error = Some(e.to_string());
            return failed(vt, "GenerateView failed".into());
        }
    };
    vt.result = Some(v.clone());
    let have: BTreeSet<String> = v.columns.iter().map(|c| c.alias.to_ascii_lowercase()).collect();
    if let Some(missing) = used.iter().find(|c| !have.contains(&c.to_ascii_lowercase())) {
        return failed(vt, format!("the {what} view lacks {missing}"));
    }
    let Some(body) = v.body.as_ref() else {
        return failed(vt, format!("the {what} view has no SQL"));
    };
    match run(db, Some(ViewDef::from(body)), sql, exec) {
        Ok(rows) => {
            let rerun = Rerun { view: Some(vt), rows: Some(rows.rows.len()), used: true, note: None };
            (rerun, Some((v, rows)))
        }
        Err(e) => failed(vt, format!("the SQL failed on the {what} view: {e}")),
    }
}
