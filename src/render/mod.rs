//! Pictures of the join path: one SVG renderer used by `lucy view --svg`,
//! `lucy explain --svg`, the web page of `lucy serve` and the MCP `view`
//! tool.
//!
//! [`scene`] decides what to show (the view's tables and joins, the refused
//! and unused neighbourhood); [`svg`] lays it out with layout-rs and draws it.

pub mod scene;
pub mod svg;

pub use scene::{EdgeKind, NodeKind, Scene, SceneEdge, SceneNode};

use crate::graph::SchemaGraph;
use crate::types::trace::Trace;
use crate::types::ViewResult;

/// The SVG picture of a GenerateView result; with the model's graph it also
/// shows pattern roles and the lookups/junctions the solver refused.
pub fn view_svg(view: &ViewResult, graph: Option<&SchemaGraph>) -> String {
    svg::render(&Scene::of_view(view, graph))
}

/// The SVG picture of the view in a trace, with MatchTables' votes on the
/// tables. `None` when the trace has no GenerateView result (the run
/// stopped or failed before it).
pub fn trace_svg(trace: &Trace, graph: Option<&SchemaGraph>) -> Option<String> {
    let view = trace.generate_view.as_ref()?.result.as_ref()?;
    let mut scene = Scene::of_view(view, graph);
    if let Some(mt) = &trace.match_tables {
        scene = scene.with_votes(mt);
    }
    Some(svg::render(&scene))
}

#[cfg(test)]
mod tests;
