//! Run one checked, read-only query on a database: a SQLite file, or a
//! PostgreSQL, MySQL or Spark Connect server ([`Database`]). Every engine goes through the
//! same steps: the view made visible (a TEMP view on SQLite, an inlined CTE
//! on the servers), a read-only transaction, a time limit enforced by the
//! engine, and rows read through one [`bound::Collector`] that applies the
//! row limit and the byte bounds (`--max-result-bytes`) while reading.
//!
//! Defence in depth on SQLite: the SQL guard has already admitted only a
//! single SELECT; here the database is additionally opened with
//! `SQLITE_OPEN_READ_ONLY`, `PRAGMA query_only` is switched on once the view
//! exists, SQLite itself must report the prepared statement as read-only,
//! and a watchdog interrupts a runaway query. On the servers: a
//! `READ ONLY` transaction, a server-side statement timeout, one statement
//! per call (extended / binary protocol), rolled back at the end. On Spark
//! (feature `spark`; no transactions there): a fresh session per query, the
//! query wrapped so that Spark's parser admits nothing but a query, an
//! interrupt at the time limit (see `exec/spark.rs`).

pub mod bound;
mod mysql;
mod postgres;
#[cfg(feature = "spark")]
mod spark;
pub mod target;

use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};
use crate::types::ViewBody;
use bound::Collector;
pub use bound::DEFAULT_MAX_RESULT_BYTES;
pub use target::Database;

/// Default time bound of one query.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

pub use crate::types::SqlValue;

/// The result of a query.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct QueryRows {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<SqlValue>>,
    /// True when a bound (row limit, result bytes, cell cap) cut the result.
    #[serde(default)]
    pub truncated: bool,
    /// Which bound cut the result, and where.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub truncation: Option<String>,
    /// Bytes of the rows kept, as counted against `--max-result-bytes`.
    #[serde(default)]
    pub bytes: usize,
    /// How the view reached the connection: `temp_view`, `cte` or `none`.
    #[serde(default)]
    pub view_mode: String,
}

/// Options of [`run`].
#[derive(Debug, Clone)]
pub struct ExecOptions {
    /// Stop fetching after this many rows.
    pub limit: Option<usize>,
    /// Interrupt the query after this long.
    pub timeout: Duration,
    /// Stop fetching once the rows hold this many bytes; one cell holds at
    /// most a quarter of it (and at most [`bound::MAX_CELL_BYTES`]).
    pub max_result_bytes: usize,
}

impl Default for ExecOptions {
    fn default() -> Self {
        ExecOptions { limit: None, timeout: DEFAULT_TIMEOUT, max_result_bytes: DEFAULT_MAX_RESULT_BYTES }
    }
}

/// A view to make visible to the query: its name and its SELECT (borrowed
/// from the [`ViewBody`] GenerateView wrote; never parsed back out of the
/// `CREATE VIEW` text).
#[derive(Debug, Clone, Copy)]
pub struct ViewDef<'a> {
    pub name: &'a str,
    pub select: &'a str,
}

impl<'a> From<&'a ViewBody> for ViewDef<'a> {
    fn from(b: &'a ViewBody) -> Self {
        ViewDef { name: &b.name, select: &b.select }
    }
}

/// Run `sql` read-only on `db`, with `view` visible under its name.
pub fn run(db: &Database, view: Option<ViewDef>, sql: &str, opts: &ExecOptions) -> Result<QueryRows> {
    match db {
        Database::Sqlite(path) => run_sqlite(path, view, sql, opts),
        Database::Postgres(server) => postgres::run(server, view, sql, opts),
        Database::Mysql(server) => mysql::run(server, view, sql, opts),
        #[cfg(feature = "spark")]
        Database::Spark(server) => spark::run(server, view, sql, opts),
        #[cfg(not(feature = "spark"))]
        Database::Spark(_) => Err(no_spark(db)),
    }
}

/// The error for `sc://` in a build without the `spark` feature.
#[cfg(not(feature = "spark"))]
fn no_spark(db: &Database) -> Error {
    Error::Input(format!("{db}: this lucy was built without Spark support (build with `--features spark`)"))
}

/// Every table and view a Spark server's catalog lists (`database.table
/// (type, temporary …)`, sorted), e.g. to show that a query created or
/// dropped nothing. Catalog calls of Spark Connect, no SQL.
pub fn spark_catalog(db: &Database, timeout: Duration) -> Result<Vec<String>> {
    match db {
        #[cfg(feature = "spark")]
        Database::Spark(server) => spark::list_tables(server, timeout),
        #[cfg(not(feature = "spark"))]
        Database::Spark(_) => {
            let _ = timeout;
            Err(no_spark(db))
        }
        other => Err(Error::Input(format!("{other}: not a Spark Connect URL (sc://host:port)"))),
    }
}

/// One table of a Spark catalog: its name, comment and columns.
#[derive(Debug, Clone, PartialEq)]
pub struct CatalogTable {
    pub name: String,
    pub description: Option<String>,
    pub columns: Vec<CatalogColumn>,
}

/// One column of a [`CatalogTable`], as Spark's catalog lists it.
#[derive(Debug, Clone, PartialEq)]
pub struct CatalogColumn {
    pub name: String,
    /// Spark's type name (`int`, `string`, `decimal(10,2)`, …).
    pub sql_type: String,
    pub nullable: bool,
    pub description: Option<String>,
}

/// The permanent tables of database `database` on a Spark server (default:
/// the URL's database, else `default`) with their columns, from Spark
/// Connect's catalog calls (no SQL), for `lucy model import --spark`.
pub fn spark_tables(db: &Database, database: Option<&str>, timeout: Duration) -> Result<(String, Vec<CatalogTable>)> {
    match db {
        #[cfg(feature = "spark")]
        Database::Spark(server) => {
            let name = database.map(str::to_string).unwrap_or_else(|| {
                if server.database.is_empty() {
                    "default".into()
                } else {
                    server.database.clone()
                }
            });
            let known = spark::databases(server, timeout)?;
            let missing = |what: &str| {
                Error::Input(format!(
                    "{db}: database `{name}` {what} (databases here: {}; pick one with --database)",
                    if known.is_empty() { "none".into() } else { known.join(", ") }
                ))
            };
            if !known.iter().any(|k| k.eq_ignore_ascii_case(&name)) {
                return Err(missing("does not exist"));
            }
            let tables = spark::catalog_tables(server, &name, timeout)?;
            if tables.is_empty() {
                return Err(missing("has no tables"));
            }
            Ok((name, tables))
        }
        #[cfg(not(feature = "spark"))]
        Database::Spark(_) => {
            let _ = (database, timeout);
            Err(no_spark(db))
        }
        other => Err(Error::Input(format!("{other}: not a Spark Connect URL (sc://host:port)"))),
    }
}

pub use self::mysql::{connect as mysql_connect, my_message as my_error_text};
pub use self::postgres::{connect as postgres_connect, pg_message as pg_error_text};

/// Check that `db` can be opened (a SQLite file that exists; a server that
/// accepts the login), so a wrong URL, password or a down server fails
/// before any LLM call, with the URL (never the password) in the message.
pub fn ping(db: &Database, timeout: Duration) -> Result<()> {
    match db {
        Database::Sqlite(path) => sqlite_file(path),
        Database::Postgres(server) => postgres::connect(server, timeout).map(drop),
        Database::Mysql(server) => mysql::connect(server, timeout).map(drop),
        #[cfg(feature = "spark")]
        Database::Spark(server) => spark::connect(server, timeout),
        #[cfg(not(feature = "spark"))]
        Database::Spark(_) => Err(no_spark(db)),
    }
}

/// A SQLite database path must name an existing regular file: a missing
/// path says so, and a directory, FIFO or device (`/dev/null`) is named as
/// what it is instead of being opened (a FIFO would block, `/dev/null`
/// would look like an empty database).
fn sqlite_file(path: &Path) -> Result<()> {
    if !path.exists() {
        return Err(Error::Input(format!("{}: no such SQLite database file", path.display())));
    }
    crate::error::regular_file(path)
}

/// Run `sql` read-only on the SQLite file `db`. With a `view`, the view is
/// first created as a TEMP view on the connection (or, if that fails,
/// inlined as a CTE). Times out after [`DEFAULT_TIMEOUT`].
pub fn run_readonly(db: &Path, view: Option<&ViewBody>, sql: &str, limit: Option<usize>) -> Result<QueryRows> {
    run_readonly_with(db, view, sql, &ExecOptions { limit, ..ExecOptions::default() })
}

/// [`run_readonly`] with explicit bounds.
pub fn run_readonly_with(db: &Path, view: Option<&ViewBody>, sql: &str, opts: &ExecOptions) -> Result<QueryRows> {
    run(&Database::Sqlite(db.to_path_buf()), view.map(ViewDef::from), sql, opts)
}

fn run_sqlite(db: &Path, view: Option<ViewDef>, sql: &str, opts: &ExecOptions) -> Result<QueryRows> {
    sqlite_file(db)?;
    let conn = Connection::open_with_flags(db, OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX)
        .map_err(|e| Error::Db(format!("{}: cannot open read-only: {e}", db.display())))?;
    // No single string or blob may grow past this inside SQLite either
    // (e.g. `printf('%.*c', 100000000, 'x')`): memory stays bounded.
    let engine_cap = (opts.max_result_bytes.saturating_mul(2)).max(32 << 20).min(i32::MAX as usize) as i32;
    // SAFETY: the handle is this open connection's; sqlite3_limit only sets
    // a per-connection limit (rusqlite's `limits` feature does the same).
    unsafe {
        rusqlite::ffi::sqlite3_limit(conn.handle(), rusqlite::ffi::SQLITE_LIMIT_LENGTH, engine_cap);
    }
    let mut final_sql = sql.trim().trim_end_matches(';').to_string();
    let mut view_mode = "none";
    if let Some(v) = view {
        let temp = format!("CREATE TEMP VIEW {} AS {}", v.name, v.select);
        match conn.execute_batch(&temp) {
            Ok(()) => view_mode = "temp_view",
            Err(_) => {
                final_sql = inline_as_cte(v.name, v.select, &final_sql);
                view_mode = "cte";
            }
        }
    }
    conn.execute_batch("PRAGMA query_only = ON")
        .map_err(|e| Error::Db(format!("cannot switch the connection to query_only: {e}")))?;
    let (done_tx, done_rx) = mpsc::channel::<()>();
    let handle = conn.get_interrupt_handle();
    let timeout = opts.timeout;
    let watchdog = std::thread::spawn(move || {
        if let Err(mpsc::RecvTimeoutError::Timeout) = done_rx.recv_timeout(timeout) {
            handle.interrupt();
        }
    });
    let result = fetch(&conn, &final_sql, opts, engine_cap);
    let _ = done_tx.send(());
    let _ = watchdog.join();
    result.map(|mut rows| {
        rows.view_mode = view_mode.to_string();
        rows
    })
}

fn fetch(conn: &Connection, sql: &str, opts: &ExecOptions, engine_cap: i32) -> Result<QueryRows> {
    let timeout = opts.timeout;
    let mut stmt = conn.prepare(sql).map_err(|e| Error::Db(format!("cannot prepare the query: {e}")))?;
    // SQLite's own verdict, independent of our parser: never step a writer.
    if !stmt.readonly() {
        return Err(Error::Sql("SQLite reports that the statement writes to the database; refusing to run it".into()));
    }
    let columns: Vec<String> = stmt.column_names().map(|s| s.to_string()).collect();
    let n = columns.len();
    let mut out = Collector::new(columns, opts.limit, opts.max_result_bytes);
    let mut rows = stmt.query([]).map_err(|e| exec_error(e, timeout, engine_cap))?;
    let mut more = false;
    loop {
        if out.full() {
            more = true;
            break;
        }
        let row = match rows.next() {
            Ok(Some(r)) => r,
            Ok(None) => break,
            Err(e) => return Err(exec_error(e, timeout, engine_cap)),
        };
        let mut vals = Vec::with_capacity(n);
        for i in 0..n {
            let v = row.get_ref(i).map_err(|e| Error::Db(e.to_string()))?;
            vals.push(match v {
                ValueRef::Null => SqlValue::Null,
                ValueRef::Integer(i) => SqlValue::Integer(i),
                ValueRef::Real(r) => SqlValue::Real(r),
                ValueRef::Text(t) => {
                    let t = &t[..t.len().min(out.cell_budget() + 4)];
                    out.text(&String::from_utf8_lossy(t))
                }
                ValueRef::Blob(b) => out.blob(b),
            });
        }
        out.push(vals);
    }
    if more {
        // Was there really a row left? (The limit may fall on the last row.)
        more = matches!(rows.next(), Ok(Some(_)));
    }
    Ok(out.finish(more))
}

fn exec_error(e: rusqlite::Error, timeout: Duration, engine_cap: i32) -> Error {
    if let rusqlite::Error::SqliteFailure(f, _) = &e {
        if f.code == rusqlite::ErrorCode::OperationInterrupted {
            return Error::Db(format!("query interrupted after the {:.0} s time limit", timeout.as_secs_f64()));
        }
        if f.code == rusqlite::ErrorCode::TooBig {
            return Error::Db(format!(
                "a value of the query grew past {engine_cap} bytes (SQLite's length limit, set from --max-result-bytes); the query was stopped"
            ));
        }
    }
    Error::Db(e.to_string())
}

/// What a server runs for `sql` (trimmed, no trailing `;`): with the view,
/// if any, inlined as a CTE (servers get no `CREATE VIEW`); and the view
/// mode the result records (`cte` or `none`).
pub(crate) fn server_sql(view: Option<ViewDef>, sql: &str) -> (String, &'static str) {
    let sql = sql.trim().trim_end_matches(';');
    match view {
        Some(v) => (inline_as_cte(v.name, v.select, sql), "cte"),
        None => (sql.to_string(), "none"),
    }
}

pub(crate) fn inline_as_cte(name: &str, select: &str, sql: &str) -> String {
    let trimmed = sql.trim_start();
    if trimmed.get(..5).is_some_and(|w| w.eq_ignore_ascii_case("WITH ")) {
        let rest = &trimmed[5..];
        let rest = rest.strip_prefix("RECURSIVE ").map(|r| format!("RECURSIVE {name} AS ({select}), {r}"));
        match rest {
            Some(r) => format!("WITH {r}"),
            None => format!("WITH {name} AS ({select}), {}", &trimmed[5..]),
        }
    } else {
        format!("WITH {name} AS ({select}) {trimmed}")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn db() -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        let c = Connection::open(dir.path().join("t.sqlite")).unwrap();
        c.execute_batch(
            "CREATE TABLE A(id INTEGER PRIMARY KEY, name TEXT, x REAL, b BLOB);
             INSERT INTO A VALUES (1,'one',1.5,x'00ff'),(2,'two',NULL,NULL),(3,'three',3.0,NULL);",
        )
        .unwrap();
        dir
    }

    #[test]
    fn runs_with_temp_view_and_limit() {
        let d = db();
        let p = d.path().join("t.sqlite");
        let body = ViewBody {
            name: "v".into(),
            select: "SELECT A.id AS A_id, A.name AS A_name, A.x AS A_x, A.b AS A_b FROM A".into(),
        };
        let view = &body;
        let r = run_readonly(&p, Some(view), "SELECT A_name, A_x, A_b FROM v ORDER BY A_id", None).unwrap();
        assert_eq!(r.view_mode, "temp_view");
        assert_eq!(r.columns, vec!["A_name", "A_x", "A_b"]);
        assert_eq!(r.rows[0], vec![SqlValue::Text("one".into()), SqlValue::Real(1.5), SqlValue::Blob(vec![0, 255])]);
        assert_eq!(r.rows[1][1], SqlValue::Null);
        let r = run_readonly(&p, Some(view), "SELECT A_id FROM v ORDER BY A_id", Some(2)).unwrap();
        assert_eq!(r.rows, vec![vec![SqlValue::Integer(1)], vec![SqlValue::Integer(2)]]);
        assert!(r.truncated);
    }

    #[test]
    fn refuses_writes_even_if_the_guard_were_bypassed() {
        let d = db();
        let p = d.path().join("t.sqlite");
        for sql in ["DELETE FROM A", "DROP TABLE A", "INSERT INTO A(id) VALUES (9)", "CREATE TABLE Z(a)"] {
            assert!(run_readonly(&p, None, sql, None).is_err(), "{sql}");
        }
        let r = run_readonly(&p, None, "SELECT count(*) FROM A", None).unwrap();
        assert_eq!(r.rows[0][0], SqlValue::Integer(3));
    }

    #[test]
    fn runaway_query_is_interrupted() {
        let d = db();
        let p = d.path().join("t.sqlite");
        let sql = "WITH RECURSIVE c(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM c) SELECT max(i) FROM c";
        let opts = ExecOptions { timeout: Duration::from_millis(200), ..ExecOptions::default() };
        let e = run_readonly_with(&p, None, sql, &opts).unwrap_err();
        assert!(e.to_string().contains("interrupted"), "{e}");
    }

    #[test]
    fn cte_inlining_keeps_user_ctes() {
        assert_eq!(inline_as_cte("v", "SELECT 1 AS a", "SELECT a FROM v"), "WITH v AS (SELECT 1 AS a) SELECT a FROM v");
        assert_eq!(
            inline_as_cte("v", "SELECT 1 AS a", "WITH w AS (SELECT a FROM v) SELECT * FROM w"),
            "WITH v AS (SELECT 1 AS a), w AS (SELECT a FROM v) SELECT * FROM w"
        );
        let d = db();
        let p = d.path().join("t.sqlite");
        let sql =
            inline_as_cte("v", "SELECT id AS A_id FROM A", "WITH w AS (SELECT A_id FROM v) SELECT count(*) FROM w");
        let r = run_readonly(&p, None, &sql, None).unwrap();
        assert_eq!(r.rows[0][0], SqlValue::Integer(3));
    }

    #[test]
    fn a_missing_database_file_is_named() {
        let e = run_readonly(Path::new("/nonexistent/x.sqlite"), None, "SELECT 1", None).unwrap_err();
        assert!(e.to_string().contains("no such SQLite database file"), "{e}");
    }

    #[test]
    fn a_directory_or_device_is_named_not_opened() {
        let dir = tempfile::tempdir().unwrap();
        let e = run_readonly(dir.path(), None, "SELECT 1", None).unwrap_err().to_string();
        assert!(e.contains("a directory"), "{e}");
        let e = ping(&Database::Sqlite(dir.path().to_path_buf()), Duration::from_secs(1)).unwrap_err().to_string();
        assert!(e.contains("a directory"), "{e}");
        #[cfg(unix)]
        {
            let e = run_readonly(Path::new("/dev/null"), None, "SELECT 1", None).unwrap_err().to_string();
            assert!(e.contains("character device"), "{e}");
        }
    }
}
