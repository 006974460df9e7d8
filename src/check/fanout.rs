//! Fan-out-safe aggregates over the view.
//!
//! The view joins every relevant table into one row set, so a row of one
//! table appears once per matching row of every table joined on a "many"
//! side away from it (the view's grain, `types::grain`). A `SUM`, `AVG`,
//! `COUNT`, `TOTAL` or `GROUP_CONCAT` over such a column counts the row that
//! many times: a chasm trap (two independent "many" branches) or a fan trap
//! (a parent's measure summed after joining its children).
//!
//! [`analyze`] finds those aggregates in every SELECT that reads the view
//! alone and, in mode `rewrite`, rewrites the SELECT so each row of the
//! aggregated instance counts once per group:
//!
//! ```sql
//! SELECT CLIENT_name, SUM(PAYAMOUNT_amount) FROM lucy_view WHERE p GROUP BY CLIENT_name
//! -- becomes
//! SELECT CLIENT_name, SUM(CASE WHEN lucy_view.lucy_once_1 = 1 THEN PAYAMOUNT_amount END)
//! FROM (SELECT *, ROW_NUMBER() OVER (PARTITION BY CLIENT_name, PAYAMOUNT_id) AS lucy_once_1
//!       FROM lucy_view WHERE p) AS lucy_view
//! GROUP BY CLIENT_name
//! ```
//!
//! The filter moves inside so the numbering sees exactly the rows the
//! original query aggregated; the partition is the group plus the
//! instance's key, so the first row of each (group, instance row) carries
//! the value and the repeats carry NULL, which every counting aggregate
//! ignores. Aggregates that were right stay untouched and see the same rows
//! as before. `MIN`/`MAX` and `DISTINCT` aggregates never change.

use std::collections::BTreeSet;
use std::ops::ControlFlow;

use sqlparser::ast::{
    Expr, GroupByExpr, Ident, OrderBy, OrderByKind, Query, Select, SelectItem, SetExpr, Statement, TableFactor, Value,
    VisitMut, VisitorMut,
};
use sqlparser::dialect::Dialect as SqlDialect;
use sqlparser::parser::Parser;

use super::aggregates::{counting_aggregates, first_arg_mut, instances_of, is_counting, AggUse, Resolve};
use crate::error::{Error, Result};
use crate::sql::guard::parser_dialect;
use crate::types::{Dialect, FanoutFinding, FanoutMode, FanoutReport, Grain, ViewResult};
use crate::view::sql::quote_alias;

/// Prefix of the row-numbering columns the rewrite adds.
pub const ONCE_PREFIX: &str = "lucy_once_";

/// Find aggregates over repeated rows in `sql` (a query over `view` that the
/// guard admitted) and, in mode `rewrite`, rewrite them. The report's
/// `rewritten` is set only when something was rewritten; findings that
/// cannot be rewritten are marked so (the caller refuses those).
pub fn analyze(sql: &str, view: &ViewResult, dialect: Dialect, mode: FanoutMode) -> Result<FanoutReport> {
    let original = sql.trim().trim_end_matches(';').trim().to_string();
    let mut report = FanoutReport { mode, original, ..FanoutReport::default() };
    if view.grain.instances.is_empty() || !view.grain.fans_out() {
        return Ok(report);
    }
    let d = parser_dialect(dialect);
    let mut stmts = Parser::parse_sql(&*d, &report.original)
        .map_err(|e| Error::Sql(format!("fan-out analysis cannot parse the SQL as {}: {e}", dialect.as_str())))?;
    let Some(Statement::Query(q)) = stmts.first_mut() else { return Ok(report) };
    let q: &mut Query = q.as_mut();
    let mut rw = Rewriter {
        grain: &view.grain,
        view_name: view.view_name.to_ascii_lowercase(),
        parser: &*d,
        dialect,
        mode,
        findings: Vec::new(),
        skipped: Vec::new(),
        windows: 0,
        err: None,
    };
    let _ = q.visit(&mut rw);
    if let Some(e) = rw.err {
        return Err(e);
    }
    let mut seen = BTreeSet::new();
    report.findings =
        rw.findings.into_iter().filter(|f| seen.insert((f.aggregate.clone(), f.clause.clone()))).collect();
    report.skipped = rw.skipped;
    if rw.windows > 0 {
        report.rewritten = Some(q.to_string());
    }
    Ok(report)
}

struct Rewriter<'a> {
    grain: &'a Grain,
    view_name: String,
    parser: &'a dyn SqlDialect,
    dialect: Dialect,
    mode: FanoutMode,
    findings: Vec<FanoutFinding>,
    skipped: Vec<String>,
    /// Row-numbering columns added so far (names are unique per query).
    windows: usize,
    err: Option<Error>,
}

impl VisitorMut for Rewriter<'_> {
    type Break = ();
    fn post_visit_query(&mut self, q: &mut Query) -> ControlFlow<()> {
        let order = q.order_by.as_mut();
        match q.body.as_mut() {
            SetExpr::Select(sel) => self.select(sel, order),
            other => self.branches(other),
        }
        ControlFlow::Continue(())
    }
}

impl Rewriter<'_> {
    /// The SELECTs of a set operation (their ORDER BY, if any, is the
    /// enclosing query's and applies to the union, not to a branch).
    fn branches(&mut self, body: &mut SetExpr) {
        match body {
            SetExpr::Select(sel) => self.select(sel, None),
            SetExpr::SetOperation { left, right, .. } => {
                self.branches(left);
                self.branches(right);
            }
            _ => {}
        }
    }

    fn select(&mut self, sel: &mut Select, order: Option<&mut OrderBy>) {
        let Some(binding) = view_binding(sel, &self.view_name) else {
            if self.reads_view(sel) {
                let grain = self.grain;
                let any = |_: Option<&str>, c: &str| grain.instance_of(c).map(|i| i.instance.clone());
                if !counting_aggregates(sel, order.as_deref(), &any).is_empty() {
                    self.skipped.push(format!(
                        "a SELECT joins the view with other relations; its aggregates were not checked for fan-out: {}",
                        short(&sel.to_string())
                    ));
                }
            }
            return;
        };
        let grain = self.grain;
        let (bind_lower, view_name) = (binding.to_ascii_lowercase(), self.view_name.clone());
        let resolve = move |q: Option<&str>, c: &str| -> Option<String> {
            if q.is_some_and(|q| q != bind_lower && q != view_name) {
                return None;
            }
            grain.instance_of(c).map(|i| i.instance.clone())
        };
        let uses = counting_aggregates(sel, order.as_deref(), &resolve);
        let groups = group_exprs(sel);
        let fixed = fixed_instances(self.grain, groups.as_deref().unwrap_or(&[]), &resolve);
        let mut flagged: Vec<(AggUse, FanoutFinding)> = Vec::new();
        for u in uses {
            if let Some(f) = self.classify(&u, sel, &fixed) {
                flagged.push((u, f));
            }
        }
        if flagged.is_empty() {
            return;
        }
        let rewrite = self.mode == FanoutMode::Rewrite && flagged.iter().all(|(_, f)| f.rewritable);
        if !rewrite {
            self.findings.extend(flagged.into_iter().map(|(_, f)| f));
            return;
        }
        // One row numbering per distinct instance set.
        let mut sets: Vec<Vec<String>> = Vec::new();
        for (u, _) in &flagged {
            if !sets.contains(&u.instances) {
                sets.push(u.instances.clone());
            }
        }
        let Some(groups) = groups else {
            for (_, mut f) in flagged {
                f.rewritable = false;
                f.message = format!(
                    "{}; cannot be rewritten: GROUP BY ALL is not supported, list the grouping columns",
                    f.message
                );
                self.findings.push(f);
            }
            return;
        };
        let mut names = Vec::new();
        let mut windows = Vec::new();
        for s in &sets {
            self.windows += 1;
            let name = format!("{ONCE_PREFIX}{}", self.windows);
            let mut parts: Vec<String> = groups.iter().map(|g| g.to_string()).collect();
            for inst in s {
                if let Some(i) = self.grain.instance(inst) {
                    parts.extend(i.key.iter().map(|k| quote_alias(k, self.dialect)));
                }
            }
            windows.push(format!("{} AS {name}", row_number_over(&parts, self.dialect)));
            names.push((s.clone(), name));
        }
        let relation = sel.from[0].relation.to_string();
        let filter = sel.selection.as_ref().map(|w| format!(" WHERE {w}")).unwrap_or_default();
        let inner = format!("SELECT *, {} FROM {relation}{filter}", windows.join(", "));
        let wrapper = format!("SELECT 1 FROM ({inner}) AS {binding}");
        let from = match parse_select(self.parser, &wrapper) {
            Ok(s) => s.from,
            Err(e) => {
                self.err = Some(Error::Sql(format!("fan-out rewrite produced unparsable SQL ({e}): {wrapper}")));
                return;
            }
        };
        sel.from = from;
        sel.selection = None;
        // Each counting aggregate over a repeated set reads its argument
        // only on the first row of each partition.
        let parser = self.parser;
        let mut err = None;
        let mut mark = |e: &mut Expr| {
            let Expr::Function(f) = e else { return };
            if !is_counting(f) {
                return;
            }
            let set = instances_of(f, &resolve);
            let Some((_, name)) = names.iter().find(|(s, _)| *s == set) else { return };
            let Some(arg) = first_arg_mut(f) else { return };
            let text = format!("CASE WHEN {binding}.{name} = 1 THEN {arg} END");
            match Parser::new(parser).try_with_sql(&text).and_then(|mut p| p.parse_expr()) {
                Ok(x) => *arg = x,
                Err(e) => err = Some(Error::Sql(format!("fan-out rewrite produced unparsable SQL ({e}): {text}"))),
            }
        };
        visit_aggregate_places(sel, order, &mut mark, self.dialect);
        if let Some(e) = err {
            self.err = Some(e);
        }
        self.findings.extend(flagged.into_iter().map(|(_, f)| f));
    }

    fn reads_view(&self, sel: &Select) -> bool {
        let is_view = |tf: &TableFactor| match tf {
            TableFactor::Table { name, .. } => {
                name.0.last().and_then(|p| p.as_ident()).is_some_and(|i| i.value.eq_ignore_ascii_case(&self.view_name))
            }
            _ => false,
        };
        sel.from.iter().any(|t| is_view(&t.relation) || t.joins.iter().any(|j| is_view(&j.relation)))
    }

    /// A finding for one counting aggregate, or `None` when it counts each
    /// row once.
    fn classify(&self, u: &AggUse, sel: &Select, fixed: &[String]) -> Option<FanoutFinding> {
        let g = self.grain;
        let with_fixed = |set: &[&str]| {
            let mut all: Vec<&str> = set.to_vec();
            all.extend(fixed.iter().map(String::as_str));
            g.multipliers_of(&all)
        };
        if u.instances.is_empty() {
            // COUNT(*) counts rows of the view: right when some instance's
            // rows appear once each within a group and every view row has
            // one (not reached through a LEFT JOIN).
            let once: Vec<&crate::types::grain::InstanceGrain> =
                g.instances.iter().filter(|i| with_fixed(&[i.instance.as_str()]).is_empty()).collect();
            if once.iter().any(|i| !i.outer) {
                return None;
            }
            if let Some(i) = once.iter().find(|i| !i.key.is_empty()) {
                return Some(FanoutFinding {
                    aggregate: u.text.clone(),
                    clause: u.clause.into(),
                    instances: Vec::new(),
                    multiplied_by: Vec::new(),
                    rewritable: false,
                    message: format!(
                        "{} in {} counts rows of the view, including rows where {} has no row (NULLs from its LEFT JOIN); count {}'s rows with COUNT({})",
                        u.text, u.clause, i.instance, i.instance, i.key[0]
                    ),
                });
            }
            let all: Vec<String> =
                g.instances.iter().filter(|i| !i.key.is_empty()).map(|i| i.instance.clone()).collect();
            let hint = g
                .instances
                .iter()
                .find(|i| !i.key.is_empty())
                .map(|i| format!(", e.g. COUNT(DISTINCT {})", i.key[0]))
                .unwrap_or_default();
            return Some(FanoutFinding {
                aggregate: u.text.clone(),
                clause: u.clause.into(),
                instances: Vec::new(),
                multiplied_by: all.clone(),
                rewritable: false,
                message: format!(
                    "{} in {} counts rows of the view, and each row is a combination of rows of {}: the count is not a number of anything; count one table's rows with COUNT(DISTINCT <its key>){hint}",
                    u.text, u.clause, all.join(", ")
                ),
            });
        }
        let refs: Vec<&str> = u.instances.iter().map(String::as_str).collect();
        let by = with_fixed(&refs);
        if by.is_empty() {
            return None;
        }
        let keyless: Vec<&str> =
            refs.iter().copied().filter(|i| g.instance(i).is_none_or(|x| x.key.is_empty())).collect();
        let wildcard =
            sel.projection.iter().any(|p| matches!(p, SelectItem::Wildcard(_) | SelectItem::QualifiedWildcard(..)));
        let mut msg = format!(
            "{} in {} reads {} rows, which the view repeats once per matching row of {}",
            u.text,
            u.clause,
            u.instances.join(", "),
            by.join(", ")
        );
        let rewritable = keyless.is_empty() && !wildcard;
        if !keyless.is_empty() {
            msg.push_str(&format!(
                "; cannot be rewritten: the view has no key column of {} (a table without a primary key, or its key not selected)",
                keyless.join(", ")
            ));
        } else if wildcard {
            msg.push_str("; cannot be rewritten next to `*` in the select list: name the columns");
        }
        match self.mode {
            FanoutMode::Rewrite if rewritable => {
                msg.push_str(&format!("; rewritten to count each {} row once per group", u.instances.join("+")));
            }
            FanoutMode::Warn => msg.push_str("; run as written (--fanout warn): the result may be too large"),
            _ => {
                let keys: Vec<String> =
                    refs.iter().filter_map(|i| g.instance(i)).flat_map(|i| i.key.iter().cloned()).collect();
                msg.push_str(&format!(
                    "; aggregate each {} row once, e.g. over SELECT DISTINCT <group columns>, {}, <value> FROM the view (or rerun with --fanout rewrite)",
                    u.instances.join("+"),
                    if keys.is_empty() { "<its key>".to_string() } else { keys.join(", ") }
                ));
            }
        }
        Some(FanoutFinding {
            aggregate: u.text.clone(),
            clause: u.clause.into(),
            instances: u.instances.clone(),
            multiplied_by: by,
            rewritable,
            message: msg,
        })
    }
}

/// Calls `f` on every expression it visits outside subqueries (their
/// queries raise the depth), after the expression's children.
struct TopLevel<'f> {
    depth: usize,
    f: &'f mut dyn FnMut(&mut Expr),
}

impl VisitorMut for TopLevel<'_> {
    type Break = ();
    fn pre_visit_query(&mut self, _q: &mut Query) -> ControlFlow<()> {
        self.depth += 1;
        ControlFlow::Continue(())
    }
    fn post_visit_query(&mut self, _q: &mut Query) -> ControlFlow<()> {
        self.depth -= 1;
        ControlFlow::Continue(())
    }
    fn post_visit_expr(&mut self, e: &mut Expr) -> ControlFlow<()> {
        if self.depth == 0 {
            (self.f)(e);
        }
        ControlFlow::Continue(())
    }
}

/// Visit the places of one SELECT where its aggregates stand — the select
/// list, HAVING and its query's ORDER BY — with `v`. An unnamed select item
/// that `v` changes keeps the name the engine gave it as written: SQLite,
/// MySQL and Spark name an unnamed expression after its text, which a
/// rewrite changes; PostgreSQL names an aggregate after its function.
/// `f` sees every expression there outside subqueries, innermost first.
/// Shared with [`super::counted`].
pub(super) fn visit_aggregate_places(
    sel: &mut Select,
    order: Option<&mut OrderBy>,
    f: &mut dyn FnMut(&mut Expr),
    dialect: Dialect,
) {
    let v = &mut TopLevel { depth: 0, f };
    let quote = dialect.name_quote();
    for item in sel.projection.iter_mut() {
        match item {
            SelectItem::UnnamedExpr(e) => {
                let before = e.to_string();
                let pg_name = match &*e {
                    Expr::Function(f) => {
                        f.name.0.last().and_then(|p| p.as_ident()).map(|i| i.value.to_ascii_lowercase())
                    }
                    _ => None,
                };
                let _ = e.visit(v);
                let name = if dialect == Dialect::Postgres { pg_name } else { Some(before.clone()) };
                if let (true, Some(name)) = (e.to_string() != before, name) {
                    let expr = std::mem::replace(e, Expr::Value(Value::Null.into()));
                    *item = SelectItem::ExprWithAlias { expr, alias: Ident::with_quote(quote, name) };
                }
            }
            SelectItem::ExprWithAlias { expr: e, .. } | SelectItem::ExprWithAliases { expr: e, .. } => {
                let _ = e.visit(v);
            }
            _ => {}
        }
    }
    if let Some(h) = sel.having.as_mut() {
        let _ = h.visit(v);
    }
    if let Some(OrderBy { kind: OrderByKind::Expressions(list), .. }) = order {
        for o in list.iter_mut() {
            let _ = o.expr.visit(v);
        }
    }
}

/// The SELECT's grouping expressions, with `GROUP BY 2` and select-list
/// aliases replaced by the expressions they stand for (the row numbering
/// runs before the select list exists). `None` for `GROUP BY ALL`.
pub(super) fn group_exprs(sel: &Select) -> Option<Vec<Expr>> {
    let exprs = match &sel.group_by {
        GroupByExpr::All(_) => return None,
        GroupByExpr::Expressions(v, _) => v,
    };
    let item_expr = |i: usize| match sel.projection.get(i) {
        Some(SelectItem::UnnamedExpr(e)) | Some(SelectItem::ExprWithAlias { expr: e, .. }) => Some(e.clone()),
        _ => None,
    };
    let alias_expr = |name: &str| {
        sel.projection.iter().find_map(|p| match p {
            SelectItem::ExprWithAlias { expr, alias } if alias.value.eq_ignore_ascii_case(name) => Some(expr.clone()),
            _ => None,
        })
    };
    Some(
        exprs
            .iter()
            .map(|e| match e {
                Expr::Value(v) => match &v.value {
                    Value::Number(n, _) => n
                        .parse::<usize>()
                        .ok()
                        .and_then(|i| i.checked_sub(1))
                        .and_then(&item_expr)
                        .unwrap_or_else(|| e.clone()),
                    _ => e.clone(),
                },
                Expr::Identifier(i) => alias_expr(&i.value).unwrap_or_else(|| e.clone()),
                other => other.clone(),
            })
            .collect(),
    )
}

/// Instances a GROUP BY fixes: every column of their key is grouped on,
/// and every view row has a row of them (not reached through a LEFT JOIN).
///
/// An outer instance's key is NULL on every view row where it has no
/// match, and all those rows fall into one NULL group: there the key fixes
/// no row, neither its own nor the rows it would determine across M:1
/// joins (e.g. kept `T0` 1:M `T1` 1:M `T2`, `GROUP BY T2_id`: the NULL group
/// holds a `T0` row once per `T1` child without a `T2` row, so
/// `COUNT(T0_v)` there counts it twice). Treating it as not fixed makes the
/// analysis flag such aggregates, and the rewrite (partitioned by the group
/// and the aggregated instance's key) counts each row once in every group,
/// the NULL one included.
pub(super) fn fixed_instances(g: &Grain, groups: &[Expr], resolve: &Resolve<'_>) -> Vec<String> {
    let grouped: Vec<String> = groups
        .iter()
        .filter_map(|e| match e {
            Expr::Identifier(i) => resolve(None, &i.value.to_ascii_lowercase()).map(|_| i.value.to_ascii_lowercase()),
            Expr::CompoundIdentifier(p) if p.len() >= 2 => {
                let n = p.len();
                let c = p[n - 1].value.to_ascii_lowercase();
                resolve(Some(&p[n - 2].value.to_ascii_lowercase()), &c).map(|_| c)
            }
            _ => None,
        })
        .collect();
    g.instances
        .iter()
        .filter(|i| !i.outer)
        .filter(|i| !i.key.is_empty() && i.key.iter().all(|k| grouped.contains(&k.to_ascii_lowercase())))
        .map(|i| i.instance.clone())
        .collect()
}

/// The name the SELECT reads the view `view_name` under, as written (quotes
/// kept), when the view is its only relation (`FROM lucy_view` or `FROM
/// lucy_view AS v`). Shared with [`super::distinct`].
pub(super) fn view_binding(sel: &Select, view_name: &str) -> Option<String> {
    let [twj] = sel.from.as_slice() else { return None };
    if !twj.joins.is_empty() {
        return None;
    }
    let TableFactor::Table { name, alias, args: None, .. } = &twj.relation else { return None };
    let [part] = name.0.as_slice() else { return None };
    let ident = part.as_ident()?;
    if !ident.value.eq_ignore_ascii_case(view_name) {
        return None;
    }
    Some(match alias {
        Some(a) => a.name.to_string(),
        None => ident.to_string(),
    })
}

/// [`view_binding`] unquoted and lower-cased (`"T1"` → `t1`): what a
/// column's qualifier ([`crate::sql::analyze::column_name`]) is compared
/// with. Shared with the literal rewrites ([`super::literals`],
/// [`super::values`]).
pub(super) fn view_binding_key(sel: &Select, view_name: &str) -> Option<String> {
    let b = view_binding(sel, view_name)?;
    Some(b.trim_matches(|c| c == '"' || c == '`' || c == '[' || c == ']').to_ascii_lowercase())
}

/// The single SELECT of `sql` (the rewrites' wrappers). Shared with
/// [`super::distinct`].
pub(super) fn parse_select(d: &dyn SqlDialect, sql: &str) -> std::result::Result<Select, String> {
    let stmts = Parser::parse_sql(d, sql).map_err(|e| e.to_string())?;
    match stmts.into_iter().next() {
        Some(Statement::Query(q)) => {
            let q = *q;
            match *q.body {
                SetExpr::Select(s) => Ok(*s),
                _ => Err("not a SELECT".into()),
            }
        }
        _ => Err("not a query".into()),
    }
}

fn short(s: &str) -> String {
    let t: String = s.chars().take(120).collect();
    if t.len() < s.len() {
        format!("{t}…")
    } else {
        t
    }
}

/// `ROW_NUMBER() OVER (PARTITION BY parts)`: which row of each partition
/// comes first does not matter to the rewrites (any one stands for it).
/// Spark refuses `row_number` over an unordered window
/// (`WINDOW_FUNCTION_FRAME_NOT_ORDERED`), so there the partition keys also
/// order it, which picks the same "any row".
pub(super) fn row_number_over(parts: &[String], dialect: Dialect) -> String {
    let by = parts.join(", ");
    if dialect == Dialect::Spark {
        format!("ROW_NUMBER() OVER (PARTITION BY {by} ORDER BY {by})")
    } else {
        format!("ROW_NUMBER() OVER (PARTITION BY {by})")
    }
}

#[cfg(test)]
#[path = "fanout_tests.rs"]
mod tests;
