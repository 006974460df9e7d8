//! Relationships a manifest declares, from three places: foreign-key
//! constraints, `relationships`-style tests (`relationships`,
//! `dbt_utils.relationships_where`, `dbt_constraints.foreign_key`) and
//! semantic-model entities (a foreign entity to the primary or unique
//! entity of the same name). A test's target is found through its
//! `depends_on`, never by looking a `ref(...)` text up on its own.

use std::collections::HashMap;

use super::facts::{plain_column, test_kind, tested_node, RefText};
use super::manifest::{Constraint, Manifest, Node};
use super::Warnings;

/// Where a relationship came from, in precedence order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Kind {
    Constraint,
    Test,
    Entity,
}

/// One declared relationship between two nodes (by unique id).
#[derive(Debug, Clone)]
pub struct Edge {
    pub from: String,
    pub columns: Vec<String>,
    pub to: String,
    /// Empty: the target's primary key (a test whose arguments are missing).
    pub to_columns: Vec<String>,
    pub kind: Kind,
    /// `dbt: test relationships_orders_customer_id…`.
    pub origin: String,
    pub description: Option<String>,
}

/// Every edge the manifest declares, in document order; what cannot be
/// read becomes a warning.
pub fn collect(m: &Manifest, all: &HashMap<&str, &Node>, warnings: &mut Warnings) -> Vec<Edge> {
    let mut out = Vec::new();
    for (id, n) in m.nodes.0.iter().chain(&m.sources.0) {
        if matches!(n.resource_type.as_str(), "model" | "seed" | "snapshot" | "source") {
            constraint_edges(id, n, all, warnings, &mut out);
        }
    }
    for (id, t) in &m.nodes.0 {
        if t.resource_type == "test" && !t.disabled() {
            if let Some(e) = test_edge(id, t, all, warnings) {
                out.push(e);
            }
        }
    }
    entity_edges(m, warnings, &mut out);
    out
}

fn constraint_edges(id: &str, n: &Node, all: &HashMap<&str, &Node>, warnings: &mut Warnings, out: &mut Vec<Edge>) {
    let mut push = |c: &Constraint, cols: Vec<String>| {
        let label = match &c.name {
            Some(x) => format!("constraint {x}"),
            None => format!("constraint foreign_key ({})", cols.join(", ")),
        };
        let (target, to_cols) = match (&c.to, &c.expression) {
            (Some(to), _) if !to.trim().is_empty() => (resolve_relation(n, to, all), c.to_columns.clone()),
            (_, Some(expr)) => {
                // Before dbt 1.9: `expression: "schema.table (col, …)"`.
                let (rel, cols) = match expr.split_once('(') {
                    Some((r, rest)) => (
                        r.trim(),
                        rest.trim_end().trim_end_matches(')').split(',').map(|s| s.trim().to_string()).collect(),
                    ),
                    None => (expr.trim(), Vec::new()),
                };
                (resolve_relation(n, rel, all), cols)
            }
            _ => (None, Vec::new()),
        };
        let Some(target) = target else {
            warnings.push(
                id.to_string(),
                format!(
                    "{label}: its target ({}) is no model, seed, snapshot or source of the manifest; skipped",
                    c.to.as_deref().or(c.expression.as_deref()).unwrap_or("none given")
                ),
            );
            return;
        };
        let to_plain: Vec<String> = to_cols.iter().filter_map(|c| plain_column(c)).collect();
        if to_plain.len() != to_cols.len() {
            warnings.push(id.to_string(), format!("{label}: references SQL expressions, not columns; skipped"));
            return;
        }
        out.push(Edge {
            from: id.to_string(),
            columns: cols,
            to: target,
            to_columns: to_plain,
            kind: Kind::Constraint,
            origin: format!("dbt: {label}"),
            description: None,
        });
    };
    for c in n.constraints.iter().filter(|c| c.kind == "foreign_key") {
        let cols: Vec<String> = c.columns.iter().filter_map(|c| plain_column(c)).collect();
        if cols.is_empty() || cols.len() != c.columns.len() {
            continue;
        }
        push(c, cols);
    }
    for (key, col) in &n.columns.0 {
        let cname = if col.name.is_empty() { key.clone() } else { col.name.clone() };
        for c in col.constraints.iter().filter(|c| c.kind == "foreign_key") {
            push(c, vec![cname.clone()]);
        }
    }
}

/// The node a constraint's `to` names: a compiled relation
/// (`"db"."schema"."t"`, `db.schema.t`) matched against every node's
/// `relation_name`, or a `ref()`/`source()` text matched among the
/// constraint holder's `depends_on`.
fn resolve_relation(holder: &Node, to: &str, all: &HashMap<&str, &Node>) -> Option<String> {
    if let Some(r) = RefText::parse(to) {
        let hits: Vec<&String> =
            holder.depends_on.nodes.iter().filter(|d| all.get(d.as_str()).is_some_and(|n| r.names(n))).collect();
        return (hits.len() == 1).then(|| hits[0].clone());
    }
    let norm = |s: &str| -> Vec<String> {
        s.split('.').map(|p| p.trim().trim_matches(['"', '`', '[', ']']).to_ascii_lowercase()).collect()
    };
    let want = norm(to);
    let mut hits: Vec<&str> = all
        .iter()
        .filter(|(_, n)| matches!(n.resource_type.as_str(), "model" | "seed" | "snapshot" | "source"))
        .filter(|(_, n)| n.relation_name.as_deref().is_some_and(|r| norm(r) == want))
        .map(|(id, _)| *id)
        .collect();
    if hits.is_empty() {
        // A relation written with fewer parts than dbt's (`schema.t`, `t`).
        hits = all
            .iter()
            .filter(|(_, n)| matches!(n.resource_type.as_str(), "model" | "seed" | "snapshot" | "source"))
            .filter(|(_, n)| {
                n.relation_name.as_deref().is_some_and(|r| {
                    let have = norm(r);
                    have.len() >= want.len() && have[have.len() - want.len()..] == want[..]
                })
            })
            .map(|(id, _)| *id)
            .collect();
    }
    hits.sort_unstable();
    (hits.len() == 1).then(|| hits[0].to_string())
}

fn test_edge(id: &str, t: &Node, all: &HashMap<&str, &Node>, warnings: &mut Warnings) -> Option<Edge> {
    let (ns, name) = test_kind(t)?;
    let (from_keys, to_keys, target_key): (&[&str], &[&str], &str) = match (ns, name) {
        ("", "relationships") | ("dbt_utils", "relationships_where") => (&["column_name"], &["field"], "to"),
        ("dbt_constraints", "foreign_key") => (
            &["fk_column_names", "fk_column_name", "column_name"],
            &["pk_column_names", "pk_column_name"],
            "pk_table_name",
        ),
        _ => return None,
    };
    let label = format!("test {}", t.name);
    let Some(from) = tested_node(t, all) else {
        warnings.push(id.to_string(), format!("{label}: cannot tell which table it tests; skipped"));
        return None;
    };
    // The target: the dependency that is not the tested node (a
    // self-reference when there is none), checked against the `to` text.
    let want = t.kwarg_str(target_key).and_then(RefText::parse);
    let others: Vec<&String> = t.depends_on.nodes.iter().filter(|d| **d != from).collect();
    let to = match (others.as_slice(), &want) {
        ([], _) => from.clone(),
        ([one], _) => (*one).clone(),
        (many, Some(w)) => {
            let hits: Vec<&&String> = many.iter().filter(|d| all.get(d.as_str()).is_some_and(|n| w.names(n))).collect();
            if hits.len() != 1 {
                warnings.push(id.to_string(), format!("{label}: cannot tell its target among {}; skipped", many.len()));
                return None;
            }
            (**hits[0]).clone()
        }
        (many, None) => {
            warnings.push(id.to_string(), format!("{label}: cannot tell its target among {}; skipped", many.len()));
            return None;
        }
    };
    if let (Some(w), Some(n)) = (&want, all.get(to.as_str())) {
        if !w.names(n) {
            warnings.push(
                id.to_string(),
                format!("{label}: its target {to} does not match its `{target_key}` argument; kept (dbt resolved it)"),
            );
        }
    }
    let list = |keys: &[&str]| keys.iter().find_map(|k| t.kwarg_list(k)).filter(|v| !v.is_empty());
    let cols = list(from_keys).or_else(|| t.column_name.clone().map(|c| vec![c]));
    let Some(cols) = cols else {
        warnings.push(id.to_string(), format!("{label}: names no column; skipped"));
        return None;
    };
    let to_cols = list(to_keys);
    let plain: Vec<String> = cols.iter().filter_map(|c| plain_column(c)).collect();
    let to_plain: Option<Vec<String>> = to_cols.as_ref().map(|v| v.iter().filter_map(|c| plain_column(c)).collect());
    if plain.len() != cols.len() || to_plain.as_ref().zip(to_cols.as_ref()).is_some_and(|(p, c)| p.len() != c.len()) {
        warnings.push(
            id.to_string(),
            format!(
                "{label}: relates SQL expressions, not columns ({}); skipped",
                crate::error::cut(&cols.join(", "), 80)
            ),
        );
        return None;
    }
    if to_cols.is_none() {
        warnings.push(
            id.to_string(),
            format!("{label}: its arguments are missing (dbt Fusion strips them); target from depends_on, column: the target's primary key"),
        );
    }
    if let Some(w) = &t.config.where_ {
        warnings.push(id.to_string(), format!("{label} holds only where {w}; kept as a join path"));
    }
    for k in ["from_condition", "to_condition"] {
        if let Some(c) = t.kwarg_str(k).filter(|c| !c.trim().is_empty() && c.trim() != "1=1") {
            warnings.push(id.to_string(), format!("{label} holds only where {c} ({k}); kept as a join path"));
        }
    }
    Some(Edge {
        from,
        columns: plain,
        to,
        to_columns: to_plain.unwrap_or_default(),
        kind: Kind::Test,
        origin: format!("dbt: {label}"),
        description: t.description.clone().filter(|d| !d.trim().is_empty()),
    })
}

/// Foreign entities to the one primary or unique entity of the same name.
fn entity_edges(m: &Manifest, warnings: &mut Warnings, out: &mut Vec<Edge>) {
    let table = |sm: &super::manifest::SemanticModel| sm.depends_on.nodes.first().cloned();
    let mut keys: HashMap<&str, Vec<(String, String, &str)>> = HashMap::new();
    for (_, sm) in &m.semantic_models.0 {
        let Some(t) = table(sm) else { continue };
        for e in sm.entities.iter().filter(|e| e.kind == "primary" || e.kind == "unique") {
            if let Some(c) = plain_column(e.column()) {
                keys.entry(e.name.as_str()).or_default().push((t.clone(), c, sm.name.as_str()));
            }
        }
    }
    for (sid, sm) in &m.semantic_models.0 {
        let Some(from) = table(sm) else { continue };
        for e in &sm.entities {
            let label = format!("entity {} of semantic model {}", e.name, sm.name);
            match e.kind.as_str() {
                "foreign" => {}
                "natural" => {
                    warnings.push(
                        sid.clone(),
                        format!("{label}: a natural key (joins need a validity window); no relationship"),
                    );
                    continue;
                }
                _ => continue,
            }
            let Some(col) = plain_column(e.column()) else {
                warnings.push(sid.clone(), format!("{label}: an SQL expression, not a column; no relationship"));
                continue;
            };
            match keys.get(e.name.as_str()).map(Vec::as_slice) {
                Some([(to, to_col, _)]) => out.push(Edge {
                    from: from.clone(),
                    columns: vec![col],
                    to: to.clone(),
                    to_columns: vec![to_col.clone()],
                    kind: Kind::Entity,
                    origin: format!("dbt: {label}"),
                    description: e.description.clone().filter(|d| !d.trim().is_empty()),
                }),
                Some(many) if many.len() > 1 => warnings.push(
                    sid.clone(),
                    format!(
                        "{label}: primary or unique in {} semantic models ({}); no relationship",
                        many.len(),
                        many.iter().map(|k| k.2).collect::<Vec<_>>().join(", ")
                    ),
                ),
                _ => warnings.push(
                    sid.clone(),
                    format!("{label}: no semantic model has it as primary or unique entity; no relationship"),
                ),
            }
        }
    }
}
