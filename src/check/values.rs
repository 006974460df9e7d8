//! Filters whose text literal the database does not hold in that column
//! (`--value-literals on`, issue 23: values guide the SQL, not only the
//! prompts).
//!
//! The 1.5B model often picks the right value and the wrong column, or the
//! right column and the wrong spelling: "How many car makers are there in
//! france?" came back as `WHERE countries_Continent = 'France'` over a view
//! whose `countries_CountryName` holds `'france'` and whose
//! `countries_Continent` holds no such value. Such a filter can only empty
//! the answer. [`rewrite`] reads the column's values (the value index,
//! `link::values`, handed over by the caller as [`ValueColumn`]s) and
//! mends the filter when the database says unambiguously what was meant:
//!
//! - **Respelled**: the literal is no value of its column, and exactly one
//!   value of that column equals it once case and accents are folded →
//!   that value (`'closed'` → `'Closed'`).
//! - **Moved**: the literal matches no value of its column even folded, the
//!   question holds it (folded, as words), and exactly one *other* view
//!   column holds it (exactly, else folded; one value) → the filter reads
//!   that column instead (`countries_Continent = 'France'` →
//!   `countries_CountryName = 'france'`). Two columns holding it (the
//!   source and the destination airport's city) is ambiguous: left alone.
//!
//! Only columns whose values the index holds *completely* count as
//! evidence (a sampled or cut column may hold the literal unseen), and
//! numeric columns, which hold no literal that does not read as a number
//! (`countries_Continent` above is an INTEGER); a column not in
//! [`ValueColumn`]s is never touched. A filter is one
//! conjunct of the WHERE (split on top-level `AND`) of a SELECT that reads
//! the view alone: `col = 'text'` (either side) or `col IN ('a', 'b')`, not
//! negated; an `IN` list is mended only when every literal is kept,
//! respelled, or all move to the same column. `LIKE` patterns, numbers and
//! everything else are left as written.

use std::ops::ControlFlow;

use sqlparser::ast::{BinaryOperator, Expr, Ident, Query, Select, SetExpr, Value, VisitMut, VisitorMut};

use super::fanout::view_binding_key;
use crate::error::Result;
use crate::sql::analyze::column_name;
use crate::types::{Dialect, ValueNote};

/// Whether `lucy ask` and `lucy bench` mend such filters by default
/// (`--value-literals`).
pub const DEFAULT_ON: bool = true;

/// What the database holds in one view column: every short text value
/// (the value index holds the column completely), or numbers only.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ValueColumn {
    /// The view column's alias.
    pub alias: String,
    /// Every short text value of the column, as stored (empty for a
    /// numeric column).
    pub values: Vec<String>,
    /// The column's declared type is a number type (the caller reads it,
    /// `pipeline::measures::type_class`): it holds a literal only when the
    /// literal reads as a number.
    pub numeric: bool,
}

/// `sql` (a query over the view `view_name` that the guard admitted) with
/// its filters mended by the database's values (see the module's rules),
/// or `None` when none needed it. `fold` lower-cases and strips accents
/// (`link::values::fold`).
pub fn rewrite(
    sql: &str,
    view_name: &str,
    columns: &[ValueColumn],
    question: &str,
    fold: &dyn Fn(&str) -> String,
    dialect: Dialect,
) -> Result<Option<ValueNote>> {
    if columns.is_empty() {
        return Ok(None);
    }
    let (original, q) = super::parse_query(sql, dialect, "value-literal")?;
    let Some(mut q) = q else { return Ok(None) };
    let mut v = Mender {
        view_name: view_name.to_ascii_lowercase(),
        columns,
        question: format!(" {} ", words(&fold(question))),
        fold,
        changes: Vec::new(),
    };
    let _ = q.visit(&mut v);
    if v.changes.is_empty() {
        return Ok(None);
    }
    Ok(Some(ValueNote { changes: v.changes, original, rewritten: q.to_string() }))
}

/// `s`'s runs of letters and digits joined by single spaces.
fn words(s: &str) -> String {
    s.split(|c: char| !c.is_alphanumeric()).filter(|w| !w.is_empty()).collect::<Vec<_>>().join(" ")
}

struct Mender<'a> {
    view_name: String,
    columns: &'a [ValueColumn],
    /// The folded question's words, space-padded.
    question: String,
    fold: &'a dyn Fn(&str) -> String,
    changes: Vec<String>,
}

impl VisitorMut for Mender<'_> {
    type Break = ();
    fn post_visit_query(&mut self, q: &mut Query) -> ControlFlow<()> {
        if let SetExpr::Select(sel) = q.body.as_mut() {
            self.select(sel);
        }
        ControlFlow::Continue(())
    }
}

/// What the database says of one literal of a filter on one column.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Fix {
    /// A value of the column as written.
    Keep,
    /// The one value of the column it folds to.
    Respell(String),
    /// The one other column (index into the columns) holding it, and its value there.
    Move(usize, String),
    /// Nothing unambiguous.
    Unknown,
}

impl Mender<'_> {
    fn select(&mut self, sel: &mut Select) {
        let Some(binding) = view_binding_key(sel, &self.view_name) else { return };
        if let Some(selection) = sel.selection.as_mut() {
            self.conjuncts(selection, &binding);
        }
    }

    fn conjuncts(&mut self, e: &mut Expr, binding: &str) {
        match e {
            Expr::BinaryOp { left, op: BinaryOperator::And, right } => {
                self.conjuncts(left, binding);
                self.conjuncts(right, binding);
            }
            Expr::Nested(inner) if matches!(**inner, Expr::BinaryOp { op: BinaryOperator::And, .. }) => {
                self.conjuncts(inner, binding)
            }
            _ => self.filter(e, binding),
        }
    }

    /// Mend one conjunct, if it is a filter the rules cover.
    fn filter(&mut self, e: &mut Expr, binding: &str) {
        let before = e.to_string();
        let changed = match e {
            Expr::BinaryOp { left, op: BinaryOperator::Eq, right } => {
                if text(right).is_some() && text(left).is_none() {
                    self.mend(left, std::slice::from_mut(right.as_mut()), binding)
                } else if text(left).is_some() && text(right).is_none() {
                    self.mend(right, std::slice::from_mut(left.as_mut()), binding)
                } else {
                    false
                }
            }
            Expr::InList { expr, list, negated: false }
                if !list.is_empty() && list.iter().all(|l| text(l).is_some()) =>
            {
                self.mend(expr, list, binding)
            }
            _ => false,
        };
        if changed {
            self.changes.push(format!("{before} → {e}"));
        }
    }

    /// Mend the column `col` and its literals `lits` in place; whether
    /// anything changed.
    fn mend(&self, col: &mut Expr, lits: &mut [Expr], binding: &str) -> bool {
        let Some((qual, name)) = column_name(col) else { return false };
        if qual.as_deref().is_some_and(|q| q != binding && q != self.view_name) {
            return false;
        }
        let Some(at) = self.columns.iter().position(|c| c.alias.eq_ignore_ascii_case(&name)) else { return false };
        let fixes: Vec<Fix> = lits.iter().map(|l| self.fix(at, text(l).unwrap_or_default())).collect();
        if fixes.iter().all(|f| *f == Fix::Keep) || fixes.contains(&Fix::Unknown) {
            return false;
        }
        let moved: Vec<usize> =
            fixes.iter().filter_map(|f| if let Fix::Move(c, _) = f { Some(*c) } else { None }).collect();
        if !moved.is_empty() {
            // Every literal must move, and to the same column.
            if moved.len() != fixes.len() || moved.iter().any(|c| *c != moved[0]) {
                return false;
            }
            set_column(col, &self.columns[moved[0]].alias);
        }
        for (l, f) in lits.iter_mut().zip(fixes) {
            if let Fix::Respell(v) | Fix::Move(_, v) = f {
                set_text(l, v);
            }
        }
        true
    }

    /// What the values say of literal `lit` on column `at`.
    fn fix(&self, at: usize, lit: &str) -> Fix {
        let own = &self.columns[at].values;
        if own.iter().any(|v| v == lit) || (self.columns[at].numeric && lit.trim().parse::<f64>().is_ok()) {
            return Fix::Keep;
        }
        let folded = (self.fold)(lit);
        let same: Vec<&String> = own.iter().filter(|v| (self.fold)(v) == folded).collect();
        match same.as_slice() {
            [one] => return Fix::Respell((*one).clone()),
            [] => {}
            _ => return Fix::Unknown,
        }
        let w = words(&folded);
        if w.is_empty() || !self.question.contains(&format!(" {w} ")) {
            return Fix::Unknown;
        }
        let exact: Vec<usize> = self.others(at, |v| v == lit);
        let found = if exact.is_empty() { self.others(at, |v| (self.fold)(v) == folded) } else { exact };
        let [c] = found.as_slice() else { return Fix::Unknown };
        let values: Vec<&String> =
            self.columns[*c].values.iter().filter(|v| *v == lit || (self.fold)(v) == folded).collect();
        match values.as_slice() {
            [one] => Fix::Move(*c, (*one).clone()),
            _ => match values.iter().find(|v| **v == lit) {
                Some(v) => Fix::Move(*c, (*v).clone()),
                None => Fix::Unknown,
            },
        }
    }

    /// The columns other than `at` holding a value that passes `hit`.
    fn others(&self, at: usize, hit: impl Fn(&String) -> bool) -> Vec<usize> {
        (0..self.columns.len()).filter(|&i| i != at && self.columns[i].values.iter().any(&hit)).collect()
    }
}

/// The text of a single-quoted string literal, if `e` is one.
fn text(e: &Expr) -> Option<&str> {
    match e {
        Expr::Nested(inner) => text(inner),
        Expr::Value(v) => match &v.value {
            Value::SingleQuotedString(s) => Some(s),
            _ => None,
        },
        _ => None,
    }
}

/// Replace the text of the string literal `e` (see [`text`]).
fn set_text(e: &mut Expr, to: String) {
    match e {
        Expr::Nested(inner) => set_text(inner, to),
        Expr::Value(v) => v.value = Value::SingleQuotedString(to),
        _ => {}
    }
}

/// Point the column reference `e` at view column `alias`, keeping its
/// qualifier.
fn set_column(e: &mut Expr, alias: &str) {
    match e {
        Expr::Identifier(id) => *id = Ident::new(alias),
        Expr::CompoundIdentifier(parts) => {
            if let Some(last) = parts.last_mut() {
                *last = Ident::new(alias);
            }
        }
        Expr::Nested(inner) => set_column(inner, alias),
        _ => {}
    }
}

#[cfg(test)]
#[path = "values_tests.rs"]
mod tests;
