//! The PostgreSQL backend: one connection per query, a `READ ONLY`
//! transaction with a `statement_timeout`, the view inlined as a CTE (a
//! read-only transaction may not create even a temporary view), one
//! statement through the extended protocol, rows fetched from a portal in
//! batches so that the bounds hold while reading. Values are decoded from
//! the binary protocol by lucy (numbers, text, dates, bytea, numeric);
//! columns of any other type are cast to text by the server.

use std::error::Error as StdError;

use postgres::types::{FromSql, Kind, Type};
use postgres::{Client, Config, NoTls};

use super::bound::Collector;
use super::target::{Database, Server};
use super::{server_sql, ExecOptions, QueryRows, SqlValue, ViewDef};
use crate::error::{Error, Result};

/// Rows fetched per round trip.
const BATCH: i32 = 256;

/// Connect to `server` (errors name the URL without its password and exit 2).
pub fn connect(server: &Server, timeout: std::time::Duration) -> Result<Client> {
    let mut cfg = Config::new();
    cfg.host(&server.host).port(server.port).dbname(&server.database).application_name("lucy");
    // Every transaction of this session read-only, not only the one lucy opens.
    cfg.options("-c default_transaction_read_only=on");
    cfg.connect_timeout(timeout.min(std::time::Duration::from_secs(30)));
    if !server.user.is_empty() {
        cfg.user(&server.user);
    }
    if let Some(p) = server.password() {
        cfg.password(p);
    }
    cfg.connect(NoTls).map_err(|e| {
        Error::Input(format!("cannot connect to {}: {}", Database::Postgres(server.clone()), pg_message(&e)))
    })
}

/// The server's own words for an error (its message, detail and hint),
/// else the driver's.
pub fn pg_message(e: &postgres::Error) -> String {
    match e.as_db_error() {
        Some(db) => {
            let mut m = db.message().to_string();
            if let Some(d) = db.detail() {
                m.push_str(&format!(" ({d})"));
            }
            if let Some(h) = db.hint() {
                m.push_str(&format!(" (hint: {h})"));
            }
            m
        }
        None => {
            let mut m = e.to_string();
            let mut src = e.source();
            while let Some(s) = src {
                m.push_str(&format!(": {s}"));
                src = s.source();
            }
            m
        }
    }
}

pub fn run(server: &Server, view: Option<ViewDef>, sql: &str, opts: &ExecOptions) -> Result<QueryRows> {
    let mut client = connect(server, opts.timeout)?;
    let mut tx = client
        .build_transaction()
        .read_only(true)
        .start()
        .map_err(|e| Error::Db(format!("cannot start a read-only transaction: {}", pg_message(&e))))?;
    let ms = opts.timeout.as_millis().clamp(1, i32::MAX as u128);
    let mut setup = format!("SET LOCAL statement_timeout = {ms}");
    if let Some(schema) = &server.schema {
        setup.push_str(&format!("; SET LOCAL search_path TO \"{}\"", schema.replace('"', "\"\"")));
    }
    tx.batch_execute(&setup).map_err(|e| Error::Db(format!("cannot set the statement timeout: {}", pg_message(&e))))?;
    let (final_sql, view_mode) = server_sql(view, sql);
    let stmt = tx.prepare(&final_sql).map_err(|e| query_error(&e, opts))?;
    let columns: Vec<String> = stmt.columns().iter().map(|c| c.name().to_string()).collect();
    // Columns lucy cannot decode are cast to text by the server.
    let odd: Vec<usize> =
        stmt.columns().iter().enumerate().filter(|(_, c)| !decodable(c.type_())).map(|(i, _)| i).collect();
    let stmt = if odd.is_empty() {
        stmt
    } else {
        let names: Vec<String> = (0..columns.len()).map(|i| format!("c{i}")).collect();
        let select: Vec<String> = names
            .iter()
            .enumerate()
            .map(|(i, n)| if odd.contains(&i) { format!("{n}::text") } else { n.clone() })
            .collect();
        let wrapped = format!("SELECT {} FROM ({final_sql}) AS lucy_q({})", select.join(", "), names.join(", "));
        tx.prepare(&wrapped).map_err(|e| query_error(&e, opts))?
    };
    let portal = tx.bind(&stmt, &[]).map_err(|e| query_error(&e, opts))?;
    let mut out = Collector::new(columns, opts.limit, opts.max_result_bytes);
    let mut more = false;
    'fetch: loop {
        let batch = tx.query_portal(&portal, BATCH).map_err(|e| query_error(&e, opts))?;
        let last = (batch.len() as i32) < BATCH;
        for row in batch {
            if out.full() {
                more = true;
                break 'fetch;
            }
            let mut vals = Vec::with_capacity(row.len());
            for i in 0..row.len() {
                let raw: Option<Raw> = row.try_get(i).map_err(|e| Error::Db(format!("cannot read column {i}: {e}")))?;
                vals.push(match raw {
                    None => SqlValue::Null,
                    Some(r) => decode(&r, &mut out).map_err(|e| Error::Db(format!("cannot decode column {i}: {e}")))?,
                });
            }
            out.push(vals);
        }
        if last {
            break;
        }
        if out.full() {
            more = !tx.query_portal(&portal, 1).map_err(|e| query_error(&e, opts))?.is_empty();
            break;
        }
    }
    // Dropping the transaction rolls it back: nothing of this session stays.
    drop(tx);
    let mut rows = out.finish(more);
    rows.view_mode = view_mode.into();
    Ok(rows)
}

fn query_error(e: &postgres::Error, opts: &ExecOptions) -> Error {
    let code = e.code().map(|c| c.code().to_string()).unwrap_or_default();
    let msg = pg_message(e);
    match code.as_str() {
        "57014" => Error::Db(format!(
            "query stopped by the server after the {:.0} s statement timeout ({msg})",
            opts.timeout.as_secs_f64()
        )),
        "25006" => Error::Sql(format!("the server refused a write in lucy's read-only transaction: {msg}")),
        "42501" => Error::Sql(format!("the server refused the query for lack of privilege: {msg}")),
        _ => Error::Db(msg),
    }
}

/// One value as the server sent it (binary format).
struct Raw<'a> {
    ty: Type,
    bytes: &'a [u8],
}

impl<'a> FromSql<'a> for Raw<'a> {
    fn from_sql(ty: &Type, raw: &'a [u8]) -> std::result::Result<Self, Box<dyn StdError + Sync + Send>> {
        Ok(Raw { ty: ty.clone(), bytes: raw })
    }
    fn accepts(_: &Type) -> bool {
        true
    }
}

fn decodable(ty: &Type) -> bool {
    matches!(
        *ty,
        Type::BOOL | Type::INT2 | Type::INT4 | Type::INT8 | Type::OID | Type::FLOAT4 | Type::FLOAT8 | Type::NUMERIC
    ) || matches!(*ty, Type::TEXT | Type::VARCHAR | Type::BPCHAR | Type::NAME | Type::UNKNOWN | Type::JSON | Type::XML)
        || matches!(
            *ty,
            Type::JSONB | Type::BYTEA | Type::DATE | Type::TIMESTAMP | Type::TIMESTAMPTZ | Type::TIME | Type::UUID
        )
        || matches!(ty.kind(), Kind::Enum(_))
}

type DecodeResult = std::result::Result<SqlValue, String>;

fn decode(r: &Raw, out: &mut Collector) -> DecodeResult {
    let b = r.bytes;
    let fixed = |n: usize| -> std::result::Result<&[u8], String> {
        if b.len() == n {
            Ok(b)
        } else {
            Err(format!("{} value of {} bytes", r.ty.name(), b.len()))
        }
    };
    Ok(match r.ty {
        Type::BOOL => SqlValue::Integer(i64::from(fixed(1)?[0] != 0)),
        Type::INT2 => SqlValue::Integer(i16::from_be_bytes(fixed(2)?.try_into().unwrap_or_default()).into()),
        Type::INT4 => SqlValue::Integer(i32::from_be_bytes(fixed(4)?.try_into().unwrap_or_default()).into()),
        Type::OID => SqlValue::Integer(u32::from_be_bytes(fixed(4)?.try_into().unwrap_or_default()).into()),
        Type::INT8 => SqlValue::Integer(i64::from_be_bytes(fixed(8)?.try_into().unwrap_or_default())),
        Type::FLOAT4 => SqlValue::Real(f32::from_be_bytes(fixed(4)?.try_into().unwrap_or_default()).into()),
        Type::FLOAT8 => SqlValue::Real(f64::from_be_bytes(fixed(8)?.try_into().unwrap_or_default())),
        Type::NUMERIC => numeric(b)?,
        Type::BYTEA => out.blob(b),
        Type::JSONB => out.text(&String::from_utf8_lossy(b.get(1..).unwrap_or_default())),
        Type::DATE => SqlValue::Text(date(i32::from_be_bytes(fixed(4)?.try_into().unwrap_or_default()))),
        Type::TIMESTAMP | Type::TIMESTAMPTZ => {
            let us = i64::from_be_bytes(fixed(8)?.try_into().unwrap_or_default());
            let mut s = timestamp(us);
            if r.ty == Type::TIMESTAMPTZ {
                s.push_str("+00");
            }
            SqlValue::Text(s)
        }
        Type::TIME => SqlValue::Text(time_of_day(i64::from_be_bytes(fixed(8)?.try_into().unwrap_or_default()))),
        Type::UUID => {
            let h: String = fixed(16)?.iter().map(|x| format!("{x:02x}")).collect();
            SqlValue::Text(format!("{}-{}-{}-{}-{}", &h[..8], &h[8..12], &h[12..16], &h[16..20], &h[20..]))
        }
        // Text-like (text, varchar, bpchar, name, json, xml, enums): UTF-8.
        _ => {
            let cut = &b[..b.len().min(out.cell_budget() + 4)];
            out.text(&String::from_utf8_lossy(cut))
        }
    })
}

/// NUMERIC's binary form: ndigits, weight, sign, dscale, base-10000 digits.
/// Whole numbers that fit become integers, the rest reals (as SQLite's
/// arithmetic would give).
fn numeric(b: &[u8]) -> DecodeResult {
    let h = |i: usize| -> std::result::Result<u16, String> {
        b.get(i..i + 2).map(|x| u16::from_be_bytes([x[0], x[1]])).ok_or_else(|| "short numeric value".to_string())
    };
    let (ndigits, weight, sign, dscale) = (h(0)? as usize, h(2)? as i16, h(4)?, h(6)?);
    match sign {
        0xC000 => return Ok(SqlValue::Real(f64::NAN)),
        0xD000 => return Ok(SqlValue::Real(f64::INFINITY)),
        0xF000 => return Ok(SqlValue::Real(f64::NEG_INFINITY)),
        _ => {}
    }
    let mut text = String::new();
    if sign == 0x4000 {
        text.push('-');
    }
    let digit = |k: i32| -> std::result::Result<u16, String> {
        if k < 0 || k as usize >= ndigits {
            Ok(0)
        } else {
            h(8 + 2 * k as usize)
        }
    };
    if weight < 0 {
        text.push('0');
    } else {
        for k in 0..=i32::from(weight) {
            let d = digit(k)?;
            if k == 0 {
                text.push_str(&d.to_string());
            } else {
                text.push_str(&format!("{d:04}"));
            }
        }
    }
    if dscale > 0 {
        text.push('.');
        let mut frac = String::new();
        let mut k = i32::from(weight) + 1;
        while frac.len() < dscale as usize {
            frac.push_str(&format!("{:04}", digit(k)?));
            k += 1;
        }
        frac.truncate(dscale as usize);
        text.push_str(&frac);
    }
    let whole = !text.contains('.') || text.split('.').nth(1).is_some_and(|f| f.bytes().all(|c| c == b'0'));
    if whole {
        if let Ok(i) = text.split('.').next().unwrap_or("").parse::<i64>() {
            return Ok(SqlValue::Integer(i));
        }
    }
    text.parse::<f64>().map(SqlValue::Real).map_err(|e| format!("numeric {text}: {e}"))
}

/// Days since 2000-01-01 → `YYYY-MM-DD` (proleptic Gregorian).
fn date(days: i32) -> String {
    match days {
        i32::MAX => "infinity".into(),
        i32::MIN => "-infinity".into(),
        d => {
            let (y, m, dd) = civil(i64::from(d) + 10_957);
            format!("{y:04}-{m:02}-{dd:02}")
        }
    }
}

/// Microseconds since 2000-01-01 00:00 → `YYYY-MM-DD HH:MM:SS[.ffffff]`.
fn timestamp(us: i64) -> String {
    match us {
        i64::MAX => "infinity".into(),
        i64::MIN => "-infinity".into(),
        _ => {
            let day = us.div_euclid(86_400_000_000);
            let (y, m, d) = civil(day + 10_957);
            format!("{y:04}-{m:02}-{d:02} {}", time_of_day(us.rem_euclid(86_400_000_000)))
        }
    }
}

/// Microseconds of a day → `HH:MM:SS[.ffffff]`.
pub(super) fn time_of_day(us: i64) -> String {
    let s = us / 1_000_000;
    let frac = us % 1_000_000;
    let mut t = format!("{:02}:{:02}:{:02}", s / 3600, s / 60 % 60, s % 60);
    if frac != 0 {
        let f = format!("{frac:06}");
        t.push('.');
        t.push_str(f.trim_end_matches('0'));
    }
    t
}

/// Days since 1970-01-01 → (year, month, day) (H. Hinnant's `civil_from_days`).
pub(super) fn civil(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    let y = yoe + era * 400 + i64::from(m <= 2);
    (y, m, d)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn num(parts: &[u16]) -> Vec<u8> {
        parts.iter().flat_map(|p| p.to_be_bytes()).collect()
    }

    #[test]
    fn numerics_dates_and_times() {
        // 12345.678: ndigits 3, weight 1, +, dscale 3, digits 1 2345 6780
        assert_eq!(numeric(&num(&[3, 1, 0, 3, 1, 2345, 6780])).unwrap(), SqlValue::Real(12345.678));
        // -42: ndigits 1, weight 0, -, dscale 0
        assert_eq!(numeric(&num(&[1, 0, 0x4000, 0, 42])).unwrap(), SqlValue::Integer(-42));
        // 0.05 with dscale 2: ndigits 1, weight -1, digit 500
        assert_eq!(numeric(&num(&[1, 0xFFFF, 0, 2, 500])).unwrap(), SqlValue::Real(0.05));
        // 10000 (weight 1, one digit 1), and 30.00 (dscale 2) → integers
        assert_eq!(numeric(&num(&[1, 1, 0, 0, 1])).unwrap(), SqlValue::Integer(10000));
        assert_eq!(numeric(&num(&[1, 0, 0, 2, 30])).unwrap(), SqlValue::Integer(30));
        assert_eq!(numeric(&num(&[0, 0, 0, 0])).unwrap(), SqlValue::Integer(0));
        assert_eq!(date(0), "2000-01-01");
        assert_eq!(date(-1), "1999-12-31");
        assert_eq!(date(8_825), "2024-02-29");
        assert_eq!(timestamp(86_400_000_000 + 3_723_500_000), "2000-01-02 01:02:03.5");
        assert_eq!(timestamp(-1), "1999-12-31 23:59:59.999999");
    }
}
