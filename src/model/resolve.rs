//! Names → ids, once. [`Names`] indexes a dbModel's tables, columns and
//! relationships case-insensitively; every lookup of a user-, model- or
//! LLM-written name goes through it: table and column names, `TABLE.column`
//! references, relationship references (a name, a `FROM(cols)->TO(cols)` id,
//! or `A-B` for every relationship between two tables), and the "did you
//! mean" suggestions of [`NotFound`].
//!
//! Validation builds one before a schema graph exists (`validate::Index`);
//! `graph::SchemaGraph` keeps one for the rest of the pipeline.

use std::collections::HashMap;
use std::fmt;

use crate::error::Error;
use crate::types::ids::{ColumnId, RelId, TableId};
use crate::types::DbModel;

/// Minimum case-insensitive Jaro–Winkler similarity of a "did you mean"
/// suggestion.
pub const CLOSE_MIN: f64 = 0.8;

/// Candidates at least [`CLOSE_MIN`]-similar to `name` (case-insensitive
/// Jaro–Winkler), most similar first (ties in candidate order).
pub fn ranked<'a>(name: &str, candidates: impl Iterator<Item = &'a str>) -> Vec<&'a str> {
    let n = name.to_lowercase();
    let mut scored: Vec<(f64, &'a str)> = candidates
        .map(|c| (strsim::jaro_winkler(&n, &c.to_lowercase()), c))
        .filter(|(s, _)| *s > CLOSE_MIN)
        .collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0));
    scored.into_iter().map(|(_, c)| c).collect()
}

/// The candidate closest to `name`, for "did you mean" hints.
pub fn closest<'a>(name: &str, candidates: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    ranked(name, candidates).into_iter().next()
}

/// What a relationship reference means.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RelRef {
    /// One relationship, by name or id.
    One(RelId),
    /// `"A-B"`: every relationship between tables A and B (possibly none).
    Between(TableId, TableId, Vec<RelId>),
}

impl RelRef {
    /// The relationships referred to.
    pub fn rels(&self) -> Vec<RelId> {
        match self {
            RelRef::One(r) => vec![*r],
            RelRef::Between(_, _, v) => v.clone(),
        }
    }
}

/// What kind of name was not found.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum NameKind {
    Table,
    Column,
    Relationship,
}

/// A name that resolves to nothing: what was looked up, where, and the
/// closest names there. Converts into `Error::Input`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NotFound {
    pub kind: NameKind,
    /// The name as written.
    pub name: String,
    /// Where it was looked up: the model's name for tables and
    /// relationships, the table's for columns.
    pub scope: String,
    /// The closest known names, most similar first (at most three).
    pub closest: Vec<String>,
    /// For columns: every column of the table, in model order.
    pub known: Vec<String>,
}

impl fmt::Display for NotFound {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let hint = if self.closest.is_empty() { String::new() } else { format!(" (did you mean {}?)", self.closest.join(", ")) };
        match self.kind {
            NameKind::Table => write!(f, "unknown table `{}` in model `{}`{hint}", self.name, self.scope),
            NameKind::Column => {
                write!(f, "unknown column `{}` in table {}{hint}; {} has columns {}", self.name, self.scope, self.scope, self.known.join(", "))
            }
            NameKind::Relationship => write!(
                f,
                "`{}` names no relationship of model `{}`{hint} (use a relationship name, its FROM(cols)->TO(cols) id, or \"A-B\")",
                self.name, self.scope
            ),
        }
    }
}

impl std::error::Error for NotFound {}

impl NotFound {
    /// `name` of `kind` is not in `scope`; the (at most three) closest of
    /// `candidates` are suggested.
    fn new<'a>(kind: NameKind, name: &str, scope: &str, candidates: impl Iterator<Item = &'a str>) -> Self {
        let closest = ranked(name, candidates).into_iter().take(3).map(str::to_string).collect();
        NotFound { kind, name: name.to_string(), scope: scope.to_string(), closest, known: Vec::new() }
    }
}

impl From<NotFound> for Error {
    fn from(e: NotFound) -> Self {
        Error::Input(e.to_string())
    }
}

/// The name index of one dbModel. Names resolve case-insensitively; for
/// duplicate names the first definition wins (validation reports the
/// duplicate).
#[derive(Debug, Clone, Default)]
pub struct Names {
    model: String,
    table_names: Vec<String>,
    tables: HashMap<String, TableId>,
    /// Per table: its column names, and lower-cased name → index.
    column_names: Vec<Vec<String>>,
    columns: Vec<HashMap<String, usize>>,
    rels: HashMap<String, RelId>,
    rel_names: Vec<String>,
    /// Relationships between two resolved tables, keyed by the unordered pair.
    between: HashMap<(TableId, TableId), Vec<RelId>>,
    /// `(from, to)` of each relationship whose tables both resolve.
    endpoints: Vec<Option<(TableId, TableId)>>,
}

fn pair(a: TableId, b: TableId) -> (TableId, TableId) {
    (a.min(b), a.max(b))
}

impl Names {
    /// Index `model`.
    pub fn new(model: &DbModel) -> Self {
        let mut n = Names { model: model.name.clone(), ..Names::default() };
        for (i, t) in model.tables.iter().enumerate() {
            n.tables.entry(t.name.to_lowercase()).or_insert(i);
            n.table_names.push(t.name.clone());
            let mut cols = HashMap::new();
            for (j, c) in t.columns.iter().enumerate() {
                cols.entry(c.name.to_lowercase()).or_insert(j);
            }
            n.columns.push(cols);
            n.column_names.push(t.columns.iter().map(|c| c.name.clone()).collect());
        }
        for (r, rel) in model.relationships.iter().enumerate() {
            n.rels.entry(rel.id().to_lowercase()).or_insert(r);
            n.rel_names.push(rel.id());
        }
        // Explicit names win over generated ids of other relationships.
        for (r, rel) in model.relationships.iter().enumerate() {
            if let Some(name) = &rel.name {
                n.rels.insert(name.to_lowercase(), r);
            }
        }
        for (r, rel) in model.relationships.iter().enumerate() {
            let ends = n.table(&rel.from).zip(n.table(&rel.to));
            if let Some((a, b)) = ends {
                n.between.entry(pair(a, b)).or_default().push(r);
            }
            n.endpoints.push(ends);
        }
        n
    }

    /// A table id by name.
    pub fn table(&self, name: &str) -> Option<TableId> {
        self.tables.get(&name.to_lowercase()).copied()
    }

    /// A table id by name, or [`NotFound`] with the closest table names.
    pub fn require_table(&self, name: &str) -> Result<TableId, NotFound> {
        self.table(name).ok_or_else(|| NotFound::new(NameKind::Table, name, &self.model, self.table_names.iter().map(String::as_str)))
    }

    /// A column of table `t` by name.
    pub fn column(&self, t: TableId, name: &str) -> Option<ColumnId> {
        self.columns[t].get(&name.to_lowercase()).map(|&column| ColumnId { table: t, column })
    }

    /// A column of table `t` by name, or [`NotFound`] with the closest
    /// column names and all of the table's columns.
    pub fn require_column(&self, t: TableId, name: &str) -> Result<ColumnId, NotFound> {
        self.column(t, name).ok_or_else(|| {
            let cols = &self.column_names[t];
            NotFound { known: cols.clone(), ..NotFound::new(NameKind::Column, name, &self.table_names[t], cols.iter().map(String::as_str)) }
        })
    }

    /// A `TABLE.column` reference. Table names may contain dots, and so
    /// may column names: every dot is tried as the separator, the last
    /// first, and the first split whose table and column both resolve
    /// wins. Without a dot: `Error::Input`; otherwise a [`NotFound`] for the
    /// column of the first table that resolves, else for the table before
    /// the last dot.
    pub fn column_ref(&self, s: &str) -> Result<ColumnId, Error> {
        let s = s.trim();
        let dots: Vec<usize> = s.match_indices('.').map(|(i, _)| i).rev().collect();
        if dots.is_empty() {
            return Err(Error::Input(format!("`{s}` is not TABLE.column")));
        }
        let mut first_miss: Option<NotFound> = None;
        for &pos in &dots {
            let (t, c) = (s[..pos].trim(), s[pos + 1..].trim());
            if let Some(tid) = self.table(t) {
                match self.require_column(tid, c) {
                    Ok(id) => return Ok(id),
                    Err(e) => {
                        first_miss.get_or_insert(e);
                    }
                }
            }
        }
        Err(match first_miss {
            Some(e) => e.into(),
            None => self.require_table(s[..dots[0]].trim()).err().map(Error::from).unwrap_or_else(|| Error::Input(format!("`{s}` is not TABLE.column"))),
        })
    }

    /// A relationship by name or `FROM(cols)->TO(cols)` id.
    pub fn relationship(&self, r: &str) -> Option<RelId> {
        self.rels.get(&r.to_lowercase()).copied()
    }

    /// A relationship reference as the constraints block and patterns write
    /// it: a relationship name or id first, then `"A-B"` (every `-` is tried,
    /// so table names may contain one).
    pub fn relationship_ref(&self, s: &str) -> Option<RelRef> {
        if let Some(r) = self.relationship(s) {
            return Some(RelRef::One(r));
        }
        for (pos, _) in s.match_indices('-') {
            let (a, b) = (s[..pos].trim(), s[pos + 1..].trim());
            if let (Some(x), Some(y)) = (self.table(a), self.table(b)) {
                return Some(RelRef::Between(x, y, self.between(x, y).to_vec()));
            }
        }
        None
    }

    /// [`Names::relationship_ref`], or [`NotFound`] with the closest
    /// relationship names.
    pub fn require_relationship_ref(&self, s: &str) -> Result<RelRef, NotFound> {
        self.relationship_ref(s).ok_or_else(|| NotFound::new(NameKind::Relationship, s, &self.model, self.rel_names.iter().map(String::as_str)))
    }

    /// Relationships between `a` and `b`, either direction, in model order.
    pub fn between(&self, a: TableId, b: TableId) -> &[RelId] {
        self.between.get(&pair(a, b)).map(Vec::as_slice).unwrap_or(&[])
    }

    /// `(from, to)` of relationship `r`, when both its tables resolve.
    pub fn endpoints(&self, r: RelId) -> Option<(TableId, TableId)> {
        self.endpoints[r]
    }

    /// The table names, in model order (for "did you mean" hints).
    pub fn table_names(&self) -> &[String] {
        &self.table_names
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names(json: serde_json::Value) -> Names {
        Names::new(&crate::model::parse(&json.to_string(), None).expect("test model parses"))
    }

    /// Tables and columns whose names hold the separators.
    fn dotted() -> Names {
        names(serde_json::json!({
            "name": "dotted",
            "tables": [
                {"name": "sales.orders", "columns": [{"name": "id"}, {"name": "line-item"}]},
                {"name": "T", "columns": [{"name": "a.b"}, {"name": "c"}]},
                {"name": "ORDER-LINE", "columns": [{"name": "id"}, {"name": "product"}]},
                {"name": "PRODUCT", "columns": [{"name": "id"}]}
            ],
            "relationships": [
                {"from": "ORDER-LINE", "to": "PRODUCT", "cardinality": "M:1", "on": [["product", "id"]]}
            ]
        }))
    }

    #[test]
    fn column_refs_with_dots_in_table_or_column_names() {
        let n = dotted();
        assert_eq!(n.column_ref("sales.orders.id").unwrap(), ColumnId { table: 0, column: 0 });
        assert_eq!(n.column_ref("T.a.b").unwrap(), ColumnId { table: 1, column: 0 });
        assert_eq!(n.column_ref(" t.C ").unwrap(), ColumnId { table: 1, column: 1 });
        let e = n.column_ref("T.d").unwrap_err().to_string();
        assert!(e.contains("unknown column `d` in table T") && e.contains("T has columns a.b, c"), "{e}");
        let e = n.column_ref("sales.order.id").unwrap_err().to_string();
        assert!(e.contains("unknown table `sales.order`") && e.contains("did you mean sales.orders"), "{e}");
        assert!(n.column_ref("id").unwrap_err().to_string().contains("not TABLE.column"));
    }

    #[test]
    fn relationship_refs_with_dashes_in_table_names() {
        let n = dotted();
        assert_eq!(n.relationship_ref("order-line-product"), Some(RelRef::Between(2, 3, vec![0])));
        assert_eq!(n.relationship_ref("ORDER-LINE(product)->PRODUCT(id)"), Some(RelRef::One(0)));
        assert_eq!(n.relationship_ref("PRODUCT-T"), Some(RelRef::Between(3, 1, vec![])));
        let e = n.require_relationship_ref("ORDER-LINE(product)->PRODUCTS(id)").unwrap_err();
        assert_eq!(e.closest, vec!["ORDER-LINE(product)->PRODUCT(id)".to_string()]);
    }

    #[test]
    fn not_found_names_the_closest() {
        let n = dotted();
        let e = n.require_table("PRODUCTS").unwrap_err();
        assert_eq!((e.kind, e.closest.clone()), (NameKind::Table, vec!["PRODUCT".to_string()]));
        assert_eq!(e.to_string(), "unknown table `PRODUCTS` in model `dotted` (did you mean PRODUCT?)");
        assert_eq!(closest("Prodct", n.table_names().iter().map(String::as_str)), Some("PRODUCT"));
        assert_eq!(closest("zzz", n.table_names().iter().map(String::as_str)), None);
    }
}
