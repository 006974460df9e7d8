//! The MySQL / MariaDB backend: one connection per query,
//! `SET SESSION TRANSACTION READ ONLY` and `START TRANSACTION READ ONLY`
//! (DDL commits implicitly; the session default keeps what follows
//! read-only), a server-side statement time limit
//! (`max_statement_time` on MariaDB, `max_execution_time` on MySQL), the
//! view inlined as a CTE (MySQL has no temporary views), one prepared
//! statement (the binary protocol runs exactly one statement), rows read
//! one by one through the bounds, then `ROLLBACK`.

use mysql::consts::ColumnType;
use mysql::prelude::Queryable;
use mysql::{Conn, OptsBuilder, Value};

use super::bound::Collector;
use super::target::{Database, Server};
use super::{server_sql, ExecOptions, QueryRows, SqlValue, ViewDef};
use crate::error::{Error, Result};

/// MySQL's binary character set: such bytes are blobs, not text.
const BINARY_CHARSET: u16 = 63;

/// Connect to `server` (errors name the URL without its password and exit 2).
pub fn connect(server: &Server, timeout: std::time::Duration) -> Result<Conn> {
    let io = Some(timeout + std::time::Duration::from_secs(5));
    let mut opts = OptsBuilder::new()
        .ip_or_hostname(Some(server.host.clone()))
        .tcp_port(server.port)
        .prefer_socket(false)
        .tcp_connect_timeout(Some(timeout.min(std::time::Duration::from_secs(30))))
        .read_timeout(io)
        .write_timeout(io);
    if !server.user.is_empty() {
        opts = opts.user(Some(server.user.clone()));
    }
    if let Some(p) = server.password() {
        opts = opts.pass(Some(p.to_string()));
    }
    if !server.database.is_empty() {
        opts = opts.db_name(Some(server.database.clone()));
    }
    Conn::new(opts)
        .map_err(|e| Error::Input(format!("cannot connect to {}: {}", Database::Mysql(server.clone()), my_message(&e))))
}

/// The server's words for an error (`ERROR code: message`), else the driver's.
pub fn my_message(e: &mysql::Error) -> String {
    match e {
        mysql::Error::MySqlError(m) => format!("ERROR {} ({}): {}", m.code, m.state, m.message),
        other => other.to_string(),
    }
}

pub fn run(server: &Server, view: Option<ViewDef>, sql: &str, opts: &ExecOptions) -> Result<QueryRows> {
    let mut conn = connect(server, opts.timeout)?;
    let version: String = conn
        .query_first("SELECT VERSION()")
        .map_err(|e| Error::Db(format!("cannot ask the server's version: {}", my_message(&e))))?
        .unwrap_or_default();
    let limit_stmt = if version.to_ascii_lowercase().contains("mariadb") {
        format!("SET SESSION max_statement_time = {:.3}", opts.timeout.as_secs_f64().max(0.001))
    } else {
        format!("SET SESSION max_execution_time = {}", opts.timeout.as_millis().clamp(1, u32::MAX as u128))
    };
    conn.query_drop(limit_stmt)
        .map_err(|e| Error::Db(format!("cannot set the statement time limit: {}", my_message(&e))))?;
    // The session's default first: a DDL statement (DROP, CREATE, ALTER,
    // TRUNCATE, RENAME, GRANT) commits the open transaction implicitly and
    // then runs in a new one, which this keeps read-only too (measured on
    // MariaDB 10.11: without it, DROP TABLE went through).
    conn.query_drop("SET SESSION TRANSACTION READ ONLY")
        .and_then(|_| conn.query_drop("START TRANSACTION READ ONLY"))
        .map_err(|e| Error::Db(format!("cannot start a read-only transaction: {}", my_message(&e))))?;
    let (final_sql, view_mode) = server_sql(view, sql);
    let result = fetch(&mut conn, &final_sql, opts);
    // Nothing of this session stays, whatever happened.
    let _ = conn.query_drop("ROLLBACK");
    let mut rows = result?;
    rows.view_mode = view_mode.into();
    Ok(rows)
}

fn fetch(conn: &mut Conn, sql: &str, opts: &ExecOptions) -> Result<QueryRows> {
    let stmt = conn.prep(sql).map_err(|e| query_error(&e, opts))?;
    let mut result = conn.exec_iter(&stmt, ()).map_err(|e| query_error(&e, opts))?;
    let cols: Vec<(String, ColumnType, bool)> = result
        .columns()
        .as_ref()
        .iter()
        .map(|c| (c.name_str().into_owned(), c.column_type(), c.character_set() == BINARY_CHARSET))
        .collect();
    let mut out = Collector::new(cols.iter().map(|c| c.0.clone()).collect(), opts.limit, opts.max_result_bytes);
    let mut more = false;
    for row in result.by_ref() {
        if out.full() {
            more = true;
            break;
        }
        let row = row.map_err(|e| query_error(&e, opts))?;
        let mut vals = Vec::with_capacity(cols.len());
        for (i, (_, ty, binary)) in cols.iter().enumerate() {
            vals.push(match row.as_ref(i) {
                None | Some(Value::NULL) => SqlValue::Null,
                Some(v) => decode(v, *ty, *binary, &mut out),
            });
        }
        out.push(vals);
    }
    // Drain what the server still sends (bounded: the limit already cut the fetch).
    drop(result);
    Ok(out.finish(more))
}

fn decode(v: &Value, ty: ColumnType, binary: bool, out: &mut Collector) -> SqlValue {
    match v {
        Value::NULL => SqlValue::Null,
        Value::Int(i) => SqlValue::Integer(*i),
        Value::UInt(u) => i64::try_from(*u).map(SqlValue::Integer).unwrap_or(SqlValue::Real(*u as f64)),
        Value::Float(f) => SqlValue::Real(f64::from(*f)),
        Value::Double(d) => SqlValue::Real(*d),
        Value::Bytes(b) => match ty {
            ColumnType::MYSQL_TYPE_NEWDECIMAL | ColumnType::MYSQL_TYPE_DECIMAL => decimal(b),
            _ if binary => out.blob(b),
            _ => {
                let cut = &b[..b.len().min(out.cell_budget() + 4)];
                out.text(&String::from_utf8_lossy(cut))
            }
        },
        Value::Date(y, m, d, h, mi, s, us) => {
            let mut t = format!("{y:04}-{m:02}-{d:02}");
            if ty != ColumnType::MYSQL_TYPE_DATE || (*h, *mi, *s, *us) != (0, 0, 0, 0) {
                t.push_str(&format!(" {h:02}:{mi:02}:{s:02}"));
                if *us != 0 {
                    t.push_str(format!(".{us:06}").trim_end_matches('0'));
                }
            }
            SqlValue::Text(t)
        }
        Value::Time(neg, days, h, mi, s, us) => {
            let hours = u32::from(*h) + days * 24;
            let mut t = format!("{}{hours:02}:{mi:02}:{s:02}", if *neg { "-" } else { "" });
            if *us != 0 {
                t.push_str(format!(".{us:06}").trim_end_matches('0'));
            }
            SqlValue::Text(t)
        }
    }
}

/// DECIMAL arrives as text: whole values become integers, others reals (as
/// SQLite's arithmetic would give).
fn decimal(b: &[u8]) -> SqlValue {
    let s = String::from_utf8_lossy(b);
    let whole = s.split_once('.').map(|(i, f)| (i, f.bytes().all(|c| c == b'0')));
    match whole {
        None => s
            .parse::<i64>()
            .map(SqlValue::Integer)
            .unwrap_or_else(|_| s.parse().map(SqlValue::Real).unwrap_or(SqlValue::Text(s.to_string()))),
        Some((i, true)) => i
            .parse::<i64>()
            .map(SqlValue::Integer)
            .unwrap_or_else(|_| s.parse().map(SqlValue::Real).unwrap_or(SqlValue::Text(s.to_string()))),
        Some(_) => s.parse().map(SqlValue::Real).unwrap_or(SqlValue::Text(s.to_string())),
    }
}

fn query_error(e: &mysql::Error, opts: &ExecOptions) -> Error {
    let msg = my_message(e);
    match e {
        mysql::Error::MySqlError(m) if m.code == 1969 || m.code == 3024 => Error::Db(format!(
            "query stopped by the server after the {:.0} s statement time limit ({msg})",
            opts.timeout.as_secs_f64()
        )),
        mysql::Error::MySqlError(m) if m.code == 1792 => {
            Error::Sql(format!("the server refused a write in lucy's read-only transaction: {msg}"))
        }
        mysql::Error::MySqlError(m) if m.code == 1142 || m.code == 1143 || m.code == 1044 => {
            Error::Sql(format!("the server refused the query for lack of privilege: {msg}"))
        }
        _ => Error::Db(msg),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn decimals_become_numbers() {
        assert_eq!(decimal(b"42"), SqlValue::Integer(42));
        assert_eq!(decimal(b"-7.000"), SqlValue::Integer(-7));
        assert_eq!(decimal(b"12.50"), SqlValue::Real(12.5));
        assert_eq!(decimal(b"123456789012345678901234"), SqlValue::Real(1.2345678901234568e23));
    }
}
