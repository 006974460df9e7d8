//! Validation of a dbModel beyond what serde checks.
//!
//! Every rule reports a `ModelIssue` with the JSON path of the offending
//! element and a hint; all issues are collected, none stops the others. The
//! rules live in small modules: names and keys ([`names`]), relationship
//! endpoints and columns ([`relationships`]), pattern resolution
//! ([`patterns`]), conflicting pattern roles ([`roles`]) and the user
//! constraints block ([`constraints`]). `docs/dbmodel.md` lists the rules.
//!
//! `SchemaGraph::new` runs the same analysis, so a schema graph only ever
//! exists for a model that passes every rule.

mod constraints;
mod names;
mod patterns;
mod relationships;
mod roles;

use std::collections::HashMap;

use crate::error::{Error, ModelIssue, Result};
use crate::types::ids::{RelId, TableId};
use crate::types::DbModel;

pub(crate) use patterns::Resolved;

/// Every issue found in `model` (empty when it is valid).
pub fn issues(model: &DbModel) -> Vec<ModelIssue> {
    analyze(model).1
}

/// `Ok` when the model has no issues; otherwise `Error::Model` with `file` set.
pub fn check(model: &DbModel, file: Option<&str>) -> Result<()> {
    let mut v = issues(model);
    if v.is_empty() {
        return Ok(());
    }
    for i in &mut v {
        i.file = file.map(str::to_string);
    }
    Err(Error::Model(v))
}

/// Run every rule; also return the resolved patterns (complete only when
/// there are no issues).
pub(crate) fn analyze(model: &DbModel) -> (Resolved, Vec<ModelIssue>) {
    let ix = Index::new(model);
    let mut out = Vec::new();
    names::check(&ix, &mut out);
    relationships::check(&ix, &mut out);
    let resolved = patterns::resolve(&ix, &mut out);
    roles::check(&ix, &resolved, &mut out);
    constraints::check(&ix, &resolved, &mut out);
    (resolved, out)
}

/// Name lookups shared by the rules. Names resolve case-insensitively; for
/// duplicate names the first definition wins (the duplicate is an issue).
pub(crate) struct Index<'a> {
    pub model: &'a DbModel,
    tables: HashMap<String, TableId>,
    rels: HashMap<String, RelId>,
    /// Relationships between two resolved tables, keyed by the unordered pair.
    between: HashMap<(TableId, TableId), Vec<RelId>>,
    /// `(from, to)` of each relationship whose tables both resolve.
    pub endpoints: Vec<Option<(TableId, TableId)>>,
}

impl<'a> Index<'a> {
    fn new(model: &'a DbModel) -> Self {
        let mut tables = HashMap::new();
        for (i, t) in model.tables.iter().enumerate() {
            tables.entry(t.name.to_lowercase()).or_insert(i);
        }
        let mut rels = HashMap::new();
        for (r, rel) in model.relationships.iter().enumerate() {
            rels.entry(rel.id().to_lowercase()).or_insert(r);
        }
        // Explicit names win over generated ids of other relationships.
        for (r, rel) in model.relationships.iter().enumerate() {
            if let Some(n) = &rel.name {
                rels.insert(n.to_lowercase(), r);
            }
        }
        let mut ix = Index { model, tables, rels, between: HashMap::new(), endpoints: Vec::new() };
        for rel in &model.relationships {
            let ends = ix.table(&rel.from).zip(ix.table(&rel.to));
            if let Some((a, b)) = ends {
                ix.between.entry(pair(a, b)).or_default().push(ix.endpoints.len());
            }
            ix.endpoints.push(ends);
        }
        ix
    }

    /// A table id by name, case-insensitively.
    pub fn table(&self, name: &str) -> Option<TableId> {
        self.tables.get(&name.to_lowercase()).copied()
    }

    /// A relationship by name or `FROM(cols)->TO(cols)` id, case-insensitively.
    pub fn relationship(&self, r: &str) -> Option<RelId> {
        self.rels.get(&r.to_lowercase()).copied()
    }

    /// Relationships between `a` and `b`, either direction, in model order.
    pub fn between(&self, a: TableId, b: TableId) -> &[RelId] {
        self.between.get(&pair(a, b)).map(Vec::as_slice).unwrap_or(&[])
    }

    pub fn name(&self, t: TableId) -> &str {
        &self.model.tables[t].name
    }

    /// Issue for a name that is not a table, with the closest table names.
    pub fn unknown_table(&self, path: String, name: &str) -> ModelIssue {
        let hint = match crate::model::closest(name, self.model.tables.iter().map(|t| t.name.as_str())) {
            Some(c) => format!("did you mean `{c}`? Use a table name defined in $.tables"),
            None => "use a table name defined in $.tables".to_string(),
        };
        issue(path, format!("unknown table `{name}`"), &hint)
    }

    /// Describe a relationship for messages: its name or id.
    pub fn rel_label(&self, r: RelId) -> String {
        self.model.relationships[r].id()
    }
}

fn pair(a: TableId, b: TableId) -> (TableId, TableId) {
    (a.min(b), a.max(b))
}

pub(crate) fn issue(path: String, message: String, hint: &str) -> ModelIssue {
    ModelIssue { file: None, path, message, hint: hint.to_string() }
}
