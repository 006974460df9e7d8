//! What a manifest says about each table's keys, nullability and values:
//! constraints and generic tests (`unique`, `not_null`, `accepted_values`,
//! `dbt_utils.unique_combination_of_columns`, `dbt_constraints.primary_key`
//! / `unique_key`), collected per tested node.

use std::collections::HashMap;

use super::manifest::{Manifest, Node};
use super::Warnings;

/// Facts about one table, from its constraints and the tests on it.
#[derive(Debug, Default)]
pub struct TableFacts {
    /// Primary-key constraint columns (model- or column-level, or a
    /// `dbt_constraints.primary_key` test), with where they came from.
    pub pk_constraint: Option<(Vec<String>, String)>,
    /// Columns with an unconditioned, enabled `unique` test or constraint.
    pub unique: Vec<String>,
    /// Columns with an unconditioned, enabled `not_null` test or constraint (lower case).
    pub not_null: Vec<String>,
    /// Multi-column unique keys (`unique_combination_of_columns`,
    /// `dbt_constraints.unique_key`, unique constraints), with origins.
    pub combos: Vec<(Vec<String>, String)>,
    /// `accepted_values`: column → values.
    pub values: Vec<(String, Vec<String>)>,
    /// Columns tests and constraints name (they exist even when undocumented).
    pub named: Vec<String>,
}

impl TableFacts {
    fn name(&mut self, c: &str) {
        if !self.named.iter().any(|n| n.eq_ignore_ascii_case(c)) {
            self.named.push(c.to_string());
        }
    }

    /// Whether `col` is declared not null.
    pub fn is_not_null(&self, col: &str) -> bool {
        self.not_null.iter().any(|c| c.eq_ignore_ascii_case(col))
    }

    /// Whether `col` is declared unique on its own.
    pub fn is_unique(&self, col: &str) -> bool {
        self.unique.iter().any(|c| c.eq_ignore_ascii_case(col))
    }
}

/// A plain column name (optionally quoted), unquoted; `None` for an SQL
/// expression (`coalesce(a, '') || b`).
pub fn plain_column(s: &str) -> Option<String> {
    let t = s.trim();
    for (open, close) in [('"', '"'), ('`', '`'), ('[', ']')] {
        if let Some(inner) = t.strip_prefix(open).and_then(|r| r.strip_suffix(close)) {
            return (!inner.is_empty() && !inner.contains(close)).then(|| inner.to_string());
        }
    }
    let mut chars = t.chars();
    let first = chars.next()?;
    ((first.is_alphabetic() || first == '_') && chars.all(|c| c.is_alphanumeric() || c == '_' || c == '$'))
        .then(|| t.to_string())
}

/// The node a test is attached to: `attached_node`, else (tests on
/// sources, manifests before v9) the `depends_on` entry that the test's
/// `model` argument names, else its only dependency.
pub fn tested_node(test: &Node, all: &HashMap<&str, &Node>) -> Option<String> {
    if let Some(a) = test.attached_node.as_deref().filter(|a| !a.is_empty()) {
        return Some(a.to_string());
    }
    let deps = &test.depends_on.nodes;
    if let Some(model) = test.kwarg_str("model") {
        if let Some(r) = RefText::parse(model) {
            let hits: Vec<&String> = deps.iter().filter(|d| all.get(d.as_str()).is_some_and(|n| r.names(n))).collect();
            if hits.len() == 1 {
                return Some(hits[0].clone());
            }
        }
    }
    (deps.len() == 1).then(|| deps[0].clone())
}

/// A `ref('x')`, `ref('pkg', 'x')`, `ref('x', v=2)` or `source('s', 't')`
/// text, read only to check (or pick among) `depends_on` entries — never to
/// find a node on its own.
#[derive(Debug, PartialEq, Eq)]
pub enum RefText {
    Ref(String),
    Source(String, String),
}

impl RefText {
    /// The first `ref(...)` or `source(...)` in `s`.
    pub fn parse(s: &str) -> Option<RefText> {
        let quoted = |args: &str| -> Vec<String> {
            let mut out = Vec::new();
            let mut rest = args;
            while let Some(i) = rest.find(['\'', '"']) {
                let q = rest.as_bytes()[i] as char;
                let before = &rest[..i];
                // Skip keyword arguments' values (v=2, version=2, package=…).
                let keyword = before.trim_end().ends_with('=');
                let Some(j) = rest[i + 1..].find(q) else { break };
                if !keyword {
                    out.push(rest[i + 1..i + 1 + j].to_string());
                }
                rest = &rest[i + 2 + j..];
            }
            out
        };
        if let Some(i) = s.find("source(") {
            let args = &s[i + 7..s[i..].find(')').map_or(s.len(), |k| i + k)];
            let a = quoted(args);
            return (a.len() >= 2).then(|| RefText::Source(a[0].clone(), a[1].clone()));
        }
        if let Some(i) = s.find("ref(") {
            let args = &s[i + 4..s[i..].find(')').map_or(s.len(), |k| i + k)];
            let a = quoted(args);
            return a.last().map(|n| RefText::Ref(n.clone()));
        }
        None
    }

    /// Whether `n` is the node this text names.
    pub fn names(&self, n: &Node) -> bool {
        match self {
            RefText::Ref(name) => n.resource_type != "source" && n.name == *name,
            RefText::Source(s, t) => n.resource_type == "source" && n.source_name.as_deref() == Some(s) && n.name == *t,
        }
    }
}

/// The test's kind: `(namespace, name)` with dbt's built-ins under `""`.
pub fn test_kind(t: &Node) -> Option<(&str, &str)> {
    let tm = t.test_metadata.as_ref()?;
    let ns = match tm.namespace.as_deref() {
        None | Some("dbt") => "",
        Some(n) => n,
    };
    Some((ns, tm.name.as_str()))
}

/// The column(s) a key-like test names: `column_name(s)`, the node's
/// `column_name`, `combination_of_columns` or `column_list`.
fn test_columns(t: &Node) -> Vec<String> {
    for k in ["combination_of_columns", "column_list", "column_names"] {
        if let Some(v) = t.kwarg_list(k) {
            return v;
        }
    }
    t.kwarg_str("column_name").or(t.column_name.as_deref()).map(|c| vec![c.to_string()]).unwrap_or_default()
}

/// Facts for every node that has constraints or tests, by unique id.
pub fn collect(m: &Manifest, all: &HashMap<&str, &Node>, warnings: &mut Warnings) -> HashMap<String, TableFacts> {
    let mut out: HashMap<String, TableFacts> = HashMap::new();
    for (id, n) in m.nodes.0.iter().chain(&m.sources.0) {
        if n.resource_type == "test" {
            continue;
        }
        constraints(n, out.entry(id.clone()).or_default());
    }
    for (id, t) in &m.nodes.0 {
        if t.resource_type != "test" || t.disabled() {
            continue;
        }
        let Some((ns, name)) = test_kind(t) else { continue };
        let key_test = matches!(
            (ns, name),
            ("", "unique" | "not_null" | "accepted_values")
                | (_, "unique_combination_of_columns" | "expect_compound_columns_to_be_unique")
                | ("dbt_constraints", "primary_key" | "unique_key")
        );
        if !key_test {
            continue;
        }
        let Some(node) = tested_node(t, all) else { continue };
        let cols = test_columns(t);
        let plain: Vec<String> = cols.iter().filter_map(|c| plain_column(c)).collect();
        let label = format!("test {}", t.name);
        if plain.len() != cols.len() || plain.is_empty() {
            warnings.push(
                id.clone(),
                format!("{label} on {node}: tests an SQL expression, not columns; not read as a key"),
            );
            continue;
        }
        if let Some(w) = &t.config.where_ {
            warnings
                .push(id.clone(), format!("{label} on {node} holds only where {w}; not read as a key or constraint"));
            continue;
        }
        let f = out.entry(node).or_default();
        for c in &plain {
            f.name(c);
        }
        match (ns, name) {
            ("", "unique") => f.unique.push(plain[0].clone()),
            ("", "not_null") => f.not_null.push(plain[0].clone()),
            ("", "accepted_values") => {
                let values: Vec<String> = match t.test_metadata.as_ref().and_then(|tm| tm.kwargs.get("values")) {
                    Some(serde_json::Value::Array(a)) => a
                        .iter()
                        .map(|v| match v {
                            serde_json::Value::String(s) => s.clone(),
                            other => other.to_string(),
                        })
                        .collect(),
                    _ => Vec::new(),
                };
                if !values.is_empty() {
                    f.values.push((plain[0].clone(), values));
                }
            }
            ("dbt_constraints", "primary_key") => {
                if f.pk_constraint.is_none() {
                    f.pk_constraint = Some((plain.clone(), label));
                }
                for c in &plain {
                    f.not_null.push(c.clone());
                }
            }
            _ if plain.len() == 1 => f.unique.push(plain[0].clone()),
            _ => f.combos.push((plain, label)),
        }
    }
    out
}

/// Primary-key, unique and not-null constraints of one node.
fn constraints(n: &Node, f: &mut TableFacts) {
    let name = |c: &super::manifest::Constraint| match &c.name {
        Some(x) => format!("constraint {x}"),
        None => format!("{} constraint", c.kind),
    };
    let mut col_pk = Vec::new();
    for c in &n.constraints {
        let cols: Vec<String> = c.columns.iter().filter_map(|c| plain_column(c)).collect();
        if cols.is_empty() {
            continue;
        }
        match c.kind.as_str() {
            "primary_key" if f.pk_constraint.is_none() => {
                f.not_null.extend(cols.iter().cloned());
                f.pk_constraint = Some((cols, name(c)));
            }
            "unique" if cols.len() == 1 => f.unique.push(cols[0].clone()),
            "unique" => f.combos.push((cols, name(c))),
            "not_null" => f.not_null.extend(cols),
            _ => {}
        }
    }
    for (cname, col) in &n.columns.0 {
        let cname = if col.name.is_empty() { cname } else { &col.name };
        for c in &col.constraints {
            match c.kind.as_str() {
                "primary_key" => col_pk.push(cname.clone()),
                "unique" => f.unique.push(cname.clone()),
                "not_null" => f.not_null.push(cname.clone()),
                _ => {}
            }
        }
    }
    if f.pk_constraint.is_none() && !col_pk.is_empty() {
        f.not_null.extend(col_pk.iter().cloned());
        f.pk_constraint = Some((col_pk, "primary_key constraint".into()));
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn plain_columns_and_expressions() {
        assert_eq!(plain_column("order_id").as_deref(), Some("order_id"));
        assert_eq!(plain_column(" \"Order Id\" ").as_deref(), Some("Order Id"));
        assert_eq!(plain_column("coalesce(a, '') || b"), None);
        assert_eq!(plain_column("a.b"), None);
        assert_eq!(plain_column(""), None);
    }

    #[test]
    fn ref_texts() {
        assert_eq!(RefText::parse("ref('orders')"), Some(RefText::Ref("orders".into())));
        assert_eq!(RefText::parse("{{ ref(\"pkg\", 'orders') }}"), Some(RefText::Ref("orders".into())));
        assert_eq!(RefText::parse("ref('customers', v=2)"), Some(RefText::Ref("customers".into())));
        assert_eq!(
            RefText::parse("{{ get_where_subquery(source('tpc_h', 'part')) }}"),
            Some(RefText::Source("tpc_h".into(), "part".into()))
        );
        assert_eq!(RefText::parse("shaman.dummy.orders"), None);
    }
}
