//! Aggregates that count rows: `SUM`, `AVG`, `COUNT`, `TOTAL`,
//! `GROUP_CONCAT`/`STRING_AGG` (and `ARRAY_AGG`/`LISTAGG`) without
//! `DISTINCT` and without `OVER`, found at the top level of one SELECT (its
//! projection and HAVING) and of the ORDER BY of the query around it, with
//! the table instances their arguments read. `MIN`/`MAX` and any
//! `DISTINCT` aggregate do not depend on how often a row repeats and are
//! never reported.

use sqlparser::ast::{
    DuplicateTreatment, Expr, Function, FunctionArg, FunctionArgExpr, FunctionArguments, OrderBy, OrderByKind, Select,
    SelectItem,
};

use crate::sql::analyze::{column_name, top_level_exprs};

/// Aggregate functions of the dialects lucy writes.
pub const AGGREGATES: &[&str] = &[
    "count",
    "sum",
    "avg",
    "min",
    "max",
    "total",
    "group_concat",
    "string_agg",
    "array_agg",
    "listagg",
    "bool_and",
    "bool_or",
    "every",
    "stddev",
    "variance",
];

/// Aggregates whose value changes when a row is repeated.
const COUNTING: &[&str] = &["sum", "avg", "count", "total", "group_concat", "string_agg", "array_agg", "listagg"];

/// Resolves a column reference (qualifier, column; lower-cased) to the
/// instance it reads, or `None` when it is not a column of the relations
/// analysed (an alias, an outer column, an unknown name).
pub type Resolve<'a> = dyn Fn(Option<&str>, &str) -> Option<String> + 'a;

/// One counting aggregate.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AggUse {
    /// As written, e.g. `SUM(PAYAMOUNT_amount)`.
    pub text: String,
    /// `SELECT`, `HAVING` or `ORDER BY`.
    pub clause: &'static str,
    /// Instances its arguments read, sorted, without repeats; empty for
    /// `COUNT(*)` and constant arguments.
    pub instances: Vec<String>,
}

/// Whether `f` is a counting aggregate (not DISTINCT, not a window).
pub fn is_counting(f: &Function) -> bool {
    if f.over.is_some() {
        return false;
    }
    let Some(name) = f.name.0.last().and_then(|p| p.as_ident()) else { return false };
    if !COUNTING.contains(&name.value.to_ascii_lowercase().as_str()) {
        return false;
    }
    match &f.args {
        FunctionArguments::List(l) => l.duplicate_treatment != Some(DuplicateTreatment::Distinct),
        _ => false,
    }
}

/// The first argument's expression, the value that is counted (`None` for
/// `COUNT(*)`).
pub fn first_arg_mut(f: &mut Function) -> Option<&mut Expr> {
    let FunctionArguments::List(l) = &mut f.args else { return None };
    match l.args.first_mut()? {
        FunctionArg::Unnamed(FunctionArgExpr::Expr(e))
        | FunctionArg::Named { arg: FunctionArgExpr::Expr(e), .. }
        | FunctionArg::ExprNamed { arg: FunctionArgExpr::Expr(e), .. } => Some(e),
        _ => None,
    }
}

/// Instances read by the arguments of `f` (sorted, unique).
pub fn instances_of(f: &Function, resolve: &Resolve<'_>) -> Vec<String> {
    let mut out = Vec::new();
    let mut hit = |e: &Expr| {
        if let Expr::Identifier(_) | Expr::CompoundIdentifier(_) = e {
            out.extend(column_name(e).and_then(|(q, c)| resolve(q.as_deref(), &c)));
        }
    };
    top_level_exprs(&f.args, &mut hit);
    if let Some(filter) = &f.filter {
        top_level_exprs(filter, &mut hit);
    }
    out.sort();
    out.dedup();
    out
}

/// Counting aggregates of one SELECT (projection, HAVING) and of its
/// query's ORDER BY, in that order, at the top level (not inside subqueries).
pub fn counting_aggregates(sel: &Select, order: Option<&OrderBy>, resolve: &Resolve<'_>) -> Vec<AggUse> {
    let mut out = Vec::new();
    let mut found = |clause: &'static str, e: &Expr| {
        top_level_exprs(e, |x| {
            if let Expr::Function(f) = x {
                if is_counting(f) {
                    out.push(AggUse { text: f.to_string(), clause, instances: instances_of(f, resolve) });
                }
            }
        })
    };
    for item in &sel.projection {
        match item {
            SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } => found("SELECT", e),
            SelectItem::ExprWithAliases { expr, .. } => found("SELECT", expr),
            _ => {}
        }
    }
    if let Some(h) = &sel.having {
        found("HAVING", h);
    }
    if let Some(OrderBy { kind: OrderByKind::Expressions(v), .. }) = order {
        for o in v {
            found("ORDER BY", &o.expr);
        }
    }
    out
}
