//! `lucy explain TRACE.json`: render a trace written by `lucy ask --trace`
//! as a per-phase report (`--json`: a compact summary).

use std::path::PathBuf;

use super::Ctx;
use lucy::error::{Error, Result};
use lucy::graph::SchemaGraph;
use lucy::pipeline::explain;
use lucy::types::trace::Trace;

#[derive(Debug, clap::Args)]
pub struct ExplainArgs {
    /// Trace file written by `lucy ask --trace` (or by `lucy bench`).
    pub trace: PathBuf,
    /// Also draw the trace's join path (with MatchTables' votes) as an SVG
    /// picture into FILE.
    #[arg(long, value_name = "FILE")]
    pub svg: Option<PathBuf>,
    /// The dbModel the trace was made with: the picture then also shows
    /// pattern roles and the lookups/junctions the solver refused.
    #[arg(long, value_name = "FILE", requires = "svg")]
    pub model: Option<PathBuf>,
}

pub fn run(args: ExplainArgs, ctx: Ctx) -> Result<i32> {
    let trace = Trace::load(&args.trace)?;
    if let Some(path) = &args.svg {
        write_svg(&trace, &args, path)?;
    }
    if ctx.json {
        super::print_json(&explain::summary(&trace))?;
    } else {
        print!("{}", explain::render(&trace));
    }
    Ok(0)
}

fn write_svg(trace: &Trace, args: &ExplainArgs, path: &std::path::Path) -> Result<()> {
    let graph = match &args.model {
        Some(m) => {
            let g = SchemaGraph::new(lucy::model::load(m)?)?;
            if !g.model().name.eq_ignore_ascii_case(&trace.model) {
                return Err(Error::Input(format!(
                    "--model {} is the dbModel `{}`, but the trace {} was made with `{}`; pass that model's file",
                    m.display(),
                    g.model().name,
                    args.trace.display(),
                    trace.model
                )));
            }
            Some(g)
        }
        None => None,
    };
    let picture = lucy::render::trace_svg(trace, graph.as_ref()).ok_or_else(|| {
        Error::Input(format!(
            "{}: the trace has no GenerateView result (the run stopped or failed before phase 2), so there is no join path to draw",
            args.trace.display()
        ))
    })?;
    std::fs::write(path, picture).map_err(|e| Error::io(path, e))
}
