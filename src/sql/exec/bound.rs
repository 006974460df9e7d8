//! Bounds on a result, applied while rows are read (never after): a row
//! limit, a byte budget for the whole result and a cap per cell. Every
//! backend feeds its rows through one [`Collector`], so the bounds hold the
//! same way on SQLite, PostgreSQL and MySQL.

use super::{QueryRows, SqlValue};

/// Default cap on the bytes of one result (`--max-result-bytes`).
pub const DEFAULT_MAX_RESULT_BYTES: usize = 4 << 20;
/// Cap on one cell: a quarter of the result budget, at most 1 MiB.
pub const MAX_CELL_BYTES: usize = 1 << 20;
/// Bytes of sample rows a trace keeps.
pub const TRACE_SAMPLE_BYTES: usize = 16 << 10;

/// A blob byte's weight against the budget: in JSON output a blob is an
/// array of numbers, several bytes per byte.
pub const BLOB_WEIGHT: usize = 8;

/// What one value costs against the budget: its text length, a blob's
/// length × [`BLOB_WEIGHT`], 8 for a number, 4 for NULL.
pub fn value_bytes(v: &SqlValue) -> usize {
    match v {
        SqlValue::Null => 4,
        SqlValue::Integer(_) | SqlValue::Real(_) => 8,
        SqlValue::Text(s) => s.len(),
        SqlValue::Blob(b) => b.len() * BLOB_WEIGHT,
    }
}

/// The cap of one cell under a result budget.
pub fn cell_cap(max_result_bytes: usize) -> usize {
    (max_result_bytes / 4).clamp(64, MAX_CELL_BYTES)
}

/// Cut `s` to at most `max` bytes on a character boundary.
pub fn cut_str(s: &str, max: usize) -> &str {
    if s.len() <= max {
        return s;
    }
    let mut end = max;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

/// Collects rows under a row limit and a byte budget.
#[derive(Debug)]
pub struct Collector {
    out: QueryRows,
    limit: Option<usize>,
    max_bytes: usize,
    cell_cap: usize,
    bytes: usize,
    /// Bytes of the cells of the row being read.
    pending: usize,
    /// A cell of the row being read was cut by the result budget (not the cell cap).
    over: bool,
    cut_cells: usize,
    first_cut: Option<(usize, usize, usize)>,
    done: bool,
}

impl Collector {
    /// A collector for a result with these columns.
    pub fn new(columns: Vec<String>, limit: Option<usize>, max_bytes: usize) -> Collector {
        let bytes = columns.iter().map(String::len).sum();
        Collector {
            out: QueryRows { columns, ..QueryRows::default() },
            limit,
            max_bytes,
            cell_cap: cell_cap(max_bytes),
            bytes,
            pending: 0,
            over: false,
            cut_cells: 0,
            first_cut: None,
            done: false,
        }
    }

    /// Name the columns of a collector made before they were known (a
    /// backend that learns them with the first rows); once only.
    pub fn set_columns(&mut self, columns: Vec<String>) {
        if self.out.columns.is_empty() && self.out.rows.is_empty() {
            self.bytes += columns.iter().map(String::len).sum::<usize>();
            self.out.columns = columns;
        }
    }

    /// Whether the next row would be over the row limit or the budget: the
    /// backend stops reading then (and [`Collector::finish`] says why).
    pub fn full(&mut self) -> bool {
        if self.done {
            return true;
        }
        if self.limit.is_some_and(|l| self.out.rows.len() >= l) {
            self.stop(format!("row limit of {} reached", self.limit.unwrap_or(0)));
        }
        self.done
    }

    /// How many bytes of a text or blob cell the backend should copy at
    /// most (it may read fewer from the driver to begin with).
    pub fn cell_budget(&self) -> usize {
        self.cell_cap.min(self.max_bytes.saturating_sub(self.bytes + self.pending))
    }

    /// Cut a text cell to the cell budget before it is copied.
    pub fn text(&mut self, s: &str) -> SqlValue {
        let cut = cut_str(s, self.cell_budget());
        self.note_cut(s.len(), cut.len());
        self.pending += cut.len();
        SqlValue::Text(cut.to_string())
    }

    /// Cut a blob cell to the cell budget (weighted) before it is copied.
    pub fn blob(&mut self, b: &[u8]) -> SqlValue {
        let n = b.len().min(self.cell_budget() / BLOB_WEIGHT);
        self.note_cut(b.len(), n);
        self.pending += n * BLOB_WEIGHT;
        SqlValue::Blob(b[..n].to_vec())
    }

    fn note_cut(&mut self, len: usize, kept: usize) {
        if kept < len && self.cell_budget() < self.cell_cap {
            self.over = true;
        }
        if kept < len {
            self.cut_cells += 1;
            if self.first_cut.is_none() {
                self.first_cut = Some((self.out.rows.len() + 1, len, kept));
            }
        }
    }

    /// Add a row whose cells went through [`Collector::text`]/[`Collector::blob`].
    pub fn push(&mut self, row: Vec<SqlValue>) {
        self.pending = 0;
        let over = std::mem::take(&mut self.over);
        let size: usize = row.iter().map(value_bytes).sum();
        if (over || self.bytes + size > self.max_bytes) && !self.out.rows.is_empty() {
            self.stop(format!("--max-result-bytes {} reached after {} rows", self.max_bytes, self.out.rows.len()));
            return;
        }
        self.bytes += size;
        self.out.rows.push(row);
        if over || self.bytes >= self.max_bytes {
            self.stop(format!("--max-result-bytes {} reached after {} rows", self.max_bytes, self.out.rows.len()));
        }
    }

    fn stop(&mut self, why: String) {
        if !self.done {
            self.done = true;
            self.out.truncated = true;
            self.out.truncation.get_or_insert(why);
        }
    }

    /// The rows, with `truncated`/`truncation` saying whether and why the
    /// result was cut. `more` tells whether the source had rows left.
    pub fn finish(mut self, more: bool) -> QueryRows {
        if !more && self.out.truncation.as_deref().is_some_and(|w| w.starts_with("row limit")) {
            // The limit was reached exactly at the last row: nothing was cut.
            self.out.truncated = false;
            self.out.truncation = None;
        }
        if !more && self.out.truncation.as_deref().is_some_and(|w| w.starts_with("--max-result-bytes")) {
            self.out.truncated = false;
            self.out.truncation = None;
        }
        if let Some((row, len, kept)) = self.first_cut {
            let note = format!(
                "{} cell(s) cut to the per-cell cap of {} bytes (first: row {row}, {len} bytes kept {kept})",
                self.cut_cells, self.cell_cap
            );
            self.out.truncated = true;
            self.out.truncation = Some(match self.out.truncation.take() {
                Some(w) => format!("{w}; {note}"),
                None => note,
            });
        }
        self.out.bytes = self.bytes;
        self.out
    }
}

/// Up to `max_rows` rows of `rows` within `budget` bytes, cells cut to fit
/// (trace samples). Returns the rows and whether the budget cut anything
/// (a cell, or rows among the first `max_rows`).
pub fn sample_rows(rows: &[Vec<SqlValue>], max_rows: usize, budget: usize) -> (Vec<Vec<SqlValue>>, bool) {
    let mut left = budget;
    let mut out = Vec::new();
    let cell = (budget / 8).max(16);
    let mut cut = false;
    for row in rows.iter().take(max_rows) {
        let mut r = Vec::with_capacity(row.len());
        for v in row {
            let v = match v {
                SqlValue::Text(s) if s.len() > cell.min(left) => {
                    cut = true;
                    SqlValue::Text(cut_str(s, cell.min(left)).to_string())
                }
                SqlValue::Blob(b) if b.len() * BLOB_WEIGHT > cell.min(left) => {
                    cut = true;
                    SqlValue::Blob(b[..cell.min(left) / BLOB_WEIGHT].to_vec())
                }
                other => other.clone(),
            };
            left = left.saturating_sub(value_bytes(&v));
            r.push(v);
        }
        out.push(r);
        if left == 0 {
            cut |= out.len() < rows.len().min(max_rows);
            break;
        }
    }
    (out, cut)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn row_limit_and_exact_end() {
        let mut c = Collector::new(vec!["a".into()], Some(2), 1000);
        for i in 0..2 {
            assert!(!c.full());
            c.push(vec![SqlValue::Integer(i)]);
        }
        assert!(c.full());
        let r = c.finish(false);
        assert!(!r.truncated, "no row was left: {:?}", r.truncation);
        let mut c = Collector::new(vec!["a".into()], Some(1), 1000);
        c.push(vec![SqlValue::Integer(1)]);
        assert!(c.full());
        let r = c.finish(true);
        assert!(r.truncated && r.truncation.unwrap().contains("row limit of 1"));
    }

    #[test]
    fn cells_and_results_are_cut_while_read() {
        let mut c = Collector::new(vec!["z".into()], None, 4096);
        assert_eq!(c.cell_budget(), 1024);
        let big = "é".repeat(5000);
        let v = c.text(&big);
        let SqlValue::Text(s) = &v else { panic!() };
        assert!(s.len() <= 1024 && s.len() >= 1022);
        c.push(vec![v]);
        for _ in 0..10 {
            if c.full() {
                break;
            }
            let v = c.blob(&[0u8; 3000]);
            c.push(vec![v]);
        }
        let r = c.finish(true);
        assert!(r.truncated);
        let why = r.truncation.unwrap();
        assert!(why.contains("--max-result-bytes 4096") && why.contains("cut to the per-cell cap"), "{why}");
        assert!(r.bytes <= 4096 + 1, "{}", r.bytes);
    }

    #[test]
    fn samples_stay_in_budget() {
        let rows: Vec<Vec<SqlValue>> = (0..50).map(|_| vec![SqlValue::Text("x".repeat(10_000))]).collect();
        let (s, cut) = sample_rows(&rows, 10, 4096);
        assert!(cut);
        let total: usize = s.iter().flatten().map(value_bytes).sum();
        assert!(total <= 4096, "{total}");
        let small = vec![vec![SqlValue::Integer(1)]];
        assert_eq!(sample_rows(&small, 10, 4096), (small.clone(), false));
    }
}
