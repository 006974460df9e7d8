//! The grouping a question asks "by" (`--by-groups on`, issue 23).
//!
//! "What is the total amount of premiums paid by policy number?" asks for
//! one total per policy number. The 1.5B model writes one total of all
//! rows (`SELECT SUM(Policy_Amount_Premium_Policy_Amount) FROM lucy_view`)
//! even when the prompt's name hint says `GROUP BY Policy_Policy_Number`
//! (session 16 measured that line: the model did not follow it). The
//! question's words decide, without the LLM: when the question asks "by"
//! or "per" a phrase that names exactly one view column (the name hints'
//! reading, `link::hints::Hint::by`), and the query aggregates every row
//! into one, [`rewrite`] adds that column in front of the select list and
//! groups by it:
//!
//! ```sql
//! SELECT Policy_Policy_Number, SUM(Policy_Amount_Premium_Policy_Amount) FROM lucy_view GROUP BY Policy_Policy_Number
//! ```
//!
//! Only the outermost SELECT, when it reads the view alone, has no GROUP
//! BY, HAVING, LIMIT or set operation, and every item of its select list is
//! an aggregate (not a window); only columns its WHERE does not read (a
//! question that fixes the policy number, "claims of policy 31003000336
//! by policy number", needs no group; a `col IS NOT NULL` test alone fixes
//! no value and does not count). Everything else is left as written.
//! Applied before the fan-out analysis, which then sees the group.

use std::ops::ControlFlow;

use sqlparser::ast::{Expr, Function, GroupByExpr, Ident, Select, SelectItem, SetExpr, Visit, Visitor};

use super::aggregates::AGGREGATES;
use super::fanout::view_binding;
use crate::error::Result;
use crate::sql::analyze::column_name;
use crate::types::{Dialect, GroupNote};
use crate::view::sql::quote_alias;

/// Whether `lucy ask` and `lucy bench` add such groupings by default
/// (`--by-groups`).
pub const DEFAULT_ON: bool = true;

/// `sql` (a query over the view `view_name` that the guard admitted)
/// grouped by the view columns of `by` (a phrase the question asks "by"
/// and the one view column alias it names), or `None` when the rule does
/// not apply (see the module's rules).
pub fn rewrite(sql: &str, view_name: &str, by: &[(String, String)], dialect: Dialect) -> Result<Option<GroupNote>> {
    if by.is_empty() {
        return Ok(None);
    }
    let (original, q) = super::parse_query(sql, dialect, "by-group")?;
    let Some(mut q) = q else { return Ok(None) };
    if q.with.is_some() || q.limit_clause.is_some() || q.fetch.is_some() {
        return Ok(None);
    }
    let SetExpr::Select(sel) = q.body.as_mut() else { return Ok(None) };
    if view_binding(sel, view_name).is_none() || !ungrouped_aggregate(sel) {
        return Ok(None);
    }
    let read = where_columns(sel);
    let mut phrases = Vec::new();
    let mut columns: Vec<String> = Vec::new();
    for (phrase, alias) in by {
        let lower = alias.to_ascii_lowercase();
        if read.contains(&lower) || columns.iter().any(|c| c.eq_ignore_ascii_case(alias)) {
            continue;
        }
        phrases.push(phrase.clone());
        columns.push(alias.clone());
    }
    if columns.is_empty() {
        return Ok(None);
    }
    let exprs: Vec<Expr> = columns.iter().map(|c| Expr::Identifier(Ident::new(quote_alias(c, dialect)))).collect();
    let mut projection: Vec<SelectItem> = exprs.iter().cloned().map(SelectItem::UnnamedExpr).collect();
    projection.append(&mut sel.projection);
    sel.projection = projection;
    sel.group_by = GroupByExpr::Expressions(exprs, Vec::new());
    Ok(Some(GroupNote { phrases, columns, original, rewritten: q.to_string() }))
}

/// No GROUP BY or HAVING, and every select item an aggregate.
fn ungrouped_aggregate(sel: &Select) -> bool {
    let grouped = match &sel.group_by {
        GroupByExpr::All(_) => true,
        GroupByExpr::Expressions(v, m) => !v.is_empty() || !m.is_empty(),
    };
    if grouped || sel.having.is_some() || sel.projection.is_empty() {
        return false;
    }
    sel.projection.iter().all(|item| match item {
        SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } => aggregates_only(e),
        _ => false,
    })
}

/// Whether `e` holds an aggregate and reads columns only inside
/// aggregates (`SUM(a) / COUNT(b)` yes, `a + SUM(b)` no), with no window.
fn aggregates_only(e: &Expr) -> bool {
    let mut v = AggScan::default();
    let _ = e.visit(&mut v);
    v.aggregates > 0 && !v.window && !v.bare_column
}

#[derive(Default)]
struct AggScan {
    /// Aggregates entered and not yet left.
    depth: usize,
    aggregates: usize,
    window: bool,
    bare_column: bool,
}

impl Visitor for AggScan {
    type Break = ();
    fn pre_visit_expr(&mut self, e: &Expr) -> ControlFlow<()> {
        match e {
            Expr::Function(f) if is_aggregate(f) => {
                self.depth += 1;
                self.aggregates += 1;
            }
            Expr::Function(f) if f.over.is_some() => self.window = true,
            Expr::Identifier(_) | Expr::CompoundIdentifier(_) if self.depth == 0 => self.bare_column = true,
            Expr::Subquery(_) | Expr::Exists { .. } | Expr::InSubquery { .. } => self.bare_column = true,
            _ => {}
        }
        ControlFlow::Continue(())
    }
    fn post_visit_expr(&mut self, e: &Expr) -> ControlFlow<()> {
        if matches!(e, Expr::Function(f) if is_aggregate(f)) {
            self.depth -= 1;
        }
        ControlFlow::Continue(())
    }
}

fn is_aggregate(f: &Function) -> bool {
    if f.over.is_some() {
        return false;
    }
    f.name
        .0
        .last()
        .and_then(|p| p.as_ident())
        .is_some_and(|i| AGGREGATES.contains(&i.value.to_ascii_lowercase().as_str()))
}

/// The column names (lower case, unqualified) the WHERE reads, other than
/// in `col IS NOT NULL` tests alone (a presence test fixes no value: "the
/// loss amounts by claim number" with `WHERE Claim_Number IS NOT NULL` still
/// asks one total per claim number).
fn where_columns(sel: &Select) -> Vec<String> {
    struct Cols {
        all: Vec<String>,
        present: Vec<String>,
    }
    impl Visitor for Cols {
        type Break = ();
        fn pre_visit_expr(&mut self, e: &Expr) -> ControlFlow<()> {
            if let Some((_, c)) = column_name(e) {
                self.all.push(c);
            } else if let Expr::IsNotNull(inner) = e {
                if let Some((_, c)) = column_name(inner) {
                    self.present.push(c);
                }
            }
            ControlFlow::Continue(())
        }
    }
    let mut c = Cols { all: Vec::new(), present: Vec::new() };
    if let Some(w) = &sel.selection {
        let _ = w.visit(&mut c);
    }
    let mut read = Vec::new();
    for col in &c.all {
        let n = c.all.iter().filter(|x| *x == col).count();
        let present = c.present.iter().filter(|x| *x == col).count();
        if n > present && !read.contains(col) {
            read.push(col.clone());
        }
    }
    read
}

#[cfg(test)]
#[path = "grouping_tests.rs"]
mod tests;
