//! Human-readable and JSON summaries of a dbModel (`lucy model check` and
//! `lucy model show`).

use std::collections::{BTreeMap, HashMap};
use std::fmt::Write;

use serde::Serialize;

use crate::graph::{SchemaGraph, TableId, TreeKind};
use crate::types::{Cardinality, Pattern};

/// What `lucy model check` reports for a valid model.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Summary {
    pub name: String,
    pub tables: usize,
    pub columns: usize,
    pub relationships: usize,
    /// Pattern count by kind (`many_to_many`, `star`, `snowflake`, `lookup`).
    pub patterns: BTreeMap<String, usize>,
    /// Tables that are not inner tables of a star/snowflake, model order.
    pub core_tables: Vec<String>,
    pub forbid_tables: usize,
    pub forbid_relationships: usize,
    pub require_tables: usize,
}

/// Summarise a model.
pub fn summary(g: &SchemaGraph) -> Summary {
    let m = g.model();
    let mut patterns = BTreeMap::new();
    for p in &m.patterns {
        *patterns.entry(pattern_kind(p).to_string()).or_insert(0) += 1;
    }
    Summary {
        name: m.name.clone(),
        tables: m.tables.len(),
        columns: m.tables.iter().map(|t| t.columns.len()).sum(),
        relationships: m.relationships.len(),
        patterns,
        core_tables: g.core_tables().into_iter().map(|t| g.name(t).to_string()).collect(),
        forbid_tables: m.constraints.forbid_tables.len(),
        forbid_relationships: m.constraints.forbid_relationships.len(),
        require_tables: m.constraints.require_tables.len(),
    }
}

/// The `kind` tag of a pattern.
pub fn pattern_kind(p: &Pattern) -> &'static str {
    match p {
        Pattern::ManyToMany { .. } => "many_to_many",
        Pattern::Star { .. } => "star",
        Pattern::Snowflake { .. } => "snowflake",
        Pattern::Lookup { .. } => "lookup",
    }
}

/// How many core table names `lucy model check` lists before "… and N
/// more" (a 10,000-table model has thousands; `--json` keeps them all).
const CORE_LIST_MAX: usize = 40;

/// `names` joined by ", ", the first `max` of them and a count of the rest.
fn name_list(names: &[String], max: usize) -> String {
    if names.len() <= max {
        return names.join(", ");
    }
    format!("{}, … and {} more (all in --json)", names[..max].join(", "), names.len() - max)
}

/// The summary as text lines.
pub fn summary_text(s: &Summary, file: &str) -> String {
    let mut out = String::new();
    let kinds = if s.patterns.is_empty() {
        String::new()
    } else {
        format!(" ({})", s.patterns.iter().map(|(k, n)| format!("{n} {k}")).collect::<Vec<_>>().join(", "))
    };
    let _ = writeln!(out, "{file}: dbModel `{}` is valid", s.name);
    let _ = writeln!(out, "  tables:        {} ({} columns)", s.tables, s.columns);
    let _ = writeln!(out, "  relationships: {}", s.relationships);
    let _ = writeln!(out, "  patterns:      {}{kinds}", s.patterns.values().sum::<usize>());
    let _ = writeln!(out, "  core tables:   {} ({})", s.core_tables.len(), name_list(&s.core_tables, CORE_LIST_MAX));
    if s.forbid_tables + s.forbid_relationships + s.require_tables > 0 {
        let _ = writeln!(
            out,
            "  constraints:   {} forbidden table(s), {} forbidden relationship(s), {} required table(s)",
            s.forbid_tables, s.forbid_relationships, s.require_tables
        );
    }
    out
}

/// A readable listing of tables, columns, keys, relationships, patterns and
/// constraints.
pub fn show_text(g: &SchemaGraph) -> String {
    let m = g.model();
    let mut o = String::new();
    let _ = writeln!(o, "dbModel `{}`{}", m.name, m.dialect.map(|d| format!(" ({})", d.as_str())).unwrap_or_default());
    if let Some(d) = &m.description {
        let _ = writeln!(o, "  {d}");
    }
    // Foreign-key references per (table, lower-case column), computed once.
    let mut refs: HashMap<(TableId, String), Vec<String>> = HashMap::new();
    for (r, rel) in m.relationships.iter().enumerate() {
        let (from, to) = g.endpoints(r);
        for [a, b] in &rel.on {
            let (t, col, target) = match rel.cardinality {
                Cardinality::OneToMany => (to, b, format!("{}.{a}", rel.from)),
                _ => (from, a, format!("{}.{b}", rel.to)),
            };
            refs.entry((t, col.to_lowercase())).or_default().push(format!("→ {target}"));
        }
    }
    let _ = writeln!(o, "\nTables ({}):", m.tables.len());
    for (id, t) in m.tables.iter().enumerate() {
        let _ = writeln!(o, "  {} [{}]{}", t.name, roles(g, id).join(", "), desc(&t.description));
        if !t.relation.is_empty() {
            let _ = writeln!(o, "    relation: {}", t.relation.join("."));
        }
        if let Some(from) = &t.origin {
            let _ = writeln!(o, "    origin: {from}");
        }
        for c in &t.columns {
            let mut flags = Vec::new();
            if t.primary_key.iter().any(|k| k.eq_ignore_ascii_case(&c.name)) {
                flags.push("PK".to_string());
            }
            if let Some(r) = refs.get(&(id, c.name.to_lowercase())) {
                flags.extend(r.iter().cloned());
            }
            if !c.nullable {
                flags.push("NOT NULL".into());
            }
            let flags = if flags.is_empty() { String::new() } else { format!(" [{}]", flags.join(", ")) };
            let ty = if c.sql_type.is_empty() { String::new() } else { format!(" {}", c.sql_type) };
            let from = c.origin.as_ref().map(|f| format!("  ({f})")).unwrap_or_default();
            let _ = writeln!(o, "    {}{ty}{flags}{}{from}", c.name, desc(&c.description));
        }
    }
    let _ = writeln!(o, "\nRelationships ({}):", m.relationships.len());
    for rel in &m.relationships {
        let on: Vec<String> = rel.on.iter().map(|[a, b]| format!("{}.{a} = {}.{b}", rel.from, rel.to)).collect();
        let role = match &rel.role {
            Some(r) => format!("  role {}: {r}{}", rel.to, desc(&rel.role_description)),
            None => String::new(),
        };
        let _ = writeln!(
            o,
            "  {}  {}  {}{}{role}",
            rel.id(),
            rel.cardinality.as_str(),
            on.join(" AND "),
            desc(&rel.description)
        );
        if let Some(from) = &rel.origin {
            let _ = writeln!(o, "    origin: {from}");
        }
    }
    let _ = writeln!(o, "\nPatterns ({}):", m.patterns.len());
    for p in &m.patterns {
        match p {
            Pattern::ManyToMany { junction, sides, description, .. } => {
                let _ = writeln!(
                    o,
                    "  many_to_many: {} between {} and {}{}",
                    junction,
                    sides[0],
                    sides[1],
                    desc(description)
                );
            }
            Pattern::Lookup { tables, description } => {
                let _ = writeln!(o, "  lookup: {}{}", tables.join(", "), desc(description));
            }
            Pattern::Star { root, description, .. } | Pattern::Snowflake { root, description, .. } => {
                let _ = writeln!(o, "  {} rooted at {}{}", pattern_kind(p), root, desc(description));
                if let Some(r) = g.table_id(root) {
                    tree_lines(g, r, 2, &mut o);
                }
            }
        }
    }
    let c = &m.constraints;
    if !c.is_empty() {
        let _ = writeln!(o, "\nConstraints:");
        for (label, v) in [
            ("forbid_tables", &c.forbid_tables),
            ("forbid_relationships", &c.forbid_relationships),
            ("require_tables", &c.require_tables),
        ] {
            if !v.is_empty() {
                let _ = writeln!(o, "  {label}: {}", v.join(", "));
            }
        }
    }
    o
}

fn tree_lines(g: &SchemaGraph, t: TableId, indent: usize, o: &mut String) {
    let one_of = if g.exclusive_children(t) { " (exclusive: each row is one kind)" } else { "" };
    for &c in g.pattern_children(t) {
        let _ = writeln!(o, "{}└ {}{one_of}", "  ".repeat(indent), g.name(c));
        tree_lines(g, c, indent + 1, o);
    }
}

/// Pattern roles of a table, for the listing.
fn roles(g: &SchemaGraph, t: TableId) -> Vec<String> {
    let mut r = Vec::new();
    match g.inner_position(t) {
        Some(p) => r.push(format!("inner of {} {}", kind(p.kind), g.name(p.root))),
        None => r.push("core".into()),
    }
    if let Some(k) = g.pattern_root_kind(t) {
        r.push(format!("{} root", kind(k)));
    }
    if g.is_lookup(t) {
        r.push("lookup".into());
    }
    if let Some(j) = g.junction_of(t) {
        r.push(format!("m:m junction of {} and {}", g.name(j.sides[0]), g.name(j.sides[1])));
    }
    r
}

fn kind(k: TreeKind) -> &'static str {
    match k {
        TreeKind::Star => "star",
        TreeKind::Snowflake => "snowflake",
    }
}

fn desc(d: &Option<String>) -> String {
    match d {
        Some(d) if !d.is_empty() => format!(" — {d}"),
        _ => String::new(),
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn long_core_lists_are_cut_with_a_count() {
        let names: Vec<String> = (0..45).map(|i| format!("T{i}")).collect();
        let s = super::name_list(&names, 40);
        assert!(s.starts_with("T0, T1,") && s.ends_with("T39, … and 5 more (all in --json)"), "{s}");
        assert_eq!(super::name_list(&names[..3], 40), "T0, T1, T2");
    }
}
