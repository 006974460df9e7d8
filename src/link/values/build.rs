//! Reading the values: one `SELECT DISTINCT` per text-like column through
//! [`crate::sql::exec::run`] (read-only, a time limit per query, rows and
//! bytes bounded while read), a sampled query where the full one fails or
//! runs out of time, and one query per code/name column pair of a table.

use std::time::Instant;

use super::{is_code_name, is_text_type, CodePairs, ColumnValues, ValueBounds, ValueIndex};
use crate::error::Result;
use crate::graph::SchemaGraph;
use crate::sql::exec::{self, Database, ExecOptions, QueryRows, SqlValue};
use crate::types::Dialect;
use crate::view::sql::{quote_name, quote_table};

/// One column's value expression, its length and its text test, per
/// dialect: SQLite keeps only values stored as text; the servers cast to
/// text and count characters.
fn text_expr(col: &str, d: Dialect) -> (String, String) {
    let q = quote_name(col, d);
    match d {
        Dialect::Sqlite => (q.clone(), format!("typeof({q}) = 'text' AND length({q})")),
        Dialect::Postgres => (format!("{q}::text"), format!("char_length({q}::text)")),
        Dialect::Mysql => (format!("CAST({q} AS CHAR)"), format!("CHAR_LENGTH({q})")),
        Dialect::Spark => (format!("CAST({q} AS STRING)"), format!("char_length(CAST({q} AS STRING))")),
    }
}

/// `SELECT DISTINCT` of the short values of `col` in the table `t` names
/// (quoted, [`quote_table`]), at most `limit` rows; over the first
/// `sample` rows only when given.
fn distinct_sql(t: &str, col: &str, d: Dialect, max_chars: usize, limit: usize, sample: Option<usize>) -> String {
    let (expr, len) = text_expr(col, d);
    let q = quote_name(col, d);
    match sample {
        None => format!(
            "SELECT DISTINCT {expr} AS lucy_v FROM {t} WHERE {q} IS NOT NULL AND {len} BETWEEN 1 AND {max_chars} LIMIT {limit}"
        ),
        Some(n) => format!(
            "SELECT DISTINCT {expr} AS lucy_v FROM (SELECT {q} FROM {t} WHERE {q} IS NOT NULL LIMIT {n}) AS lucy_s WHERE {len} BETWEEN 1 AND {max_chars} LIMIT {limit}"
        ),
    }
}

/// Distinct `(code, name)` pairs of the table `t` names (quoted), at most
/// `limit` rows.
fn pairs_sql(t: &str, code: &str, name: &str, d: Dialect, max_chars: usize, limit: usize) -> String {
    let (ce, cl) = text_expr(code, d);
    let (ne, nl) = text_expr(name, d);
    format!(
        "SELECT DISTINCT {ce} AS lucy_c, {ne} AS lucy_n FROM {t} WHERE {cl} BETWEEN 1 AND {max_chars} AND {nl} BETWEEN 1 AND {max_chars} LIMIT {limit}"
    )
}

fn exec_options(bounds: &ValueBounds, limit: usize, width: usize) -> ExecOptions {
    // Each row: `width` values of at most max_chars characters (4 bytes each).
    let per_row = width * (bounds.max_chars * 4 + 16);
    ExecOptions {
        limit: Some(limit),
        timeout: bounds.query_timeout,
        max_result_bytes: (limit * per_row + 4096).max(64 << 10),
    }
}

/// The text cells of column `i`: numbers, blobs and NULLs are skipped, and
/// so is any value longer than `max_chars` characters.
fn texts(rows: &QueryRows, i: usize, max_chars: usize) -> Vec<Option<String>> {
    rows.rows
        .iter()
        .map(|r| match r.get(i) {
            Some(SqlValue::Text(s)) if !s.is_empty() && s.chars().count() <= max_chars => Some(s.clone()),
            _ => None,
        })
        .collect()
}

/// Running totals against the budget.
struct Budget<'a> {
    bounds: &'a ValueBounds,
    values: usize,
    bytes: usize,
    started: Instant,
}

impl Budget<'_> {
    /// Why no more can be indexed, if so.
    fn exhausted(&self) -> Option<String> {
        if self.values >= self.bounds.total_values {
            return Some(format!("the index holds its {} values", self.bounds.total_values));
        }
        if self.bytes >= self.bounds.total_bytes {
            return Some(format!("the index holds its {} bytes", self.bounds.total_bytes));
        }
        if self.started.elapsed() >= self.bounds.build_timeout {
            return Some(format!("the build ran for its {:.0} s", self.bounds.build_timeout.as_secs_f64()));
        }
        None
    }

    /// Keep as many of `vs` as the budget allows; whether all were kept.
    fn take(&mut self, vs: &mut Vec<String>) -> bool {
        let mut keep = 0;
        for v in vs.iter() {
            if self.values >= self.bounds.total_values || self.bytes + v.len() > self.bounds.total_bytes {
                break;
            }
            self.values += 1;
            self.bytes += v.len();
            keep += 1;
        }
        let all = keep == vs.len();
        vs.truncate(keep);
        all
    }
}

/// Read the value index of `graph`'s model from `db`. The database is
/// checked first (a missing file or a refused login is an error); a column
/// whose queries fail is skipped and named in `ValueIndex::skipped`.
pub fn build(graph: &SchemaGraph, db: &Database, bounds: &ValueBounds) -> Result<ValueIndex> {
    exec::ping(db, bounds.query_timeout)?;
    let d = db.dialect();
    let mut budget = Budget { bounds, values: 0, bytes: 0, started: Instant::now() };
    let mut index = ValueIndex { database: db.to_string(), ..ValueIndex::default() };
    let limit = bounds.per_column + 1;
    for table in &graph.model().tables {
        let from = quote_table(table, d);
        for col in table.columns.iter().filter(|c| is_text_type(&c.sql_type)) {
            let what = format!("{}.{}", table.name, col.name);
            if let Some(why) = budget.exhausted() {
                index.skipped.push(format!("{what}: not indexed: {why}"));
                continue;
            }
            let full = distinct_sql(&from, &col.name, d, bounds.max_chars, limit, None);
            let opts = exec_options(bounds, limit, 1);
            let (rows, sampled) = match exec::run(db, None, &full, &opts) {
                Ok(r) => (r, false),
                Err(first) => {
                    let sample = distinct_sql(&from, &col.name, d, bounds.max_chars, limit, Some(bounds.sample_rows));
                    match exec::run(db, None, &sample, &opts) {
                        Ok(r) => (r, true),
                        Err(e) => {
                            index.skipped.push(format!("{what}: not indexed: {first}; sampled: {e}"));
                            continue;
                        }
                    }
                }
            };
            let mut values: Vec<String> = texts(&rows, 0, bounds.max_chars).into_iter().flatten().collect();
            values.sort();
            values.dedup();
            let mut complete = !sampled && !rows.truncated && values.len() <= bounds.per_column;
            values.truncate(bounds.per_column);
            complete &= budget.take(&mut values);
            if values.is_empty() && complete {
                continue;
            }
            index.columns.push(ColumnValues { table: table.name.clone(), column: col.name.clone(), values, complete });
        }
    }
    code_pairs(graph, db, bounds, &mut budget, &mut index);
    index.values = budget.values;
    index.bytes = budget.bytes;
    index.build_ms = budget.started.elapsed().as_secs_f64() * 1000.0;
    Ok(index)
}

/// For every completely indexed code column (`is_code_name`) and every
/// other indexed text column of its table: the `(code, name)` pairs, kept
/// when each code has one name and each name one code, for every code.
fn code_pairs(graph: &SchemaGraph, db: &Database, bounds: &ValueBounds, budget: &mut Budget, index: &mut ValueIndex) {
    let d = db.dialect();
    let limit = bounds.per_column + 1;
    for table in &graph.model().tables {
        let indexed: Vec<&ColumnValues> = index.columns.iter().filter(|c| c.table == table.name).collect();
        for code in indexed.iter().filter(|c| c.complete && is_code_name(&c.column)) {
            for name in indexed.iter().filter(|c| c.column != code.column && !is_code_name(&c.column)) {
                if budget.exhausted().is_some() {
                    return;
                }
                let sql = pairs_sql(&quote_table(table, d), &code.column, &name.column, d, bounds.max_chars, limit);
                let Ok(rows) = exec::run(db, None, &sql, &exec_options(bounds, limit, 2)) else { continue };
                if rows.truncated || rows.rows.len() > bounds.per_column {
                    continue;
                }
                let codes = texts(&rows, 0, bounds.max_chars);
                let names = texts(&rows, 1, bounds.max_chars);
                let mut pairs: Vec<[String; 2]> =
                    codes.into_iter().zip(names).filter_map(|(c, n)| Some([c?, n?])).collect();
                pairs.sort();
                pairs.dedup();
                let one_to_one = {
                    let mut cs: Vec<&str> = pairs.iter().map(|p| p[0].as_str()).collect();
                    let mut ns: Vec<String> = pairs.iter().map(|p| super::fold(&p[1])).collect();
                    cs.dedup();
                    ns.sort();
                    ns.dedup();
                    cs.len() == pairs.len() && ns.len() == pairs.len()
                };
                // Every code has its name: a lookup, not a coincidence of a few rows.
                if pairs.is_empty() || !one_to_one || pairs.len() != code.values.len() {
                    continue;
                }
                let mut flat: Vec<String> = pairs.iter().map(|p| format!("{}{}", p[0], p[1])).collect();
                if !budget.take(&mut flat) {
                    return;
                }
                index.codes.push(CodePairs {
                    table: table.name.clone(),
                    code: code.column.clone(),
                    name: name.column.clone(),
                    pairs,
                });
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queries_per_dialect() {
        assert_eq!(
            distinct_sql("DATACENTER", "name", Dialect::Sqlite, 64, 1001, None),
            "SELECT DISTINCT name AS lucy_v FROM DATACENTER WHERE name IS NOT NULL AND typeof(name) = 'text' AND length(name) BETWEEN 1 AND 64 LIMIT 1001"
        );
        let pg = distinct_sql("\"Party\"", "Name", Dialect::Postgres, 64, 1001, Some(10));
        assert_eq!(
            pg,
            "SELECT DISTINCT \"Name\"::text AS lucy_v FROM (SELECT \"Name\" FROM \"Party\" WHERE \"Name\" IS NOT NULL LIMIT 10) AS lucy_s WHERE char_length(\"Name\"::text) BETWEEN 1 AND 64 LIMIT 1001"
        );
        let my = pairs_sql("t", "order", "x", Dialect::Mysql, 64, 5);
        assert!(
            my.contains("CAST(`order` AS CHAR) AS lucy_c") && my.contains("CHAR_LENGTH(x) BETWEEN 1 AND 64"),
            "{my}"
        );
    }
}
