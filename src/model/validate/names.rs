//! Names and keys: non-empty, unique (case-insensitively), primary key
//! columns that exist.

use std::collections::HashMap;

use super::{issue, Index};
use crate::error::ModelIssue;

pub(super) fn check(ix: &Index, out: &mut Vec<ModelIssue>) {
    let m = ix.model;
    if m.name.trim().is_empty() {
        out.push(issue(
            "$.name".into(),
            "the model name is empty".into(),
            "give the database a short name, e.g. \"ddo\"",
        ));
    }
    if m.tables.is_empty() {
        out.push(issue("$.tables".into(), "the model has no tables".into(), "list the database's tables in $.tables"));
    }
    let mut seen: HashMap<String, usize> = HashMap::new();
    for (i, t) in m.tables.iter().enumerate() {
        let base = format!("$.tables[{i}]");
        if t.name.trim().is_empty() {
            out.push(issue(format!("{base}.name"), "empty table name".into(), "give every table its SQL name"));
        } else if let Some(first) = seen.insert(t.name.to_lowercase(), i) {
            seen.insert(t.name.to_lowercase(), first);
            out.push(issue(
                format!("{base}.name"),
                format!("duplicate table name `{}` (also $.tables[{first}]; names are case-insensitive)", t.name),
                "remove or rename one of the two tables",
            ));
        }
        for (k, part) in t.relation.iter().enumerate() {
            if part.trim().is_empty() || part.len() > 255 {
                out.push(issue(
                    format!("{base}.relation[{k}]"),
                    format!("table `{}`: relation part {k} is empty or over 255 bytes", t.name),
                    "give the schema and table name the warehouse uses, e.g. [\"marts\", \"orders\"], or drop `relation`",
                ));
            }
        }
        if t.relation.len() > 3 {
            out.push(issue(
                format!("{base}.relation"),
                format!(
                    "table `{}`: a relation has at most 3 parts (catalog, schema, table), not {}",
                    t.name,
                    t.relation.len()
                ),
                "write [schema, table] or [catalog, schema, table]",
            ));
        }
        columns(t, &base, out);
    }
    relationship_names(ix, out);
}

fn columns(t: &crate::types::Table, base: &str, out: &mut Vec<ModelIssue>) {
    if t.columns.is_empty() {
        out.push(issue(
            format!("{base}.columns"),
            format!("table `{}` has no columns", t.name),
            "list the table's columns",
        ));
    }
    let mut seen: HashMap<String, usize> = HashMap::new();
    for (j, c) in t.columns.iter().enumerate() {
        if c.name.trim().is_empty() {
            out.push(issue(
                format!("{base}.columns[{j}].name"),
                format!("empty column name in table `{}`", t.name),
                "give every column its SQL name",
            ));
        } else if let Some(first) = seen.get(&c.name.to_lowercase()) {
            out.push(issue(
                format!("{base}.columns[{j}].name"),
                format!(
                    "duplicate column `{}` in table `{}` (also {base}.columns[{first}]; names are case-insensitive)",
                    c.name, t.name
                ),
                "remove or rename one of the two columns",
            ));
        } else {
            seen.insert(c.name.to_lowercase(), j);
        }
    }
    let mut pk_seen = Vec::new();
    for (k, p) in t.primary_key.iter().enumerate() {
        if t.column(p).is_none() {
            let close = crate::model::closest(p, t.columns.iter().map(|c| c.name.as_str()));
            out.push(issue(
                format!("{base}.primary_key[{k}]"),
                format!("primary key column `{p}` is not a column of table `{}`", t.name),
                &match close {
                    Some(c) => format!("did you mean `{c}`? Primary key columns must be listed in {base}.columns"),
                    None => format!("add the column to {base}.columns or fix the key"),
                },
            ));
        } else if pk_seen.contains(&p.to_lowercase()) {
            out.push(issue(
                format!("{base}.primary_key[{k}]"),
                format!("column `{p}` appears twice in the primary key of `{}`", t.name),
                "list each key column once",
            ));
        }
        pk_seen.push(p.to_lowercase());
    }
}

/// Relationship names (or generated ids of unnamed ones) must be unique:
/// patterns and constraints refer to relationships by them. Two
/// relationships with the same tables and join columns are duplicates
/// whatever their names.
fn relationship_names(ix: &Index, out: &mut Vec<ModelIssue>) {
    let mut labels: HashMap<String, usize> = HashMap::new();
    let mut shapes: HashMap<String, usize> = HashMap::new();
    for (r, rel) in ix.model.relationships.iter().enumerate() {
        let label = rel.id();
        if let Some(&first) = labels.get(&label.to_lowercase()) {
            if rel.name.is_none() && ix.model.relationships[first].name.is_none() {
                // Same generated id: the shape check below reports it.
                shape_check(r, rel, &mut shapes, out);
                continue;
            }
            let path =
                if rel.name.is_some() { format!("$.relationships[{r}].name") } else { format!("$.relationships[{r}]") };
            out.push(issue(
                path,
                format!(
                    "duplicate relationship name `{label}` (also $.relationships[{first}]; names are case-insensitive)"
                ),
                "give each relationship a unique `name`",
            ));
        } else {
            labels.insert(label.to_lowercase(), r);
        }
        shape_check(r, rel, &mut shapes, out);
    }
}

fn shape_check(
    r: usize,
    rel: &crate::types::Relationship,
    shapes: &mut HashMap<String, usize>,
    out: &mut Vec<ModelIssue>,
) {
    let shape = crate::types::Relationship { name: None, description: None, ..rel.clone() }.id().to_lowercase();
    if let Some(&first) = shapes.get(&shape) {
        out.push(issue(
            format!("$.relationships[{r}]"),
            format!(
                "relationship `{}` joins the same tables on the same columns as $.relationships[{first}]",
                rel.id()
            ),
            "remove the duplicate relationship",
        ));
    } else {
        shapes.insert(shape, r);
    }
}
