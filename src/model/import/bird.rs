//! The BIRD/Spider `tables.json` format into a dbModel, optionally with
//! BIRD's `database_description/<table>.csv` files as column descriptions.
//!
//! `tables.json` is a list of databases, each with `table_names_original`,
//! `column_names_original` (`[table_index, name]`, index -1 for `*`),
//! `column_types`, `primary_keys` (a column index, or a list of indexes for
//! a composite key) and `foreign_keys` (`[column, referenced_column]`
//! pairs; a composite key appears as several pairs).

use std::collections::HashMap;
use std::path::Path;

use serde_json::Value;

use super::build::{build, RawForeignKey, RawSchema, RawTable};
use super::{same_name, ImportWarning, Imported};
use crate::error::{read_to_string, Error, Result};
use crate::types::{Column, Dialect};

/// Import database `db_id` of a `tables.json` file. With `descriptions`
/// (a BIRD `database_description/<db>` directory), column descriptions
/// are read from its CSV files.
pub fn bird_tables_with_warnings(tables_json: &Path, db_id: &str, descriptions: Option<&Path>) -> Result<Imported> {
    let file = tables_json.display().to_string();
    let text = read_to_string(tables_json)?;
    let all: Value = serde_json::from_str(&text).map_err(|e| Error::Input(format!("{file}: not JSON: {e}")))?;
    let Some(list) = all.as_array() else {
        return Err(Error::Input(format!("{file}: expected a JSON list of databases (the tables.json format)")));
    };
    let Some((k, db)) = list.iter().enumerate().find(|(_, d)| d.get("db_id").and_then(Value::as_str) == Some(db_id))
    else {
        let ids: Vec<&str> = list.iter().filter_map(|d| d.get("db_id").and_then(Value::as_str)).collect();
        let shown = if ids.len() > 30 {
            format!("{} … ({} databases)", ids[..30].join(", "), ids.len())
        } else {
            ids.join(", ")
        };
        return Err(Error::Input(format!("{file}: no database with db_id `{db_id}`; available: {shown}")));
    };
    let at = |field: &str| format!("{file}: $[{k}].{field}");
    let strings = |field: &str| -> Result<Vec<String>> {
        let v = db
            .get(field)
            .and_then(Value::as_array)
            .ok_or_else(|| Error::Input(format!("{}: missing or not a list", at(field))))?;
        Ok(v.iter().map(|x| x.as_str().unwrap_or_default().to_string()).collect())
    };
    let table_names = strings("table_names_original")?;
    let types = strings("column_types").unwrap_or_default();
    let cols_v = db
        .get("column_names_original")
        .and_then(Value::as_array)
        .ok_or_else(|| Error::Input(format!("{}: missing or not a list", at("column_names_original"))))?;
    let mut warnings = Vec::new();
    let mut tables: Vec<RawTable> = table_names
        .iter()
        .map(|n| RawTable { name: n.clone(), origin: format!("{db_id}.{n}"), ..Default::default() })
        .collect();
    // Column index -> (table index, name).
    let mut columns: Vec<Option<(usize, String)>> = Vec::with_capacity(cols_v.len());
    for (ci, c) in cols_v.iter().enumerate() {
        let t = c.get(0).and_then(Value::as_i64);
        let n = c.get(1).and_then(Value::as_str);
        match (t, n) {
            (Some(t), Some(n)) if t >= 0 && (t as usize) < tables.len() => {
                let t = t as usize;
                tables[t].columns.push(Column {
                    name: n.to_string(),
                    sql_type: types.get(ci).cloned().unwrap_or_default(),
                    nullable: true,
                    description: None,
                    synonyms: Vec::new(),
                    origin: None,
                });
                columns.push(Some((t, n.to_string())));
            }
            (Some(-1), _) => columns.push(None), // the `*` pseudo-column
            _ => {
                warnings.push(ImportWarning::new(
                    at(&format!("column_names_original[{ci}]")),
                    "not a [table_index, name] pair; skipped",
                ));
                columns.push(None);
            }
        }
    }
    let col = |i: &Value| i.as_u64().and_then(|i| columns.get(i as usize).cloned().flatten());
    if let Some(pks) = db.get("primary_keys").and_then(Value::as_array) {
        for (pi, pk) in pks.iter().enumerate() {
            let ids: Vec<&Value> = match pk.as_array() {
                Some(v) => v.iter().collect(),
                None => vec![pk],
            };
            let resolved: Option<Vec<(usize, String)>> = ids.into_iter().map(col).collect();
            match resolved {
                Some(cs) if !cs.is_empty() && cs.iter().all(|(t, _)| *t == cs[0].0) => {
                    let t = cs[0].0;
                    if !tables[t].primary_key.is_empty() {
                        warnings.push(ImportWarning::new(
                            at(&format!("primary_keys[{pi}]")),
                            format!("second primary key for {}; kept the first", tables[t].name),
                        ));
                        continue;
                    }
                    tables[t].primary_key = cs.into_iter().map(|(_, c)| c).collect();
                }
                _ => warnings.push(ImportWarning::new(
                    at(&format!("primary_keys[{pi}]")),
                    "column indexes do not name columns of one table; skipped",
                )),
            }
        }
    }
    let mut pairs: Vec<((usize, String), (usize, String))> = Vec::new();
    if let Some(fks) = db.get("foreign_keys").and_then(Value::as_array) {
        for (fi, fk) in fks.iter().enumerate() {
            match (fk.get(0).and_then(col), fk.get(1).and_then(col)) {
                (Some(a), Some(b)) => pairs.push((a, b)),
                _ => warnings.push(ImportWarning::new(
                    at(&format!("foreign_keys[{fi}]")),
                    "column indexes out of range; skipped",
                )),
            }
        }
    }
    let foreign_keys = group_foreign_keys(&tables, pairs, db_id);
    if let Some(dir) = descriptions {
        read_descriptions(dir, &mut tables, &mut warnings)?;
    }
    build(RawSchema {
        name: db_id.to_string(),
        description: None,
        dialect: Some(Dialect::Sqlite),
        tables,
        foreign_keys,
        warnings,
    })
}

/// One relationship per pair, except that pairs between the same two
/// tables whose referenced columns together make up the referenced
/// table's composite primary key form one composite foreign key (that is
/// how tables.json writes composite keys). Two separate single-column
/// references to the same table (e.g. source and destination airport)
/// stay separate.
fn group_foreign_keys(
    tables: &[RawTable],
    pairs: Vec<((usize, String), (usize, String))>,
    db_id: &str,
) -> Vec<RawForeignKey> {
    let mut out: Vec<RawForeignKey> = Vec::new();
    let mut used = vec![false; pairs.len()];
    for i in 0..pairs.len() {
        if used[i] {
            continue;
        }
        let ((ft, _), (tt, _)) = &pairs[i];
        let pk = &tables[*tt].primary_key;
        let mut group = vec![i];
        if pk.len() > 1 {
            for j in i + 1..pairs.len() {
                let ((f2, c2), (t2, d2)) = &pairs[j];
                let dup_from = group.iter().any(|&g| same_name(&pairs[g].0 .1, c2));
                let dup_to = group.iter().any(|&g| same_name(&pairs[g].1 .1, d2));
                if !used[j] && f2 == ft && t2 == tt && !dup_from && !dup_to {
                    group.push(j);
                }
            }
            let covers_pk =
                group.len() == pk.len() && pk.iter().all(|k| group.iter().any(|&g| same_name(&pairs[g].1 .1, k)));
            if !covers_pk {
                group.truncate(1);
            }
        }
        for &g in &group {
            used[g] = true;
        }
        out.push(RawForeignKey {
            from: tables[*ft].name.clone(),
            columns: group.iter().map(|&g| pairs[g].0 .1.clone()).collect(),
            to: tables[*tt].name.clone(),
            to_columns: group.iter().map(|&g| pairs[g].1 .1.clone()).collect(),
            origin: format!("{db_id}.foreign_keys"),
            description: None,
            provenance: None,
        });
    }
    out
}

/// Decode a CSV file that may be UTF-8 (with BOM) or Latin-1.
fn decode(bytes: &[u8]) -> String {
    let bytes = bytes.strip_prefix(b"\xEF\xBB\xBF").unwrap_or(bytes);
    match std::str::from_utf8(bytes) {
        Ok(s) => s.to_string(),
        Err(_) => bytes.iter().map(|&b| b as char).collect(),
    }
}

/// Collapse whitespace runs; line breaks become `; ` (value descriptions
/// list one value per line).
fn tidy(s: &str) -> String {
    s.lines()
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .map(|l| l.trim_end_matches([';', ',']).trim_end().to_string())
        .filter(|l| !l.is_empty())
        .collect::<Vec<_>>()
        .join("; ")
}

fn read_descriptions(dir: &Path, tables: &mut [RawTable], warnings: &mut Vec<ImportWarning>) -> Result<()> {
    let entries = std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))?;
    let mut files: HashMap<String, std::path::PathBuf> = HashMap::new();
    for e in entries.flatten() {
        let p = e.path();
        if p.extension().is_some_and(|x| x.eq_ignore_ascii_case("csv")) {
            if let Some(stem) = p.file_stem() {
                files.insert(stem.to_string_lossy().trim().to_ascii_lowercase(), p);
            }
        }
    }
    for t in tables.iter_mut() {
        let Some(path) = files.get(&t.name.to_ascii_lowercase()) else {
            warnings.push(ImportWarning::new(
                dir.display().to_string(),
                format!("no description file for table {}", t.name),
            ));
            continue;
        };
        let bytes = std::fs::read(path).map_err(|e| Error::io(path, e))?;
        let text = decode(&bytes);
        let mut rdr = csv::ReaderBuilder::new().flexible(true).from_reader(text.as_bytes());
        let headers: Vec<String> = match rdr.headers() {
            Ok(h) => h.iter().map(|x| x.trim().to_ascii_lowercase()).collect(),
            Err(e) => {
                warnings.push(ImportWarning::new(
                    path.display().to_string(),
                    format!("unreadable CSV header ({e}); skipped"),
                ));
                continue;
            }
        };
        let idx = |name: &str| headers.iter().position(|h| h == name);
        let (Some(i_orig), i_name, i_desc, i_val) =
            (idx("original_column_name"), idx("column_name"), idx("column_description"), idx("value_description"))
        else {
            warnings.push(ImportWarning::new(path.display().to_string(), "no original_column_name column; skipped"));
            continue;
        };
        for (ri, rec) in rdr.records().enumerate() {
            let Ok(rec) = rec else {
                warnings.push(ImportWarning::new(
                    format!("{}: row {}", path.display(), ri + 2),
                    "unreadable CSV row; skipped",
                ));
                continue;
            };
            let get = |i: Option<usize>| i.and_then(|i| rec.get(i)).map(tidy).unwrap_or_default();
            let orig = get(Some(i_orig));
            if orig.is_empty() {
                continue;
            }
            let Some(col) = t.columns.iter_mut().find(|c| same_name(c.name.trim(), &orig)) else {
                warnings.push(ImportWarning::new(
                    format!("{}: row {}", path.display(), ri + 2),
                    format!("describes column {orig}, which {} does not have; skipped", t.name),
                ));
                continue;
            };
            if let Some(d) = describe(&orig, &get(i_name), &get(i_desc), &get(i_val)) {
                col.description = Some(d);
            }
        }
    }
    Ok(())
}

/// One description from BIRD's fields: the expanded column name when it
/// adds something, the description, and the value description.
fn describe(orig: &str, name: &str, desc: &str, values: &str) -> Option<String> {
    let norm = |s: &str| s.to_ascii_lowercase().replace(['_', ' '], "");
    let mut parts: Vec<String> = Vec::new();
    if !name.is_empty() && norm(name) != norm(orig) && !norm(desc).contains(&norm(name)) {
        parts.push(name.to_string());
    }
    if !desc.is_empty() {
        parts.push(desc.to_string());
    }
    let mut s = parts.join(": ");
    if !values.is_empty() {
        if !s.is_empty() {
            s.push_str(". ");
        }
        s.push_str("Values: ");
        s.push_str(values);
    }
    (!s.is_empty()).then_some(s)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn describe_combines_fields() {
        assert_eq!(describe("A2", "district_name", "district_name", "").as_deref(), Some("district_name"));
        assert_eq!(
            describe("district_id", "location of branch", "location of branch", "").as_deref(),
            Some("location of branch")
        );
        assert_eq!(describe("A4", "number of inhabitants", "", "").as_deref(), Some("number of inhabitants"));
        assert_eq!(describe("gender", "", "", "F: female; M: male").as_deref(), Some("Values: F: female; M: male"));
        assert_eq!(describe("x", "", "", ""), None);
        assert_eq!(describe("bank_to", "bank", "of the recipient", "").as_deref(), Some("bank: of the recipient"));
    }

    #[test]
    fn tidy_joins_lines_once() {
        assert_eq!(tidy("\"a\": x; \r\n\r\n\"b\": y;\n"), "\"a\": x; \"b\": y");
    }

    #[test]
    fn decode_handles_bom_and_latin1() {
        assert_eq!(decode(b"\xEF\xBB\xBFa,b"), "a,b");
        assert_eq!(decode(b"caf\xe9"), "café");
    }
}
