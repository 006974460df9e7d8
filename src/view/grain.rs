//! Grain analysis of a built view: for every instance, the joins whose
//! "many" side repeats its rows (read away from the instance along the
//! view's join tree, with the relationships' cardinalities: M:1 and 1:1 keep
//! one row, 1:M repeats it, an m:m pattern is 1:M into its junction), and
//! for every column, the instance it comes from.
//!
//! Outer joins do not change the analysis: a LEFT JOIN to a "many" side
//! repeats the left rows just like an inner one (and keeps a row with NULLs
//! when nothing matches, which no count of the left side is affected by).

use crate::graph::SchemaGraph;
use crate::types::grain::{multipliers, ColumnGrain, Grain, GrainLink, InstanceGrain};

use super::joins::JoinTree;

/// A view column as the builder made it: alias, index of its instance in
/// the join tree, and the model column it holds.
pub struct BuiltColumn<'a> {
    pub alias: &'a str,
    pub instance: usize,
    pub column: &'a str,
}

/// The grain of a view built from `jt` with these columns. `stand_ins`
/// are the columns the view left out because an INNER join makes them
/// equal to a view column (`alias` names that column): an instance whose
/// key is among them still has a usable key.
pub fn of_view(
    graph: &SchemaGraph,
    jt: &JoinTree,
    columns: &[BuiltColumn<'_>],
    stand_ins: &[BuiltColumn<'_>],
) -> Grain {
    let n = jt.instances.len();
    let mut edges = Vec::with_capacity(jt.joins.len());
    let mut links = Vec::with_capacity(jt.joins.len());
    for j in &jt.joins {
        let c = graph.relationship(j.rel).cardinality;
        let card = if super::joins::left_is_from(graph, jt, j) { c } else { c.reversed() };
        edges.push((j.left, j.right, card));
        links.push(GrainLink {
            left: jt.instances[j.left].alias.clone(),
            right: jt.instances[j.right].alias.clone(),
            cardinality: card,
        });
    }
    let junction: Vec<bool> = jt.instances.iter().map(|i| graph.junction_of(i.table).is_some()).collect();
    // Joins come in join order: the left side is already in the view.
    let mut outer = vec![false; n];
    for j in &jt.joins {
        outer[j.right] = outer[j.left] || j.kind == crate::types::JoinKind::Left;
    }
    let instances = jt
        .instances
        .iter()
        .enumerate()
        .map(|(i, inst)| {
            let table = graph.table(inst.table);
            let key = table
                .primary_key
                .iter()
                .filter_map(|k| {
                    columns
                        .iter()
                        .chain(stand_ins)
                        .find(|c| c.instance == i && c.column.eq_ignore_ascii_case(k))
                        .map(|c| c.alias.to_string())
                })
                .collect::<Vec<_>>();
            // A key is usable only when every key column is in the view.
            let key = if key.len() == table.primary_key.len() { key } else { Vec::new() };
            InstanceGrain {
                instance: inst.alias.clone(),
                table: table.name.clone(),
                key,
                multiplied_by: multipliers(n, &edges, &junction, &[i])
                    .into_iter()
                    .map(|m| jt.instances[m].alias.clone())
                    .collect(),
                junction: junction[i],
                outer: outer[i],
            }
        })
        .collect();
    let columns = columns
        .iter()
        .map(|c| ColumnGrain { alias: c.alias.to_string(), instance: jt.instances[c.instance].alias.clone() })
        .collect();
    Grain { instances, links, columns }
}

/// The grain as text lines for `lucy view` and `lucy explain`: one summary
/// line, then one line per column with a `*` marker on columns whose rows
/// the view repeats.
pub fn describe(g: &Grain) -> Vec<String> {
    if g.instances.is_empty() {
        return Vec::new();
    }
    let once = g.grain_instances();
    let mut out = vec![if !g.fans_out() {
        "grain: no join repeats rows (every aggregate counts each row once)".to_string()
    } else if once.is_empty() {
        let names: Vec<&str> = g.instances.iter().map(|i| i.instance.as_str()).collect();
        format!("grain: a row is a combination of rows of {} (no table's rows appear once each)", names.join(", "))
    } else {
        format!("grain: one row per row of {}; other tables' rows repeat", once.join(", "))
    }];
    if g.fans_out() {
        out.push("columns (* = rows repeated by the view: SUM/AVG/COUNT over them fan out):".into());
    } else {
        out.push("columns:".into());
    }
    let w = g.columns.iter().map(|c| c.alias.chars().count()).max().unwrap_or(0);
    for c in &g.columns {
        let inst = g.instance(&c.instance);
        let by = inst.map(|i| i.multiplied_by.clone()).unwrap_or_default();
        let (mark, mut note) =
            if by.is_empty() { (' ', String::new()) } else { ('*', format!("  repeated by {}", by.join(", "))) };
        if inst.is_some_and(|i| i.outer) {
            note.push_str("  (LEFT JOIN: NULL where no row matches)");
        }
        out.push(format!("  {mark} {:<w$}  from {}{note}", c.alias, c.instance));
    }
    out
}
