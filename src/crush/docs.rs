//! Schema documents (crush4sql §2): every column as "table.column" (with its
//! description when the model has one) and, optionally, every table, plus
//! which documents are connected (same table, or the two ends of a foreign
//! key) for the connectivity term.

use std::collections::HashSet;

use crate::graph::SchemaGraph;

/// One retrievable schema element.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SchemaDoc {
    /// Table name as the schema spells it.
    pub table: String,
    /// Column name, or `None` for a table document.
    pub column: Option<String>,
    /// The text that is embedded.
    pub text: String,
}

impl SchemaDoc {
    /// `table.column`, or `table` for a table document.
    pub fn name(&self) -> String {
        match &self.column {
            Some(c) => format!("{}.{}", self.table, c),
            None => self.table.clone(),
        }
    }
}

/// The document collection D of one schema.
#[derive(Debug, Clone, Default)]
pub struct Corpus {
    pub docs: Vec<SchemaDoc>,
    /// Table group of each document (same group = same table).
    group: Vec<usize>,
    /// Foreign-key linked document pairs `(i, j)`, `i < j`.
    links: HashSet<(usize, usize)>,
}

/// What goes into the documents.
#[derive(Debug, Clone, Copy)]
pub struct DocOptions {
    /// Add one document per table (name + description).
    pub include_tables: bool,
    /// Append column/table descriptions to the embedded text.
    pub descriptions: bool,
}

impl Default for DocOptions {
    fn default() -> Self {
        DocOptions { include_tables: true, descriptions: true }
    }
}

fn with_description(base: String, desc: Option<&str>, on: bool) -> String {
    match desc.map(str::trim).filter(|d| on && !d.is_empty()) {
        Some(d) => format!("{base}: {d}"),
        None => base,
    }
}

impl Corpus {
    /// Documents of a dbModel: its columns (and tables), connected within a
    /// table and across every relationship's join columns (and, for table
    /// documents, across every relationship).
    pub fn from_graph(graph: &SchemaGraph, opts: DocOptions) -> Self {
        let model = graph.model();
        let mut c = Corpus::default();
        let mut col_index = std::collections::HashMap::new();
        let mut table_doc = vec![None; model.tables.len()];
        for (t, table) in model.tables.iter().enumerate() {
            if opts.include_tables {
                table_doc[t] = Some(c.docs.len());
                c.push(
                    t,
                    SchemaDoc {
                        table: table.name.clone(),
                        column: None,
                        text: with_description(table.name.clone(), table.description.as_deref(), opts.descriptions),
                    },
                );
            }
            for col in &table.columns {
                col_index.insert((t, col.name.to_ascii_lowercase()), c.docs.len());
                c.push(
                    t,
                    SchemaDoc {
                        table: table.name.clone(),
                        column: Some(col.name.clone()),
                        text: with_description(
                            format!("{}.{}", table.name, col.name),
                            col.description.as_deref(),
                            opts.descriptions,
                        ),
                    },
                );
            }
        }
        for r in 0..model.relationships.len() {
            let (a, b) = graph.endpoints(r);
            for [fc, tc] in &model.relationships[r].on {
                if let (Some(&i), Some(&j)) =
                    (col_index.get(&(a, fc.to_ascii_lowercase())), col_index.get(&(b, tc.to_ascii_lowercase())))
                {
                    c.link(i, j);
                }
            }
            if let (Some(i), Some(j)) = (table_doc[a], table_doc[b]) {
                c.link(i, j);
            }
        }
        c
    }

    /// Documents from `(table, column)` names; `text` is `table.column`.
    /// Connectivity is same-table only (no keys known).
    pub fn from_columns(columns: impl IntoIterator<Item = (String, String)>) -> Self {
        let mut c = Corpus::default();
        let mut groups = std::collections::HashMap::new();
        for (table, column) in columns {
            let n = groups.len();
            let g = *groups.entry(table.clone()).or_insert(n);
            c.push(g, SchemaDoc { text: format!("{table}.{column}"), table, column: Some(column) });
        }
        c
    }

    fn push(&mut self, group: usize, doc: SchemaDoc) {
        self.group.push(group);
        self.docs.push(doc);
    }

    /// Declare documents `i` and `j` foreign-key linked.
    pub fn link(&mut self, i: usize, j: usize) {
        if i != j {
            self.links.insert((i.min(j), i.max(j)));
        }
    }

    /// Same table or foreign-key linked (the paper's e(d, d') = γ pairs).
    pub fn connected(&self, i: usize, j: usize) -> bool {
        i != j && (self.group[i] == self.group[j] || self.links.contains(&(i.min(j), i.max(j))))
    }

    /// The texts to embed, in document order.
    pub fn texts(&self) -> Vec<String> {
        self.docs.iter().map(|d| d.text.clone()).collect()
    }

    pub fn len(&self) -> usize {
        self.docs.len()
    }

    pub fn is_empty(&self) -> bool {
        self.docs.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::{Cardinality, Column, DbModel, Relationship, Table};

    fn model() -> SchemaGraph {
        let col = |n: &str| Column { name: n.into(), sql_type: "INT".into(), nullable: true, ..Column::default() };
        let mut client = Table {
            name: "CLIENT".into(),
            columns: vec![col("client_id"), col("gender"), col("district_id")],
            ..Default::default()
        };
        client.columns[1].description = Some("F or M".into());
        let district =
            Table { name: "DISTRICT".into(), columns: vec![col("district_id"), col("a2")], ..Default::default() };
        let m = DbModel {
            name: "fin".into(),
            tables: vec![client, district],
            relationships: vec![Relationship {
                name: None,
                from: "CLIENT".into(),
                to: "DISTRICT".into(),
                cardinality: Cardinality::ManyToOne,
                on: vec![["district_id".into(), "district_id".into()]],
                description: None,
                role: None,
                role_description: None,
                role_synonyms: Vec::new(),
                via: None,
                origin: None,
            }],
            ..Default::default()
        };
        SchemaGraph::new(m).unwrap()
    }

    #[test]
    fn columns_tables_and_links() {
        let c = Corpus::from_graph(&model(), DocOptions::default());
        let names: Vec<String> = c.docs.iter().map(|d| d.name()).collect();
        assert_eq!(
            names,
            [
                "CLIENT",
                "CLIENT.client_id",
                "CLIENT.gender",
                "CLIENT.district_id",
                "DISTRICT",
                "DISTRICT.district_id",
                "DISTRICT.a2"
            ]
        );
        assert_eq!(c.docs[2].text, "CLIENT.gender: F or M");
        assert!(c.connected(1, 2)); // same table
        assert!(c.connected(3, 5)); // the FK's join columns
        assert!(!c.connected(1, 5));
        assert!(c.connected(0, 4)); // table documents across the relationship
        assert!(!c.connected(2, 2));
    }

    #[test]
    fn columns_only() {
        let c = Corpus::from_graph(&model(), DocOptions { include_tables: false, descriptions: false });
        assert_eq!(c.len(), 5);
        assert_eq!(c.docs[1].text, "CLIENT.gender");
    }
}
