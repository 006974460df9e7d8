//! `lucy explain TRACE.json`: render a trace written by `lucy ask --trace`
//! as a per-phase report (`--json`: a compact summary).

use std::path::PathBuf;

use super::Ctx;
use lucy::error::Result;
use lucy::pipeline::explain;
use lucy::types::trace::Trace;

#[derive(Debug, clap::Args)]
pub struct ExplainArgs {
    /// Trace file written by `lucy ask --trace` (or by `lucy bench`).
    pub trace: PathBuf,
}

pub fn run(args: ExplainArgs, ctx: Ctx) -> Result<i32> {
    let trace = Trace::load(&args.trace)?;
    if ctx.json {
        super::print_json(&explain::summary(&trace))?;
    } else {
        print!("{}", explain::render(&trace));
    }
    Ok(0)
}
