//! Rows the view repeats, in a plain list (`--distinct auto`).
//!
//! The view joins every relevant table into one row set, so a row of
//! `CLIENT` appears once per resource pool it uses when the view also
//! joins `RSPOOL2CLIENT` (the view's grain, `types::grain`). A query that
//! lists columns of some instances only (`SELECT CLIENT_name,
//! DATACENTER_name FROM lucy_view WHERE …`) then returns each answer once
//! per path that joins it: DDO Q1's answer had 34 rows where the question's
//! 29 pairs are meant. The aggregates' analogue is [`super::fanout`].
//!
//! [`analyze`] keeps one row per combination of the listed instances' rows
//! (their keys), numbering the view's rows as the fan-out rewrite does:
//!
//! ```sql
//! SELECT CLIENT_name, DATACENTER_name FROM lucy_view WHERE p
//! -- becomes
//! SELECT CLIENT_name, DATACENTER_name
//! FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY CLIENT_id, DATACENTER_id) AS lucy_first_1
//!       FROM lucy_view WHERE p) AS lucy_view
//! WHERE lucy_first_1 = 1
//! ```
//!
//! so two clients called alike stay two rows (plain `DISTINCT` would merge
//! them, and would drop rows the question means: two memory configurations
//! of one pool with the same reservation, DDO Q12). When a listed instance
//! has no key in the view, `SELECT DISTINCT` is the fallback. The query is
//! rewritten only when all of these hold, and otherwise left alone:
//! - it is one SELECT over the view alone (no WITH, no set operation, no
//!   join), not already DISTINCT, without GROUP BY, HAVING, aggregates or
//!   window functions (those say how rows are counted);
//! - every select item is an expression (no `*`) and at least one reads a
//!   view column;
//! - the instances those columns come from are repeated by some join of the
//!   view (`Grain::multipliers_of` is not empty);
//! - every ORDER BY item reads only those instances' columns, or is a
//!   select item's alias or position (an order by another instance's
//!   column would depend on which of the repeated rows is kept).

use sqlparser::ast::{Distinct, Expr, GroupByExpr, OrderBy, OrderByKind, Query, Select, SelectItem, SetExpr};

use super::aggregates::AGGREGATES;
use super::fanout::{parse_select, row_number_over, view_binding};
use crate::error::{Error, Result};
use crate::sql::analyze::{column_name, top_level_exprs};
use crate::sql::guard::parser_dialect;
use crate::types::{Dialect, DistinctNote, Grain};
use crate::view::sql::quote_alias;

/// Prefix of the row-numbering column the rewrite adds.
pub const FIRST_PREFIX: &str = "lucy_first_";

/// One row per listed entity for `sql` (a query over the view `view_name`
/// that the guard admitted), or `None` when the query does not list rows
/// the view repeats (see the module's rules).
pub fn analyze(sql: &str, grain: &Grain, view_name: &str, dialect: Dialect) -> Result<Option<DistinctNote>> {
    if grain.instances.is_empty() || !grain.fans_out() {
        return Ok(None);
    }
    let (original, q) = super::parse_query(sql, dialect, "DISTINCT")?;
    let Some(mut q) = q else { return Ok(None) };
    let q: &mut Query = &mut q;
    let d = parser_dialect(dialect);
    if q.with.is_some() {
        return Ok(None);
    }
    let SetExpr::Select(sel) = q.body.as_ref() else { return Ok(None) };
    let Some(binding) = view_binding(sel, view_name) else { return Ok(None) };
    if !plain_list(sel) {
        return Ok(None);
    }
    let (view_lower, bind_lower) = (view_name.to_ascii_lowercase(), binding.to_ascii_lowercase());
    let resolve = |qual: Option<&str>, col: &str| -> Option<String> {
        if qual.is_some_and(|q| q != bind_lower && q != view_lower) {
            return None;
        }
        grain.instance_of(col).map(|i| i.instance.clone())
    };
    let mut instances: Vec<String> = Vec::new();
    for item in &sel.projection {
        let e = match item {
            SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } => e,
            _ => return Ok(None),
        };
        for i in instances_read(e, &resolve) {
            if !instances.contains(&i) {
                instances.push(i);
            }
        }
    }
    if instances.is_empty() {
        return Ok(None);
    }
    let set: Vec<&str> = instances.iter().map(String::as_str).collect();
    let repeated_by = grain.multipliers_of(&set);
    if repeated_by.is_empty() || !order_reads_only(q, &instances, &resolve) {
        return Ok(None);
    }
    let mut keys: Vec<String> = Vec::new();
    for i in &instances {
        match grain.instance(i) {
            Some(g) if !g.key.is_empty() => keys.extend(g.key.iter().cloned()),
            _ => {
                keys.clear();
                break;
            }
        }
    }
    let SetExpr::Select(sel) = q.body.as_mut() else { return Ok(None) };
    if keys.is_empty() {
        // A listed instance without a key in the view: distinct values.
        if !order_items_listed(&q.order_by, sel) {
            return Ok(None);
        }
        sel.distinct = Some(Distinct::Distinct);
        return Ok(Some(DistinctNote { instances, repeated_by, by: Vec::new(), original, rewritten: q.to_string() }));
    }
    let name = format!("{FIRST_PREFIX}1");
    let relation = sel.from[0].relation.to_string();
    let filter = sel.selection.as_ref().map(|w| format!(" WHERE {w}")).unwrap_or_default();
    let parts: Vec<String> = keys.iter().map(|k| quote_alias(k, dialect)).collect();
    let wrapper = format!(
        "SELECT 1 FROM (SELECT *, {} AS {name} FROM {relation}{filter}) AS {binding} WHERE {binding}.{name} = 1",
        row_number_over(&parts, dialect)
    );
    let wrapped = parse_select(&*d, &wrapper)
        .map_err(|e| Error::Sql(format!("the DISTINCT rewrite produced unparsable SQL ({e}): {wrapper}")))?;
    sel.from = wrapped.from;
    sel.selection = wrapped.selection;
    Ok(Some(DistinctNote { instances, repeated_by, by: keys, original, rewritten: q.to_string() }))
}

/// Instances whose columns `e` reads (outside subqueries).
fn instances_read(e: &Expr, resolve: &dyn Fn(Option<&str>, &str) -> Option<String>) -> Vec<String> {
    let mut out = Vec::new();
    top_level_exprs(e, |x| {
        if let Some((qual, col)) = column_name(x) {
            if let Some(i) = resolve(qual.as_deref(), &col) {
                if !out.contains(&i) {
                    out.push(i);
                }
            }
        }
    });
    out
}

/// Whether every ORDER BY item of `q` is a position, a select item's alias
/// or an expression that reads only columns of `instances` (constant among
/// the rows of one listed combination).
fn order_reads_only(q: &Query, instances: &[String], resolve: &dyn Fn(Option<&str>, &str) -> Option<String>) -> bool {
    let Some(ob) = &q.order_by else { return true };
    let OrderByKind::Expressions(items) = &ob.kind else { return false };
    let SetExpr::Select(sel) = q.body.as_ref() else { return false };
    items.iter().all(|o| {
        if matches!(&o.expr, Expr::Value(_)) {
            return true;
        }
        if let Expr::Identifier(id) = &o.expr {
            let alias = sel.projection.iter().any(
                |p| matches!(p, SelectItem::ExprWithAlias { alias, .. } if alias.value.eq_ignore_ascii_case(&id.value)),
            );
            if alias {
                return true;
            }
        }
        let mut known = true;
        top_level_exprs(&o.expr, |x| {
            if let Some((qual, col)) = column_name(x) {
                match resolve(qual.as_deref(), &col) {
                    Some(i) if instances.contains(&i) => {}
                    _ => known = false,
                }
            }
        });
        known
    })
}

/// A SELECT that lists rows: not DISTINCT, no GROUP BY or HAVING, no
/// aggregate or window function at its top level.
fn plain_list(sel: &Select) -> bool {
    if sel.distinct.is_some() || sel.having.is_some() || sel.top.is_some() || !sel.named_window.is_empty() {
        return false;
    }
    match &sel.group_by {
        GroupByExpr::Expressions(v, m) if v.is_empty() && m.is_empty() => {}
        _ => return false,
    }
    let mut counts = false;
    for item in &sel.projection {
        if let SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } = item {
            top_level_exprs(e, |x| {
                if let Expr::Function(f) = x {
                    let name = f.name.0.last().and_then(|p| p.as_ident()).map(|i| i.value.to_ascii_lowercase());
                    if f.over.is_some() || name.as_deref().is_some_and(|n| AGGREGATES.contains(&n)) {
                        counts = true;
                    }
                }
            });
        }
    }
    !counts
}

/// Whether every ORDER BY item is one of the select items, as written or by
/// alias, or a position (PostgreSQL and MySQL refuse `SELECT DISTINCT`
/// ordered by anything else).
fn order_items_listed(order: &Option<OrderBy>, sel: &Select) -> bool {
    let Some(ob) = order else { return true };
    let OrderByKind::Expressions(items) = &ob.kind else { return false };
    items.iter().all(|o| {
        let text = o.expr.to_string();
        if matches!(&o.expr, Expr::Value(_)) {
            return true;
        }
        sel.projection.iter().any(|p| match p {
            SelectItem::UnnamedExpr(e) => e.to_string().eq_ignore_ascii_case(&text),
            SelectItem::ExprWithAlias { expr, alias } => {
                expr.to_string().eq_ignore_ascii_case(&text) || alias.value.eq_ignore_ascii_case(&text)
            }
            _ => false,
        })
    })
}

#[cfg(test)]
#[path = "distinct_tests.rs"]
mod tests;
