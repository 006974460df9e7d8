//! The split-file form of the Lucy paper's Appendix D.1, as an import
//! format.
//!
//! The main file has `tables` as an object: each entry names a table and
//! points at `<Table>.json` (`NameField`, `DescriptionField`, column →
//! description) and `<Table>_types.json` (column → `{type, default}`).
//! `constraints` holds the relationships of D.1.2 (`sqlrelation`,
//! `foreign_relation`), `patterns` the m:m entries of D.1.3 plus star,
//! snowflake and lookup entries, `user_constraints` the native constraints
//! block. Relative paths resolve against the main file's directory.
//! docs/dbmodel.md describes the form with an example.

use std::path::{Path, PathBuf};

use serde_json::{Map, Value};

use super::parse::{deserialize_at, issue, kind, push_key};
use crate::error::ModelIssue;
use crate::types::{Cardinality, Column, Constraints, DbModel, Dialect, Pattern, PatternNode, Relationship, Table};

/// True when `v` is in the split-file form (`tables` is an object).
pub fn is_split(v: &Value) -> bool {
    v.get("tables").is_some_and(Value::is_object)
}

/// Where each element of a converted model was declared in the main file,
/// so validation issues can point there.
#[derive(Debug, Clone, Default)]
pub struct Origins {
    /// JSON path of each table entry, e.g. `$.tables.Client`.
    pub tables: Vec<String>,
    /// JSON path of each relationship entry, e.g. `$.constraints["Client, District"]`.
    pub relationships: Vec<String>,
    /// JSON path of each pattern entry.
    pub patterns: Vec<String>,
}

impl Origins {
    /// Rewrite a normalized-model path (`$.tables[2].columns[0]`) to the
    /// entry of the main file it came from (`$.tables.Account.columns[0]`).
    pub fn locate(&self, path: &str) -> String {
        for (prefix, list) in
            [("$.tables[", &self.tables), ("$.relationships[", &self.relationships), ("$.patterns[", &self.patterns)]
        {
            let Some(rest) = path.strip_prefix(prefix) else { continue };
            let Some((idx, tail)) = rest.split_once(']') else { continue };
            if let Some(origin) = idx.parse::<usize>().ok().and_then(|i| list.get(i)) {
                return format!("{origin}{tail}");
            }
        }
        if let Some(tail) = path.strip_prefix("$.constraints") {
            return format!("$.user_constraints{tail}");
        }
        path.to_string()
    }
}

/// Convert a split-form main file (already parsed) into a `DbModel`,
/// reading the table files relative to `base`.
pub fn convert(v: &Value, file: Option<&str>, base: &Path) -> Result<DbModel, Vec<ModelIssue>> {
    convert_with_origins(v, file, base).map(|(m, _)| m)
}

/// `convert`, also returning where each element came from.
pub fn convert_with_origins(v: &Value, file: Option<&str>, base: &Path) -> Result<(DbModel, Origins), Vec<ModelIssue>> {
    let mut origins = Origins::default();
    let mut cx = Cx { file, base, out: Vec::new() };
    let obj = v.as_object().cloned().unwrap_or_default();
    const FIELDS: [&str; 7] =
        ["name", "description", "dialect", "tables", "constraints", "patterns", "user_constraints"];
    for key in obj.keys().filter(|k| !FIELDS.contains(&k.as_str())) {
        cx.err(
            path("$", key),
            format!("unknown top-level field `{key}` in a split-form dbModel"),
            &format!("allowed: {}", FIELDS.join(", ")),
        );
    }
    let name = match obj.get("name") {
        Some(n) => cx.de::<String>(n, "$.name").unwrap_or_default(),
        None => file
            .and_then(|f| Path::new(f).file_stem())
            .map(|s| s.to_string_lossy().into_owned())
            .unwrap_or_else(|| "model".into()),
    };
    let description = obj.get("description").and_then(|d| cx.de::<Option<String>>(d, "$.description")).flatten();
    let dialect = obj.get("dialect").and_then(|d| cx.de::<Option<Dialect>>(d, "$.dialect")).flatten();
    let constraints =
        obj.get("user_constraints").and_then(|c| cx.de::<Constraints>(c, "$.user_constraints")).unwrap_or_default();

    let mut tables = Vec::new();
    if let Some(Value::Object(entries)) = obj.get("tables") {
        for (key, entry) in entries {
            if let Some(t) = cx.table(key, entry) {
                origins.tables.push(path("$.tables", key));
                tables.push(t);
            }
        }
    }
    let mut relationships = Vec::new();
    if let Some(c) = obj.get("constraints") {
        for (key, entry) in cx.object(c, "$.constraints") {
            let before = relationships.len();
            cx.relationships(&key, &entry, &mut relationships);
            origins.relationships.resize(relationships.len().max(before), path("$.constraints", &key));
        }
    }
    let mut patterns = Vec::new();
    if let Some(p) = obj.get("patterns") {
        for (key, entry) in cx.object(p, "$.patterns") {
            if let Some(pat) = cx.pattern(&key, &entry, &relationships) {
                origins.patterns.push(path("$.patterns", &key));
                patterns.push(pat);
            }
        }
    }
    if cx.out.is_empty() {
        Ok((DbModel { name, description, dialect, tables, relationships, patterns, constraints }, origins))
    } else {
        Err(cx.out)
    }
}

struct Cx<'a> {
    file: Option<&'a str>,
    base: &'a Path,
    out: Vec<ModelIssue>,
}

impl Cx<'_> {
    fn err(&mut self, path: String, message: String, hint: &str) {
        self.out.push(issue(self.file, path, message, hint));
    }

    fn de<T: serde::de::DeserializeOwned>(&mut self, v: &Value, at: &str) -> Option<T> {
        deserialize_at(v, at, self.file).map_err(|e| self.out.push(e)).ok()
    }

    fn object(&mut self, v: &Value, at: &str) -> Map<String, Value> {
        match v {
            Value::Object(m) => m.clone(),
            other => {
                self.err(
                    at.into(),
                    format!("expected an object, found {}", kind(other)),
                    "in the split form this block is an object keyed by name",
                );
                Map::new()
            }
        }
    }

    /// One `tables` entry and its two files.
    fn table(&mut self, key: &str, entry: &Value) -> Option<Table> {
        let at = path("$.tables", key);
        let Value::Object(e) = entry else {
            self.err(
                at,
                format!("expected an object, found {}", kind(entry)),
                "a table entry has `primary`, `path` and `path_to_types`",
            );
            return None;
        };
        let primary_key = match e.get("primary").or_else(|| e.get("primary_key")) {
            Some(p) => self.de::<Vec<String>>(p, &format!("{at}.primary"))?,
            None => Vec::new(),
        };
        let Some(desc_path) = e.get("path").and_then(Value::as_str) else {
            self.err(
                format!("{at}.path"),
                format!("table `{key}` has no `path` to its <Table>.json file"),
                "add \"path\": \"<Table>.json\"",
            );
            return None;
        };
        let (desc_file, descs) = self.read_object(desc_path, &format!("{at}.path"))?;
        let types = match e.get("path_to_types").and_then(Value::as_str).filter(|s| !s.trim().is_empty()) {
            Some(p) => Some(self.read_object(p, &format!("{at}.path_to_types"))?),
            None => None,
        };
        let mut description = e.get("description").and_then(Value::as_str).map(str::to_string);
        let mut col_desc: Vec<(String, String)> = Vec::new();
        for (col, d) in &descs {
            match (col.as_str(), d) {
                ("NameField", Value::String(n)) if !n.eq_ignore_ascii_case(key) => self.out.push(issue(
                    Some(&desc_file),
                    "$.NameField".into(),
                    format!("NameField `{n}` differs from the table entry `{key}` in the main file"),
                    "make the two names agree",
                )),
                ("NameField", _) => {}
                ("DescriptionField", Value::String(s)) => description = description.or_else(|| Some(s.clone())),
                (_, Value::String(s)) => col_desc.push((col.clone(), s.clone())),
                (_, other) => self.out.push(issue(
                    Some(&desc_file),
                    path("$", col),
                    format!("column description must be a string, found {}", kind(other)),
                    "write \"column\": \"what it means\"",
                )),
            }
        }
        let mut columns: Vec<Column> = Vec::new();
        if let Some((types_file, types)) = types {
            for (col, spec) in &types {
                if col == "NameField" || col == "DescriptionField" {
                    continue;
                }
                let Value::Object(spec) = spec else {
                    self.out.push(issue(
                        Some(&types_file),
                        path("$", col),
                        format!("expected {{\"type\", \"default\"}}, found {}", kind(spec)),
                        "write \"column\": {\"type\": \"bigint\", \"default\": \"NOT NULL\"}",
                    ));
                    continue;
                };
                let sql_type = spec.get("type").and_then(Value::as_str).unwrap_or_default().to_string();
                let default = spec.get("default").and_then(Value::as_str).unwrap_or_default();
                let nullable = !default.to_ascii_uppercase().contains("NOT NULL");
                columns.push(Column {
                    name: col.clone(),
                    sql_type,
                    nullable,
                    description: None,
                    synonyms: Vec::new(),
                    origin: None,
                });
            }
        }
        for (col, d) in col_desc {
            match columns.iter_mut().find(|c| c.name.eq_ignore_ascii_case(&col)) {
                Some(c) => c.description = Some(d),
                None => columns.push(Column {
                    name: col,
                    sql_type: String::new(),
                    nullable: true,
                    description: Some(d),
                    synonyms: Vec::new(),
                    origin: None,
                }),
            }
        }
        Some(Table {
            name: key.to_string(),
            relation: Vec::new(),
            description,
            primary_key,
            columns,
            synonyms: Vec::new(),
            origin: None,
        })
    }

    /// Read a JSON object file referenced from the main file at `at`.
    fn read_object(&mut self, rel: &str, at: &str) -> Option<(String, Map<String, Value>)> {
        let full: PathBuf = self.base.join(rel);
        let shown = full.display().to_string();
        let text = match std::fs::read_to_string(&full) {
            Ok(t) => t,
            Err(e) => {
                self.err(
                    at.into(),
                    format!("cannot read `{shown}`: {e}"),
                    "paths are relative to the main dbModel file",
                );
                return None;
            }
        };
        match super::parse::value(&text, Some(&shown)) {
            Ok(Value::Object(m)) => Some((shown, m)),
            Ok(other) => {
                self.out.push(issue(
                    Some(&shown),
                    "$".into(),
                    format!("expected a JSON object, found {}", kind(&other)),
                    "see Appendix D.1.1 of the Lucy paper",
                ));
                None
            }
            Err(e) => {
                self.out.extend(e);
                None
            }
        }
    }

    /// One D.1.2 `constraints` entry ("A, B": {sqlrelation, foreign_relation}).
    fn relationships(&mut self, key: &str, entry: &Value, out: &mut Vec<Relationship>) {
        let at = path("$.constraints", key);
        let names: Vec<&str> = key.split(',').map(str::trim).collect();
        let cardinality = match entry.get("sqlrelation") {
            Some(c) => match self.de::<Cardinality>(c, &format!("{at}.sqlrelation")) {
                Some(c) => c,
                None => return,
            },
            None => Cardinality::ManyToOne,
        };
        let fks: Vec<(String, &Value)> = match entry.get("foreign_relation") {
            Some(Value::Array(items)) if items.len() == 1 => vec![(format!("{at}.foreign_relation[0]"), &items[0])],
            Some(Value::Array(items)) => {
                items.iter().enumerate().map(|(i, x)| (format!("{at}.foreign_relation[{i}]"), x)).collect()
            }
            Some(x) => vec![(format!("{at}.foreign_relation"), x)],
            None => {
                self.err(at, "relationship has no `foreign_relation`".into(), "add {\"FOREIGN\": [...], \"foreign_relation_ref_table\": ..., \"foreign_relation_ref_table_keys\": [...]}");
                return;
            }
        };
        let several = fks.len() > 1;
        for (i, (fat, fk)) in fks.into_iter().enumerate() {
            let cols = fk.get("FOREIGN").and_then(|c| self.de::<Vec<String>>(c, &format!("{fat}.FOREIGN")));
            let keys = fk
                .get("foreign_relation_ref_table_keys")
                .and_then(|c| self.de::<Vec<String>>(c, &format!("{fat}.foreign_relation_ref_table_keys")));
            let to = fk.get("foreign_relation_ref_table").and_then(Value::as_str).or(names.get(1).copied());
            let (Some(cols), Some(keys), Some(to)) = (cols, keys, to) else {
                self.err(
                    fat,
                    "incomplete foreign_relation".into(),
                    "give FOREIGN, foreign_relation_ref_table and foreign_relation_ref_table_keys",
                );
                continue;
            };
            if cols.len() != keys.len() {
                self.err(
                    fat,
                    format!("{} FOREIGN columns but {} referenced keys", cols.len(), keys.len()),
                    "list one referenced key per foreign column",
                );
                continue;
            }
            out.push(Relationship {
                name: Some(if several { format!("{key} #{}", i + 1) } else { key.to_string() }),
                from: names.first().copied().unwrap_or_default().to_string(),
                to: to.to_string(),
                cardinality,
                on: cols.into_iter().zip(keys).map(|(a, b)| [a, b]).collect(),
                description: entry
                    .get("description")
                    .and_then(Value::as_str)
                    .filter(|d| !d.is_empty())
                    .map(str::to_string),
                role: None,
                role_description: None,
                role_synonyms: Vec::new(),
                via: None,
                origin: None,
            });
        }
    }

    /// One `patterns` entry: D.1.3 m:m, or a star / snowflake / lookup.
    fn pattern(&mut self, key: &str, entry: &Value, rels: &[Relationship]) -> Option<Pattern> {
        let at = path("$.patterns", key);
        let Value::Object(e) = entry else {
            self.err(at, format!("expected an object, found {}", kind(entry)), "see docs/dbmodel.md, split-file form");
            return None;
        };
        let description = e.get("description").and_then(Value::as_str).filter(|d| !d.is_empty()).map(str::to_string);
        let ty = e.get("type").and_then(Value::as_str).unwrap_or_default().to_ascii_lowercase();
        if let Some(m) = e.get("m2m_relation") {
            let m2m = format!("{at}.m2m_relation");
            let junction =
                m.get("m2m_middle_table").and_then(|v| self.de::<String>(v, &format!("{m2m}.m2m_middle_table")));
            let sides =
                m.get("m2m_side_tables").and_then(|v| self.de::<[String; 2]>(v, &format!("{m2m}.m2m_side_tables")));
            let (Some(junction), Some(sides)) = (junction, sides) else {
                self.err(
                    m2m,
                    "m2m_relation needs m2m_middle_table and two m2m_side_tables".into(),
                    "see Appendix D.1.3",
                );
                return None;
            };
            // m2m_relation_one/two name table pairs; use the relationship
            // between each pair when there is exactly one.
            let named = |pair: Option<&Value>| -> Option<String> {
                let pair: Vec<&str> = pair?.as_array()?.iter().filter_map(Value::as_str).collect();
                let [a, b] = pair[..] else { return None };
                let found: Vec<&Relationship> = rels
                    .iter()
                    .filter(|r| {
                        (r.from.eq_ignore_ascii_case(a) && r.to.eq_ignore_ascii_case(b))
                            || (r.from.eq_ignore_ascii_case(b) && r.to.eq_ignore_ascii_case(a))
                    })
                    .collect();
                match found[..] {
                    [r] => Some(r.id()),
                    _ => None,
                }
            };
            let one = named(m.get("m2m_relation_one"));
            let two = named(m.get("m2m_relation_two"));
            // m2m_relation_one joins the junction to the first side only by
            // convention; order the names by the side they touch.
            let relationships = match (one, two) {
                (Some(a), Some(b)) => {
                    let touches = |id: &str, side: &str| {
                        rels.iter().any(|r| {
                            r.id() == id && (r.from.eq_ignore_ascii_case(side) || r.to.eq_ignore_ascii_case(side))
                        })
                    };
                    if touches(&a, &sides[0]) && touches(&b, &sides[1]) {
                        Some([a, b])
                    } else if touches(&b, &sides[0]) && touches(&a, &sides[1]) {
                        Some([b, a])
                    } else {
                        None
                    }
                }
                _ => None,
            };
            return Some(Pattern::ManyToMany { junction, sides, relationships, description });
        }
        match ty.as_str() {
            "lookup" => {
                let tables = match (e.get("tables"), e.get("NameField")) {
                    (Some(t), _) => self.de::<Vec<String>>(t, &format!("{at}.tables"))?,
                    (None, Some(n)) => vec![self.de::<String>(n, &format!("{at}.NameField"))?],
                    (None, None) => vec![key.to_string()],
                };
                Some(Pattern::Lookup { tables, description })
            }
            "star" | "snowflake" => {
                let root = match e.get("NameField").or_else(|| e.get("root")) {
                    Some(r) => self.de::<String>(r, &format!("{at}.NameField"))?,
                    None => key.to_string(),
                };
                let mut children = Vec::new();
                for (k, v) in e {
                    if ["type", "NameField", "root", "description", "DescriptionField"].contains(&k.as_str()) {
                        continue;
                    }
                    children.push(self.node(k, v, &path(&at, k)));
                }
                Some(if ty == "star" {
                    Pattern::Star { root, children, description, exclusive: false }
                } else {
                    Pattern::Snowflake { root, children, description, exclusive: false }
                })
            }
            _ => {
                self.err(
                    format!("{at}.type"),
                    format!("unknown pattern entry type `{ty}`"),
                    "use an m2m_relation entry (Appendix D.1.3) or \"type\": \"Star\" | \"Snowflake\" | \"Lookup\"",
                );
                None
            }
        }
    }

    /// A tree node: `"table": [leaf, ...]`, `"table": {child: ...}` or a leaf
    /// (`null`, `""`, `{}`).
    fn node(&mut self, table: &str, v: &Value, at: &str) -> PatternNode {
        let children = match v {
            Value::Null => Vec::new(),
            Value::String(s) if s.is_empty() => Vec::new(),
            Value::Array(items) => items
                .iter()
                .enumerate()
                .filter_map(|(i, x)| match x {
                    Value::String(s) => Some(PatternNode::leaf(s.clone())),
                    other => {
                        self.err(
                            format!("{at}[{i}]"),
                            format!("expected a table name, found {}", kind(other)),
                            "list child tables by name",
                        );
                        None
                    }
                })
                .collect(),
            Value::Object(m) => m.iter().map(|(k, x)| self.node(k, x, &path(at, k))).collect(),
            other => {
                self.err(
                    at.into(),
                    format!("expected children (array or object), found {}", kind(other)),
                    "write \"Table\": [\"Child\", ...]",
                );
                Vec::new()
            }
        };
        PatternNode::with_children(table, children)
    }
}

fn path(base: &str, key: &str) -> String {
    let mut s = base.to_string();
    push_key(&mut s, key);
    s
}
