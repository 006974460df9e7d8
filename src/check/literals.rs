//! Filters on an entity the question never names (`--entity-literals
//! drop`, issue 23).
//!
//! The 1.5B model copies the example values of column descriptions into
//! filters. "How many claims have been placed by policy number?" came back
//! as
//!
//! ```sql
//! SELECT COUNT(DISTINCT Claim_Claim_Identifier) FROM lucy_view WHERE Policy_Policy_Number = '12312701'
//! ```
//!
//! (the description says "e.g. 12312701"): the answer is about one policy
//! the question never mentions. A question about one entity names it — its
//! number, id or name is in the question's text — so a filter that fixes an
//! *entity column* to values the question does not hold is the model's
//! invention, and [`rewrite`] drops it:
//!
//! - **Entity columns** are the view columns that identify or name a row,
//!   chosen by the caller ([`is_entity_name`] over the column's name, or a
//!   one-column key of its table): `Policy_Number`, `Claim_Identifier`,
//!   `CLIENT.name`; never a code, a date, an amount or a flag, whose
//!   values a question names in other words (`'PH'` for "policy holder").
//! - **A filter** is one conjunct of a WHERE (split on top-level `AND`)
//!   of a SELECT that reads the view alone: `col = literal` (either side),
//!   `col IN (literals)` or `col LIKE literal`, not negated.
//! - **Held by the question**: the literal's text, lower-cased, with the
//!   `LIKE` wildcards `%` splitting it into pieces, occurs in the question
//!   lower-cased (`'dev%'` is held by "names starting with 'dev'"; `5` by
//!   "the store with id 5"). A filter is dropped only when none of its
//!   literals is held.
//!
//! Every other query, and every other conjunct, is left as written; a
//! WHERE left with no conjunct goes.

use std::ops::ControlFlow;

use sqlparser::ast::{BinaryOperator, Expr, Query, Select, SetExpr, Value, VisitMut, VisitorMut};

use super::fanout::view_binding_key;
use crate::error::Result;
use crate::sql::analyze::column_name;
use crate::types::{Dialect, LiteralNote};

/// Whether `lucy ask` and `lucy bench` drop such filters by default
/// (`--entity-literals`).
pub const DEFAULT_ON: bool = true;

/// The last words of a column name that make it an entity column: an
/// identifier, a number or a name.
const ENTITY_WORDS: &[&str] = &["id", "identifier", "ident", "number", "num", "nbr", "no", "key", "name", "title"];

/// Whether a column named `column` identifies or names a row: its last
/// word (split on `_` and camel case) is one of [`ENTITY_WORDS`].
pub fn is_entity_name(column: &str) -> bool {
    crate::model::resolve::words(column).last().is_some_and(|w| ENTITY_WORDS.contains(&w.to_ascii_lowercase().as_str()))
}

/// `sql` (a query over the view `view_name` that the guard admitted)
/// without the filters that fix one of `entities` (view column aliases) to
/// values `question` does not hold, or `None` when it has none (see the
/// module's rules).
pub fn rewrite(
    sql: &str,
    view_name: &str,
    entities: &[String],
    question: &str,
    dialect: Dialect,
) -> Result<Option<LiteralNote>> {
    if entities.is_empty() {
        return Ok(None);
    }
    let (original, q) = super::parse_query(sql, dialect, "entity-literal")?;
    let Some(mut q) = q else { return Ok(None) };
    let mut v = Dropper {
        view_name: view_name.to_ascii_lowercase(),
        entities: entities.iter().map(|e| e.to_ascii_lowercase()).collect(),
        question: question.to_lowercase(),
        dropped: Vec::new(),
    };
    let _ = q.visit(&mut v);
    if v.dropped.is_empty() {
        return Ok(None);
    }
    Ok(Some(LiteralNote { dropped: v.dropped, original, rewritten: q.to_string() }))
}

struct Dropper {
    view_name: String,
    entities: Vec<String>,
    question: String,
    dropped: Vec<String>,
}

impl VisitorMut for Dropper {
    type Break = ();
    fn post_visit_query(&mut self, q: &mut Query) -> ControlFlow<()> {
        if let SetExpr::Select(sel) = q.body.as_mut() {
            self.select(sel);
        }
        ControlFlow::Continue(())
    }
}

impl Dropper {
    fn select(&mut self, sel: &mut Select) {
        let Some(binding) = view_binding_key(sel, &self.view_name) else { return };
        let Some(selection) = sel.selection.take() else { return };
        let mut kept = Vec::new();
        for c in conjuncts(selection) {
            if self.invented(&c, &binding) {
                self.dropped.push(c.to_string());
            } else {
                kept.push(c);
            }
        }
        sel.selection = kept.into_iter().reduce(|a, b| Expr::BinaryOp {
            left: Box::new(a),
            op: BinaryOperator::And,
            right: Box::new(b),
        });
    }

    /// Whether `c` fixes an entity column to literals the question does
    /// not hold.
    fn invented(&self, c: &Expr, binding: &str) -> bool {
        let (col, lits): (&Expr, Vec<&Value>) = match c {
            Expr::BinaryOp { left, op: BinaryOperator::Eq, right } => match (literal(left), literal(right)) {
                (None, Some(v)) => (left, vec![v]),
                (Some(v), None) => (right, vec![v]),
                _ => return false,
            },
            Expr::InList { expr, list, negated: false } => {
                let lits: Option<Vec<&Value>> = list.iter().map(literal).collect();
                match lits {
                    Some(l) if !l.is_empty() => (expr, l),
                    _ => return false,
                }
            }
            Expr::Like { negated: false, expr, pattern, .. } | Expr::ILike { negated: false, expr, pattern, .. } => {
                match literal(pattern) {
                    Some(v) => (expr, vec![v]),
                    None => return false,
                }
            }
            _ => return false,
        };
        let Some((qual, name)) = column_name(col) else { return false };
        if qual.is_some_and(|q| q != binding && q != self.view_name) {
            return false;
        }
        self.entities.contains(&name) && lits.iter().all(|v| !self.holds(v))
    }

    /// Whether the question holds the literal's text.
    fn holds(&self, v: &Value) -> bool {
        let text = match v {
            Value::Number(n, _) => n.clone(),
            other => match other.clone().into_string() {
                Some(s) => s,
                None => return true,
            },
        };
        text.to_lowercase().split('%').map(str::trim).filter(|p| !p.is_empty()).all(|p| self.question.contains(p))
    }
}

/// The literal `e` is (unwrapping parentheses and a sign), if it is one.
fn literal(e: &Expr) -> Option<&Value> {
    match e {
        Expr::Nested(inner) => literal(inner),
        Expr::Value(v) => match &v.value {
            Value::Null | Value::Placeholder(_) => None,
            other => Some(other),
        },
        Expr::UnaryOp { expr, .. } => literal(expr),
        _ => None,
    }
}

/// The conjuncts of a WHERE: `a AND (b AND c)` → `[a, b, c]`.
fn conjuncts(e: Expr) -> Vec<Expr> {
    match e {
        Expr::BinaryOp { left, op: BinaryOperator::And, right } => {
            let mut v = conjuncts(*left);
            v.extend(conjuncts(*right));
            v
        }
        Expr::Nested(inner) if matches!(*inner, Expr::BinaryOp { op: BinaryOperator::And, .. }) => conjuncts(*inner),
        other => vec![other],
    }
}

#[cfg(test)]
#[path = "literals_tests.rs"]
mod tests;
