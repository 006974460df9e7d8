//! Import a dbModel from a running PostgreSQL server's catalog (read-only
//! transaction): the tables of one schema (default `public`) in creation
//! order, columns with `format_type` types, `NOT NULL`, primary keys,
//! unique keys (unique constraints and plain unique indexes on columns),
//! foreign keys (composite too) and `COMMENT ON` texts as descriptions.

use crate::error::{Error, Result};
use crate::model::import::build::{build, RawForeignKey, RawSchema, RawTable};
use crate::model::import::{ImportWarning, Imported};
use crate::sql::exec::target::{Database, Server};
use crate::types::{Column, Dialect};

/// Introspect `server`'s catalog. `schema` overrides the URL's `?schema=`
/// (default `public`); the model is named `name`, else after the database.
pub fn postgres_with_warnings(server: &Server, schema: Option<&str>, name: Option<&str>) -> Result<Imported> {
    let shown = Database::Postgres(server.clone());
    let schema = schema.or(server.schema.as_deref()).unwrap_or("public").to_string();
    let mut client = crate::sql::exec::postgres_connect(server, std::time::Duration::from_secs(30))?;
    let err = |what: &str, e: postgres::Error| {
        Error::Db(format!("{shown}: cannot read {what}: {}", crate::sql::exec::pg_error_text(&e)))
    };
    let mut tx = client.build_transaction().read_only(true).start().map_err(|e| err("the catalog", e))?;
    let tables = tx
        .query(
            "SELECT c.oid, c.relname::text, obj_description(c.oid, 'pg_class') \
             FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace \
             WHERE n.nspname = $1 AND c.relkind IN ('r', 'p') AND NOT c.relispartition ORDER BY c.oid",
            &[&schema],
        )
        .map_err(|e| err("the tables", e))?;
    if tables.is_empty() {
        let known: Vec<String> = tx
            .query("SELECT nspname::text FROM pg_namespace WHERE nspname NOT LIKE 'pg\\_%' AND nspname <> 'information_schema' ORDER BY 1", &[])
            .map(|rows| rows.iter().map(|r| r.get::<_, String>(0)).collect())
            .unwrap_or_default();
        return Err(Error::Input(format!(
            "{shown}: schema `{schema}` has no tables (schemas here: {}; pick one with --schema)",
            if known.is_empty() { "none".into() } else { known.join(", ") }
        )));
    }
    let default_name = if server.database.is_empty() { "postgres".to_string() } else { server.database.clone() };
    let mut raw = RawSchema {
        name: name.map(str::to_string).unwrap_or(default_name),
        dialect: Some(Dialect::Postgres),
        ..Default::default()
    };
    for t in &tables {
        let oid: u32 = t.get(0);
        let tname: String = t.get(1);
        let mut table = RawTable {
            name: tname.clone(),
            description: t.get(2),
            origin: format!("table {schema}.{tname}"),
            ..Default::default()
        };
        let cols = tx
            .query(
                "SELECT a.attname::text, format_type(a.atttypid, a.atttypmod), a.attnotnull, col_description(a.attrelid, a.attnum) \
                 FROM pg_attribute a WHERE a.attrelid = $1 AND a.attnum > 0 AND NOT a.attisdropped ORDER BY a.attnum",
                &[&oid],
            )
            .map_err(|e| err(&format!("the columns of {tname}"), e))?;
        for c in cols {
            let notnull: bool = c.get(2);
            table.columns.push(Column {
                name: c.get(0),
                sql_type: c.get(1),
                nullable: !notnull,
                description: c.get(3),
                synonyms: Vec::new(),
                origin: None,
            });
        }
        let cons = tx
            .query(
                "SELECT con.contype::text, \
                   ARRAY(SELECT a.attname::text FROM unnest(con.conkey) WITH ORDINALITY k(n, o) \
                         JOIN pg_attribute a ON a.attrelid = con.conrelid AND a.attnum = k.n ORDER BY k.o), \
                   fc.relname::text, fn.nspname::text, \
                   ARRAY(SELECT a.attname::text FROM unnest(con.confkey) WITH ORDINALITY k(n, o) \
                         JOIN pg_attribute a ON a.attrelid = con.confrelid AND a.attnum = k.n ORDER BY k.o), \
                   con.conname::text \
                 FROM pg_constraint con LEFT JOIN pg_class fc ON fc.oid = con.confrelid \
                 LEFT JOIN pg_namespace fn ON fn.oid = fc.relnamespace \
                 WHERE con.conrelid = $1 AND con.contype IN ('p', 'f') ORDER BY con.oid",
                &[&oid],
            )
            .map_err(|e| err(&format!("the keys of {tname}"), e))?;
        for c in cons {
            let kind: String = c.get(0);
            let cols: Vec<String> = c.get(1);
            if kind == "p" {
                table.primary_key = cols;
                continue;
            }
            let (to, to_schema, to_cols, cname): (Option<String>, Option<String>, Vec<String>, String) =
                (c.get(2), c.get(3), c.get(4), c.get(5));
            let Some(to) = to else { continue };
            if to_schema.as_deref() != Some(schema.as_str()) {
                raw.warnings.push(ImportWarning::new(
                    format!("table {tname}: foreign key {cname}"),
                    format!("references {}.{to}, outside schema {schema}; not imported", to_schema.unwrap_or_default()),
                ));
                continue;
            }
            raw.foreign_keys.push(RawForeignKey {
                from: tname.clone(),
                columns: cols,
                to,
                to_columns: to_cols,
                origin: format!("table {tname}: constraint {cname}"),
                description: None,
                provenance: None,
            });
        }
        let uniques = tx
            .query(
                "SELECT ARRAY(SELECT a.attname::text FROM unnest(i.indkey::int2[]) WITH ORDINALITY k(n, o) \
                         JOIN pg_attribute a ON a.attrelid = i.indrelid AND a.attnum = k.n ORDER BY k.o) \
                 FROM pg_index i WHERE i.indrelid = $1 AND i.indisunique AND NOT i.indisprimary \
                   AND i.indexprs IS NULL AND i.indpred IS NULL ORDER BY i.indexrelid",
                &[&oid],
            )
            .map_err(|e| err(&format!("the unique keys of {tname}"), e))?;
        for u in uniques {
            let cols: Vec<String> = u.get(0);
            if !cols.is_empty() && !table.unique.contains(&cols) {
                table.unique.push(cols);
            }
        }
        raw.tables.push(table);
    }
    raw.description = tx
        .query_opt(
            "SELECT shobj_description(d.oid, 'pg_database') FROM pg_database d WHERE d.datname = current_database()",
            &[],
        )
        .ok()
        .flatten()
        .and_then(|r| r.get(0));
    drop(tx);
    build(raw)
}
