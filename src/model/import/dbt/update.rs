//! `--update`: a fresh dbt import merged into a curated model without
//! losing the curation.
//!
//! dbt owns tables, columns, types, nullability, keys and the relationships
//! it declares (elements whose `origin` starts with `dbt`). The curated
//! model keeps its name and description, patterns, constraints, synonyms
//! (merged with dbt's), descriptions that differ from dbt's, relationship
//! names, roles, `via` and descriptions, and every table or relationship
//! without a dbt origin (added by hand). A table dbt no longer has is
//! dropped — unless a pattern uses it: then the update is refused, naming
//! the pattern, or with `force` the pattern is dropped too.

use std::collections::HashMap;

use crate::error::{Error, Result};
use crate::model::diff::{self, rel_key, Change};
use crate::types::{Column, DbModel, Pattern, PatternNode, Relationship, Table};

/// The merged model, what moved (as `lucy model diff` prints it) and notes
/// on the curation kept or dropped.
#[derive(Debug, Clone)]
pub struct Merged {
    pub model: DbModel,
    pub changes: Vec<Change>,
    pub notes: Vec<String>,
}

fn from_dbt(origin: &Option<String>) -> bool {
    origin.as_deref().is_some_and(|o| o.starts_with("dbt"))
}

/// The tables a pattern names.
pub fn pattern_tables(p: &Pattern) -> Vec<&str> {
    fn walk<'a>(nodes: &'a [PatternNode], out: &mut Vec<&'a str>) {
        for n in nodes {
            out.push(&n.table);
            walk(&n.children, out);
        }
    }
    let mut out = Vec::new();
    match p {
        Pattern::ManyToMany { junction, sides, .. } => {
            out.push(junction.as_str());
            out.extend(sides.iter().map(String::as_str));
        }
        Pattern::Star { root, children, .. } | Pattern::Snowflake { root, children, .. } => {
            out.push(root.as_str());
            walk(children, &mut out);
        }
        Pattern::Lookup { tables, .. } => out.extend(tables.iter().map(String::as_str)),
    }
    out
}

fn describe_pattern(i: usize, p: &Pattern) -> String {
    let kind = match p {
        Pattern::ManyToMany { .. } => "many_to_many",
        Pattern::Star { .. } => "star",
        Pattern::Snowflake { .. } => "snowflake",
        Pattern::Lookup { .. } => "lookup",
    };
    format!("pattern $.patterns[{i}] ({kind} {})", pattern_tables(p).join(", "))
}

/// Keep the curated text where it differs from dbt's; note when dbt's
/// changed underneath it.
fn merge_description(curated: &Option<String>, fresh: &mut Option<String>, what: &str, notes: &mut Vec<String>) {
    if let Some(c) = curated {
        if fresh.as_deref() != Some(c.as_str()) {
            if let Some(f) = fresh.as_deref() {
                notes.push(format!(
                    "kept the model's description of {what}; dbt's reads: {}",
                    crate::error::cut(f, 120)
                ));
            }
            *fresh = Some(c.clone());
        }
    }
}

fn merge_synonyms(curated: &[String], fresh: &mut Vec<String>) {
    let mut out: Vec<String> = curated.to_vec();
    for s in fresh.drain(..) {
        if !out.iter().any(|x| x.eq_ignore_ascii_case(&s)) {
            out.push(s);
        }
    }
    *fresh = out;
}

fn merge_table(c: &Table, f: &mut Table, notes: &mut Vec<String>) {
    merge_description(&c.description, &mut f.description, &format!("table {}", f.name), notes);
    merge_synonyms(&c.synonyms, &mut f.synonyms);
    for fc in &mut f.columns {
        if let Some(cc) = c.column(&fc.name) {
            merge_column(cc, fc, &f.name, notes);
        }
    }
}

fn merge_column(c: &Column, f: &mut Column, table: &str, notes: &mut Vec<String>) {
    merge_description(&c.description, &mut f.description, &format!("column {table}.{}", f.name), notes);
    merge_synonyms(&c.synonyms, &mut f.synonyms);
}

/// Merge `fresh` (a new dbt import) into `curated`.
pub fn merge(curated: &DbModel, fresh: &DbModel, force: bool) -> Result<Merged> {
    let mut notes = Vec::new();
    let mut model = fresh.clone();
    model.name = curated.name.clone();
    model.description = curated.description.clone().or(model.description);
    model.dialect = fresh.dialect.or(curated.dialect);
    let in_fresh = |t: &str| fresh.table(t).is_some();

    // Tables dbt dropped: refused while a pattern uses them (unless forced).
    let mut patterns: Vec<Pattern> = curated.patterns.clone();
    let mut gone: Vec<&Table> = Vec::new();
    for t in &curated.tables {
        if in_fresh(&t.name) {
            continue;
        }
        if !from_dbt(&t.origin) {
            notes.push(format!("kept table {} (not from dbt)", t.name));
            model.tables.push(t.clone());
            continue;
        }
        gone.push(t);
    }
    for t in &gone {
        let users: Vec<String> = curated
            .patterns
            .iter()
            .enumerate()
            .filter(|(_, p)| pattern_tables(p).iter().any(|x| x.eq_ignore_ascii_case(&t.name)))
            .map(|(i, p)| describe_pattern(i, p))
            .collect();
        if users.is_empty() {
            continue;
        }
        if !force {
            return Err(Error::Input(format!(
                "dbt no longer has table {}, which {} uses: edit the pattern, or pass --force to drop the table and the pattern",
                t.name,
                users.join(" and ")
            )));
        }
        for u in users {
            notes.push(format!("dropped {u}: dbt no longer has table {}", t.name));
        }
        patterns.retain(|p| !pattern_tables(p).iter().any(|x| x.eq_ignore_ascii_case(&t.name)));
    }
    let mut constraints = curated.constraints.clone();
    for t in &gone {
        let keep = |x: &String| !x.eq_ignore_ascii_case(&t.name);
        let before = constraints.forbid_tables.len() + constraints.require_tables.len();
        constraints.forbid_tables.retain(keep);
        constraints.require_tables.retain(keep);
        if constraints.forbid_tables.len() + constraints.require_tables.len() != before {
            notes.push(format!("dropped table {} from the constraints: dbt no longer has it", t.name));
        }
    }

    // Curation of the tables both have.
    for f in &mut model.tables {
        if let Some(c) = curated.table(&f.name) {
            if from_dbt(&f.origin) {
                merge_table(c, f, &mut notes);
            }
        }
    }

    // Relationships: dbt's, with the curated names, roles and descriptions;
    // then the hand-added ones whose tables and columns still exist.
    let key = |r: &Relationship| {
        let (a, b, on, _) = rel_key(r);
        (a, b, on)
    };
    let curated_rels: HashMap<_, &Relationship> = curated.relationships.iter().map(|r| (key(r), r)).collect();
    for r in &mut model.relationships {
        if let Some(c) = curated_rels.get(&key(r)) {
            r.name = c.name.clone().or(r.name.take());
            r.description = c.description.clone().or(r.description.take());
            r.role = c.role.clone();
            r.role_description = c.role_description.clone();
            r.role_synonyms = c.role_synonyms.clone();
            r.via = c.via.clone();
        }
    }
    let fresh_keys: std::collections::HashSet<_> = model.relationships.iter().map(key).collect();
    let mut kept = Vec::new();
    for c in &curated.relationships {
        if from_dbt(&c.origin) || fresh_keys.contains(&key(c)) {
            continue;
        }
        let ok =
            |t: &str, cols: Vec<&String>| model.table(t).is_some_and(|t| cols.iter().all(|c| t.column(c).is_some()));
        if ok(&c.from, c.on.iter().map(|p| &p[0]).collect()) && ok(&c.to, c.on.iter().map(|p| &p[1]).collect()) {
            kept.push(c.clone());
        } else {
            notes.push(format!("dropped hand-added relationship {}: a table or column of it is gone", c.id()));
        }
    }
    model.relationships.extend(kept);
    model.patterns = patterns;
    model.constraints = constraints;
    crate::model::validate::check(&model, Some("the merged model")).map_err(|e| {
        Error::Input(format!(
            "the curated model and the new dbt import do not merge into a valid model (a pattern or constraint names something dbt changed; fix it in the curated model, or pass --force where offered): {e}"
        ))
    })?;
    let changes = diff::diff(curated, &model);
    Ok(Merged { model, changes, notes })
}
