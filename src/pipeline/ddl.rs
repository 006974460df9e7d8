//! CREATE TABLE text of (part of) a dbModel, for the prompts that show a
//! schema: PROMPTB (the direct baseline) and PROMPTC' (`--schema-context`).

use crate::graph::{SchemaGraph, TableId};

/// DDL of `tables` (all tables when `None`), with primary and foreign keys.
/// With `comments`, table and column descriptions become `--` comments
/// (the paper's GPT4EX variant of PROMPTB).
pub fn ddl(graph: &SchemaGraph, tables: Option<&[TableId]>, comments: bool) -> String {
    let all: Vec<TableId> = (0..graph.len()).collect();
    let ids = tables.unwrap_or(&all);
    let mut out = Vec::new();
    for &t in ids {
        let table = graph.table(t);
        let mut s = String::new();
        if comments {
            if let Some(d) = table.description.as_deref().filter(|d| !d.trim().is_empty()) {
                s.push_str(&format!("-- {}\n", one_line(d)));
            }
        }
        s.push_str(&format!("CREATE TABLE {} (\n", table.name));
        let mut lines: Vec<String> = table
            .columns
            .iter()
            .map(|c| {
                let mut l = format!("  {}", c.name);
                if !c.sql_type.is_empty() {
                    l.push(' ');
                    l.push_str(&c.sql_type);
                }
                if !c.nullable {
                    l.push_str(" NOT NULL");
                }
                if comments {
                    if let Some(d) = c.description.as_deref().filter(|d| !d.trim().is_empty()) {
                        // Keep the comma before the comment: the comment is appended after joining.
                        l.push_str(&format!("\u{0}-- {}", one_line(d)));
                    }
                }
                l
            })
            .collect();
        if !table.primary_key.is_empty() {
            lines.push(format!("  PRIMARY KEY ({})", table.primary_key.join(", ")));
        }
        for (other, rel) in graph.neighbors(t) {
            let r = graph.relationship(rel);
            // Declared from the foreign-key side: `from` holds the columns.
            if graph.table_id(&r.from) == Some(t) && r.cardinality != crate::types::Cardinality::OneToMany {
                let local: Vec<&str> = r.on.iter().map(|p| p[0].as_str()).collect();
                let remote: Vec<&str> = r.on.iter().map(|p| p[1].as_str()).collect();
                lines.push(format!(
                    "  FOREIGN KEY ({}) REFERENCES {}({})",
                    local.join(", "),
                    graph.name(other),
                    remote.join(", ")
                ));
            }
        }
        let n = lines.len();
        for (i, l) in lines.iter().enumerate() {
            let sep = if i + 1 < n { "," } else { "" };
            match l.split_once('\u{0}') {
                Some((code, comment)) => s.push_str(&format!("{code}{sep} {comment}\n")),
                None => s.push_str(&format!("{l}{sep}\n")),
            }
        }
        s.push_str(");");
        out.push(s);
    }
    out.join("\n\n")
}

fn one_line(s: &str) -> String {
    s.split_whitespace().collect::<Vec<_>>().join(" ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ddo_ddl_has_keys_and_optional_comments() {
        let m = crate::model::load(concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels/ddo.json")).unwrap();
        let g = SchemaGraph::new(m).unwrap();
        let plain = ddl(&g, None, false);
        assert!(plain.contains("CREATE TABLE CLIENT (\n  id INTEGER NOT NULL,\n  name TEXT NOT NULL,"), "{plain}");
        assert!(plain.contains("  FOREIGN KEY (loc_id) REFERENCES LOCATION(id)\n);"));
        assert!(!plain.contains("--"));
        assert_eq!(plain.matches("CREATE TABLE").count(), g.len());
        let c = g.table_id("CLIENT").unwrap();
        let with = ddl(&g, Some(&[c]), true);
        assert!(with.starts_with("-- Customers who buy"));
        assert!(with.contains("  name TEXT NOT NULL, -- Client (customer) name."), "{with}");
        // The DDL parses (sqlparser) — the direct prompt shows valid SQL.
        let d = sqlparser::dialect::SQLiteDialect {};
        assert!(sqlparser::parser::Parser::parse_sql(&d, &plain).is_ok());
    }
}
