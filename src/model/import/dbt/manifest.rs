//! A lenient serde subset of dbt's `manifest.json`: schemas v7–v12 (dbt
//! Core 1.3 → 1.12) and dbt Fusion's v12 / early `v20`.
//!
//! Only the fields the importer reads are declared; every other field is
//! ignored. Every object and list field accepts `null` (Fusion writes `null`
//! where dbt Core writes `{}` or `[]`) and may be missing. Errors name the
//! file and the JSON path (`$.nodes["model.shop.orders"].columns`).

use serde::de::{Deserializer, MapAccess, Visitor};
use serde::Deserialize;
use serde_json::Value;

use super::json::nullable;

/// The oldest and newest manifest schema versions read. dbt Fusion's early
/// previews wrote `v20`, identical to v12.
pub const OLDEST: u32 = 7;
pub const NEWEST: u32 = 12;

/// A JSON object read in document order, as `(key, value)` pairs; `null`
/// reads as empty.
#[derive(Debug, Clone)]
pub struct Ordered<T>(pub Vec<(String, T)>);

impl<T> Default for Ordered<T> {
    fn default() -> Self {
        Ordered(Vec::new())
    }
}

impl<T> Ordered<T> {
    /// The value under `key`.
    pub fn get(&self, key: &str) -> Option<&T> {
        self.0.iter().find(|(k, _)| k == key).map(|(_, v)| v)
    }
}

impl<'de, T: Deserialize<'de>> Deserialize<'de> for Ordered<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        struct V<T>(std::marker::PhantomData<T>);
        impl<'de, T: Deserialize<'de>> Visitor<'de> for V<T> {
            type Value = Ordered<T>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("an object or null")
            }
            fn visit_unit<E>(self) -> Result<Self::Value, E> {
                Ok(Ordered(Vec::new()))
            }
            fn visit_none<E>(self) -> Result<Self::Value, E> {
                Ok(Ordered(Vec::new()))
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Self::Value, A::Error> {
                let mut out = Vec::new();
                while let Some((k, v)) = map.next_entry::<String, T>()? {
                    out.push((k, v));
                }
                Ok(Ordered(out))
            }
        }
        d.deserialize_any(V(std::marker::PhantomData))
    }
}

/// The whole manifest, as far as the importer reads it.
#[derive(Debug, Default, Deserialize)]
pub struct Manifest {
    #[serde(default, deserialize_with = "nullable")]
    pub metadata: Metadata,
    /// Models, seeds, snapshots, tests, … by unique id.
    #[serde(default)]
    pub nodes: Ordered<Node>,
    /// Sources by unique id (read with the same fields as nodes).
    #[serde(default)]
    pub sources: Ordered<Node>,
    /// MetricFlow semantic models (v10+).
    #[serde(default)]
    pub semantic_models: Ordered<SemanticModel>,
}

/// `$.metadata`.
#[derive(Debug, Default, Deserialize)]
pub struct Metadata {
    pub dbt_schema_version: Option<String>,
    pub dbt_version: Option<String>,
    /// The root project (absent before v10: then the package of most nodes).
    pub project_name: Option<String>,
    pub adapter_type: Option<String>,
}

/// A model, seed, snapshot, test or source.
#[derive(Debug, Default, Deserialize)]
pub struct Node {
    #[serde(default, deserialize_with = "nullable")]
    pub resource_type: String,
    #[serde(default, deserialize_with = "nullable")]
    pub package_name: String,
    #[serde(default, deserialize_with = "nullable")]
    pub name: String,
    /// Physical name of a model, seed or snapshot.
    pub alias: Option<String>,
    /// Physical name of a source.
    pub identifier: Option<String>,
    /// The source group of a source (`source('ecom', 'orders')`).
    pub source_name: Option<String>,
    pub schema: Option<String>,
    pub relation_name: Option<String>,
    pub description: Option<String>,
    pub source_description: Option<String>,
    #[serde(default, deserialize_with = "nullable")]
    pub config: Config,
    #[serde(default, deserialize_with = "tags")]
    pub tags: Vec<String>,
    /// A versioned model's version (a number or a string).
    pub version: Option<Value>,
    pub latest_version: Option<Value>,
    pub original_file_path: Option<String>,
    /// dbt's inferred primary key (models, dbt ≥ 1.9); `null` entries are
    /// a known dbt bug and are dropped.
    #[serde(default, deserialize_with = "nullable")]
    pub primary_key: Vec<Option<String>>,
    #[serde(default, deserialize_with = "nullable")]
    pub constraints: Vec<Constraint>,
    #[serde(default)]
    pub columns: Ordered<ColumnInfo>,
    #[serde(default, deserialize_with = "nullable")]
    pub depends_on: DependsOn,
    /// Set on MetricFlow time-spine models.
    pub time_spine: Option<Value>,
    // Tests:
    pub test_metadata: Option<TestMetadata>,
    /// The tested model, seed or snapshot (v9+; `null` for tests on sources).
    pub attached_node: Option<String>,
    /// The tested column (`null` for model-level tests).
    pub column_name: Option<String>,
}

/// A node's `config`.
#[derive(Debug, Default, Deserialize)]
pub struct Config {
    pub enabled: Option<bool>,
    pub materialized: Option<String>,
    /// A test's filter: the test holds only on the rows it keeps.
    #[serde(rename = "where")]
    pub where_: Option<String>,
    #[serde(default, deserialize_with = "tags")]
    pub tags: Vec<String>,
}

/// A model-level or column-level constraint.
#[derive(Debug, Default, Deserialize)]
pub struct Constraint {
    #[serde(rename = "type", default, deserialize_with = "nullable")]
    pub kind: String,
    pub name: Option<String>,
    /// Model-level constraints only.
    #[serde(default, deserialize_with = "nullable")]
    pub columns: Vec<String>,
    pub expression: Option<String>,
    /// A foreign key's target: the compiled relation, or `ref('x')` /
    /// `source('s', 't')` in parse-only manifests (dbt ≥ 1.9).
    pub to: Option<String>,
    #[serde(default, deserialize_with = "nullable")]
    pub to_columns: Vec<String>,
}

/// A documented column.
#[derive(Debug, Default, Deserialize)]
pub struct ColumnInfo {
    #[serde(default, deserialize_with = "nullable")]
    pub name: String,
    pub description: Option<String>,
    pub data_type: Option<String>,
    #[serde(default, deserialize_with = "nullable")]
    pub constraints: Vec<Constraint>,
}

/// `depends_on` (its order is not stable across dbt versions).
#[derive(Debug, Default, Deserialize)]
pub struct DependsOn {
    #[serde(default, deserialize_with = "nullable")]
    pub nodes: Vec<String>,
}

/// A generic test's name, namespace and arguments.
#[derive(Debug, Default, Deserialize)]
pub struct TestMetadata {
    #[serde(default, deserialize_with = "nullable")]
    pub name: String,
    /// `null` or missing for dbt's built-in tests.
    pub namespace: Option<String>,
    #[serde(default, deserialize_with = "nullable")]
    pub kwargs: serde_json::Map<String, Value>,
}

/// A MetricFlow semantic model.
#[derive(Debug, Default, Deserialize)]
pub struct SemanticModel {
    #[serde(default, deserialize_with = "nullable")]
    pub name: String,
    pub description: Option<String>,
    pub label: Option<String>,
    #[serde(default, deserialize_with = "nullable")]
    pub depends_on: DependsOn,
    #[serde(default, deserialize_with = "nullable")]
    pub entities: Vec<Entity>,
    #[serde(default, deserialize_with = "nullable")]
    pub dimensions: Vec<Dimension>,
}

/// An entity of a semantic model.
#[derive(Debug, Default, Deserialize)]
pub struct Entity {
    #[serde(default, deserialize_with = "nullable")]
    pub name: String,
    /// `primary`, `unique`, `foreign` or `natural`.
    #[serde(rename = "type", default, deserialize_with = "nullable")]
    pub kind: String,
    /// The column (or an SQL expression); `null` means the entity's name.
    pub expr: Option<String>,
    pub description: Option<String>,
    pub label: Option<String>,
}

/// A dimension of a semantic model.
#[derive(Debug, Default, Deserialize)]
pub struct Dimension {
    #[serde(default, deserialize_with = "nullable")]
    pub name: String,
    pub expr: Option<String>,
    pub description: Option<String>,
    pub label: Option<String>,
}

impl Entity {
    /// The column or expression the entity stands for.
    pub fn column(&self) -> &str {
        self.expr.as_deref().filter(|e| !e.trim().is_empty()).unwrap_or(&self.name)
    }
}

impl Dimension {
    /// The column or expression the dimension stands for.
    pub fn column(&self) -> &str {
        self.expr.as_deref().filter(|e| !e.trim().is_empty()).unwrap_or(&self.name)
    }
}

impl Node {
    /// Disabled in its config.
    pub fn disabled(&self) -> bool {
        self.config.enabled == Some(false)
    }

    /// A test's `test_metadata.kwargs[key]` as text.
    pub fn kwarg_str(&self, key: &str) -> Option<&str> {
        self.test_metadata.as_ref()?.kwargs.get(key)?.as_str()
    }

    /// A test's `test_metadata.kwargs[key]` as a list of texts (a single
    /// text reads as a list of one).
    pub fn kwarg_list(&self, key: &str) -> Option<Vec<String>> {
        match self.test_metadata.as_ref()?.kwargs.get(key)? {
            Value::String(s) => Some(vec![s.clone()]),
            Value::Array(a) => Some(a.iter().filter_map(|v| v.as_str().map(str::to_string)).collect()),
            _ => None,
        }
    }
}

/// Tags: a list, a single text, or `null`.
fn tags<'de, D: Deserializer<'de>>(d: D) -> Result<Vec<String>, D::Error> {
    Ok(match Option::<Value>::deserialize(d)? {
        Some(Value::String(s)) => vec![s],
        Some(Value::Array(a)) => a.into_iter().filter_map(|v| v.as_str().map(str::to_string)).collect(),
        _ => Vec::new(),
    })
}

/// The manifest schema version of `$.metadata.dbt_schema_version`
/// (`https://schemas.getdbt.com/dbt/manifest/v12.json` → 12), or what kind
/// of dbt artifact it is instead.
pub fn schema_version(url: &str) -> Result<u32, String> {
    let Some(rest) = url.split("/dbt/").nth(1) else {
        return Err(format!("`{url}` is not a dbt artifact schema"));
    };
    let mut parts = rest.split('/');
    let kind = parts.next().unwrap_or("");
    let v = parts.next().unwrap_or("");
    if kind != "manifest" {
        return Err(format!("this is a dbt {kind} artifact (`{url}`), not a manifest"));
    }
    v.trim_start_matches('v')
        .trim_end_matches(".json")
        .parse::<u32>()
        .map_err(|_| format!("unreadable manifest schema version `{url}`"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn versions() {
        assert_eq!(schema_version("https://schemas.getdbt.com/dbt/manifest/v12.json"), Ok(12));
        assert_eq!(schema_version("https://schemas.getdbt.com/dbt/manifest/v20.json"), Ok(20));
        assert!(schema_version("https://schemas.getdbt.com/dbt/catalog/v1.json").unwrap_err().contains("catalog"));
        assert!(schema_version("nope").is_err());
    }

    #[test]
    fn nulls_and_missing_keys_read_as_empty() {
        let m: Manifest = serde_json::from_str(
            r#"{"metadata": {"dbt_schema_version": "x"}, "nodes": {"model.p.a": {"resource_type": "model",
                "config": null, "columns": null, "constraints": null, "depends_on": {"nodes": null},
                "tags": "t", "primary_key": ["id", null], "unknown": {"deep": [1]}}}, "sources": null}"#,
        )
        .unwrap();
        let (id, n) = &m.nodes.0[0];
        assert_eq!(id, "model.p.a");
        assert!(n.columns.0.is_empty() && n.constraints.is_empty() && n.depends_on.nodes.is_empty());
        assert_eq!(n.tags, vec!["t".to_string()]);
        assert_eq!(n.primary_key, vec![Some("id".to_string()), None]);
        assert!(m.sources.0.is_empty() && m.semantic_models.0.is_empty());
    }
}
