//! `lucy model diff OLD NEW`: what moved between two dbModels — typically a
//! curated model and a fresh import from the warehouse — table by table:
//! tables, columns (type, nullability), primary keys and relationships
//! (join columns, cardinality) added, removed or changed. Names compare
//! case-insensitively (the dbModel's rule); a relationship is the same
//! whichever side it is written from.

use std::collections::BTreeMap;
use std::fmt;

use serde::Serialize;

use crate::types::{Cardinality, DbModel, Relationship, Table};

/// One difference.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Change {
    /// `added`, `removed` or `changed`.
    pub kind: &'static str,
    /// `table`, `column`, `primary_key` or `relationship`.
    pub what: &'static str,
    /// The element, e.g. `CLIENT.loc_id` or `CLIENT(loc_id)->LOCATION(id)`.
    pub name: String,
    /// For `changed`: old → new.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub detail: String,
}

impl fmt::Display for Change {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sign = match self.kind {
            "added" => '+',
            "removed" => '-',
            _ => '~',
        };
        write!(f, "{sign} {} {}", self.what, self.name)?;
        if !self.detail.is_empty() {
            write!(f, ": {}", self.detail)?;
        }
        Ok(())
    }
}

fn change(kind: &'static str, what: &'static str, name: impl Into<String>, detail: impl Into<String>) -> Change {
    Change { kind, what, name: name.into(), detail: detail.into() }
}

fn by_name<T>(items: &[T], name: impl Fn(&T) -> &str) -> BTreeMap<String, &T> {
    items.iter().map(|i| (name(i).to_ascii_lowercase(), i)).collect()
}

/// A relationship written M:1 (or 1:1) from its foreign-key side, names
/// lower-cased: the key under which two models' relationships match.
pub(crate) fn rel_key(r: &Relationship) -> (String, String, Vec<(String, String)>, Cardinality) {
    let lower = |s: &str| s.to_ascii_lowercase();
    let (from, to, on, card) = if r.cardinality == Cardinality::OneToMany {
        (
            lower(&r.to),
            lower(&r.from),
            r.on.iter().map(|[a, b]| (lower(b), lower(a))).collect::<Vec<_>>(),
            Cardinality::ManyToOne,
        )
    } else {
        (lower(&r.from), lower(&r.to), r.on.iter().map(|[a, b]| (lower(a), lower(b))).collect(), r.cardinality)
    };
    let mut on = on;
    on.sort();
    (from, to, on, card)
}

fn rel_name(r: &Relationship) -> String {
    let l: Vec<&str> = r.on.iter().map(|p| p[0].as_str()).collect();
    let rr: Vec<&str> = r.on.iter().map(|p| p[1].as_str()).collect();
    format!("{}({})->{}({})", r.from, l.join(","), r.to, rr.join(","))
}

fn card(c: Cardinality) -> &'static str {
    match c {
        Cardinality::OneToOne => "1:1",
        Cardinality::OneToMany => "1:M",
        Cardinality::ManyToOne => "M:1",
    }
}

fn same_type(a: &str, b: &str) -> bool {
    a.split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
        .eq_ignore_ascii_case(&b.split_whitespace().collect::<Vec<_>>().join(" "))
}

fn table_changes(old: &Table, new: &Table, out: &mut Vec<Change>) {
    let oc = by_name(&old.columns, |c| &c.name);
    let nc = by_name(&new.columns, |c| &c.name);
    for (k, c) in &oc {
        match nc.get(k) {
            None => out.push(change("removed", "column", format!("{}.{}", old.name, c.name), "")),
            Some(n) => {
                let mut d = Vec::new();
                if !same_type(&c.sql_type, &n.sql_type) {
                    d.push(format!("type {} -> {}", show(&c.sql_type), show(&n.sql_type)));
                }
                if c.nullable != n.nullable {
                    d.push(format!("{} -> {}", null(c.nullable), null(n.nullable)));
                }
                if !d.is_empty() {
                    out.push(change("changed", "column", format!("{}.{}", old.name, c.name), d.join(", ")));
                }
            }
        }
    }
    for (k, c) in &nc {
        if !oc.contains_key(k) {
            out.push(change("added", "column", format!("{}.{}", new.name, c.name), show(&c.sql_type)));
        }
    }
    let lower = |v: &[String]| v.iter().map(|s| s.to_ascii_lowercase()).collect::<Vec<_>>();
    if lower(&old.primary_key) != lower(&new.primary_key) {
        let kind = match (old.primary_key.is_empty(), new.primary_key.is_empty()) {
            (true, false) => "added",
            (false, true) => "removed",
            _ => "changed",
        };
        let detail = format!("({}) -> ({})", old.primary_key.join(", "), new.primary_key.join(", "));
        out.push(change(kind, "primary_key", old.name.clone(), detail));
    }
}

fn show(t: &str) -> String {
    if t.is_empty() {
        "(no type)".into()
    } else {
        t.to_string()
    }
}

fn null(n: bool) -> &'static str {
    if n {
        "NULL"
    } else {
        "NOT NULL"
    }
}

/// Every difference from `old` to `new`: tables first, then per common
/// table its columns and key, then relationships.
pub fn diff(old: &DbModel, new: &DbModel) -> Vec<Change> {
    let mut out = Vec::new();
    let ot = by_name(&old.tables, |t| &t.name);
    let nt = by_name(&new.tables, |t| &t.name);
    for (k, t) in &ot {
        if !nt.contains_key(k) {
            out.push(change("removed", "table", t.name.clone(), format!("{} columns", t.columns.len())));
        }
    }
    for (k, t) in &nt {
        if !ot.contains_key(k) {
            out.push(change("added", "table", t.name.clone(), format!("{} columns", t.columns.len())));
        }
    }
    for (k, t) in &ot {
        if let Some(n) = nt.get(k) {
            table_changes(t, n, &mut out);
        }
    }
    // Relationships: matched on (from, to, join columns); cardinality compared.
    let key_of = |r: &Relationship| {
        let (f, t, on, _) = rel_key(r);
        (f, t, on)
    };
    let orels: BTreeMap<_, &Relationship> = old.relationships.iter().map(|r| (key_of(r), r)).collect();
    let nrels: BTreeMap<_, &Relationship> = new.relationships.iter().map(|r| (key_of(r), r)).collect();
    for (k, r) in &orels {
        match nrels.get(k) {
            None => out.push(change("removed", "relationship", rel_name(r), card(r.cardinality))),
            Some(n) => {
                let (a, b) = (rel_key(r).3, rel_key(n).3);
                if a != b {
                    out.push(change("changed", "relationship", rel_name(r), format!("{} -> {}", card(a), card(b))));
                }
            }
        }
    }
    for (k, r) in &nrels {
        if !orels.contains_key(k) {
            out.push(change("added", "relationship", rel_name(r), card(r.cardinality)));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::types::Column;

    fn col(n: &str, t: &str) -> Column {
        Column {
            name: n.into(),
            sql_type: t.into(),
            nullable: true,
            description: None,
            synonyms: Vec::new(),
            origin: None,
        }
    }

    fn model() -> DbModel {
        let mut m: DbModel = serde_json::from_value(serde_json::json!({
            "name": "m",
            "tables": [
                {"name": "A", "primary_key": ["id"], "columns": [{"name": "id", "type": "INTEGER"}, {"name": "b_id", "type": "INTEGER"}]},
                {"name": "B", "primary_key": ["id"], "columns": [{"name": "id", "type": "INTEGER"}]}
            ],
            "relationships": [{"from": "A", "to": "B", "cardinality": "M:1", "on": [["b_id", "id"]]}]
        }))
        .unwrap();
        m.tables[0].columns.push(col("note", "TEXT"));
        m
    }

    #[test]
    fn equal_models_have_no_changes_and_sides_do_not_matter() {
        let a = model();
        let mut b = model();
        b.tables[0].name = "a".into();
        b.relationships[0] = serde_json::from_value(
            serde_json::json!({"from": "b", "to": "a", "cardinality": "1:M", "on": [["ID", "B_ID"]]}),
        )
        .unwrap();
        b.tables[1].columns[0].sql_type = "integer".into();
        assert_eq!(diff(&a, &b), vec![]);
    }

    #[test]
    fn every_kind_of_change_is_named() {
        let a = model();
        let mut b = model();
        b.tables[0].columns.retain(|c| c.name != "note");
        b.tables[0].columns.push(col("amount", "NUMERIC(10,2)"));
        b.tables[0].columns[0].sql_type = "BIGINT".into();
        b.tables[0].columns[0].nullable = false;
        b.tables[1].primary_key = vec![];
        b.tables.push(Table {
            name: "C".into(),
            relation: Vec::new(),
            description: None,
            primary_key: vec![],
            columns: vec![col("x", "TEXT")],
            synonyms: Vec::new(),
            origin: None,
        });
        b.relationships[0].cardinality = Cardinality::OneToOne;
        let lines: Vec<String> = diff(&a, &b).iter().map(|c| c.to_string()).collect();
        assert_eq!(
            lines,
            vec![
                "+ table C: 1 columns",
                "~ column A.id: type INTEGER -> BIGINT, NULL -> NOT NULL",
                "- column A.note",
                "+ column A.amount: NUMERIC(10,2)",
                "- primary_key B: (id) -> ()",
                "~ relationship A(b_id)->B(id): M:1 -> 1:1",
            ]
        );
        b.relationships.clear();
        assert!(diff(&a, &b).iter().any(|c| c.to_string() == "- relationship A(b_id)->B(id): M:1"));
    }
}
