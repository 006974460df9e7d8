//! The JSON schema excerpts the MatchTables prompts show (Lucy, Appendix
//! D.2.1): table → "description. Properties of T: c1, c2, …", and for one
//! table, attribute → description.

use serde_json::{Map, Value};

use crate::graph::{SchemaGraph, TableId};

/// "description. Properties of T: c1, c2." — plus, for a pattern root or an
/// inner node with children, the tables below it and their columns, so the
/// LLM can see what the pattern holds (Appendix D.2, Example D.3).
pub fn table_summary(graph: &SchemaGraph, t: TableId, with_subtree: bool) -> String {
    let table = graph.table(t);
    let mut s = String::new();
    if let Some(d) = table.description.as_deref().filter(|d| !d.trim().is_empty()) {
        s.push_str(d.trim());
        if !d.trim_end().ends_with('.') {
            s.push('.');
        }
        s.push(' ');
    }
    let cols: Vec<&str> = table.columns.iter().map(|c| c.name.as_str()).collect();
    s.push_str(&format!("Properties of {}: {}.", table.name, cols.join(", ")));
    if with_subtree {
        let below = subtree(graph, t);
        if !below.is_empty() {
            let kind = graph
                .pattern_root_kind(t)
                .or_else(|| graph.inner_position(t).map(|p| p.kind))
                .map(|k| match k {
                    crate::graph::TreeKind::Star => "star",
                    crate::graph::TreeKind::Snowflake => "snowflake",
                })
                .unwrap_or("pattern");
            let parts: Vec<String> = below
                .iter()
                .map(|&c| {
                    let cols: Vec<&str> = graph.table(c).columns.iter().map(|x| x.name.as_str()).collect();
                    format!("{}({})", graph.name(c), cols.join(", "))
                })
                .collect();
            s.push_str(&format!(" Inner tables of its {kind}: {}.", parts.join(", ")));
        }
    }
    s
}

/// Every table below `t` in its pattern tree, breadth-first.
pub fn subtree(graph: &SchemaGraph, t: TableId) -> Vec<TableId> {
    let mut out = Vec::new();
    let mut queue: std::collections::VecDeque<TableId> = graph.pattern_children(t).iter().copied().collect();
    while let Some(c) = queue.pop_front() {
        out.push(c);
        queue.extend(graph.pattern_children(c).iter().copied());
    }
    out
}

/// JSON object of table summaries, pretty-printed for the prompt.
pub fn tables_json(graph: &SchemaGraph, tables: &[TableId], with_subtree: bool) -> String {
    let mut m = Map::new();
    for &t in tables {
        m.insert(graph.name(t).to_string(), Value::String(table_summary(graph, t, with_subtree)));
    }
    serde_json::to_string_pretty(&Value::Object(m)).unwrap_or_default()
}

/// JSON object of one table's attributes (Example D.2): `DescriptionField`
/// then column → description (the SQL type when there is none).
pub fn attributes_json(graph: &SchemaGraph, t: TableId) -> String {
    let table = graph.table(t);
    let mut m = Map::new();
    m.insert("DescriptionField".into(), Value::String(table.description.clone().unwrap_or_default()));
    for c in &table.columns {
        let d = match c.description.as_deref().filter(|d| !d.trim().is_empty()) {
            Some(d) => d.to_string(),
            None => c.sql_type.clone(),
        };
        m.insert(c.name.clone(), Value::String(d));
    }
    serde_json::to_string_pretty(&Value::Object(m)).unwrap_or_default()
}

/// JSON for one pattern node: the node with its attributes, then each child
/// with its summary (and its own subtree).
pub fn node_json(graph: &SchemaGraph, t: TableId) -> String {
    let mut m = Map::new();
    let table = graph.table(t);
    let mut own = Map::new();
    own.insert("DescriptionField".into(), Value::String(table.description.clone().unwrap_or_default()));
    for c in &table.columns {
        own.insert(c.name.clone(), Value::String(c.description.clone().unwrap_or_else(|| c.sql_type.clone())));
    }
    m.insert(table.name.clone(), Value::Object(own));
    for &c in graph.pattern_children(t) {
        m.insert(graph.name(c).to_string(), Value::String(table_summary(graph, c, true)));
    }
    serde_json::to_string_pretty(&Value::Object(m)).unwrap_or_default()
}
