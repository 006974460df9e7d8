//! Introspect a SQLite file into a dbModel, read-only: tables in creation
//! order, declared types, `NOT NULL`, the primary key in key order
//! (`pragma table_info`), unique indexes (for 1:1 detection) and foreign
//! keys (`pragma foreign_key_list`, composite keys grouped by id).

use std::path::Path;

use rusqlite::{Connection, OpenFlags};

use super::build::{build, RawForeignKey, RawSchema, RawTable};
use super::Imported;
use crate::error::{Error, Result};
use crate::types::{Column, Dialect};

/// Introspect the SQLite database at `path`. The model is named `name`, or
/// after the file stem when `None`.
pub fn sqlite_with_warnings(path: &Path, name: Option<&str>) -> Result<Imported> {
    if !path.exists() {
        return Err(Error::Input(format!("{}: no such SQLite file", path.display())));
    }
    crate::error::regular_file(path)?;
    let db_err = |e: rusqlite::Error| Error::Db(format!("{}: {e}", path.display()));
    // A file that does not open or has no readable schema is the user's
    // input problem (wrong file), reported like a missing file.
    let conn = Connection::open_with_flags(path, OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX)
        .map_err(|e| Error::Input(format!("{}: cannot open as SQLite ({e})", path.display())))?;
    let stem = path.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_else(|| "sqlite".into());
    let mut raw = RawSchema {
        name: name.map(str::to_string).unwrap_or(stem),
        dialect: Some(Dialect::Sqlite),
        ..Default::default()
    };
    let names: Vec<String> = {
        let mut st = conn
            .prepare("SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite\\_%' ESCAPE '\\' ORDER BY rowid")
            .map_err(|e| Error::Input(format!("{}: not a readable SQLite database ({e})", path.display())))?;
        let rows = st.query_map([], |r| r.get::<_, String>(0)).map_err(db_err)?;
        rows.collect::<rusqlite::Result<_>>().map_err(db_err)?
    };
    for t in &names {
        let (table, fks) =
            read_table(&conn, t).map_err(|e| Error::Db(format!("{}: table {t}: {e}", path.display())))?;
        raw.tables.push(table);
        raw.foreign_keys.extend(fks);
    }
    build(raw)
}

fn read_table(conn: &Connection, name: &str) -> rusqlite::Result<(RawTable, Vec<RawForeignKey>)> {
    let mut table = RawTable { name: name.to_string(), origin: format!("table {name}"), ..Default::default() };
    // (pk position, column) for the key order.
    let mut pk: Vec<(i64, String)> = Vec::new();
    let mut st = conn.prepare("SELECT name, type, \"notnull\", pk FROM pragma_table_info(?1)")?;
    let rows = st.query_map([name], |r| {
        Ok((r.get::<_, String>(0)?, r.get::<_, Option<String>>(1)?, r.get::<_, i64>(2)?, r.get::<_, i64>(3)?))
    })?;
    for row in rows {
        let (col, ty, notnull, pk_pos) = row?;
        if pk_pos > 0 {
            pk.push((pk_pos, col.clone()));
        }
        table.columns.push(Column {
            name: col,
            sql_type: ty.unwrap_or_default(),
            nullable: notnull == 0,
            description: None,
            synonyms: Vec::new(),
            origin: None,
        });
    }
    pk.sort();
    table.primary_key = pk.into_iter().map(|(_, c)| c).collect();

    let mut st = conn.prepare("SELECT name, \"unique\" FROM pragma_index_list(?1)")?;
    let indexes: Vec<(String, i64)> =
        st.query_map([name], |r| Ok((r.get(0)?, r.get(1)?)))?.collect::<rusqlite::Result<_>>()?;
    for (index, unique) in indexes {
        if unique == 0 {
            continue;
        }
        let mut st = conn.prepare("SELECT name FROM pragma_index_info(?1) ORDER BY seqno")?;
        let cols: Vec<Option<String>> = st.query_map([&index], |r| r.get(0))?.collect::<rusqlite::Result<_>>()?;
        // Expression indexes have NULL column names: not a column key.
        if let Some(cols) = cols.into_iter().collect::<Option<Vec<String>>>() {
            table.unique.push(cols);
        }
    }

    let mut st =
        conn.prepare("SELECT id, seq, \"table\", \"from\", \"to\" FROM pragma_foreign_key_list(?1) ORDER BY id, seq")?;
    let rows = st.query_map([name], |r| {
        Ok((r.get::<_, i64>(0)?, r.get::<_, String>(2)?, r.get::<_, String>(3)?, r.get::<_, Option<String>>(4)?))
    })?;
    let mut fks: Vec<(i64, RawForeignKey)> = Vec::new();
    let mut missing_to = Vec::new();
    for row in rows {
        let (id, to, from_col, to_col) = row?;
        if fks.last().map(|(i, _)| *i) != Some(id) {
            let fk =
                RawForeignKey { from: name.to_string(), to, origin: format!("table {name}"), ..Default::default() };
            fks.push((id, fk));
        }
        if let Some((_, fk)) = fks.last_mut() {
            fk.columns.push(from_col);
            match to_col {
                Some(c) => fk.to_columns.push(c),
                None => missing_to.push(id),
            }
        }
    }
    // `REFERENCES t` without columns means t's primary key: leave the
    // referenced columns empty so the builder fills them in.
    for (id, fk) in &mut fks {
        if missing_to.contains(id) {
            fk.to_columns.clear();
        }
    }
    // SQLite numbers foreign keys newest first (id 0 is the last one
    // declared); report them in declaration order, as the DDL reads.
    Ok((table, fks.into_iter().rev().map(|(_, f)| f).collect()))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_file_is_an_input_error() {
        let e = sqlite_with_warnings(Path::new("/nonexistent/x.sqlite"), None).unwrap_err();
        assert!(e.to_string().contains("/nonexistent/x.sqlite"), "{e}");
    }
}
