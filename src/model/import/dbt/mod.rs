//! Import a dbt project (its compiled `target/manifest.json`, and
//! `catalog.json` when present) into a dbModel.
//!
//! - [`manifest`] and [`catalog`]: lenient serde subsets of the artifacts;
//! - [`select`]: `--select` with dbt's selector words;
//! - `facts`: keys, nullability and values from constraints and tests;
//! - `edges`: relationships from FK constraints, relationships tests and
//!   semantic entities;
//! - `map`: the nodes that become tables and everything about them, into
//!   the import builder;
//! - [`update`]: a re-import merged into a curated model.
//!
//! Every table, column and relationship records where it came from in its
//! `origin` (`dbt: test relationships_orders_customer_id…`).

pub mod catalog;
mod edges;
mod facts;
mod json;
pub mod manifest;
mod map;
pub mod select;
pub mod update;

use std::path::{Path, PathBuf};

use serde::Deserialize;

use super::build::build;
use super::{ImportWarning, Imported};
use crate::error::{Error, Result};

pub use map::EdgeCounts;

/// Warnings under construction.
#[derive(Debug, Default)]
pub(crate) struct Warnings(pub Vec<ImportWarning>);

impl Warnings {
    pub(crate) fn push(&mut self, location: impl Into<String>, message: impl Into<String>) {
        self.0.push(ImportWarning::new(location, message));
    }
}

/// What to import.
#[derive(Debug, Clone, Default)]
pub struct DbtOptions {
    /// A dbt project's `target/` directory (or the project directory holding
    /// `target/`), or a `manifest.json`.
    pub path: PathBuf,
    /// `catalog.json`; default: the one beside the manifest, when present.
    pub catalog: Option<PathBuf>,
    /// `--select` words (empty: the project's models, seeds and snapshots).
    pub select: Vec<String>,
    /// Model name (default: the dbt project's name).
    pub name: Option<String>,
}

/// An imported dbt project.
#[derive(Debug, Clone, serde::Serialize)]
pub struct DbtImport {
    #[serde(flatten)]
    pub imported: Imported,
    /// The manifest read.
    pub manifest: PathBuf,
    /// The catalog read, if any.
    pub catalog: Option<PathBuf>,
    /// Relationships by origin (the first of a merged relationship's origins).
    pub relationships_by_origin: EdgeCounts,
}

/// The manifest and catalog files `opts` point at.
pub fn locate(opts: &DbtOptions) -> Result<(PathBuf, Option<PathBuf>)> {
    let p = &opts.path;
    let manifest = if p.is_dir() {
        let direct = p.join("manifest.json");
        let target = p.join("target").join("manifest.json");
        if direct.is_file() {
            direct
        } else if target.is_file() {
            target
        } else {
            return Err(Error::Input(format!(
                "{}: no manifest.json here or in target/ (run `dbt parse` or `dbt docs generate` in the project first)",
                p.display()
            )));
        }
    } else {
        p.clone()
    };
    let catalog = match &opts.catalog {
        Some(c) => Some(c.clone()),
        None => manifest.parent().map(|d| d.join("catalog.json")).filter(|c| c.is_file()),
    };
    Ok((manifest, catalog))
}

/// Import the dbt project `opts` names.
pub fn dbt_with_warnings(opts: &DbtOptions) -> Result<DbtImport> {
    let sel = select::Selection::parse(&opts.select)?;
    let (manifest_path, catalog_path) = locate(opts)?;
    let mut warnings = Warnings::default();
    let m = read_manifest(&manifest_path, &mut warnings)?;
    let cat = catalog_path.as_deref().map(catalog::read).transpose()?;
    let raw = map::raw_schema(&m, cat.as_ref(), &sel, opts.name.as_deref(), warnings)?;
    let imported = build(raw).map_err(|e| match e {
        Error::Input(msg) if msg.contains("no tables found") => Error::Input(format!(
            "{}: no table to import: the selection is empty, or no selected node has columns (pass the catalog.json of `dbt docs generate`)",
            manifest_path.display()
        )),
        other => other,
    })?;
    let counts = map::counts(&imported.model);
    Ok(DbtImport { imported, manifest: manifest_path, catalog: catalog_path, relationships_by_origin: counts })
}

/// Read a manifest: its schema version first (a clear error for another
/// artifact or an older manifest), then the subset.
pub(crate) fn read_manifest(path: &Path, warnings: &mut Warnings) -> Result<manifest::Manifest> {
    #[derive(Deserialize)]
    struct Probe {
        #[serde(default, deserialize_with = "json::nullable")]
        metadata: ProbeMeta,
    }
    #[derive(Default, Deserialize)]
    struct ProbeMeta {
        dbt_schema_version: Option<serde_json::Value>,
    }
    let bytes = json::read(path, json::MAX_BYTES)?;
    let first = bytes.iter().copied().find(|b| !b.is_ascii_whitespace());
    if first.is_some_and(|b| b != b'{') {
        return Err(Error::Input(format!(
            "{}: $: not a dbt manifest (the top level is not a JSON object)",
            path.display()
        )));
    }
    let probe: Probe = json::parse(path, &bytes)?;
    let Some(serde_json::Value::String(url)) = probe.metadata.dbt_schema_version else {
        return Err(Error::Input(format!(
            "{}: $.metadata.dbt_schema_version is missing: not a dbt manifest (dbt writes target/manifest.json)",
            path.display()
        )));
    };
    let v = manifest::schema_version(&url)
        .map_err(|why| Error::Input(format!("{}: $.metadata.dbt_schema_version: {why}", path.display())))?;
    if v < manifest::OLDEST {
        return Err(Error::Input(format!(
            "{}: $.metadata.dbt_schema_version: manifest v{v} is older than v{} (dbt 1.3); re-run `dbt parse` with dbt 1.3 or later",
            path.display(),
            manifest::OLDEST
        )));
    }
    if v > manifest::NEWEST && v != 20 {
        warnings.push(
            "$.metadata.dbt_schema_version",
            format!("manifest v{v} is newer than v{}; read as v{}", manifest::NEWEST, manifest::NEWEST),
        );
    }
    json::parse(path, &bytes)
}
