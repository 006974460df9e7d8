//! `lucy check`: SQL over the model's base tables checked against the model
//! (declared joins, C3, C4, forbidden tables and relationships, names,
//! fan-out). Exit 0 clean, 1 findings, 2 unparseable input.

use std::path::PathBuf;

use super::values::Dialect;
use super::{print_json, Ctx};
use lucy::check::check_sql;
use lucy::error::{Error, Result};
use lucy::graph::SchemaGraph;

#[derive(Debug, clap::Args)]
pub struct CheckArgs {
    /// dbModel file (JSON).
    #[arg(long, value_name = "FILE")]
    pub model: PathBuf,
    /// The SQL query to check.
    #[arg(long, value_name = "SQL", required_unless_present = "file", conflicts_with = "file")]
    pub sql: Option<String>,
    /// Read the SQL query from this file.
    #[arg(long, value_name = "Q.sql")]
    pub file: Option<PathBuf>,
    /// SQL dialect to parse (default: the model's, else sqlite).
    #[arg(long, value_enum)]
    pub dialect: Option<Dialect>,
}

pub fn run(args: CheckArgs, ctx: Ctx) -> Result<i32> {
    let graph = SchemaGraph::new(lucy::model::load(&args.model)?)?;
    let sql = match (&args.sql, &args.file) {
        (Some(s), _) => s.clone(),
        (None, Some(f)) => lucy::error::read_to_string(f)?,
        (None, None) => return Err(Error::Input("give the SQL with --sql or --file".into())),
    };
    let dialect = args.dialect.map(Into::into).or(graph.model().dialect).unwrap_or_default();
    let report = match check_sql(&graph, &sql, dialect) {
        Ok(r) => r,
        Err(Error::Sql(m)) => {
            if ctx.json {
                eprintln!("{}", serde_json::json!({"error": m, "exit_code": 2}));
            } else {
                eprintln!("error: cannot check: {m}");
            }
            return Ok(2);
        }
        Err(e) => return Err(e),
    };
    if ctx.json {
        print_json(&report)?;
    } else if report.is_clean() {
        println!(
            "ok: no findings (reads {})",
            if report.tables.is_empty() { "no table".into() } else { report.tables.join(", ") }
        );
    } else {
        println!("{} finding(s):", report.findings.len());
        for f in &report.findings {
            println!("- [{}] {}: {}", f.kind.as_str(), f.clause, f.message);
            if !f.hint.is_empty() {
                println!("  fix: {}", f.hint);
            }
        }
    }
    Ok(if report.is_clean() { 0 } else { 1 })
}
