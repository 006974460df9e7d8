//! A lenient subset of dbt's `catalog.json` (`dbt docs generate`): the
//! warehouse's column list and types of every model, seed, snapshot and
//! source, by unique id. A manifest lists only documented columns and
//! rarely their types, so this is where most of a table's columns come from.

use std::path::Path;

use serde::Deserialize;

use super::json::{self, nullable};
use super::manifest::Ordered;
use crate::error::{Error, Result};

/// The catalog, as far as the importer reads it.
#[derive(Debug, Default, Deserialize)]
pub struct Catalog {
    #[serde(default, deserialize_with = "nullable")]
    pub metadata: CatalogMetadata,
    #[serde(default)]
    pub nodes: Ordered<CatalogTable>,
    #[serde(default)]
    pub sources: Ordered<CatalogTable>,
}

/// `$.metadata`.
#[derive(Debug, Default, Deserialize)]
pub struct CatalogMetadata {
    pub dbt_schema_version: Option<String>,
}

/// One relation of the warehouse.
#[derive(Debug, Default, Deserialize)]
pub struct CatalogTable {
    #[serde(default, deserialize_with = "nullable")]
    pub metadata: TableMetadata,
    #[serde(default)]
    pub columns: Ordered<CatalogColumn>,
}

/// A relation's metadata.
#[derive(Debug, Default, Deserialize)]
pub struct TableMetadata {
    pub comment: Option<String>,
}

/// One column as the warehouse reports it.
#[derive(Debug, Default, Deserialize)]
pub struct CatalogColumn {
    #[serde(default, deserialize_with = "nullable")]
    pub name: String,
    #[serde(rename = "type")]
    pub sql_type: Option<String>,
    pub index: Option<f64>,
    pub comment: Option<String>,
}

impl Catalog {
    /// The relation of a node or source by unique id.
    pub fn table(&self, unique_id: &str) -> Option<&CatalogTable> {
        self.nodes.get(unique_id).or_else(|| self.sources.get(unique_id))
    }
}

impl CatalogTable {
    /// Columns in warehouse order (`index`, then document order).
    pub fn ordered_columns(&self) -> Vec<&CatalogColumn> {
        let mut cols: Vec<(usize, &CatalogColumn)> = self.columns.0.iter().map(|(_, c)| c).enumerate().collect();
        cols.sort_by(|(i, a), (j, b)| {
            let ka = a.index.unwrap_or(f64::MAX);
            let kb = b.index.unwrap_or(f64::MAX);
            ka.total_cmp(&kb).then(i.cmp(j))
        });
        cols.into_iter().map(|(_, c)| c).collect()
    }
}

/// Read and check a catalog file.
pub fn read(path: &Path) -> Result<Catalog> {
    let bytes = json::read(path, json::MAX_BYTES)?;
    let cat: Catalog = json::parse(path, &bytes)?;
    match cat.metadata.dbt_schema_version.as_deref() {
        Some(v) if v.contains("/catalog/") => Ok(cat),
        Some(v) => Err(Error::Input(format!(
            "{}: $.metadata.dbt_schema_version is `{v}`, not a dbt catalog (`dbt docs generate` writes target/catalog.json)",
            path.display()
        ))),
        None => Err(Error::Input(format!(
            "{}: $.metadata.dbt_schema_version is missing: not a dbt catalog (`dbt docs generate` writes target/catalog.json)",
            path.display()
        ))),
    }
}
