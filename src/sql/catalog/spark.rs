//! Import a dbModel from a Spark server's catalog (Spark Connect's
//! `listTables` / `listColumns` catalog calls, no SQL): the permanent tables
//! of one database with their columns, Spark's type names, nullability and
//! comments as descriptions. Spark's catalog declares no keys for the
//! tables it manages (Parquet, ORC, Delta without Unity Catalog), so the
//! model comes without primary keys and relationships; the import says so
//! once and names `lucy model suggest --relationships`, which proposes
//! them from column names and value inclusion.

use std::time::Duration;

use crate::error::Result;
use crate::model::import::build::{build, RawSchema, RawTable};
use crate::model::import::{ImportWarning, Imported};
use crate::sql::exec::target::Database;
use crate::sql::exec::CatalogTable;
use crate::types::{Column, Dialect};

/// Time bound of each catalog call.
const CATALOG_LIMIT: Duration = Duration::from_secs(60);

/// Introspect database `database` (default: the URL's, else `default`) on
/// the Spark server `db`; the model is named `name`, else after the database.
pub fn spark_with_warnings(db: &Database, database: Option<&str>, name: Option<&str>) -> Result<Imported> {
    let (database, tables) = crate::sql::exec::spark_tables(db, database, CATALOG_LIMIT)?;
    build(raw_schema(db, &database, tables, name))
}

/// The catalog's tables as the importers' raw schema (no keys).
fn raw_schema(db: &Database, database: &str, tables: Vec<CatalogTable>, name: Option<&str>) -> RawSchema {
    let mut raw = RawSchema {
        name: name.map(str::to_string).unwrap_or_else(|| database.to_string()),
        dialect: Some(Dialect::Spark),
        ..Default::default()
    };
    raw.warnings.push(ImportWarning::new(
        format!("{db} database {database}"),
        "Spark's catalog declares no primary or foreign keys: the model has none; \
         propose relationships with `lucy model suggest --relationships --execute <URL>`"
            .to_string(),
    ));
    raw.tables = tables
        .into_iter()
        .map(|t| RawTable {
            origin: format!("table {database}.{}", t.name),
            name: t.name,
            description: t.description,
            columns: t
                .columns
                .into_iter()
                .map(|c| Column {
                    name: c.name,
                    sql_type: c.sql_type,
                    nullable: c.nullable,
                    description: c.description,
                    synonyms: Vec::new(),
                    origin: None,
                })
                .collect(),
            ..Default::default()
        })
        .collect();
    raw
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sql::exec::CatalogColumn;

    #[test]
    fn catalog_tables_become_a_model_without_keys() {
        let db = Database::parse("sc://127.0.0.1:1/ddo").unwrap();
        let col = |n: &str, t: &str, null: bool| CatalogColumn {
            name: n.into(),
            sql_type: t.into(),
            nullable: null,
            description: None,
        };
        let tables = vec![
            CatalogTable {
                name: "CLIENT".into(),
                description: Some("customers".into()),
                columns: vec![col("id", "bigint", false), col("name", "string", true)],
            },
            CatalogTable { name: "LOCATION".into(), description: None, columns: vec![col("id", "bigint", true)] },
        ];
        let imp = build(raw_schema(&db, "ddo", tables, None)).unwrap();
        assert_eq!(imp.model.name, "ddo");
        assert_eq!(imp.model.dialect, Some(Dialect::Spark));
        assert_eq!(imp.model.tables.len(), 2);
        assert_eq!(imp.model.tables[0].description.as_deref(), Some("customers"));
        assert_eq!(imp.model.tables[0].columns[1].sql_type, "string");
        assert!(!imp.model.tables[0].columns[0].nullable);
        assert!(imp.model.tables.iter().all(|t| t.primary_key.is_empty()));
        assert!(imp.model.relationships.is_empty());
        assert!(
            imp.warnings.iter().any(|w| w.to_string().contains("model suggest --relationships")),
            "{:?}",
            imp.warnings
        );
    }
}
