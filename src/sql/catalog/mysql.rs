//! Import a dbModel from a running MySQL / MariaDB server's
//! `information_schema` (read-only transaction): the base tables of one
//! database, columns with their `COLUMN_TYPE`, `NOT NULL`, the primary key,
//! unique indexes, foreign keys (composite too) and table/column comments
//! as descriptions.

use std::collections::BTreeMap;

use mysql::prelude::Queryable;

use crate::error::{Error, Result};
use crate::model::import::build::{build, RawForeignKey, RawSchema, RawTable};
use crate::model::import::{ImportWarning, Imported};
use crate::sql::exec::target::{Database, Server};
use crate::types::{Column, Dialect};

/// Introspect database `database` (default: the URL's) on `server`.
pub fn mysql_with_warnings(server: &Server, database: Option<&str>, name: Option<&str>) -> Result<Imported> {
    let shown = Database::Mysql(server.clone());
    let db = database.map(str::to_string).unwrap_or_else(|| server.database.clone());
    if db.is_empty() {
        return Err(Error::Input(format!(
            "{shown}: name the database to import: in the URL (mysql://…/DB) or with --database DB"
        )));
    }
    let mut conn = crate::sql::exec::mysql_connect(server, std::time::Duration::from_secs(30))?;
    let err = |what: &str, e: mysql::Error| {
        Error::Db(format!("{shown}: cannot read {what}: {}", crate::sql::exec::my_error_text(&e)))
    };
    conn.query_drop("SET SESSION TRANSACTION READ ONLY")
        .and_then(|_| conn.query_drop("START TRANSACTION READ ONLY"))
        .map_err(|e| err("the catalog", e))?;
    let tables: Vec<(String, Option<String>)> = conn
        .exec(
            "SELECT TABLE_NAME, TABLE_COMMENT FROM information_schema.TABLES \
             WHERE TABLE_SCHEMA = ? AND TABLE_TYPE = 'BASE TABLE' ORDER BY CREATE_TIME, TABLE_NAME",
            (db.as_str(),),
        )
        .map_err(|e| err("the tables", e))?;
    if tables.is_empty() {
        let known: Vec<String> = conn
            .query("SELECT SCHEMA_NAME FROM information_schema.SCHEMATA WHERE SCHEMA_NAME NOT IN ('mysql', 'information_schema', 'performance_schema', 'sys') ORDER BY 1")
            .unwrap_or_default();
        let _ = conn.query_drop("ROLLBACK");
        return Err(Error::Input(format!(
            "{shown}: database `{db}` has no tables (databases here: {}; pick one with --database)",
            if known.is_empty() { "none".into() } else { known.join(", ") }
        )));
    }
    let columns: Vec<(String, String, String, String, Option<String>)> = conn
        .exec(
            "SELECT TABLE_NAME, COLUMN_NAME, COLUMN_TYPE, IS_NULLABLE, COLUMN_COMMENT FROM information_schema.COLUMNS \
             WHERE TABLE_SCHEMA = ? ORDER BY TABLE_NAME, ORDINAL_POSITION",
            (db.as_str(),),
        )
        .map_err(|e| err("the columns", e))?;
    let stats: Vec<(String, String, i64, Option<String>)> = conn
        .exec(
            "SELECT TABLE_NAME, INDEX_NAME, NON_UNIQUE, COLUMN_NAME FROM information_schema.STATISTICS \
             WHERE TABLE_SCHEMA = ? ORDER BY TABLE_NAME, INDEX_NAME, SEQ_IN_INDEX",
            (db.as_str(),),
        )
        .map_err(|e| err("the keys", e))?;
    let fks: Vec<(String, String, String, Option<String>, Option<String>, Option<String>)> = conn
        .exec(
            "SELECT TABLE_NAME, CONSTRAINT_NAME, COLUMN_NAME, REFERENCED_TABLE_SCHEMA, REFERENCED_TABLE_NAME, REFERENCED_COLUMN_NAME \
             FROM information_schema.KEY_COLUMN_USAGE \
             WHERE TABLE_SCHEMA = ? AND REFERENCED_TABLE_NAME IS NOT NULL ORDER BY TABLE_NAME, CONSTRAINT_NAME, ORDINAL_POSITION",
            (db.as_str(),),
        )
        .map_err(|e| err("the foreign keys", e))?;
    let _ = conn.query_drop("ROLLBACK");

    let mut raw = RawSchema {
        name: name.map(str::to_string).unwrap_or_else(|| db.clone()),
        dialect: Some(Dialect::Mysql),
        ..Default::default()
    };
    let mut by_name: BTreeMap<String, RawTable> = BTreeMap::new();
    let order: Vec<String> = tables.iter().map(|t| t.0.clone()).collect();
    for (t, comment) in tables {
        let description = comment.filter(|c| !c.is_empty());
        by_name.insert(
            t.clone(),
            RawTable { name: t.clone(), description, origin: format!("table {db}.{t}"), ..Default::default() },
        );
    }
    for (t, c, ty, nullable, comment) in columns {
        if let Some(table) = by_name.get_mut(&t) {
            table.columns.push(Column {
                name: c,
                sql_type: ty,
                nullable: nullable == "YES",
                description: comment.filter(|c| !c.is_empty()),
                synonyms: Vec::new(),
                origin: None,
            });
        }
    }
    // Index columns in order, per (table, index).
    let mut indexes: BTreeMap<(String, String), (bool, Vec<Option<String>>)> = BTreeMap::new();
    for (t, index, non_unique, col) in stats {
        indexes.entry((t, index)).or_insert((non_unique == 0, Vec::new())).1.push(col);
    }
    for ((t, index), (unique, cols)) in indexes {
        let Some(table) = by_name.get_mut(&t) else { continue };
        // An expression part (MySQL 8 functional index) has no column: not a column key.
        let Some(cols) = cols.into_iter().collect::<Option<Vec<String>>>() else { continue };
        if index == "PRIMARY" {
            table.primary_key = cols;
        } else if unique && !table.unique.contains(&cols) {
            table.unique.push(cols);
        }
    }
    let mut grouped: Vec<((String, String), RawForeignKey)> = Vec::new();
    for (t, cname, col, to_schema, to, to_col) in fks {
        let (Some(to), Some(to_col)) = (to, to_col) else { continue };
        if to_schema.as_deref().is_some_and(|s| s != db) {
            raw.warnings.push(ImportWarning::new(
                format!("table {t}: foreign key {cname}"),
                format!("references {}.{to}, outside database {db}; not imported", to_schema.unwrap_or_default()),
            ));
            continue;
        }
        let key = (t.clone(), cname.clone());
        match grouped.iter_mut().find(|(k, _)| *k == key) {
            Some((_, fk)) => {
                fk.columns.push(col);
                fk.to_columns.push(to_col);
            }
            None => grouped.push((
                key,
                RawForeignKey {
                    from: t.clone(),
                    columns: vec![col],
                    to,
                    to_columns: vec![to_col],
                    origin: format!("table {t}: constraint {cname}"),
                    description: None,
                    provenance: None,
                },
            )),
        }
    }
    raw.tables = order.into_iter().filter_map(|t| by_name.remove(&t)).collect();
    raw.foreign_keys = grouped.into_iter().map(|(_, fk)| fk).collect();
    build(raw)
}
