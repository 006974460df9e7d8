//! Run one checked, read-only query against a SQLite database.
//!
//! Defence in depth: the SQL guard has already admitted only a single
//! SELECT; here the database is additionally opened with
//! `SQLITE_OPEN_READ_ONLY`, `PRAGMA query_only` is switched on once the view
//! exists, SQLite itself must report the prepared statement as read-only,
//! and a watchdog interrupts a runaway query.

use std::path::Path;
use std::sync::mpsc;
use std::time::Duration;

use rusqlite::types::ValueRef;
use rusqlite::{Connection, OpenFlags};
use serde::{Deserialize, Serialize};

use crate::error::{Error, Result};

/// Default time bound of one query.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(30);

pub use crate::types::SqlValue;

/// The result of a query.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct QueryRows {
    pub columns: Vec<String>,
    pub rows: Vec<Vec<SqlValue>>,
    /// True when `limit` stopped the fetch before the last row.
    #[serde(default)]
    pub truncated: bool,
    /// How the view reached the connection: `temp_view`, `cte` or `none`.
    #[serde(default)]
    pub view_mode: String,
}

/// Options of [`run_readonly_with`].
#[derive(Debug, Clone)]
pub struct ExecOptions {
    /// Stop fetching after this many rows.
    pub limit: Option<usize>,
    /// Interrupt the query after this long.
    pub timeout: Duration,
}

impl Default for ExecOptions {
    fn default() -> Self {
        ExecOptions { limit: None, timeout: DEFAULT_TIMEOUT }
    }
}

/// Run `sql` read-only on the SQLite file `db`. With `view_sql` (a
/// `CREATE VIEW name AS SELECT …`), the view is first created as a TEMP view
/// on the connection (or, if that fails, inlined as a CTE). Times out after
/// [`DEFAULT_TIMEOUT`].
pub fn run_readonly(db: &Path, view_sql: Option<&str>, sql: &str, limit: Option<usize>) -> Result<QueryRows> {
    run_readonly_with(db, view_sql, sql, &ExecOptions { limit, ..ExecOptions::default() })
}

/// [`run_readonly`] with an explicit time bound.
pub fn run_readonly_with(db: &Path, view_sql: Option<&str>, sql: &str, opts: &ExecOptions) -> Result<QueryRows> {
    if !db.is_file() {
        return Err(Error::Db(format!("{}: no such database file", db.display())));
    }
    let conn = Connection::open_with_flags(db, OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX)
        .map_err(|e| Error::Db(format!("{}: cannot open read-only: {e}", db.display())))?;
    let mut final_sql = sql.trim().trim_end_matches(';').to_string();
    let mut view_mode = "none";
    if let Some(view_sql) = view_sql {
        let (name, select) = split_view(view_sql)?;
        let temp = format!("CREATE TEMP VIEW {name} AS {select}");
        match conn.execute_batch(&temp) {
            Ok(()) => view_mode = "temp_view",
            Err(_) => {
                final_sql = inline_as_cte(&name, &select, &final_sql);
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
    let result = fetch(&conn, &final_sql, opts.limit, timeout);
    let _ = done_tx.send(());
    let _ = watchdog.join();
    result.map(|mut rows| {
        rows.view_mode = view_mode.to_string();
        rows
    })
}

fn fetch(conn: &Connection, sql: &str, limit: Option<usize>, timeout: Duration) -> Result<QueryRows> {
    let mut stmt = conn.prepare(sql).map_err(|e| Error::Db(format!("cannot prepare the query: {e}")))?;
    // SQLite's own verdict, independent of our parser: never step a writer.
    if !stmt.readonly() {
        return Err(Error::Sql("SQLite reports that the statement writes to the database; refusing to run it".into()));
    }
    let columns: Vec<String> = stmt.column_names().map(|s| s.to_string()).collect();
    let n = columns.len();
    let mut out = QueryRows { columns, ..QueryRows::default() };
    let mut rows = stmt.query([]).map_err(|e| exec_error(e, timeout))?;
    loop {
        let row = match rows.next() {
            Ok(Some(r)) => r,
            Ok(None) => break,
            Err(e) => return Err(exec_error(e, timeout)),
        };
        if limit.is_some_and(|l| out.rows.len() >= l) {
            out.truncated = true;
            break;
        }
        let mut vals = Vec::with_capacity(n);
        for i in 0..n {
            let v = row.get_ref(i).map_err(|e| Error::Db(e.to_string()))?;
            vals.push(match v {
                ValueRef::Null => SqlValue::Null,
                ValueRef::Integer(i) => SqlValue::Integer(i),
                ValueRef::Real(r) => SqlValue::Real(r),
                ValueRef::Text(t) => SqlValue::Text(String::from_utf8_lossy(t).into_owned()),
                ValueRef::Blob(b) => SqlValue::Blob(b.to_vec()),
            });
        }
        out.rows.push(vals);
    }
    Ok(out)
}

fn exec_error(e: rusqlite::Error, timeout: Duration) -> Error {
    if let rusqlite::Error::SqliteFailure(f, _) = &e {
        if f.code == rusqlite::ErrorCode::OperationInterrupted {
            return Error::Db(format!("query interrupted after the {:.0} s time limit", timeout.as_secs_f64()));
        }
    }
    Error::Db(e.to_string())
}

/// Split `CREATE [OR REPLACE] [TEMP] VIEW name AS select` into its name and
/// its SELECT, textually (the view SQL comes from our own generator, possibly
/// preceded by comments).
pub fn split_view(view_sql: &str) -> Result<(String, String)> {
    let text = strip_leading_comments(view_sql);
    let upper = text.to_ascii_uppercase();
    let view_kw = find_word(&upper, "VIEW").filter(|_| upper.starts_with("CREATE"));
    let as_kw = view_kw.and_then(|v| find_word(&upper[v..], "AS").map(|a| v + a));
    match (view_kw, as_kw) {
        (Some(v), Some(a)) => {
            let name = text[v + 4..a].trim().to_string();
            let select = text[a + 2..].trim().trim_end_matches(';').trim().to_string();
            if name.is_empty() || select.is_empty() {
                return Err(Error::Sql(format!("cannot read the view definition: {}", first_line(view_sql))));
            }
            Ok((name, select))
        }
        _ => Err(Error::Sql(format!("not a CREATE VIEW statement: {}", first_line(view_sql)))),
    }
}

fn inline_as_cte(name: &str, select: &str, sql: &str) -> String {
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

fn strip_leading_comments(s: &str) -> &str {
    let mut t = s.trim_start();
    loop {
        if let Some(rest) = t.strip_prefix("--") {
            t = rest.split_once('\n').map(|x| x.1).unwrap_or("").trim_start();
        } else if let Some(rest) = t.strip_prefix("/*") {
            t = rest.split_once("*/").map(|x| x.1).unwrap_or("").trim_start();
        } else {
            return t;
        }
    }
}

/// Byte offset of `word` as a whole word in `upper` (already upper-case).
fn find_word(upper: &str, word: &str) -> Option<usize> {
    let b = upper.as_bytes();
    let mut from = 0;
    while let Some(i) = upper[from..].find(word) {
        let s = from + i;
        let e = s + word.len();
        let before = s == 0 || !is_ident_byte(b[s - 1]);
        let after = e >= b.len() || !is_ident_byte(b[e]);
        if before && after {
            return Some(s);
        }
        from = e;
    }
    None
}

fn is_ident_byte(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'"' || c == b'`'
}

fn first_line(s: &str) -> &str {
    s.trim().lines().next().unwrap_or("")
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
        let view = "-- the view\nCREATE VIEW v AS SELECT A.id AS A_id, A.name AS A_name, A.x AS A_x, A.b AS A_b FROM A;";
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
        let opts = ExecOptions { limit: None, timeout: Duration::from_millis(200) };
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
        let sql = inline_as_cte("v", "SELECT id AS A_id FROM A", "WITH w AS (SELECT A_id FROM v) SELECT count(*) FROM w");
        let r = run_readonly(&p, None, &sql, None).unwrap();
        assert_eq!(r.rows[0][0], SqlValue::Integer(3));
    }

    #[test]
    fn split_view_reads_generated_sql() {
        let (n, s) = split_view("/* x */ CREATE VIEW lucy_view AS\nSELECT 1 AS a;").unwrap();
        assert_eq!((n.as_str(), s.as_str()), ("lucy_view", "SELECT 1 AS a"));
        assert!(split_view("SELECT 1").is_err());
        let e = run_readonly(Path::new("/nonexistent/x.sqlite"), None, "SELECT 1", None).unwrap_err();
        assert!(e.to_string().contains("no such database file"));
    }
}
