//! `--drop-unjoinable on|off` (issue 23): when MatchTables' relevant tables
//! lie in parts of the model that no relationship joins, no view can hold
//! them all and GenerateView is infeasible. With the lever on, lucy keeps
//! one part, drops the rest, and solves again; the trace's `unjoinable`
//! section says which tables it dropped and why that part. No LLM call.
//!
//! A part is a connected component of the model's relationship graph (in
//! either direction, without the relationships and tables the model
//! forbids) restricted to the relevant tables. The kept part is the first
//! by, in order:
//! 1. the relevant tables of the part the question names word for word
//!    (`link::named::core_tables`: "list all airline names" names
//!    `airlines`);
//! 2. the relevant tables and role instances it holds;
//! 3. holding the table MatchTables' vote ranked first;
//! 4. the earliest table in MatchTables' order.
//!
//! A table that joins no relevant table is almost always one the vote
//! added in excess (Spider 183: `airports` beside `airlines`, which the
//! imported `flight_2` model does not relate to anything). When the tables
//! are connected and the solve is infeasible for another reason (an m:m
//! junction, a lookup, a forbid), nothing is dropped: that explanation
//! stands. Tables given with `--tables` are never dropped.

use petgraph::unionfind::UnionFind;
use petgraph::visit::EdgeRef;

use crate::graph::{SchemaGraph, TableId};
use crate::types::Relevance;

/// `lucy ask`'s and `lucy bench`'s `--drop-unjoinable` default: on since
/// session 18. A run it changes would otherwise have failed in
/// GenerateView, so it cannot lose an answer; on the Spider sample's 100 it
/// answered 183, 240 and 938 (183 right; 62 → 63 with session 18's other
/// defaults), and DDO's and ACME's committed recordings hold no such
/// question.
pub const DEFAULT_ON: bool = true;

/// The relevant tables of `found` grouped by the part of the model each
/// lies in, parts in the order of their first table in `found`, tables in
/// `found`'s order (plain tables, then column tables, then role tables).
pub fn parts(graph: &SchemaGraph, found: &Relevance) -> Vec<Vec<TableId>> {
    let mut tables = found.all_tables();
    for r in &found.roles {
        if !tables.contains(&r.table) {
            tables.push(r.table);
        }
    }
    let component = components(graph);
    let mut out: Vec<(usize, Vec<TableId>)> = Vec::new();
    for t in tables {
        let c = component[t];
        match out.iter_mut().find(|(k, _)| *k == c) {
            Some((_, v)) => v.push(t),
            None => out.push((c, vec![t])),
        }
    }
    out.into_iter().map(|(_, v)| v).collect()
}

/// The component label of every table: the model's relationships joined
/// by union-find (petgraph's), without the forbidden relationships and any
/// relationship of a forbidden table.
fn components(graph: &SchemaGraph) -> Vec<usize> {
    let forbidden_rels = graph.forbidden_relationships();
    let forbidden_tables = graph.forbidden_tables();
    let mut uf = UnionFind::new(graph.len());
    for e in graph.petgraph().edge_references() {
        let (a, b) = (e.source().index(), e.target().index());
        if !forbidden_rels.contains(e.weight()) && !forbidden_tables.contains(&a) && !forbidden_tables.contains(&b) {
            uf.union(a, b);
        }
    }
    uf.into_labeling()
}

/// The kept part: the relevance restricted to it, its tables, the dropped
/// tables and why it was kept. `None` when the relevant tables lie in one
/// part (the infeasibility has another cause).
#[derive(Debug, Clone, PartialEq)]
pub struct Kept {
    pub relevance: Relevance,
    /// Every part's tables, in [`parts`]' order.
    pub parts: Vec<Vec<String>>,
    pub kept: Vec<String>,
    pub dropped: Vec<String>,
    pub why: String,
}

/// Choose the part to keep (see the module documentation); `top` is the
/// table MatchTables' vote ranked first.
pub fn keep_best(graph: &SchemaGraph, question: &str, found: &Relevance, top: Option<TableId>) -> Option<Kept> {
    let parts = parts(graph, found);
    if parts.len() < 2 {
        return None;
    }
    let all = found.all_tables();
    let units = |p: &[TableId]| {
        p.iter().filter(|t| all.contains(t)).count() + found.roles.iter().filter(|r| p.contains(&r.table)).count()
    };
    let named: Vec<Vec<TableId>> =
        parts.iter().map(|p| crate::link::named::core_tables(graph, question, p, &[])).collect();
    let score = |i: usize| (named[i].len(), units(&parts[i]), top.is_some_and(|t| parts[i].contains(&t)));
    // Ties keep the earlier part (`max_by` keeps the last: compare reversed
    // indices).
    let best = (0..parts.len()).max_by(|&a, &b| score(a).cmp(&score(b)).then(b.cmp(&a)))?;
    let p = &parts[best];
    let names = |v: &[TableId]| -> Vec<String> { v.iter().map(|&t| graph.name(t).to_string()).collect() };
    let why = {
        let (n, u, has_top) = score(best);
        let runner_up = (0..parts.len()).filter(|&i| i != best).map(score).max().unwrap_or_default();
        if n > runner_up.0 {
            format!("the question names {}", names(&named[best]).join(", "))
        } else if u > runner_up.1 {
            format!("it holds {u} of the relevant tables, more than any other part")
        } else if has_top && !runner_up.2 {
            "it holds the table the vote ranked first".to_string()
        } else {
            "the first part in MatchTables' order (a tie)".to_string()
        }
    };
    let relevance = Relevance {
        tables: found.tables.iter().copied().filter(|t| p.contains(t)).collect(),
        columns: found.columns.iter().copied().filter(|c| p.contains(&c.table)).collect(),
        roles: found.roles.iter().copied().filter(|r| p.contains(&r.table)).collect(),
    };
    Some(Kept {
        relevance,
        parts: parts.iter().map(|p| names(p)).collect(),
        kept: names(p),
        dropped: parts.iter().enumerate().filter(|&(i, _)| i != best).flat_map(|(_, p)| names(p)).collect(),
        why,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A Spider model as imported (dbmodels/spider/): flight_2's `airlines`
    /// relates to nothing.
    fn spider(db: &str) -> SchemaGraph {
        let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("dbmodels/spider").join(format!("{db}.json"));
        crate::graph::load(&path).unwrap()
    }

    fn flights() -> SchemaGraph {
        spider("flight_2")
    }

    fn rel(g: &SchemaGraph, names: &[&str]) -> Relevance {
        let mut r = Relevance::default();
        for n in names {
            r.add_table(g.table_id(n).unwrap());
        }
        r
    }

    #[test]
    fn connected_tables_form_one_part_and_nothing_is_dropped() {
        let g = flights();
        let r = rel(&g, &["flights", "airports"]);
        assert_eq!(parts(&g, &r).len(), 1);
        assert_eq!(keep_best(&g, "flights from Aberdeen", &r, None), None);
    }

    #[test]
    fn the_part_the_question_names_is_kept() {
        let g = flights();
        let r = rel(&g, &["airports", "airlines"]);
        let k = keep_best(&g, "List all airline names and their abbreviations in USA.", &r, None).unwrap();
        assert_eq!(k.kept, ["airlines"]);
        assert_eq!(k.dropped, ["airports"]);
        assert_eq!(k.relevance.tables, vec![g.table_id("airlines").unwrap()]);
        assert!(k.why.contains("names airlines"), "{}", k.why);
    }

    #[test]
    fn then_the_part_with_more_relevant_tables_then_the_top_vote() {
        let g = flights();
        let mut r = rel(&g, &["airlines", "flights", "airports"]);
        let city = g.require_column(g.table_id("airports").unwrap(), "City").unwrap();
        r.add_column(city);
        let k = keep_best(&g, "Which carrier has most departures?", &r, None).unwrap();
        assert_eq!(k.kept, ["flights", "airports"]);
        assert_eq!(k.dropped, ["airlines"]);
        assert_eq!(k.relevance.columns, vec![city]);
        assert!(k.why.contains("2 of the relevant tables"), "{}", k.why);
        let r = rel(&g, &["airports", "airlines"]);
        let top = g.table_id("airlines");
        let k = keep_best(&g, "Which carrier?", &r, top).unwrap();
        assert_eq!(k.kept, ["airlines"]);
        assert!(k.why.contains("vote ranked first"), "{}", k.why);
        let k = keep_best(&g, "Which carrier?", &r, None).unwrap();
        assert_eq!(k.kept, ["airports"]);
        assert!(k.why.contains("a tie"), "{}", k.why);
    }

    #[test]
    fn a_charge_table_joined_to_nothing_leaves_the_treatments() {
        let g = spider("dog_kennels");
        let r = rel(&g, &["Treatment_Types", "Charges", "Treatments"]);
        let q = "What is the description of the treatment type that costs the least money in total?";
        let k = keep_best(&g, q, &r, g.table_id("Treatment_Types")).unwrap();
        assert_eq!(k.kept, ["Treatment_Types", "Treatments"]);
        assert_eq!(k.dropped, ["Charges"]);
    }
}
