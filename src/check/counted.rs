//! `COUNT(*)` as a count of the table the question counts
//! (`--count-names on`, issue 23).
//!
//! Over a view that joins several tables, `COUNT(*)` counts rows of the
//! view: with `players` joined to its `rankings`, "find the number of
//! players for each country" written as
//!
//! ```sql
//! SELECT players_country_code, COUNT(*) FROM lucy_view GROUP BY players_country_code
//! ```
//!
//! counts each player once per ranking. The fan-out analysis
//! ([`super::fanout`]) accepts it, since the rows of `rankings` appear once
//! each: it cannot know which table the count is about. The question can:
//! when it counts a table of the view by name ("how many players", "the
//! number of players", found by `link::named::counted`), [`rewrite`] reads
//! `COUNT(*)` as a count of that table's rows:
//!
//! ```sql
//! SELECT players_country_code, COUNT(DISTINCT players_player_id) FROM lucy_view GROUP BY players_country_code
//! ```
//!
//! Only where it changes the answer: in each SELECT that reads the view
//! alone, a `COUNT(*)` (or `COUNT(1)`) of its select list, HAVING or ORDER
//! BY, not DISTINCT and not a window, when the view repeats the counted
//! instance's rows within a group ([`Grain::multipliers_of`] of it and of
//! the instances the GROUP BY fixes is not empty). The instance needs a
//! one-column key in the view. Every other query is left as written.

use std::ops::ControlFlow;

use sqlparser::ast::{
    Expr, Function, FunctionArg, FunctionArgExpr, FunctionArguments, OrderBy, Query, Select, SetExpr, Value, VisitMut,
    VisitorMut,
};
use sqlparser::dialect::Dialect as SqlDialect;
use sqlparser::parser::Parser;

use super::aggregates::is_counting;
use super::fanout::{fixed_instances, group_exprs, view_binding, visit_aggregate_places};
use crate::error::{Error, Result};
use crate::sql::guard::parser_dialect;
use crate::types::{CountNote, Dialect, Grain};
use crate::view::sql::quote_alias;

/// Whether `lucy ask` and `lucy bench` read `COUNT(*)` so by default
/// (`--count-names`): on since session 17's measurement (ACME's first 24
/// 5 → 6, DDO 13 → 13 and the Spider sample's first 50 29 → 29 with no
/// other answer changed; benchmarks/results/embedded.md).
pub const DEFAULT_ON: bool = true;

/// `sql` (a query over the view `view_name` that the guard admitted) with
/// each `COUNT(*)` that would count rows the view repeats read as a count
/// of `instance`'s rows, or `None` when no `COUNT(*)` needed it (see the
/// module's rules).
pub fn rewrite(
    sql: &str,
    grain: &Grain,
    view_name: &str,
    instance: &str,
    dialect: Dialect,
) -> Result<Option<CountNote>> {
    let Some(inst) = grain.instance(instance) else { return Ok(None) };
    let [key] = inst.key.as_slice() else { return Ok(None) };
    if !grain.fans_out() {
        return Ok(None);
    }
    let (original, q) = super::parse_query(sql, dialect, "COUNT(*)")?;
    let Some(mut q) = q else { return Ok(None) };
    let d = parser_dialect(dialect);
    let mut v = Counter {
        grain,
        view_name: view_name.to_ascii_lowercase(),
        instance: inst.instance.clone(),
        key: quote_alias(key, dialect),
        parser: &*d,
        dialect,
        repeated_by: Vec::new(),
        changed: 0,
        err: None,
    };
    let _ = q.visit(&mut v);
    if let Some(e) = v.err {
        return Err(e);
    }
    if v.changed == 0 {
        return Ok(None);
    }
    Ok(Some(CountNote {
        instance: inst.instance.clone(),
        key: key.clone(),
        repeated_by: v.repeated_by,
        original,
        rewritten: q.to_string(),
    }))
}

struct Counter<'a> {
    grain: &'a Grain,
    view_name: String,
    instance: String,
    /// The key column, quoted for the dialect where needed.
    key: String,
    parser: &'a dyn SqlDialect,
    dialect: Dialect,
    repeated_by: Vec<String>,
    changed: usize,
    err: Option<Error>,
}

impl VisitorMut for Counter<'_> {
    type Break = ();
    fn post_visit_query(&mut self, q: &mut Query) -> ControlFlow<()> {
        if let SetExpr::Select(sel) = q.body.as_mut() {
            self.select(sel, q.order_by.as_mut());
        }
        ControlFlow::Continue(())
    }
}

impl Counter<'_> {
    fn select(&mut self, sel: &mut Select, order: Option<&mut OrderBy>) {
        let Some(binding) = view_binding(sel, &self.view_name) else { return };
        let Some(groups) = group_exprs(sel) else { return };
        let grain = self.grain;
        let (bind_lower, view_name) = (binding.to_ascii_lowercase(), self.view_name.clone());
        let resolve = move |q: Option<&str>, c: &str| -> Option<String> {
            if q.is_some_and(|q| q != bind_lower && q != view_name) {
                return None;
            }
            grain.instance_of(c).map(|i| i.instance.clone())
        };
        let fixed = fixed_instances(grain, &groups, &resolve);
        let mut set: Vec<&str> = vec![self.instance.as_str()];
        set.extend(fixed.iter().map(String::as_str));
        let by = grain.multipliers_of(&set);
        if by.is_empty() {
            return;
        }
        let text = format!("COUNT(DISTINCT {})", self.key);
        let replacement = match Parser::new(self.parser).try_with_sql(&text).and_then(|mut p| p.parse_expr()) {
            Ok(x) => x,
            Err(e) => {
                self.err = Some(Error::Sql(format!("the COUNT(*) rewrite produced unparsable SQL ({e}): {text}")));
                return;
            }
        };
        // Top-level `COUNT(*)`/`COUNT(<number>)` (not inside subqueries).
        let mut changed = 0;
        let mut swap = |e: &mut Expr| {
            if matches!(e, Expr::Function(f) if counts_rows(f)) {
                *e = replacement.clone();
                changed += 1;
            }
        };
        visit_aggregate_places(sel, order, &mut swap, self.dialect);
        if changed > 0 {
            self.changed += changed;
            for b in by {
                if !self.repeated_by.contains(&b) {
                    self.repeated_by.push(b);
                }
            }
        }
    }
}

/// `COUNT(*)` or `COUNT(<number>)`: a count of rows, not DISTINCT, not a
/// window, without FILTER.
fn counts_rows(f: &Function) -> bool {
    let is_count = f.name.0.last().and_then(|p| p.as_ident()).is_some_and(|i| i.value.eq_ignore_ascii_case("count"));
    if !is_count || !is_counting(f) || f.filter.is_some() {
        return false;
    }
    let FunctionArguments::List(l) = &f.args else { return false };
    match l.args.as_slice() {
        [FunctionArg::Unnamed(FunctionArgExpr::Wildcard)] => true,
        [FunctionArg::Unnamed(FunctionArgExpr::Expr(Expr::Value(v)))] => matches!(v.value, Value::Number(..)),
        _ => false,
    }
}

#[cfg(test)]
#[path = "counted_tests.rs"]
mod tests;
