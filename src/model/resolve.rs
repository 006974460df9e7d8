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
    let mut scored: Vec<(f64, &'a str)> =
        candidates.map(|c| (strsim::jaro_winkler(&n, &c.to_lowercase()), c)).filter(|(s, _)| *s > CLOSE_MIN).collect();
    scored.sort_by(|a, b| b.0.total_cmp(&a.0));
    scored.into_iter().map(|(_, c)| c).collect()
}

/// The candidate closest to `name`, for "did you mean" hints.
pub fn closest<'a>(name: &str, candidates: impl Iterator<Item = &'a str>) -> Option<&'a str> {
    ranked(name, candidates).into_iter().next()
}

/// Split `text` (a name or a question) into words: runs of letters or digits, broken at `_`,
/// punctuation, spaces, letter–digit changes and camel case (`PolicyHolder`
/// → `policy holder`, `HTTPServer` → `http server`), lower-cased.
pub fn words(text: &str) -> Vec<String> {
    let chars: Vec<char> = text.chars().collect();
    let mut out = Vec::new();
    let mut cur = String::new();
    for (i, &c) in chars.iter().enumerate() {
        if !c.is_alphanumeric() {
            if !cur.is_empty() {
                out.push(std::mem::take(&mut cur));
            }
            continue;
        }
        if !cur.is_empty() {
            // The previous character as written (`cur` is lower-cased).
            let p = chars[i - 1];
            let next_lower = chars.get(i + 1).is_some_and(|n| n.is_lowercase());
            let boundary = (p.is_lowercase() && c.is_uppercase())
                || (p.is_uppercase() && c.is_uppercase() && next_lower)
                || (p.is_alphabetic() != c.is_alphabetic());
            if boundary {
                out.push(std::mem::take(&mut cur));
            }
        }
        cur.extend(c.to_lowercase());
    }
    if !cur.is_empty() {
        out.push(cur);
    }
    out
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
        let hint = if self.closest.is_empty() {
            String::new()
        } else {
            format!(" (did you mean {}?)", self.closest.join(", "))
        };
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
    /// Each relationship's declared role, lower-cased.
    roles: Vec<Option<String>>,
    /// Each relationship's join columns `[from, to]`, lower-cased.
    on: Vec<Vec<[String; 2]>>,
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
        for rel in &model.relationships {
            n.roles.push(rel.role.as_ref().map(|r| r.to_lowercase()));
            n.on.push(rel.on.iter().map(|[a, b]| [a.to_lowercase(), b.to_lowercase()]).collect());
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
        self.table(name).ok_or_else(|| {
            NotFound::new(NameKind::Table, name, &self.model, self.table_names.iter().map(String::as_str))
        })
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
            NotFound {
                known: cols.clone(),
                ..NotFound::new(NameKind::Column, name, &self.table_names[t], cols.iter().map(String::as_str))
            }
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
            None => self
                .require_table(s[..dots[0]].trim())
                .err()
                .map(Error::from)
                .unwrap_or_else(|| Error::Input(format!("`{s}` is not TABLE.column"))),
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
        self.relationship_ref(s).ok_or_else(|| {
            NotFound::new(NameKind::Relationship, s, &self.model, self.rel_names.iter().map(String::as_str))
        })
    }

    /// Relationships between `a` and `b`, either direction, in model order.
    pub fn between(&self, a: TableId, b: TableId) -> &[RelId] {
        self.between.get(&pair(a, b)).map(Vec::as_slice).unwrap_or(&[])
    }

    /// `(from, to)` of relationship `r`, when both its tables resolve.
    pub fn endpoints(&self, r: RelId) -> Option<(TableId, TableId)> {
        self.endpoints[r]
    }

    /// A table instance as requests write it: `TABLE` (the plain
    /// instance, role `None`) or `TABLE@role` (a role instance: the
    /// relationship it joins through). The role is, in this order: a
    /// relationship's declared `role`, its name or `FROM(cols)->TO(cols)`
    /// id, `OTHER.column` (the other table's join column, e.g.
    /// `ORDERS.ship_address_id`; for a self-relationship the `from` column),
    /// or the other table's name when one relationship joins the two. Only
    /// relationships of `TABLE` count. Table names may contain `@`: every
    /// `@` is tried, the first whose prefix is a table wins.
    pub fn instance(&self, s: &str) -> Result<(TableId, Option<RelId>), Error> {
        let s = s.trim();
        if let Some(t) = self.table(s) {
            return Ok((t, None));
        }
        let Some(at) = s.match_indices('@').map(|(i, _)| i).find(|&i| self.table(s[..i].trim()).is_some()) else {
            let head = s.split('@').next().unwrap_or(s).trim();
            return Err(self
                .require_table(head)
                .err()
                .map(Error::from)
                .unwrap_or_else(|| Error::Input(format!("`{s}` is not TABLE or TABLE@role"))));
        };
        let t = self.table(s[..at].trim()).expect("checked above");
        let role = s[at + 1..].trim();
        self.role_of(t, role).map(|r| (t, Some(r)))
    }

    /// Relationships with `t` at one end or both, in model order.
    pub fn relationships_of(&self, t: TableId) -> Vec<RelId> {
        (0..self.endpoints.len()).filter(|&r| self.endpoints[r].is_some_and(|(a, b)| a == t || b == t)).collect()
    }

    /// The relationship of table `t` that `role` names (see [`Names::instance`]).
    fn role_of(&self, t: TableId, role: &str) -> Result<RelId, Error> {
        let tname = &self.table_names[t];
        let mine = self.relationships_of(t);
        let lower = role.to_lowercase();
        let found = |v: Vec<RelId>| -> Option<Result<RelId, Error>> {
            match v.as_slice() {
                [] => None,
                [r] => Some(Ok(*r)),
                _ => Some(Err(Error::Input(format!(
                    "`{tname}@{role}` is ambiguous: {} relationships of {tname} match ({}); name one by its role, name or id",
                    v.len(),
                    v.iter().map(|&r| self.rel_names[r].as_str()).collect::<Vec<_>>().join(", ")
                )))),
            }
        };
        if role.is_empty() {
            return Err(Error::Input(format!(
                "`{tname}@` names no role: write {tname}@ROLE ({})",
                self.role_choices(t)
            )));
        }
        let by_role: Vec<RelId> =
            mine.iter().copied().filter(|&r| self.roles[r].as_deref() == Some(lower.as_str())).collect();
        if let Some(x) = found(by_role) {
            return x;
        }
        if let Some(r) = self.relationship(role).filter(|r| mine.contains(r)) {
            return Ok(r);
        }
        // OTHER.column: a join column of the other end.
        let by_col: Vec<RelId> = mine
            .iter()
            .copied()
            .filter(|&r| {
                let (a, b) = self.endpoints[r].expect("resolved");
                let (other, side) = if a == b {
                    (a, 0)
                } else if a == t {
                    (b, 1)
                } else {
                    (a, 0)
                };
                role.match_indices('.').any(|(i, _)| {
                    self.table(&role[..i]) == Some(other)
                        && self.on[r].iter().any(|p| p[side] == role[i + 1..].trim().to_lowercase())
                })
            })
            .collect();
        if let Some(x) = found(by_col) {
            return x;
        }
        if let Some(o) = self.table(role) {
            let v: Vec<RelId> = mine
                .iter()
                .copied()
                .filter(|&r| {
                    let (a, b) = self.endpoints[r].expect("resolved");
                    (a == t && b == o) || (b == t && a == o)
                })
                .collect();
            if let Some(x) = found(v) {
                return x;
            }
        }
        Err(Error::Input(format!(
            "`{tname}@{role}`: no relationship of {tname} is named by `{role}`; {}",
            self.role_choices(t)
        )))
    }

    /// "TABLE joins through: role (id), …" for error messages.
    fn role_choices(&self, t: TableId) -> String {
        let mine = self.relationships_of(t);
        if mine.is_empty() {
            return format!("{} has no relationships", self.table_names[t]);
        }
        let v: Vec<String> = mine
            .iter()
            .map(|&r| match &self.roles[r] {
                Some(role) => format!("{role} ({})", self.rel_names[r]),
                None => self.rel_names[r].clone(),
            })
            .collect();
        format!("{} joins through: {}", self.table_names[t], v.join(", "))
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

    /// ORDERS with two addresses (one with a role), EMPLOYEE with a manager.
    fn roles() -> Names {
        names(serde_json::json!({
            "name": "shop",
            "tables": [
                {"name": "ORDERS", "columns": [{"name": "id"}, {"name": "ship_address_id"}, {"name": "bill_address_id"}]},
                {"name": "ADDRESS", "columns": [{"name": "id"}]},
                {"name": "EMPLOYEE", "columns": [{"name": "id"}, {"name": "manager_id"}]},
                {"name": "my@table", "columns": [{"name": "id"}]}
            ],
            "relationships": [
                {"from": "ORDERS", "to": "ADDRESS", "cardinality": "M:1", "on": [["ship_address_id", "id"]], "role": "ship_address"},
                {"name": "billing", "from": "ORDERS", "to": "ADDRESS", "cardinality": "M:1", "on": [["bill_address_id", "id"]]},
                {"from": "EMPLOYEE", "to": "EMPLOYEE", "cardinality": "M:1", "on": [["manager_id", "id"]], "role": "manager"}
            ]
        }))
    }

    #[test]
    fn instances_by_role_name_id_column_or_table() {
        let n = roles();
        assert_eq!(n.instance("ADDRESS").unwrap(), (1, None));
        assert_eq!(n.instance(" address@Ship_Address ").unwrap(), (1, Some(0)));
        assert_eq!(n.instance("ADDRESS@billing").unwrap(), (1, Some(1)));
        assert_eq!(n.instance("ADDRESS@ORDERS(ship_address_id)->ADDRESS(id)").unwrap(), (1, Some(0)));
        assert_eq!(n.instance("ADDRESS@orders.ship_address_id").unwrap(), (1, Some(0)));
        assert_eq!(n.instance("EMPLOYEE@manager").unwrap(), (2, Some(2)));
        assert_eq!(n.instance("EMPLOYEE@EMPLOYEE.manager_id").unwrap(), (2, Some(2)));
        assert_eq!(n.instance("EMPLOYEE@EMPLOYEE").unwrap(), (2, Some(2)));
        // The other end's role name names the same relationship.
        assert_eq!(n.instance("ORDERS@ship_address").unwrap(), (0, Some(0)));
        assert_eq!(n.instance("my@table").unwrap(), (3, None));
        let e = n.instance("ADDRESS@ORDERS").unwrap_err().to_string();
        assert!(
            e.contains("ambiguous") && e.contains("billing") && e.contains("ORDERS(ship_address_id)->ADDRESS(id)"),
            "{e}"
        );
        let e = n.instance("ADDRESS@shipping").unwrap_err().to_string();
        assert!(
            e.contains("no relationship of ADDRESS is named by `shipping`")
                && e.contains("ship_address (ORDERS(ship_address_id)->ADDRESS(id))"),
            "{e}"
        );
        let e = n.instance("ADDRES@ship_address").unwrap_err().to_string();
        assert!(e.contains("unknown table `ADDRES`") && e.contains("did you mean ADDRESS"), "{e}");
        assert!(n.instance("ADDRESS@").unwrap_err().to_string().contains("names no role"));
        // A relationship of another table is not a role of this one.
        assert!(n.instance("ADDRESS@manager").is_err());
    }
}
