//! Importers: turn a schema written somewhere else into a dbModel.
//!
//! Four sources here: `CREATE TABLE` DDL ([`from_ddl`]), a SQLite file
//! ([`from_sqlite`]), the BIRD/Spider `tables.json` format
//! ([`from_bird_tables`]) and a dbt project's artifacts ([`dbt`]); the
//! live catalog of a PostgreSQL or MySQL server is read by `sql::catalog`
//! (it talks to the server), into the same [`build`]. Every importer collects tables and foreign keys
//! into the raw form of [`build`], which resolves names, decides
//! cardinalities and drops what cannot be represented (an FK to a table
//! that is not defined, a key column that does not exist) with an
//! [`ImportWarning`] naming it. The result always passes
//! [`crate::model::validate::check`].
//!
//! The `*_with_warnings` functions return the warnings next to the model;
//! the short forms keep only the model.

mod bird;
pub(crate) mod build;
pub mod dbt;
mod ddl;
mod ddl_split;
mod ddl_tolerant;
mod sqlite;

use std::fmt;
use std::path::Path;

use crate::error::Result;
use crate::types::{DbModel, Dialect};

pub use bird::bird_tables_with_warnings;
pub use dbt::{dbt_with_warnings, DbtImport, DbtOptions};
pub use ddl::ddl_with_warnings;
pub use sqlite::sqlite_with_warnings;

/// Something the importer could not carry over into the model, or had to
/// guess. Never fatal: the model is still produced.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct ImportWarning {
    /// Where in the source: a statement, table, constraint or file.
    pub location: String,
    /// What happened and what the importer did about it.
    pub message: String,
}

impl fmt::Display for ImportWarning {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.location, self.message)
    }
}

impl ImportWarning {
    pub(crate) fn new(location: impl Into<String>, message: impl Into<String>) -> Self {
        ImportWarning { location: location.into(), message: message.into() }
    }
}

/// An imported model with the warnings produced on the way.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Imported {
    pub model: DbModel,
    pub warnings: Vec<ImportWarning>,
}

/// Import `CREATE TABLE` statements (see [`ddl_with_warnings`]); warnings
/// are discarded.
pub fn from_ddl(sql: &str, dialect: Dialect, name: &str) -> Result<DbModel> {
    ddl_with_warnings(sql, Some(dialect), name).map(|i| i.model)
}

/// Introspect a SQLite database file, read-only (see
/// [`sqlite_with_warnings`]); warnings are discarded.
pub fn from_sqlite(path: &Path) -> Result<DbModel> {
    sqlite_with_warnings(path, None).map(|i| i.model)
}

/// Import one database of a BIRD/Spider `tables.json` (see
/// [`bird_tables_with_warnings`]); warnings are discarded.
pub fn from_bird_tables(tables_json: &Path, db_id: &str, descriptions: Option<&Path>) -> Result<DbModel> {
    bird_tables_with_warnings(tables_json, db_id, descriptions).map(|i| i.model)
}

/// Case-insensitive identifier comparison, the rule every importer and the
/// dbModel itself use for names.
pub(crate) fn same_name(a: &str, b: &str) -> bool {
    a.eq_ignore_ascii_case(b)
}
