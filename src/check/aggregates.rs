//! Aggregates that count rows: `SUM`, `AVG`, `COUNT`, `TOTAL`,
//! `GROUP_CONCAT`/`STRING_AGG` (and `ARRAY_AGG`/`LISTAGG`) without
//! `DISTINCT` and without `OVER`, found at the top level of one SELECT (its
//! projection and HAVING) and of the ORDER BY of the query around it, with
//! the table instances their arguments read. `MIN`/`MAX` and any
//! `DISTINCT` aggregate do not depend on how often a row repeats and are
//! never reported.

use std::ops::ControlFlow;

use sqlparser::ast::{
    DuplicateTreatment, Expr, Function, FunctionArg, FunctionArgExpr, FunctionArguments, OrderBy, OrderByKind, Query,
    Select, SelectItem, Visit, Visitor,
};

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
    let mut v = Columns { resolve, depth: 0, out: Vec::new() };
    let _ = f.args.visit(&mut v);
    if let Some(filter) = &f.filter {
        let _ = filter.visit(&mut v);
    }
    let mut out = v.out;
    out.sort();
    out.dedup();
    out
}

struct Columns<'r, 'a> {
    resolve: &'r Resolve<'a>,
    depth: usize,
    out: Vec<String>,
}

impl Visitor for Columns<'_, '_> {
    type Break = ();
    fn pre_visit_query(&mut self, _q: &Query) -> ControlFlow<()> {
        self.depth += 1;
        ControlFlow::Continue(())
    }
    fn post_visit_query(&mut self, _q: &Query) -> ControlFlow<()> {
        self.depth -= 1;
        ControlFlow::Continue(())
    }
    fn pre_visit_expr(&mut self, e: &Expr) -> ControlFlow<()> {
        if self.depth > 0 {
            return ControlFlow::Continue(());
        }
        let hit = match e {
            Expr::Identifier(i) => (self.resolve)(None, &i.value.to_ascii_lowercase()),
            Expr::CompoundIdentifier(p) if p.len() >= 2 => {
                let n = p.len();
                (self.resolve)(Some(&p[n - 2].value.to_ascii_lowercase()), &p[n - 1].value.to_ascii_lowercase())
            }
            _ => None,
        };
        if let Some(h) = hit {
            self.out.push(h);
        }
        ControlFlow::Continue(())
    }
}

/// Counting aggregates of one SELECT (projection, HAVING) and of its
/// query's ORDER BY, in that order, at the top level (not inside subqueries).
pub fn counting_aggregates(sel: &Select, order: Option<&OrderBy>, resolve: &Resolve<'_>) -> Vec<AggUse> {
    let mut found = Found { resolve, depth: 0, clause: "SELECT", out: Vec::new() };
    for item in &sel.projection {
        match item {
            SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } => {
                let _ = e.visit(&mut found);
            }
            SelectItem::ExprWithAliases { expr, .. } => {
                let _ = expr.visit(&mut found);
            }
            _ => {}
        }
    }
    found.clause = "HAVING";
    if let Some(h) = &sel.having {
        let _ = h.visit(&mut found);
    }
    found.clause = "ORDER BY";
    if let Some(OrderBy { kind: OrderByKind::Expressions(v), .. }) = order {
        for o in v {
            let _ = o.expr.visit(&mut found);
        }
    }
    found.out
}

struct Found<'r, 'a> {
    resolve: &'r Resolve<'a>,
    depth: usize,
    clause: &'static str,
    out: Vec<AggUse>,
}

impl Visitor for Found<'_, '_> {
    type Break = ();
    fn pre_visit_query(&mut self, _q: &Query) -> ControlFlow<()> {
        self.depth += 1;
        ControlFlow::Continue(())
    }
    fn post_visit_query(&mut self, _q: &Query) -> ControlFlow<()> {
        self.depth -= 1;
        ControlFlow::Continue(())
    }
    fn pre_visit_expr(&mut self, e: &Expr) -> ControlFlow<()> {
        if self.depth == 0 {
            if let Expr::Function(f) = e {
                if is_counting(f) {
                    self.out.push(AggUse { text: f.to_string(), clause: self.clause, instances: instances_of(f, self.resolve) });
                }
            }
        }
        ControlFlow::Continue(())
    }
}
