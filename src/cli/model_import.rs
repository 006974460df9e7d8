//! `lucy model import`: build a dbModel from DDL, a SQLite file, a
//! BIRD/Spider `tables.json`, a dbt project's artifacts, or the live
//! catalog of a PostgreSQL, MySQL or Spark server. The model goes to stdout (or `--out`),
//! import warnings to stderr; with `--json` stdout carries
//! `{"model": …, "warnings": […]}` instead.

mod dbt;

use std::path::PathBuf;

use super::values::Dialect;
use super::Ctx;
use lucy::error::{Error, Result};
use lucy::model::import::{self, Imported};
use lucy::sql::exec::Database;

/// Arguments of `lucy model import`.
#[derive(Debug, clap::Args)]
#[command(group(clap::ArgGroup::new("source").required(true).args(["ddl", "sqlite", "bird_tables", "postgres", "mysql", "spark", "dbt"])))]
pub struct ImportArgs {
    /// A file of CREATE TABLE statements (`;` separators optional).
    #[arg(long, value_name = "FILE")]
    pub ddl: Option<PathBuf>,
    /// SQL dialect of the DDL (tried first; other dialects are tried on
    /// statements that do not parse). Also recorded in the model.
    #[arg(long, value_enum, requires = "ddl")]
    pub dialect: Option<Dialect>,
    /// A SQLite database file, opened read-only.
    #[arg(long, value_name = "DB")]
    pub sqlite: Option<PathBuf>,
    /// A BIRD/Spider tables.json file.
    #[arg(long, value_name = "FILE", requires = "db_id")]
    pub bird_tables: Option<PathBuf>,
    /// The database to import from --bird-tables.
    #[arg(long, value_name = "ID", requires = "bird_tables")]
    pub db_id: Option<String>,
    /// BIRD database_description directory of that database (one CSV per table).
    #[arg(long, value_name = "DIR", requires = "bird_tables")]
    pub descriptions: Option<PathBuf>,
    /// A PostgreSQL server's catalog: postgresql://USER@HOST:PORT/DB
    /// (password in the URL or PGPASSWORD; never printed). Read-only.
    #[arg(long, value_name = "URL")]
    pub postgres: Option<String>,
    /// The PostgreSQL schema to import (default: the URL's ?schema=, else public).
    #[arg(long, value_name = "S", requires = "postgres")]
    pub schema: Option<String>,
    /// A MySQL/MariaDB server's catalog: mysql://USER@HOST:PORT/DB
    /// (password in the URL or MYSQL_PWD; never printed). Read-only.
    #[arg(long, value_name = "URL")]
    pub mysql: Option<String>,
    /// A Spark server's catalog through Spark Connect: sc://HOST:PORT[/DB]
    /// (token in LUCY_SPARK_TOKEN; never printed). Tables, columns, types
    /// and comments; Spark declares no keys (see `lucy model suggest
    /// --relationships`).
    #[arg(long, value_name = "URL")]
    pub spark: Option<String>,
    /// The MySQL or Spark database to import (default: the URL's; Spark:
    /// else `default`).
    #[arg(long, value_name = "D")]
    pub database: Option<String>,
    /// A dbt project: its `target/` directory (or the project directory
    /// holding it), or a `manifest.json` (schemas v7–v12, dbt Fusion).
    /// `catalog.json` beside it is read when present. Tables: the
    /// project's enabled models, seeds and snapshots; keys, relationships,
    /// descriptions and allowed values from constraints, tests and semantic
    /// models (docs/dbmodel.md, "From dbt"). Pattern proposals are printed,
    /// never applied.
    #[arg(long, value_name = "PATH")]
    pub dbt: Option<PathBuf>,
    /// With --dbt: the `catalog.json` of `dbt docs generate` (the column
    /// lists and types; default: the one beside the manifest).
    #[arg(long, value_name = "FILE", requires = "dbt")]
    pub catalog: Option<PathBuf>,
    /// With --dbt: what to import, in dbt's selector words (`path:models/marts`,
    /// `tag:T`, `package:P`, `resource_type:source`, `source:S`, names with
    /// `*`); words are a union, `a,b` an intersection. Default: the
    /// project's own models, seeds and snapshots.
    #[arg(long, value_name = "WORDS", requires = "dbt", num_args = 1..)]
    pub select: Vec<String>,
    /// With --dbt: re-import into this curated model, keeping its patterns,
    /// constraints, synonyms, edited descriptions, roles and hand-added
    /// tables and relationships; prints what dbt changed. Written back to
    /// it unless --out names another file.
    #[arg(long, value_name = "MODEL", requires = "dbt")]
    pub update: Option<PathBuf>,
    /// With --update: drop a table dbt no longer has even when a pattern
    /// uses it (the pattern is dropped too).
    #[arg(long, requires = "update")]
    pub force: bool,
    /// Model name (default: the file stem, or the db id).
    #[arg(long)]
    pub name: Option<String>,
    /// Write the model here instead of stdout.
    #[arg(long, value_name = "FILE")]
    pub out: Option<PathBuf>,
}

/// Run the import; exit code 0 even with warnings (they are reported).
pub fn run(args: ImportArgs, ctx: Ctx) -> Result<i32> {
    if args.dbt.is_some() {
        return dbt::run(&args, ctx);
    }
    let mut imported = import(&args)?;
    if let Some(n) = &args.name {
        imported.model.name = n.clone();
    }
    let Imported { model, warnings } = &imported;
    if let Some(out) = &args.out {
        let text = serde_json::to_string_pretty(model).map_err(|e| Error::Input(e.to_string()))? + "\n";
        std::fs::write(out, text).map_err(|e| Error::io(out, e))?;
    }
    if ctx.json {
        let v = match &args.out {
            Some(out) => serde_json::json!({"out": out.display().to_string(), "warnings": warnings}),
            None => serde_json::json!({"model": model, "warnings": warnings}),
        };
        super::print_json(&v)?;
    } else {
        for w in warnings {
            eprintln!("warning: {w}");
        }
        match &args.out {
            Some(out) => eprintln!(
                "wrote {}: {} tables, {} relationships, {} warnings",
                out.display(),
                model.tables.len(),
                model.relationships.len(),
                warnings.len()
            ),
            None => super::print_json(model)?,
        }
    }
    Ok(0)
}

fn import(args: &ImportArgs) -> Result<Imported> {
    let stem = |p: &PathBuf| p.file_stem().map(|s| s.to_string_lossy().into_owned()).unwrap_or_default();
    if let Some(path) = &args.ddl {
        let bytes = lucy::error::read_bytes(path)?;
        // DDL files are usually UTF-8; a Latin-1 file must not abort the import.
        let sql = match String::from_utf8(bytes) {
            Ok(s) => s,
            Err(e) => e.into_bytes().iter().map(|&b| b as char).collect(),
        };
        let name = args.name.clone().unwrap_or_else(|| stem(path));
        return import::ddl_with_warnings(&sql, args.dialect.map(Into::into), &name);
    }
    if let Some(path) = &args.sqlite {
        return import::sqlite_with_warnings(path, args.name.as_deref());
    }
    if let (Some(path), Some(db)) = (&args.bird_tables, &args.db_id) {
        return import::bird_tables_with_warnings(path, db, args.descriptions.as_deref());
    }
    if let Some(url) = &args.postgres {
        return match Database::parse(url)? {
            Database::Postgres(server) => {
                lucy::sql::catalog::postgres_with_warnings(&server, args.schema.as_deref(), args.name.as_deref())
            }
            other => Err(Error::Input(format!("--postgres takes a postgresql:// URL, not {other}"))),
        };
    }
    if args.database.is_some() && args.mysql.is_none() && args.spark.is_none() {
        return Err(Error::Input("--database goes with --mysql URL or --spark URL".into()));
    }
    if let Some(url) = &args.spark {
        return match Database::parse(url)? {
            db @ Database::Spark(_) => {
                lucy::sql::catalog::spark_with_warnings(&db, args.database.as_deref(), args.name.as_deref())
            }
            other => Err(Error::Input(format!("--spark takes an sc:// URL, not {other}"))),
        };
    }
    if let Some(url) = &args.mysql {
        return match Database::parse(url)? {
            Database::Mysql(server) => {
                lucy::sql::catalog::mysql_with_warnings(&server, args.database.as_deref(), args.name.as_deref())
            }
            other => Err(Error::Input(format!("--mysql takes a mysql:// URL, not {other}"))),
        };
    }
    Err(Error::Input(
        "give one source: --ddl FILE, --sqlite DB, --bird-tables FILE --db-id ID, --dbt PATH, --postgres URL, --mysql URL or --spark URL".into(),
    ))
}
