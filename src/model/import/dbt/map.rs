//! From a read manifest (and catalog) to the import builder's raw schema:
//! which nodes become tables, their columns, keys, descriptions, allowed
//! values and synonyms, and the merged, de-duplicated relationships.

use std::collections::{HashMap, HashSet};

use super::catalog::Catalog;
use super::edges::{self, Edge};
use super::facts::{self, plain_column, TableFacts};
use super::manifest::{Manifest, Node, SemanticModel};
use super::select::Selection;
use super::Warnings;
use crate::error::{Error, Result};
use crate::model::import::build::{RawForeignKey, RawSchema, RawTable};
use crate::types::{Column, Dialect};

/// At most this many accepted values are spelled out in a description.
const MAX_VALUES: usize = 30;

/// One node chosen to become a table.
struct Chosen<'a> {
    id: &'a str,
    node: &'a Node,
    /// The table's name in the model: `alias` (`identifier` for a
    /// source), the dbt name where one alias lives in two schemas.
    name: String,
    /// Its qualified SQL name: schema and alias.
    relation: Vec<String>,
}

/// The root project: `$.metadata.project_name`, else (before v10) the
/// package owning the most models, seeds and snapshots.
pub fn project_name(m: &Manifest, warnings: &mut Warnings) -> String {
    if let Some(p) = m.metadata.project_name.as_deref().filter(|p| !p.is_empty()) {
        return p.to_string();
    }
    let mut count: HashMap<&str, usize> = HashMap::new();
    for (_, n) in &m.nodes.0 {
        if matches!(n.resource_type.as_str(), "model" | "seed" | "snapshot") {
            *count.entry(n.package_name.as_str()).or_default() += 1;
        }
    }
    let mut best: Vec<(&str, usize)> = count.into_iter().collect();
    best.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let name = best.first().map(|b| b.0.to_string()).unwrap_or_default();
    if best.len() > 1 {
        warnings.push(
            "$.metadata",
            format!("no project_name (manifest before v10): taking `{name}`, the package with the most models; select others with --select package:NAME"),
        );
    }
    name
}

/// The dbModel dialect of a dbt adapter, when lucy has one.
fn dialect(adapter: Option<&str>, warnings: &mut Warnings) -> Option<Dialect> {
    let a = adapter?;
    let d = match a {
        "postgres" | "redshift" | "materialize" => Some(Dialect::Postgres),
        "mysql" | "mariadb" => Some(Dialect::Mysql),
        "sqlite" => Some(Dialect::Sqlite),
        "spark" | "databricks" => Some(Dialect::Spark),
        _ => None,
    };
    match d {
        None => warnings.push(
            "$.metadata.adapter_type",
            format!("adapter `{a}` has no lucy dialect (sqlite, mysql, postgres, spark); the model names none"),
        ),
        Some(_) if a == "redshift" || a == "materialize" => {
            warnings.push("$.metadata.adapter_type", format!("adapter `{a}` read as postgres"))
        }
        _ => {}
    }
    d
}

/// The version of a versioned model as text (`3`, `"3"` → `3`).
fn version_text(v: &serde_json::Value) -> String {
    match v {
        serde_json::Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// Choose the nodes that become tables.
fn choose<'a>(m: &'a Manifest, sel: &Selection, project: &str, warnings: &mut Warnings) -> Result<Vec<Chosen<'a>>> {
    let mut out: Vec<Chosen> = Vec::new();
    let (mut packages, mut sources) = (0usize, 0usize);
    for (id, n) in m.nodes.0.iter().chain(&m.sources.0) {
        let kind = n.resource_type.as_str();
        if !matches!(kind, "model" | "seed" | "snapshot" | "source") {
            continue;
        }
        if !sel.selects(n, project) {
            if sel.is_default() {
                if kind == "source" {
                    sources += 1;
                } else {
                    packages += 1;
                }
            }
            continue;
        }
        if n.disabled() {
            warnings.push(id.clone(), "disabled; skipped");
            continue;
        }
        if n.config.materialized.as_deref() == Some("ephemeral") {
            warnings.push(id.clone(), "ephemeral model: no relation in the warehouse; skipped");
            continue;
        }
        if n.time_spine.as_ref().is_some_and(|t| !t.is_null()) || (kind == "model" && n.name == "metricflow_time_spine")
        {
            warnings.push(id.clone(), "MetricFlow time spine (a calendar, not business data); skipped");
            continue;
        }
        if let (Some(v), Some(latest)) = (&n.version, &n.latest_version) {
            if !v.is_null() && !latest.is_null() && version_text(v) != version_text(latest) {
                warnings.push(
                    id.clone(),
                    format!(
                        "version {} of {}, not the latest ({}); skipped",
                        version_text(v),
                        n.name,
                        version_text(latest)
                    ),
                );
                continue;
            }
        }
        let name = if kind == "source" { n.identifier.clone().filter(|s| !s.is_empty()) } else { n.alias.clone() }
            .filter(|s| !s.is_empty())
            .unwrap_or_else(|| n.name.clone());
        out.push(Chosen { id: id.as_str(), node: n, name, relation: Vec::new() });
    }
    if packages > 0 {
        warnings.push(
            "--select",
            format!("{packages} model(s), seed(s) or snapshot(s) of other packages not imported (select them with --select package:NAME)"),
        );
    }
    if sources > 0 {
        warnings.push(
            "--select",
            format!("{sources} source(s) not imported (select them with --select resource_type:source or source:NAME)"),
        );
    }
    // Each table is found by its schema and alias (`Table::relation`), so
    // the connection's search path need not cover the project's schemas.
    // Its name in the model is the alias; where one alias lives in two
    // schemas, the tables are named by their dbt node names instead.
    let mut per_alias: HashMap<String, usize> = HashMap::new();
    for c in &out {
        *per_alias.entry(c.name.to_ascii_lowercase()).or_default() += 1;
    }
    for c in out.iter_mut() {
        let alias = c.name.clone();
        if per_alias[&alias.to_ascii_lowercase()] > 1 {
            c.name = c.node.name.clone();
        }
        c.relation = match c.node.schema.as_deref().filter(|s| !s.is_empty()) {
            Some(schema) => vec![schema.to_string(), alias],
            None if c.name != alias => vec![alias],
            None => Vec::new(),
        };
    }
    let mut seen: HashMap<String, usize> = HashMap::new();
    for (i, c) in out.iter().enumerate() {
        if let Some(&j) = seen.get(&c.name.to_ascii_lowercase()) {
            let o = &out[j];
            return Err(Error::Input(format!(
                "{} ({}) and {} ({}) both import as table `{}`: one alias in two schemas, and their dbt names are the same too. \
                 Import one of them per run (e.g. --select path:models/marts, or --select with one of the two names)",
                o.id,
                o.relation.join("."),
                c.id,
                c.relation.join("."),
                c.name
            )));
        }
        seen.insert(c.name.to_ascii_lowercase(), i);
    }
    Ok(out)
}

/// Words of a dbt name for a synonym: `order_item` → `order item`.
fn words(s: &str) -> String {
    s.replace('_', " ").split_whitespace().collect::<Vec<_>>().join(" ")
}

fn squash(s: &str) -> String {
    s.chars().filter(|c| c.is_alphanumeric()).flat_map(char::to_lowercase).collect()
}

/// Add `s` to `list` unless it is empty, too long, the element's own name
/// or already there.
fn add_synonym(list: &mut Vec<String>, own: &str, s: &str) {
    let s = s.trim();
    if s.is_empty() || s.chars().count() > 100 || squash(s) == squash(own) || squash(s).is_empty() {
        return;
    }
    if !list.iter().any(|x| x.eq_ignore_ascii_case(s)) {
        list.push(s.to_string());
    }
}

fn text(s: Option<&str>) -> Option<String> {
    s.map(str::trim).filter(|s| !s.is_empty()).map(str::to_string)
}

/// `Values: 'new', 'returning'` appended to a description.
fn with_values(desc: Option<String>, values: &[String]) -> Option<String> {
    if values.is_empty() {
        return desc;
    }
    let shown: Vec<String> = values.iter().take(MAX_VALUES).map(|v| format!("'{}'", v.replace('\'', "''"))).collect();
    let mut v = format!("Values: {}", shown.join(", "));
    if values.len() > MAX_VALUES {
        v.push_str(&format!(", … ({} values)", values.len()));
    }
    Some(match desc {
        Some(d) if d.contains('\n') => format!("{d}\n{v}"),
        Some(d) if d.ends_with('.') => format!("{d} {v}"),
        Some(d) => format!("{d}. {v}"),
        None => v,
    })
}

/// The semantic model of each node, by unique id.
fn semantic_by_node(m: &Manifest) -> HashMap<&str, &SemanticModel> {
    let mut out = HashMap::new();
    for (_, sm) in &m.semantic_models.0 {
        if let Some(t) = sm.depends_on.nodes.first() {
            out.entry(t.as_str()).or_insert(sm);
        }
    }
    out
}

/// Import counts by origin, for the report.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct EdgeCounts {
    pub constraint: usize,
    pub test: usize,
    pub entity: usize,
}

/// Build the raw schema of the selected nodes.
pub fn raw_schema(
    m: &Manifest,
    catalog: Option<&Catalog>,
    sel: &Selection,
    name: Option<&str>,
    mut warnings: Warnings,
) -> Result<RawSchema> {
    let project = project_name(m, &mut warnings);
    let dialect = dialect(m.metadata.adapter_type.as_deref(), &mut warnings);
    let fold_upper = m.metadata.adapter_type.as_deref() == Some("snowflake");
    let all: HashMap<&str, &Node> = m.nodes.0.iter().chain(&m.sources.0).map(|(k, v)| (k.as_str(), v)).collect();
    let chosen = choose(m, sel, &project, &mut warnings)?;
    let facts = facts::collect(m, &all, &mut warnings);
    let semantic = semantic_by_node(m);
    let empty = TableFacts::default();

    let mut tables = Vec::new();
    let mut pks: HashMap<&str, Vec<String>> = HashMap::new();
    for c in &chosen {
        let f = facts.get(c.id).unwrap_or(&empty);
        let sm = semantic.get(c.id).copied();
        let (raw, pk) = table(c, f, sm, catalog, fold_upper, &mut warnings);
        pks.insert(c.id, pk);
        tables.push(raw);
    }

    let names: HashMap<&str, &str> = chosen.iter().map(|c| (c.id, c.name.as_str())).collect();
    let edges = edges::collect(m, &all, &mut warnings);
    let foreign_keys = relationships(edges, &names, &pks, &mut warnings);
    let name =
        name.map(str::to_string).unwrap_or_else(|| if project.is_empty() { "dbt".into() } else { project.clone() });
    Ok(RawSchema { name, description: None, dialect, tables, foreign_keys, warnings: warnings.0 })
}

/// One table: columns (catalog order, documented ones, ones tests name),
/// key, unique keys, descriptions, values and synonyms.
fn table(
    c: &Chosen,
    f: &TableFacts,
    sm: Option<&SemanticModel>,
    catalog: Option<&Catalog>,
    fold_upper: bool,
    warnings: &mut Warnings,
) -> (RawTable, Vec<String>) {
    let n = c.node;
    let cat = catalog.and_then(|k| k.table(c.id));
    if catalog.is_some() && cat.is_none() {
        warnings
            .push(c.id, "not in the catalog (not built when `dbt docs generate` ran?); columns from the manifest only");
    }
    let documented = |name: &str| {
        n.columns.0.iter().find(|(k, col)| {
            let nm = if col.name.is_empty() { k } else { &col.name };
            nm.eq_ignore_ascii_case(name)
        })
    };
    let mut columns: Vec<Column> = Vec::new();
    let mut col_origin: Vec<&str> = Vec::new();
    if let Some(ct) = cat {
        for cc in ct.ordered_columns() {
            let doc = documented(&cc.name);
            let name = match doc {
                Some((k, col)) => {
                    if col.name.is_empty() {
                        k.clone()
                    } else {
                        col.name.clone()
                    }
                }
                None if fold_upper && !cc.name.chars().any(|ch| ch.is_lowercase()) => cc.name.to_lowercase(),
                None => cc.name.clone(),
            };
            let doc_col = doc.map(|d| &d.1);
            columns.push(Column {
                name,
                sql_type: text(doc_col.and_then(|d| d.data_type.as_deref()))
                    .or_else(|| text(cc.sql_type.as_deref()))
                    .unwrap_or_default(),
                nullable: true,
                description: text(doc_col.and_then(|d| d.description.as_deref()))
                    .or_else(|| text(cc.comment.as_deref())),
                ..Column::default()
            });
            col_origin.push(if doc.is_some() { "documented, catalog" } else { "catalog" });
        }
    }
    for (k, col) in &n.columns.0 {
        let name = if col.name.is_empty() { k.clone() } else { col.name.clone() };
        if columns.iter().any(|x| x.name.eq_ignore_ascii_case(&name)) {
            continue;
        }
        if cat.is_some() {
            warnings.push(
                c.id,
                format!("documented column {name} is not in the catalog (gone from the warehouse?); skipped"),
            );
            continue;
        }
        columns.push(Column {
            name,
            sql_type: text(col.data_type.as_deref()).unwrap_or_default(),
            nullable: true,
            description: text(col.description.as_deref()),
            ..Column::default()
        });
        col_origin.push("documented");
    }
    for name in &f.named {
        if columns.iter().any(|x| x.name.eq_ignore_ascii_case(name)) {
            continue;
        }
        if cat.is_some() {
            warnings.push(c.id, format!("tests name column {name}, which the catalog does not list; not added"));
            continue;
        }
        columns.push(Column { name: name.clone(), nullable: true, ..Column::default() });
        col_origin.push("named by a test");
    }
    if columns.is_empty() && catalog.is_none() {
        warnings.push(
            c.id,
            "no documented columns: run `dbt docs generate` and pass its catalog.json (--catalog) to import this table",
        );
    }

    // Semantic descriptions, labels and entity names.
    let mut synonyms = Vec::new();
    if let Some(sm) = sm {
        add_synonym(&mut synonyms, &c.name, sm.label.as_deref().unwrap_or(""));
        add_synonym(&mut synonyms, &c.name, &words(&sm.name));
        for e in sm.entities.iter().filter(|e| e.kind == "primary") {
            add_synonym(&mut synonyms, &c.name, &words(&e.name));
        }
        for col in &mut columns {
            let cname = col.name.clone();
            let here = |expr: &str| plain_column(expr).is_some_and(|p| p.eq_ignore_ascii_case(&cname));
            for e in sm.entities.iter().filter(|e| here(e.column())) {
                if col.description.is_none() {
                    col.description = text(e.description.as_deref());
                }
                add_synonym(&mut col.synonyms, &col.name, e.label.as_deref().unwrap_or(""));
            }
            for d in sm.dimensions.iter().filter(|d| here(d.column())) {
                if col.description.is_none() {
                    col.description = text(d.description.as_deref());
                }
                add_synonym(&mut col.synonyms, &col.name, d.label.as_deref().unwrap_or(""));
                add_synonym(&mut col.synonyms, &col.name, &words(&d.name));
            }
        }
    }

    // Nullability and allowed values.
    for col in &mut columns {
        if f.is_not_null(&col.name) {
            col.nullable = false;
        }
    }
    for (i, col) in columns.iter_mut().enumerate() {
        let values: Vec<String> =
            f.values.iter().filter(|(c, _)| c.eq_ignore_ascii_case(&col.name)).flat_map(|(_, v)| v.clone()).collect();
        let mut origin = format!("dbt: {}", col_origin[i]);
        if !values.is_empty() {
            origin.push_str("; values from an accepted_values test");
        }
        col.description = with_values(col.description.take(), &values);
        col.origin = Some(origin);
    }

    // The key: constraint, dbt's inference, unique + not_null, a unique
    // combination, the semantic model's primary entity.
    let inferred: Vec<String> = n.primary_key.iter().flatten().filter(|s| !s.is_empty()).cloned().collect();
    let single =
        columns.iter().find(|col| f.is_unique(&col.name) && f.is_not_null(&col.name)).map(|col| col.name.clone());
    let entity =
        sm.and_then(|sm| sm.entities.iter().find(|e| e.kind == "primary")).and_then(|e| plain_column(e.column()));
    let (pk, pk_origin): (Vec<String>, String) = if let Some((cols, o)) = &f.pk_constraint {
        (cols.clone(), o.clone())
    } else if !inferred.is_empty() {
        (inferred, "dbt's inferred primary_key".into())
    } else if let Some(s) = single {
        (vec![s], "unique and not_null tests".into())
    } else if let Some((cols, o)) = f.combos.first() {
        (cols.clone(), o.clone())
    } else if let Some(e) = entity {
        (vec![e], "the semantic model's primary entity".into())
    } else {
        (Vec::new(), String::new())
    };
    let mut unique: Vec<Vec<String>> = Vec::new();
    let same = |a: &[String], b: &[String]| {
        a.len() == b.len() && a.iter().all(|x| b.iter().any(|y| x.eq_ignore_ascii_case(y)))
    };
    let mut add_unique = |u: Vec<String>| {
        if !u.is_empty() && !same(&u, &pk) && !unique.iter().any(|x| same(x, &u)) {
            unique.push(u);
        }
    };
    for u in &f.unique {
        add_unique(vec![u.clone()]);
    }
    for (u, _) in &f.combos {
        add_unique(u.clone());
    }
    if let Some(sm) = sm {
        for e in sm.entities.iter().filter(|e| e.kind == "unique" || e.kind == "primary") {
            if let Some(col) = plain_column(e.column()) {
                add_unique(vec![col]);
            }
        }
    }
    let kind = n.resource_type.as_str();
    let mut origin = format!("dbt: {kind} {}", c.id.split('.').skip(1).collect::<Vec<_>>().join("."));
    if !pk_origin.is_empty() {
        origin.push_str(&format!("; primary key from {pk_origin}"));
    }
    let description = text(n.description.as_deref())
        .or_else(|| sm.and_then(|s| text(s.description.as_deref())))
        .or_else(|| text(n.source_description.as_deref()))
        .or_else(|| cat.and_then(|t| text(t.metadata.comment.as_deref())));
    let raw = RawTable {
        name: c.name.clone(),
        description,
        columns,
        primary_key: pk.clone(),
        unique,
        origin: c.id.to_string(),
        synonyms,
        provenance: Some(origin),
        relation: c.relation.clone(),
    };
    (raw, pk)
}

/// Edges between imported tables, merged: one per (from, to, column
/// pairs), constraints before tests before entities, every origin kept.
fn relationships(
    mut edges: Vec<Edge>,
    names: &HashMap<&str, &str>,
    pks: &HashMap<&str, Vec<String>>,
    warnings: &mut Warnings,
) -> Vec<RawForeignKey> {
    edges.sort_by_key(|e| e.kind);
    let mut out: Vec<(RawForeignKey, Vec<String>)> = Vec::new();
    let mut index: HashMap<(String, String, Vec<(String, String)>), usize> = HashMap::new();
    let mut dropped: HashSet<String> = HashSet::new();
    for mut e in edges {
        let (Some(from), Some(to)) = (names.get(e.from.as_str()), names.get(e.to.as_str())) else {
            if names.contains_key(e.from.as_str()) && dropped.insert(format!("{}|{}", e.origin, e.to)) {
                warnings.push(
                    e.from.clone(),
                    format!(
                        "{}: its target {} is not imported (outside the selection, or skipped above); no relationship",
                        e.origin.trim_start_matches("dbt: "),
                        e.to
                    ),
                );
            }
            continue;
        };
        if e.to_columns.is_empty() {
            e.to_columns = pks.get(e.to.as_str()).cloned().unwrap_or_default();
        }
        let lower = |s: &str| s.to_ascii_lowercase();
        let mut pairs: Vec<(String, String)> =
            e.columns.iter().zip(&e.to_columns).map(|(a, b)| (lower(a), lower(b))).collect();
        pairs.sort();
        let key = (e.from.clone(), e.to.clone(), pairs);
        if e.columns.len() == e.to_columns.len() {
            if let Some(&i) = index.get(&key) {
                let (fk, origins) = &mut out[i];
                if !origins.contains(&e.origin) {
                    origins.push(e.origin.clone());
                }
                if fk.description.is_none() {
                    fk.description = e.description;
                }
                continue;
            }
            index.insert(key, out.len());
        }
        out.push((
            RawForeignKey {
                from: from.to_string(),
                columns: e.columns,
                to: to.to_string(),
                to_columns: e.to_columns,
                origin: e.origin.clone(),
                description: e.description,
                provenance: None,
            },
            vec![e.origin],
        ));
    }
    out.into_iter()
        .map(|(mut fk, origins)| {
            fk.provenance = Some(merge_origins(&origins));
            fk
        })
        .collect()
}

/// `dbt: test a; dbt: constraint b` — at most 4 named, then a count.
fn merge_origins(origins: &[String]) -> String {
    let mut s = origins.iter().take(4).cloned().collect::<Vec<_>>().join("; ");
    if origins.len() > 4 {
        s.push_str(&format!("; and {} more", origins.len() - 4));
    }
    s
}

/// Relationships of an imported model by origin kind (the first origin).
pub fn counts(model: &crate::types::DbModel) -> EdgeCounts {
    let mut c = EdgeCounts::default();
    for r in &model.relationships {
        match r.origin.as_deref() {
            Some(o) if o.starts_with("dbt: constraint") => c.constraint += 1,
            Some(o) if o.starts_with("dbt: test") => c.test += 1,
            Some(o) if o.starts_with("dbt: entity") => c.entity += 1,
            _ => {}
        }
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_are_appended() {
        assert_eq!(with_values(None, &["a".into(), "b'c".into()]).as_deref(), Some("Values: 'a', 'b''c'"));
        assert_eq!(with_values(Some("Kind".into()), &["x".into()]).as_deref(), Some("Kind. Values: 'x'"));
        assert_eq!(with_values(Some("Kind.".into()), &[]).as_deref(), Some("Kind."));
    }

    #[test]
    fn synonyms_skip_own_name() {
        let mut s = Vec::new();
        add_synonym(&mut s, "order_items", "order items");
        add_synonym(&mut s, "order_items", "order item");
        add_synonym(&mut s, "order_items", "Order Item");
        assert_eq!(s, vec!["order item".to_string()]);
    }
}
