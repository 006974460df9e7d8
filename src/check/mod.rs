//! Checking SQL against the model: fan-out-safe aggregates over the view
//! ([`fanout`]), `DISTINCT` for lists of rows the view repeats
//! ([`distinct`]) and, for SQL over the base tables, `lucy check`; the
//! model checked against the data: value inclusion of proposed
//! relationships ([`inclusion`], `lucy model suggest --relationships`).

pub mod aggregates;
pub mod base;
pub mod counted;
pub mod distinct;
pub mod fanout;
pub mod grouping;
pub mod inclusion;
pub mod literals;
pub mod values;

pub use base::{check_sql, CheckReport, Finding, FindingKind};

/// `sql` as the rewrites over the view read it: trimmed of blanks and a
/// trailing `;`, and its one query (`None` when it holds anything else).
/// A parse error names the analysis (`what`: "the COUNT(*) analysis …").
pub(crate) fn parse_query(
    sql: &str,
    dialect: crate::types::Dialect,
    what: &str,
) -> crate::error::Result<(String, Option<sqlparser::ast::Query>)> {
    use sqlparser::ast::Statement;
    let original = sql.trim().trim_end_matches(';').trim().to_string();
    let d = crate::sql::guard::parser_dialect(dialect);
    let stmts = sqlparser::parser::Parser::parse_sql(&*d, &original).map_err(|e| {
        crate::error::Error::Sql(format!("the {what} analysis cannot parse the SQL as {}: {e}", dialect.as_str()))
    })?;
    let mut it = stmts.into_iter();
    let query = match (it.next(), it.next()) {
        (Some(Statement::Query(q)), None) => Some(*q),
        _ => None,
    };
    Ok((original, query))
}

#[cfg(test)]
#[path = "fixture_tests.rs"]
mod fixture;
