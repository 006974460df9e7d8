//! Validation of a dbModel beyond what serde checks.
//!
//! Every rule reports a `ModelIssue` with the JSON path of the offending
//! element and a hint; all issues are collected, none stops the others. The
//! rules live in small modules: names and keys ([`names`]), relationship
//! endpoints and columns ([`relationships`]), pattern resolution
//! ([`patterns`]), conflicting pattern roles ([`roles`]), the user
//! constraints block ([`constraints`]) and synonyms ([`synonyms`]). `docs/dbmodel.md` lists the rules.
//!
//! `SchemaGraph::new` runs the same analysis, so a schema graph only ever
//! exists for a model that passes every rule.

mod constraints;
mod names;
mod patterns;
mod relationships;
mod roles;
mod synonyms;

use super::resolve::{closest, Names};
use crate::error::{Error, ModelIssue, Result};
use crate::types::ids::{RelId, TableId};
use crate::types::DbModel;

pub(crate) use patterns::Resolved;
pub(crate) use relationships::valid_role_name;
pub(crate) use synonyms::normalized as normalized_synonym;

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
    synonyms::check(&ix, &mut out);
    (resolved, out)
}

/// Name lookups shared by the rules: the model's [`Names`] index, with the
/// issue every rule reports for an unknown table.
pub(crate) struct Index<'a> {
    pub model: &'a DbModel,
    pub names: Names,
}

impl<'a> Index<'a> {
    fn new(model: &'a DbModel) -> Self {
        Index { model, names: Names::new(model) }
    }

    /// A table id by name, case-insensitively.
    pub fn table(&self, name: &str) -> Option<TableId> {
        self.names.table(name)
    }

    /// A relationship by name or `FROM(cols)->TO(cols)` id, case-insensitively.
    pub fn relationship(&self, r: &str) -> Option<RelId> {
        self.names.relationship(r)
    }

    /// Relationships between `a` and `b`, either direction, in model order.
    pub fn between(&self, a: TableId, b: TableId) -> &[RelId] {
        self.names.between(a, b)
    }

    /// `(from, to)` of a relationship whose tables both resolve.
    pub fn endpoints(&self, r: RelId) -> Option<(TableId, TableId)> {
        self.names.endpoints(r)
    }

    pub fn name(&self, t: TableId) -> &str {
        &self.model.tables[t].name
    }

    /// Issue for a name that is not a table, with the closest table names.
    pub fn unknown_table(&self, path: String, name: &str) -> ModelIssue {
        let hint = match closest(name, self.model.tables.iter().map(|t| t.name.as_str())) {
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

pub(crate) fn issue(path: String, message: String, hint: &str) -> ModelIssue {
    ModelIssue { file: None, path, message, hint: hint.to_string() }
}
