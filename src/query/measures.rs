//! Which view columns can be measures: read by SUM and AVG, combined by
//! `+ - * / %` (`--typed-measures on`, QueryView's grammar) and aggregated
//! by a query plan's `sum`/`avg` ([`crate::query::plan`]). Issue 23 put it
//! in `pipeline::measures`; issue 46 moved it here so the plan's grammar
//! and compiler (below the pipeline) read the same rules. The value-index
//! lookup stays in `pipeline::measures`, which re-exports these.
//!
//! On DDO the 1.5B model summed `SUPERCHARGE_reason` (text),
//! `INCOME_payamt_id` (a key) and `PAYMENT_date` where the question asked
//! for `PAYAMOUNT_amount`, and wrote `RUNTIME_overallstatus + 100` (text)
//! for `RCPU_overallusage + 100`. A column is left out when the model or the
//! data says it cannot be a quantity:
//!
//! - a key: in its table's primary key or on either end of a relationship
//!   (no gold query of DDO, ACME or Spider dev sums or averages one);
//! - a date, time or boolean by its declared type;
//! - a text column whose indexed values are not all numbers (Spider's
//!   `cars_data.mpg` is TEXT holding numbers and stays a measure). Without
//!   an index, a text column stays a measure: the grammar only refuses what
//!   it knows to be wrong.
//!
//! Numeric types and columns without a declared type are measures.

use crate::graph::{SchemaGraph, TableId};

/// What a column can be, by its declared SQL type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TypeClass {
    /// INT, REAL, FLOAT, DOUBLE, NUMERIC, DECIMAL, NUMBER, MONEY.
    Number,
    /// DATE, TIME, DATETIME, TIMESTAMP, INTERVAL; BOOL, BOOLEAN.
    Temporal,
    /// CHAR, VARCHAR, TEXT, STRING, CLOB, ENUM, and no declared type.
    Text,
    /// Anything else (BLOB, JSON, …).
    Other,
}

/// Whether a column of this SQL type holds text worth indexing (CHAR,
/// VARCHAR, TEXT, CLOB, STRING, ENUM; no declared type, as SQLite allows).
pub fn is_text_type(sql_type: &str) -> bool {
    let u = sql_type.trim().to_ascii_uppercase();
    if u.is_empty() {
        return true;
    }
    if ["BLOB", "BINARY", "BYTEA"].iter().any(|b| u.contains(b)) {
        return false;
    }
    ["CHAR", "TEXT", "CLOB", "STRING", "ENUM"].iter().any(|t| u.contains(t))
}

/// The class of a declared SQL type (case-insensitive; `DECIMAL(10,2)`
/// reads as DECIMAL).
pub fn type_class(sql_type: &str) -> TypeClass {
    let u = sql_type.trim().to_ascii_uppercase();
    if u.is_empty() {
        return TypeClass::Text;
    }
    // Whole words only (`POINT` ends in INT): the first word decides a
    // date or time; any word a number (`UNSIGNED INT`, `INT UNSIGNED`).
    let words: Vec<&str> = u.split(|c: char| !c.is_ascii_alphabetic()).filter(|w| !w.is_empty()).collect();
    let first = words.first().copied().unwrap_or("");
    if ["DATE", "TIME", "DATETIME", "TIMESTAMP", "TIMESTAMPTZ", "INTERVAL", "YEAR", "BOOL", "BOOLEAN"].contains(&first)
    {
        return TypeClass::Temporal;
    }
    const NUMBER_WORDS: &[&str] = &[
        "INT",
        "INTEGER",
        "BIGINT",
        "SMALLINT",
        "TINYINT",
        "MEDIUMINT",
        "SERIAL",
        "BIGSERIAL",
        "SMALLSERIAL",
        "REAL",
        "FLOAT",
        "DOUBLE",
        "NUMERIC",
        "DECIMAL",
        "DEC",
        "NUMBER",
        "MONEY",
        "FIXED",
    ];
    if words.iter().any(|w| NUMBER_WORDS.contains(w)) {
        return TypeClass::Number;
    }
    if is_text_type(&u) {
        return TypeClass::Text;
    }
    TypeClass::Other
}

/// Whether `s` reads as a number (`12`, `-3.5`, `1e3`, blanks around).
fn is_number(s: &str) -> bool {
    s.trim().parse::<f64>().is_ok_and(f64::is_finite)
}

/// Whether `column` of table `t` is a key: in its primary key or on its
/// end of a relationship (column names compared case-insensitively).
pub fn is_key(graph: &SchemaGraph, t: TableId, column: &str) -> bool {
    graph.table(t).primary_key.iter().any(|k| k.eq_ignore_ascii_case(column))
        || graph.petgraph().edge_weights().any(|&rel| {
            let (from, to) = graph.endpoints(rel);
            graph.relationship(rel).on.iter().any(|[f, o]| {
                (from == t && f.eq_ignore_ascii_case(column)) || (to == t && o.eq_ignore_ascii_case(column))
            })
        })
}

/// The declared SQL type of `table.column`, when the model has both.
pub fn sql_type<'g>(graph: &'g SchemaGraph, table: &str, column: &str) -> Option<&'g str> {
    let t = graph.table_id(table)?;
    graph.table(t).columns.iter().find(|c| c.name.eq_ignore_ascii_case(column)).map(|c| c.sql_type.as_str())
}

/// Whether `column` of `table` can be a measure (see the module's rules);
/// `text_values`, the column's indexed values when there is an index
/// holding it, decide for a text column.
pub fn is_measure_with(graph: &SchemaGraph, table: &str, column: &str, text_values: Option<&[String]>) -> bool {
    // A table or column the model does not know: leave it to the guard.
    let Some(t) = graph.table_id(table) else { return true };
    if is_key(graph, t, column) {
        return false;
    }
    match sql_type(graph, table, column).map(type_class) {
        None | Some(TypeClass::Number) => true,
        Some(TypeClass::Temporal) | Some(TypeClass::Other) => false,
        Some(TypeClass::Text) => match text_values {
            Some(v) if !v.is_empty() => v.iter().all(|s| is_number(s)),
            _ => true,
        },
    }
}
