//! Value inclusion of proposed relationships (`lucy model suggest
//! --relationships --execute DB`): each name candidate of
//! [`crate::graph::fk`] tested on the data, read-only and bounded, through
//! [`crate::sql::exec::run`] (any database lucy executes on).
//!
//! For a candidate `A.c → B.k` (or a column set):
//!
//! - when B's key was inferred from names, it must be unique:
//!   `COUNT(k) = COUNT(DISTINCT k) = COUNT(*)` (read once per key);
//! - `A.c`'s rows: `COUNT(*)`, non-null, distinct. An empty table or an
//!   all-NULL column is *no evidence*: the candidate stays, on names alone;
//! - every non-null value of `A.c` must be found in `B.k` (an anti-join,
//!   `LEFT JOIN B … WHERE A.c IS NOT NULL AND B.k IS NULL`, portable to every
//!   engine): one missing value rejects the candidate, and the column's
//!   next candidate by name is tried.
//!
//! Cardinality: `1:1` when the columns are A's declared primary key (names),
//! or A has no key of its own (none declared, none inferred from names:
//! a subtype table keyed by its parent's key) and the values of `A.c` are
//! unique; `M:1` otherwise. A column that only happens to be unique in the
//! rows at hand while A has its own key (`RCPU.runtime_id` beside `RCPU.id`)
//! stays `M:1`: a wrong `1:1` would let the fan-out checks miss repeated
//! rows, a wrong `M:1` costs nothing.
//!
//! Bounds: each query runs under `query_timeout` (cut to what is left of the
//! budget), reads one row, and the whole check stops at `budget`; candidates
//! left then are kept on names alone, their reason says so. A query that
//! fails (a table missing from the database, a type the engine cannot
//! compare) leaves its candidate unchecked, with the error in its reason.

use std::collections::HashMap;
use std::time::{Duration, Instant};

use crate::error::Result;
use crate::graph::fk::{self, Candidate, RelationshipProposal};
use crate::sql::exec::{self, Database, ExecOptions, SqlValue};
use crate::types::{Cardinality, DbModel, Dialect};
use crate::view::sql::{quote_name, quote_table};

/// Time bounds of the check.
#[derive(Debug, Clone)]
pub struct InclusionBounds {
    /// Time limit of one query.
    pub query_timeout: Duration,
    /// Time limit of all queries together.
    pub budget: Duration,
}

impl Default for InclusionBounds {
    fn default() -> Self {
        InclusionBounds { query_timeout: Duration::from_secs(10), budget: Duration::from_secs(120) }
    }
}

/// What the data says about one candidate.
#[derive(Debug, Clone, PartialEq)]
pub enum Verdict {
    /// Every non-null value was found; the evidence, and whether the
    /// columns' values are unique.
    Included { evidence: String, unique: bool },
    /// Nothing to test (empty table, all-NULL column): kept on names alone.
    NoEvidence(String),
    /// A value is missing, or an inferred key is not unique.
    Rejected(String),
    /// Not tested (budget spent, query failed): kept on names alone.
    Unchecked(String),
}

/// The result of [`suggest_checked`].
#[derive(Debug, Clone, Default)]
pub struct Outcome {
    /// The proposals, names and values evidence in each reason.
    pub proposals: Vec<RelationshipProposal>,
    /// Candidates the data rejected, with why.
    pub rejected: Vec<(Candidate, String)>,
    /// Proposals kept without a test (budget spent, query failed), with why.
    pub unchecked: Vec<String>,
    /// Queries run.
    pub queries: usize,
    /// Time spent querying.
    pub elapsed: Duration,
}

/// The name candidates of `m` tested on `db`: each reference column keeps
/// its best candidate the data does not reject. The database is checked
/// first (a missing file or a refused login is an error).
pub fn suggest_checked(m: &DbModel, db: &Database, bounds: &InclusionBounds) -> Result<Outcome> {
    exec::ping(db, bounds.query_timeout)?;
    let mut run = Runner {
        db,
        dialect: db.dialect(),
        bounds,
        started: Instant::now(),
        queries: 0,
        keys: HashMap::new(),
        model: m,
    };
    let mut out = Outcome::default();
    let mut proposals = Vec::new();
    for g in fk::candidates(m) {
        for c in &g.options {
            let verdict = run.check(c);
            let (card, values) = match verdict {
                Verdict::Rejected(why) => {
                    out.rejected.push((c.clone(), why));
                    continue;
                }
                Verdict::Included { evidence, unique } => {
                    if c.from_is_key {
                        (
                            Cardinality::OneToOne,
                            format!("{evidence}; 1:1: {} is {}'s primary key", c.from_cols.join("+"), c.from),
                        )
                    } else if unique && !c.from_has_own_key {
                        (
                            Cardinality::OneToOne,
                            format!(
                                "{evidence}; 1:1: its values are unique in {}, which has no key of its own",
                                c.from
                            ),
                        )
                    } else {
                        (Cardinality::ManyToOne, evidence)
                    }
                }
                Verdict::NoEvidence(why) => (fk::names_cardinality(c), format!("values: no evidence ({why})")),
                Verdict::Unchecked(why) => {
                    out.unchecked.push(format!("{}.{}: {why}", c.from, c.from_cols.join("+")));
                    (fk::names_cardinality(c), format!("values: not checked ({why})"))
                }
            };
            proposals.push(fk::proposal(c, card, format!("{}; {values}", c.names_reason())));
            break;
        }
    }
    out.proposals = fk::dedupe(proposals);
    out.queries = run.queries;
    out.elapsed = run.started.elapsed();
    Ok(out)
}

/// Counts read by one query.
type Counts = Vec<u64>;

struct Runner<'a> {
    db: &'a Database,
    dialect: Dialect,
    bounds: &'a InclusionBounds,
    started: Instant,
    queries: usize,
    /// Inferred keys already read: (table, column) → rows, non-null, distinct.
    keys: HashMap<(String, String), std::result::Result<Counts, String>>,
    /// The model the candidates name tables of.
    model: &'a DbModel,
}

impl Runner<'_> {
    fn q(&self, name: &str) -> String {
        quote_name(name, self.dialect)
    }

    /// The FROM text of the table named `name`.
    fn from(&self, name: &str) -> String {
        self.model.table(name).map_or_else(|| self.q(name), |t| quote_table(t, self.dialect))
    }

    /// Run one counting query: the counts of its single row.
    fn counts(&mut self, sql: &str) -> std::result::Result<Counts, String> {
        let left = self.bounds.budget.saturating_sub(self.started.elapsed());
        if left.is_zero() {
            return Err(format!("the budget of {:.0} s is spent", self.bounds.budget.as_secs_f64()));
        }
        let opts =
            ExecOptions { limit: Some(1), timeout: self.bounds.query_timeout.min(left), max_result_bytes: 64 << 10 };
        self.queries += 1;
        let rows = exec::run(self.db, None, sql, &opts).map_err(|e| format!("{e} (in: {sql})"))?;
        let row = rows.rows.first().ok_or_else(|| format!("no row (in: {sql})"))?;
        row.iter().map(|v| count_of(v).ok_or_else(|| format!("`{v}` is not a count (in: {sql})"))).collect()
    }

    fn check(&mut self, c: &Candidate) -> Verdict {
        let (a, b) = (self.from(&c.from), self.from(&c.to));
        let acols: Vec<String> = c.from_cols.iter().map(|x| format!("lucy_a.{}", self.q(x))).collect();
        let bcols: Vec<String> = c.to_cols.iter().map(|x| format!("lucy_b.{}", self.q(x))).collect();
        let to_key = format!("{}.{}", c.to, c.to_cols.join("+"));
        let from_col = c.from_cols.join("+");
        // An inferred key must be unique.
        let mut key_note = String::new();
        if c.key_inferred {
            let id = (c.to.clone(), c.to_cols.join("+"));
            if !self.keys.contains_key(&id) {
                let k = &bcols[0];
                let sql = format!("SELECT COUNT(*), COUNT({k}), COUNT(DISTINCT {k}) FROM {b} AS lucy_b");
                let r = self.counts(&sql);
                self.keys.insert(id.clone(), r);
            }
            match &self.keys[&id] {
                Err(e) => return Verdict::Unchecked(e.clone()),
                Ok(k) if k.len() == 3 && (k[1] != k[0] || k[2] != k[0]) => {
                    return Verdict::Rejected(format!(
                        "values: {to_key} is no key: {} distinct non-null values in {} rows",
                        k[2], k[0]
                    ))
                }
                Ok(k) => key_note = format!("; {to_key} unique ({} rows)", k.first().copied().unwrap_or(0)),
            }
        }
        let all_set = acols.iter().map(|x| format!("{x} IS NOT NULL")).collect::<Vec<_>>().join(" AND ");
        let distinct = if acols.len() == 1 { format!(", COUNT(DISTINCT {})", acols[0]) } else { String::new() };
        let sql = format!("SELECT COUNT(*), SUM(CASE WHEN {all_set} THEN 1 ELSE 0 END){distinct} FROM {a} AS lucy_a");
        let stats = match self.counts(&sql) {
            Ok(s) => s,
            Err(e) => return Verdict::Unchecked(e),
        };
        let (rows, non_null) = (stats.first().copied().unwrap_or(0), stats.get(1).copied().unwrap_or(0));
        if rows == 0 {
            return Verdict::NoEvidence(format!("{} has no rows", c.from));
        }
        if non_null == 0 {
            return Verdict::NoEvidence(format!("{from_col} is NULL in all {rows} rows of {}", c.from));
        }
        let on = acols.iter().zip(&bcols).map(|(x, y)| format!("{y} = {x}")).collect::<Vec<_>>().join(" AND ");
        let sql = format!(
            "SELECT COUNT(*) FROM {a} AS lucy_a LEFT JOIN {b} AS lucy_b ON {on} WHERE {all_set} AND {} IS NULL",
            bcols[0]
        );
        let missing = match self.counts(&sql) {
            Ok(s) => s.first().copied().unwrap_or(0),
            Err(e) => return Verdict::Unchecked(e),
        };
        if missing > 0 {
            return Verdict::Rejected(format!(
                "values: {missing} of {non_null} non-null {from_col} values not found in {to_key}"
            ));
        }
        let unique = stats.get(2).is_some_and(|&d| d == non_null);
        Verdict::Included {
            evidence: format!(
                "values: {non_null} of {non_null} non-null {from_col} values found in {to_key}{key_note}"
            ),
            unique,
        }
    }
}

/// A count read back from any engine (an integer, a decimal SUM as text or
/// a float; NULL is the SUM over no rows).
fn count_of(v: &SqlValue) -> Option<u64> {
    match v {
        SqlValue::Null => Some(0),
        SqlValue::Integer(i) => u64::try_from(*i).ok(),
        SqlValue::Real(f) if *f >= 0.0 && f.fract() == 0.0 => Some(*f as u64),
        SqlValue::Text(s) => match s.trim().parse::<f64>() {
            Ok(f) if f >= 0.0 && f.fract() == 0.0 && f < 9.0e15 => Some(f as u64),
            _ => None,
        },
        _ => None,
    }
}

#[cfg(test)]
#[path = "inclusion_tests.rs"]
mod tests;
