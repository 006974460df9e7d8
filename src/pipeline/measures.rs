//! `--typed-measures on` (issue 23): the view columns QueryView's grammar
//! (the rules live in [`crate::query::measures`], below the plan's grammar;
//! here the value index decides for text columns)
//! lets SUM, AVG and TOTAL read and `+ - * / %` combine
//! ([`crate::query::grammar::NameRules::measures`]).
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
    use crate::link::values::ColumnValues;

    use crate::graph::fixtures::ddo;

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

    #[test]
    fn keys_dates_and_text_are_not_measures() {
        let g = ddo();
        assert!(is_measure(&g, "PAYAMOUNT", "amount", None));
        assert!(is_measure(&g, "RCPU", "overallusage", None));
        // Primary key, a relationship's end on either side.
        assert!(!is_measure(&g, "PAYAMOUNT", "id", None));
        assert!(!is_measure(&g, "INCOME", "payamt_id", None));
        assert!(!is_measure(&g, "PAYMENT", "client_id", None));
        // Text without an index: left to the model.
        assert!(is_measure(&g, "SUPERCHARGE", "reason", None));
        let index = |values: &[&str]| ValueIndex {
            columns: vec![ColumnValues {
                table: "SUPERCHARGE".into(),
                column: "reason".into(),
                values: values.iter().map(|s| s.to_string()).collect(),
                complete: true,
            }],
            ..ValueIndex::default()
        };
        assert!(!is_measure(&g, "SUPERCHARGE", "reason", Some(&index(&["late fee", "12"]))));
        assert!(is_measure(&g, "SUPERCHARGE", "reason", Some(&index(&["12", " 3.5", "-1e3"]))));
        // A column the model does not have is left to the guard.
        assert!(is_measure(&g, "PAYAMOUNT", "nothing", None));
    }

    #[test]
    fn date_columns_are_not_measures() {
        let g = ddo();
        let dates: Vec<(String, String)> = g
            .model()
            .tables
            .iter()
            .flat_map(|t| t.columns.iter().map(move |c| (t.name.clone(), c.clone())))
            .filter(|(_, c)| type_class(&c.sql_type) == TypeClass::Temporal)
            .map(|(t, c)| (t, c.name))
            .collect();
        assert!(!dates.is_empty(), "DDO has date columns");
        for (t, c) in dates {
            assert!(!is_measure(&g, &t, &c, None), "{t}.{c}");
        }
    }
}
