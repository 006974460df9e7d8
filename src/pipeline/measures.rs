//! The view columns that can be measures: what the plan form's grammar
//! (`query.form plan|auto`, [`crate::query::plan`]) lets SUM, AVG, MIN and
//! MAX read. The rules live in [`crate::query::measures`]; here the value
//! index decides for text columns. (`--typed-measures`, which applied the
//! same rules to free SQL, was measured off and deleted in session 26.)
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
//! - a text column whose values in the value index are not all numbers
//!   (Spider's `cars_data.mpg` is TEXT holding numbers and stays a
//!   measure). Without an index, a text column stays a measure: the grammar
//!   only refuses what it knows to be wrong.
//!
//! Numeric types and columns without a declared type are measures.

use crate::graph::SchemaGraph;
use crate::link::values::ValueIndex;
pub use crate::query::measures::{type_class, TypeClass};
use crate::types::ViewColumn;

/// Whether `column` of `table` can be a measure (see the module's rules);
/// `index`'s values decide for text columns it holds.
pub fn is_measure(graph: &SchemaGraph, table: &str, column: &str, index: Option<&ValueIndex>) -> bool {
    let values = index.and_then(|i| {
        i.columns.iter().find(|c| c.table.eq_ignore_ascii_case(table) && c.column.eq_ignore_ascii_case(column))
    });
    crate::query::measures::is_measure_with(graph, table, column, values.map(|v| v.values.as_slice()))
}

/// The aliases of the view's columns that can be measures.
pub fn measure_columns(graph: &SchemaGraph, columns: &[ViewColumn], index: Option<&ValueIndex>) -> Vec<String> {
    columns.iter().filter(|c| is_measure(graph, &c.table, &c.column, index)).map(|c| c.alias.clone()).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn type_classes() {
        for t in [
            "INTEGER",
            "int",
            "BIGINT",
            "REAL",
            "DOUBLE PRECISION",
            "DECIMAL(10,2)",
            "decimal(10,2)",
            "bigint",
            "numeric",
            "NUMBER(5)",
            "unsigned int",
        ] {
            assert_eq!(type_class(t), TypeClass::Number, "{t}");
        }
        for t in ["DATE", "datetime", "TIMESTAMP WITH TIME ZONE", "TIME", "BOOLEAN", "bool"] {
            assert_eq!(type_class(t), TypeClass::Temporal, "{t}");
        }
        for t in ["TEXT", "VARCHAR(20)", "char(3)", "", "STRING"] {
            assert_eq!(type_class(t), TypeClass::Text, "{t}");
        }
        assert_eq!(type_class("POINT"), TypeClass::Other);
        assert_eq!(type_class("BLOB"), TypeClass::Other);
    }
}
