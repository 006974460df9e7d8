//! From raw tables and foreign keys (as every importer reads them) to a
//! valid dbModel: names resolved case-insensitively, keys checked,
//! cardinalities decided, and everything that cannot be kept reported.

use std::collections::{HashMap, HashSet};

use super::{same_name, ImportWarning, Imported};
use crate::error::{Error, Result};
use crate::types::{Cardinality, Column, DbModel, Dialect, Relationship, Table};

/// A table as read from the source, before any checking.
#[derive(Debug, Clone, Default)]
pub(crate) struct RawTable {
    pub name: String,
    pub description: Option<String>,
    pub columns: Vec<Column>,
    pub primary_key: Vec<String>,
    /// Column sets declared unique (besides the primary key).
    pub unique: Vec<Vec<String>>,
    /// Where the table was read, for warnings (e.g. `line 17`).
    pub origin: String,
    /// Other words for a row of the table.
    pub synonyms: Vec<String>,
    /// Where the table came from, kept in the model (`Table::origin`).
    pub provenance: Option<String>,
    /// Its qualified SQL name when `name` is not it (`Table::relation`).
    pub relation: Vec<String>,
}

/// A foreign key as read from the source.
#[derive(Debug, Clone, Default)]
pub(crate) struct RawForeignKey {
    pub from: String,
    pub columns: Vec<String>,
    pub to: String,
    /// Empty when the source omits them: the referenced table's primary key.
    pub to_columns: Vec<String>,
    /// Where it was read, for warnings.
    pub origin: String,
    /// What the relationship means.
    pub description: Option<String>,
    /// Where it came from, kept in the model (`Relationship::origin`).
    pub provenance: Option<String>,
}

impl RawForeignKey {
    /// `FROM(cols) -> TO(cols)` as written, for warnings.
    pub fn describe(&self) -> String {
        format!("{}({}) -> {}({})", self.from, self.columns.join(", "), self.to, self.to_columns.join(", "))
    }
}

/// What an importer hands to [`build`].
#[derive(Debug, Default)]
pub(crate) struct RawSchema {
    pub name: String,
    pub description: Option<String>,
    pub dialect: Option<Dialect>,
    pub tables: Vec<RawTable>,
    pub foreign_keys: Vec<RawForeignKey>,
    pub warnings: Vec<ImportWarning>,
}

/// Resolve, check and assemble. Fails when no table survives (an input
/// error) or if the assembled model still does not validate, which would
/// be an importer bug; the error then names what is wrong.
pub(crate) fn build(raw: RawSchema) -> Result<Imported> {
    let RawSchema { name, description, dialect, tables: raw_tables, foreign_keys, mut warnings } = raw;
    let mut tables: Vec<Table> = Vec::new();
    let mut uniques: Vec<Vec<Vec<String>>> = Vec::new();
    // Names seen so far, ASCII-lower-cased (what `same_name` compares):
    // lookups stay constant-time on schemas of thousands of tables and
    // tables of tens of thousands of columns.
    let mut table_names: HashSet<String> = HashSet::new();
    for rt in raw_tables {
        let at = |t: &RawTable| {
            if t.origin.is_empty() {
                format!("table {}", t.name)
            } else {
                format!("{}: table {}", t.origin, t.name)
            }
        };
        if rt.name.trim().is_empty() {
            warnings.push(ImportWarning::new(rt.origin.clone(), "table without a name skipped"));
            continue;
        }
        if table_names.contains(&rt.name.to_ascii_lowercase()) {
            warnings.push(ImportWarning::new(
                at(&rt),
                "table defined twice (names are case-insensitive); the first definition is kept",
            ));
            continue;
        }
        let mut columns: Vec<Column> = Vec::new();
        let mut column_names: HashSet<String> = HashSet::new();
        for c in &rt.columns {
            if c.name.trim().is_empty() {
                warnings.push(ImportWarning::new(at(&rt), "column without a name skipped"));
            } else if !column_names.insert(c.name.to_ascii_lowercase()) {
                warnings.push(ImportWarning::new(
                    at(&rt),
                    format!("column {} defined twice; the first definition is kept", c.name),
                ));
            } else {
                columns.push(c.clone());
            }
        }
        if columns.is_empty() {
            warnings.push(ImportWarning::new(at(&rt), "table has no columns; skipped"));
            continue;
        }
        let mut primary_key = match resolve_columns(&columns, &rt.primary_key) {
            Ok(cols) => cols,
            Err(missing) => {
                warnings.push(ImportWarning::new(
                    at(&rt),
                    format!("primary key column {missing} is not a column of the table; the primary key is left out"),
                ));
                Vec::new()
            }
        };
        dedup_names(&mut primary_key);
        let key_set: HashSet<&str> = primary_key.iter().map(String::as_str).collect();
        for c in &mut columns {
            if key_set.contains(c.name.as_str()) {
                c.nullable = false;
            }
        }
        let mut table_uniques = Vec::new();
        for u in &rt.unique {
            match resolve_columns(&columns, u) {
                Ok(mut cols) => {
                    dedup_names(&mut cols);
                    if !cols.is_empty() {
                        table_uniques.push(cols);
                    }
                }
                Err(missing) => warnings.push(ImportWarning::new(
                    at(&rt),
                    format!("unique key column {missing} is not a column of the table; the unique key is ignored"),
                )),
            }
        }
        table_names.insert(rt.name.to_ascii_lowercase());
        tables.push(Table {
            name: rt.name.clone(),
            relation: rt.relation.clone(),
            description: rt.description.clone(),
            primary_key,
            columns,
            synonyms: rt.synonyms.clone(),
            origin: rt.provenance.clone(),
        });
        uniques.push(table_uniques);
    }

    let mut relationships: Vec<Relationship> = Vec::new();
    let mut seen_rels: HashSet<(String, String, Vec<[String; 2]>)> = HashSet::new();
    let index: HashMap<String, usize> =
        tables.iter().enumerate().map(|(i, t)| (t.name.to_ascii_lowercase(), i)).collect();
    for fk in foreign_keys {
        match resolve_fk(&tables, &index, &uniques, &fk, &mut warnings) {
            Ok(rel) => {
                let dup = !seen_rels.insert((rel.from.clone(), rel.to.clone(), rel.on.clone()));
                if dup {
                    warnings.push(ImportWarning::new(fk_location(&fk), "foreign key declared twice; kept once"));
                } else {
                    relationships.push(rel);
                }
            }
            Err(why) => {
                warnings.push(ImportWarning::new(fk_location(&fk), format!("{why}; the relationship is left out")))
            }
        }
    }

    if tables.is_empty() {
        return Err(Error::Input(format!("{name}: no tables found to import (is this the right file and format?)")));
    }
    let name = if name.trim().is_empty() {
        warnings.push(ImportWarning::new("model", "no model name given; using `imported`"));
        "imported".to_string()
    } else {
        name
    };
    let model = DbModel {
        name,
        description,
        dialect,
        tables,
        relationships,
        patterns: Vec::new(),
        constraints: Default::default(),
    };
    crate::model::validate::check(&model, None)?;
    Ok(Imported { model, warnings })
}

fn fk_location(fk: &RawForeignKey) -> String {
    if fk.origin.is_empty() {
        format!("foreign key {}", fk.describe())
    } else {
        format!("{}: foreign key {}", fk.origin, fk.describe())
    }
}

/// The relationship for one foreign key, or why it cannot be kept.
fn resolve_fk(
    tables: &[Table],
    index: &HashMap<String, usize>,
    uniques: &[Vec<Vec<String>>],
    fk: &RawForeignKey,
    warnings: &mut Vec<ImportWarning>,
) -> std::result::Result<Relationship, String> {
    let Some(&fi) = index.get(&fk.from.to_ascii_lowercase()) else {
        return Err(format!("table {} is not defined", fk.from));
    };
    let Some(&ti) = index.get(&fk.to.to_ascii_lowercase()) else {
        return Err(format!("references table {}, which is not defined", fk.to));
    };
    let (from, to) = (&tables[fi], &tables[ti]);
    if fk.columns.is_empty() {
        return Err("no foreign key columns".into());
    }
    let cols = resolve_columns(&from.columns, &fk.columns)
        .map_err(|c| format!("column {c} is not a column of {}", from.name))?;
    let to_cols = if fk.to_columns.is_empty() {
        if to.primary_key.is_empty() {
            return Err(format!("names no referenced columns and {} has no primary key", to.name));
        }
        to.primary_key.clone()
    } else {
        resolve_columns(&to.columns, &fk.to_columns)
            .map_err(|c| format!("column {c} is not a column of {}", to.name))?
    };
    if cols.len() != to_cols.len() {
        return Err(format!("{} foreign key columns but {} referenced columns", cols.len(), to_cols.len()));
    }
    if fi == ti && cols == to_cols {
        return Err("joins the table to itself on the same columns, which relates every row only to itself".into());
    }
    // A foreign key names a key of the referenced table by definition (SQL
    // requires it), so the `to` side is one row; when the source does not
    // declare that key the user is told to check.
    if !is_key(to, &uniques[ti], &to_cols) {
        warnings.push(ImportWarning::new(
            fk_location(fk),
            format!(
                "references {}({}), which is not declared as the primary key or a unique key of {}; treated as a key — check the cardinality",
                to.name,
                to_cols.join(", "),
                to.name
            ),
        ));
    }
    let cardinality = if is_key(from, &uniques[fi], &cols) { Cardinality::OneToOne } else { Cardinality::ManyToOne };
    Ok(Relationship {
        name: None,
        from: from.name.clone(),
        to: to.name.clone(),
        cardinality,
        on: cols.into_iter().zip(to_cols).map(|(a, b)| [a, b]).collect(),
        description: fk.description.clone(),
        role: None,
        role_description: None,
        role_synonyms: Vec::new(),
        via: None,
        origin: fk.provenance.clone(),
    })
}

/// True when `cols` (as a set) is the table's primary key or a unique key.
/// A superset of a key is unique too, but FKs that wide are rare and the
/// exact rule keeps cardinalities conservative.
fn is_key(table: &Table, uniques: &[Vec<String>], cols: &[String]) -> bool {
    let set: HashSet<&str> = cols.iter().map(String::as_str).collect();
    let same = |k: &Vec<String>| !k.is_empty() && k.len() == set.len() && k.iter().all(|c| set.contains(c.as_str()));
    same(&table.primary_key) || uniques.iter().any(same)
}

/// Canonical spellings of `names` in `columns`, or the first name missing.
pub(crate) fn resolve_columns(columns: &[Column], names: &[String]) -> std::result::Result<Vec<String>, String> {
    names
        .iter()
        .map(|n| columns.iter().find(|c| same_name(&c.name, n)).map(|c| c.name.clone()).ok_or_else(|| n.clone()))
        .collect()
}

fn dedup_names(v: &mut Vec<String>) {
    let mut seen = HashSet::new();
    v.retain(|c| seen.insert(c.to_ascii_lowercase()));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn col(n: &str) -> Column {
        Column {
            name: n.into(),
            sql_type: "int".into(),
            nullable: true,
            description: None,
            synonyms: Vec::new(),
            origin: None,
        }
    }

    fn table(n: &str, cols: &[&str], pk: &[&str]) -> RawTable {
        RawTable {
            name: n.into(),
            columns: cols.iter().map(|c| col(c)).collect(),
            primary_key: pk.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        }
    }

    fn fk(from: &str, cols: &[&str], to: &str, to_cols: &[&str]) -> RawForeignKey {
        RawForeignKey {
            from: from.into(),
            columns: cols.iter().map(|s| s.to_string()).collect(),
            to: to.into(),
            to_columns: to_cols.iter().map(|s| s.to_string()).collect(),
            ..Default::default()
        }
    }

    #[test]
    fn cardinalities_follow_keys() {
        let raw = RawSchema {
            name: "t".into(),
            tables: vec![
                table("A", &["id"], &["id"]),
                table("B", &["id", "a_id"], &["id"]),
                table("C", &["a_id"], &["a_id"]),
            ],
            foreign_keys: vec![fk("B", &["a_id"], "a", &[]), fk("C", &["A_ID"], "A", &["ID"])],
            ..Default::default()
        };
        let m = build(raw).unwrap().model;
        assert_eq!(m.relationships[0].cardinality, Cardinality::ManyToOne);
        assert_eq!(m.relationships[0].to, "A");
        assert_eq!(m.relationships[0].on, vec![["a_id".to_string(), "id".to_string()]]);
        assert_eq!(m.relationships[1].cardinality, Cardinality::OneToOne);
        assert_eq!(m.relationships[1].on, vec![["a_id".to_string(), "id".to_string()]]);
        assert!(!m.tables[0].columns[0].nullable, "primary key columns are not nullable");
    }

    #[test]
    fn unresolvable_things_become_warnings() {
        let raw = RawSchema {
            name: "t".into(),
            tables: vec![table("A", &["id", "id"], &["nope"]), table("a", &["x"], &[]), table("B", &["id"], &["id"])],
            foreign_keys: vec![
                fk("B", &["id"], "Missing", &["id"]),
                fk("B", &["zz"], "A", &["id"]),
                fk("B", &["id"], "B", &["id"]),
                fk("B", &["id"], "A", &[]),
            ],
            ..Default::default()
        };
        let imp = build(raw).unwrap();
        assert_eq!(imp.model.tables.len(), 2);
        assert!(imp.model.relationships.is_empty());
        let text: Vec<String> = imp.warnings.iter().map(|w| w.to_string()).collect();
        for needle in [
            "defined twice",
            "primary key column nope",
            "Missing",
            "zz is not a column",
            "itself",
            "has no primary key",
        ] {
            assert!(text.iter().any(|t| t.contains(needle)), "no warning containing {needle:?} in {text:#?}");
        }
    }

    #[test]
    fn reference_to_non_key_is_flagged() {
        let raw = RawSchema {
            name: "t".into(),
            tables: vec![table("A", &["id", "code"], &["id"]), table("B", &["id", "code"], &["id"])],
            foreign_keys: vec![fk("B", &["code"], "A", &["code"])],
            ..Default::default()
        };
        let imp = build(raw).unwrap();
        assert_eq!(imp.model.relationships.len(), 1);
        assert!(imp.warnings[0].message.contains("not declared as the primary key"));
    }
}
