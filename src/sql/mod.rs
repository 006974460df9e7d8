//! SQL analysis with sqlparser: references of a query (tables, columns, join
//! pairs) and the guard that admits only one read-only SELECT over a view.

pub mod analyze;
pub mod catalog;
pub mod exec;
pub mod guard;
pub mod port;
