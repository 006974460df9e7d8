//! Import a dbModel from a running server's catalog: PostgreSQL
//! (`pg_catalog`) and MySQL/MariaDB (`information_schema`), read in a
//! read-only transaction over the executor's connections, and Spark (Spark
//! Connect's catalog calls; no keys declared there), into the same
//! builder as the file importers (`model::import`), so names, keys,
//! cardinalities and warnings follow the same rules.

mod mysql;
mod postgres;
mod spark;

pub use self::mysql::mysql_with_warnings;
pub use self::postgres::postgres_with_warnings;
pub use self::spark::spark_with_warnings;
