//! Benchmark metrics: execution match (ex), its relaxation (esx), coverage
//! (eq. 10 of the Lucy paper) and phase-2 join accuracy. Definitions are in
//! `docs/benchmarks.md`; the tests below are the executable version.

use std::cmp::Ordering;
use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

use crate::sql::analyze::{JoinPair, QueryRefs};

/// Absolute tolerance for numeric comparisons (relative above magnitude 1).
pub const TOLERANCE: f64 = 1e-6;

/// One result cell.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(untagged)]
pub enum Cell {
    Null,
    Int(i64),
    Real(f64),
    Text(String),
}

impl Cell {
    fn number(&self) -> Option<f64> {
        match self {
            Cell::Int(i) => Some(*i as f64),
            Cell::Real(r) => Some(*r),
            _ => None,
        }
    }

    /// Equality used by ex: NULL = NULL, 1 = 1.0, numbers within
    /// [`TOLERANCE`], text exactly.
    pub fn matches(&self, other: &Cell) -> bool {
        match (self, other) {
            (Cell::Null, Cell::Null) => true,
            (Cell::Text(a), Cell::Text(b)) => a == b,
            (a, b) => match (a.number(), b.number()) {
                (Some(x), Some(y)) => (x - y).abs() <= TOLERANCE * x.abs().max(y.abs()).max(1.0),
                _ => false,
            },
        }
    }

    /// Total order that sorts matching cells next to each other (numbers
    /// rounded to the tolerance grid).
    fn sort_key(&self) -> (u8, i128, &str) {
        match self {
            Cell::Null => (0, 0, ""),
            Cell::Int(_) | Cell::Real(_) => {
                let x = self.number().unwrap_or(0.0);
                (1, (x / TOLERANCE).round().clamp(i128::MIN as f64, i128::MAX as f64) as i128, "")
            }
            Cell::Text(s) => (2, 0, s.as_str()),
        }
    }
}

/// A query result: rows of cells.
pub type Rows = Vec<Vec<Cell>>;

fn row_matches(a: &[Cell], b: &[Cell]) -> bool {
    a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.matches(y))
}

fn cmp_rows(a: &[Cell], b: &[Cell]) -> Ordering {
    a.iter().map(Cell::sort_key).cmp(b.iter().map(Cell::sort_key))
}

/// Multiset equality of rows under [`Cell::matches`].
fn multiset_eq(gold: &Rows, pred: &Rows) -> bool {
    if gold.len() != pred.len() {
        return false;
    }
    let mut g: Vec<&Vec<Cell>> = gold.iter().collect();
    let mut p: Vec<&Vec<Cell>> = pred.iter().collect();
    g.sort_by(|a, b| cmp_rows(a, b));
    p.sort_by(|a, b| cmp_rows(a, b));
    if g.iter().zip(&p).all(|(a, b)| row_matches(a, b)) {
        return true;
    }
    // Values straddling a rounding boundary can sort apart: fall back to
    // greedy matching (quadratic, so only for modest results).
    if gold.len() > 5000 {
        return false;
    }
    let mut used = vec![false; p.len()];
    g.iter().all(|row| {
        if let Some(i) = (0..p.len()).find(|&i| !used[i] && row_matches(row, p[i])) {
            used[i] = true;
            true
        } else {
            false
        }
    })
}

/// Execution match: same number of columns (compared positionally) and the
/// same rows — as a list when the gold query has ORDER BY (`ordered`), as a
/// multiset otherwise.
pub fn ex(gold: &Rows, pred: &Rows, ordered: bool) -> bool {
    if ordered {
        gold.len() == pred.len() && gold.iter().zip(pred).all(|(a, b)| row_matches(a, b))
    } else {
        multiset_eq(gold, pred)
    }
}

fn width(rows: &Rows) -> Option<usize> {
    rows.first().map(Vec::len)
}

fn project(rows: &Rows, cols: &[usize]) -> Rows {
    rows.iter().map(|r| cols.iter().map(|&c| r.get(c).cloned().unwrap_or(Cell::Null)).collect()).collect()
}

fn dedup_keep_first(rows: &Rows) -> Rows {
    let mut out: Rows = Vec::new();
    for r in rows {
        if !out.iter().any(|o| row_matches(o, r)) {
            out.push(r.clone());
        }
    }
    out
}

fn has_duplicates(rows: &Rows) -> bool {
    dedup_keep_first(rows).len() != rows.len()
}

/// Matching of one projection against the gold result: ex on the projected
/// rows, or — when the gold result has no duplicate rows — ex after
/// removing the duplicates the extra predicted columns introduced.
fn projection_matches(gold: &Rows, projected: &Rows, ordered: bool, gold_distinct: bool) -> bool {
    ex(gold, projected, ordered) || (gold_distinct && ex(gold, &dedup_keep_first(projected), ordered))
}

/// esx, the paper's relaxation of ex: the predicted result *contains* the
/// gold result. Precisely: there is an injective mapping f from gold
/// columns to predicted columns such that the predicted rows projected on
/// f(1..k) match the gold rows as in [`ex`] (ordered iff the gold query has
/// ORDER BY); when the gold result has no duplicate rows, duplicates in the
/// projection (created by the extra columns) are ignored. ex implies esx.
/// Empty gold results are contained only in an empty predicted result.
pub fn esx(gold: &Rows, pred: &Rows, ordered: bool) -> bool {
    if ex(gold, pred, ordered) {
        return true;
    }
    let (Some(k), Some(m)) = (width(gold), width(pred)) else {
        return gold.is_empty() && pred.is_empty();
    };
    if k > m {
        return false;
    }
    let gold_distinct = !has_duplicates(gold);
    // A column can only map to a predicted column holding the same set of
    // values: prune with that before searching mappings.
    let candidates: Vec<Vec<usize>> = (0..k)
        .map(|g| {
            let gcol = project(gold, &[g]);
            (0..m)
                .filter(|&p| {
                    let pcol = project(pred, &[p]);
                    let gd = dedup_keep_first(&gcol);
                    let pd = dedup_keep_first(&pcol);
                    gd.len() == pd.len() && multiset_eq(&gd, &pd)
                })
                .collect()
        })
        .collect();
    let mut budget = 20_000usize;
    let mut chosen = Vec::with_capacity(k);
    search(gold, pred, ordered, gold_distinct, &candidates, &mut chosen, &mut budget)
}

fn search(
    gold: &Rows,
    pred: &Rows,
    ordered: bool,
    gold_distinct: bool,
    candidates: &[Vec<usize>],
    chosen: &mut Vec<usize>,
    budget: &mut usize,
) -> bool {
    if chosen.len() == candidates.len() {
        if *budget == 0 {
            return false;
        }
        *budget -= 1;
        return projection_matches(gold, &project(pred, chosen), ordered, gold_distinct);
    }
    for &c in &candidates[chosen.len()] {
        if chosen.contains(&c) {
            continue;
        }
        chosen.push(c);
        if search(gold, pred, ordered, gold_distinct, candidates, chosen, budget) {
            return true;
        }
        chosen.pop();
    }
    false
}

/// Coverage of a gold set by a predicted set (eq. 10): |F ∩ G| / |G|.
/// An empty gold set is covered (1.0).
pub fn coverage<T: Ord>(gold: &BTreeSet<T>, pred: &BTreeSet<T>) -> f64 {
    if gold.is_empty() {
        return 1.0;
    }
    gold.intersection(pred).count() as f64 / gold.len() as f64
}

/// cov_t and cov_a of a predicted query against the gold query.
#[derive(Debug, Clone, Copy, PartialEq, Serialize, Deserialize)]
pub struct Coverage {
    pub cov_t: f64,
    pub cov_a: f64,
}

/// Coverage of gold references by predicted references. Names are already
/// lower-case base `table.column` in both (see `sql::analyze`).
pub fn cov(gold: &QueryRefs, pred: &QueryRefs) -> Coverage {
    Coverage { cov_t: coverage(&gold.tables, &pred.tables), cov_a: coverage(&gold.columns, &pred.columns) }
}

/// Phase-2 join accuracy of one view against the gold query.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct JoinAccuracy {
    /// Every gold join pair is in the view, and every join of the view
    /// uses at least one gold pair (extra columns of a composite key are
    /// allowed).
    pub matched: bool,
    /// The two sets of pairs are identical.
    pub exact: bool,
    /// Gold pairs the view lacks.
    pub missing: Vec<JoinPair>,
    /// View pairs the gold query does not use.
    pub extra: Vec<JoinPair>,
}

/// Compare the view's joins (each join a list of column pairs) with the gold
/// pairs (joins and semi-joins of the gold query).
pub fn join_accuracy(gold: &BTreeSet<JoinPair>, view_joins: &[Vec<JoinPair>]) -> JoinAccuracy {
    let view: BTreeSet<JoinPair> = view_joins.iter().flatten().cloned().collect();
    let missing: Vec<JoinPair> = gold.difference(&view).cloned().collect();
    let extra: Vec<JoinPair> = view.difference(gold).cloned().collect();
    let every_join_used = view_joins.iter().all(|j| j.iter().any(|p| gold.contains(p)));
    JoinAccuracy {
        matched: missing.is_empty() && every_join_used,
        exact: missing.is_empty() && extra.is_empty(),
        missing,
        extra,
    }
}

/// The join pairs of a GenerateView result, one list per join, on base
/// tables (a table joined twice appears under an alias in the view).
pub fn view_join_pairs(view: &crate::types::ViewResult, graph: &crate::graph::SchemaGraph) -> Vec<Vec<JoinPair>> {
    crate::sql::analyze::view_pairs(view, Some(graph))
}

#[cfg(test)]
#[path = "metrics_tests.rs"]
mod tests;
