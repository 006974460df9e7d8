//! `--select`: dbt's own selector words for the nodes to import.
//!
//! Each `--select` value is a union of space-separated words; a word is an
//! intersection of comma-separated parts, as in `dbt ls --select`. A part
//! is `path:DIR_OR_FILE`, `tag:T`, `package:P`, `resource_type:model|seed|
//! snapshot|source`, `source:S[.T]`, `fqn:A.B`, or a plain name (with `*`
//! wildcards; a plain word with `/` is a path). Graph operators (`+`, `@`)
//! are refused: select the nodes themselves.

use super::manifest::Node;
use crate::error::{Error, Result};

/// One part of a selector word.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Part {
    Path(String),
    Tag(String),
    Package(String),
    ResourceType(String),
    Source(String),
    Name(String),
}

/// A parsed `--select`: a union of intersections. Empty selects the
/// project's own models, seeds and snapshots.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Selection {
    words: Vec<Vec<Part>>,
}

impl Selection {
    /// Parse the `--select` values.
    pub fn parse(values: &[String]) -> Result<Selection> {
        let mut words = Vec::new();
        for v in values {
            for word in v.split_whitespace() {
                let mut parts = Vec::new();
                for p in word.split(',').filter(|p| !p.is_empty()) {
                    parts.push(part(p)?);
                }
                if !parts.is_empty() {
                    words.push(parts);
                }
            }
        }
        Ok(Selection { words })
    }

    /// True when no selector was given (the default selection).
    pub fn is_default(&self) -> bool {
        self.words.is_empty()
    }

    /// Whether the node (a model, seed, snapshot or source) is selected.
    /// `project` is the root project's name.
    pub fn selects(&self, node: &Node, project: &str) -> bool {
        if self.words.is_empty() {
            return node.resource_type != "source" && node.package_name == project;
        }
        self.words.iter().any(|w| w.iter().all(|p| matches(p, node)))
    }
}

fn part(p: &str) -> Result<Part> {
    if p.starts_with('+') || p.ends_with('+') || p.starts_with('@') || p.contains("+,") {
        return Err(Error::Input(format!(
            "--select {p}: graph operators (+, @) are not supported; select the models themselves (path:, tag:, names)"
        )));
    }
    let (method, value) = match p.split_once(':') {
        Some((m, v)) => (m, v),
        None if p.contains('/') => ("path", p),
        None => ("name", p),
    };
    if value.is_empty() {
        return Err(Error::Input(format!("--select {p}: nothing after `{method}:`")));
    }
    let v = value.to_string();
    Ok(match method {
        "path" | "file" => Part::Path(v.replace('\\', "/").trim_start_matches("./").to_string()),
        "tag" => Part::Tag(v),
        "package" => Part::Package(v),
        "resource_type" => match value {
            "model" | "seed" | "snapshot" | "source" => Part::ResourceType(v),
            _ => {
                return Err(Error::Input(format!(
                    "--select {p}: resource_type is model, seed, snapshot or source (the node kinds that are tables)"
                )))
            }
        },
        "source" => Part::Source(v),
        "fqn" | "name" => Part::Name(v),
        _ => {
            return Err(Error::Input(format!(
            "--select {p}: unknown method `{method}` (path:, tag:, package:, resource_type:, source:, fqn:, or a name)"
        )))
        }
    })
}

fn matches(p: &Part, n: &Node) -> bool {
    match p {
        Part::Path(dir) => {
            let file = n.original_file_path.as_deref().unwrap_or("").replace('\\', "/");
            let dir = dir.trim_end_matches('/');
            file == dir || file.starts_with(&format!("{dir}/")) || glob(dir, &file)
        }
        Part::Tag(t) => n.tags.iter().chain(&n.config.tags).any(|x| x == t),
        Part::Package(pk) => n.package_name == *pk,
        Part::ResourceType(r) => n.resource_type == *r,
        Part::Source(s) => {
            n.resource_type == "source" && {
                let group = n.source_name.as_deref().unwrap_or("");
                match s.split_once('.') {
                    Some((g, t)) => glob(g, group) && glob(t, &n.name),
                    None => glob(s, group),
                }
            }
        }
        Part::Name(name) => {
            let full = match &n.source_name {
                Some(g) if n.resource_type == "source" => format!("{g}.{}", n.name),
                _ => n.name.clone(),
            };
            glob(name, &n.name) || glob(name, &full) || glob(name, &format!("{}.{}", n.package_name, n.name))
        }
    }
}

/// `*` matches any run of characters; everything else literally.
fn glob(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == text;
    }
    let mut rest = text;
    for (i, piece) in parts.iter().enumerate() {
        if i == 0 {
            let Some(r) = rest.strip_prefix(piece) else { return false };
            rest = r;
        } else if i == parts.len() - 1 {
            return rest.ends_with(piece);
        } else if let Some(k) = rest.find(piece) {
            rest = &rest[k + piece.len()..];
        } else {
            return false;
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn node(kind: &str, pkg: &str, name: &str, path: &str, tags: &[&str]) -> Node {
        Node {
            resource_type: kind.into(),
            package_name: pkg.into(),
            name: name.into(),
            original_file_path: Some(path.into()),
            tags: tags.iter().map(|t| t.to_string()).collect(),
            ..Default::default()
        }
    }

    #[test]
    fn words_and_parts() {
        let orders = node("model", "shop", "orders", "models/marts/orders.sql", &["daily"]);
        let stg = node("model", "shop", "stg_orders", "models\\staging\\stg_orders.sql", &[]);
        let pkg = node("model", "ads", "ad_report", "models/ad_report.sql", &[]);
        let src =
            Node { source_name: Some("ecom".into()), ..node("source", "shop", "raw_orders", "models/src.yml", &[]) };
        let s = Selection::parse(&[]).unwrap();
        assert!(s.selects(&orders, "shop") && s.selects(&stg, "shop"));
        assert!(!s.selects(&pkg, "shop") && !s.selects(&src, "shop"));
        let s = Selection::parse(&["path:models/marts".into()]).unwrap();
        assert!(s.selects(&orders, "shop") && !s.selects(&stg, "shop"));
        let s = Selection::parse(&["models/staging tag:daily".into()]).unwrap();
        assert!(s.selects(&orders, "shop") && s.selects(&stg, "shop") && !s.selects(&pkg, "shop"));
        let s = Selection::parse(&["package:ads".into(), "source:ecom".into()]).unwrap();
        assert!(s.selects(&pkg, "shop") && s.selects(&src, "shop") && !s.selects(&orders, "shop"));
        let s = Selection::parse(&["resource_type:model,stg_*".into()]).unwrap();
        assert!(s.selects(&stg, "shop") && !s.selects(&orders, "shop"));
        assert!(Selection::parse(&["+orders".into()]).is_err());
        assert!(Selection::parse(&["config.materialized:table".into()]).is_err());
    }
}
