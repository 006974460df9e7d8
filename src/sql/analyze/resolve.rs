//! Name resolution for `sql::analyze`: scopes (CTEs, derived tables, set
//! operations, correlated subqueries) walked by hand, expressions walked with
//! sqlparser's visitor.

use std::collections::HashSet;
use std::ops::ControlFlow;

use sqlparser::ast::{
    BinaryOperator, Expr, Ident, JoinConstraint, JoinOperator, ObjectName, Query, Select, SelectItem,
    SelectItemQualifiedWildcardKind, SetExpr, TableAlias, TableFactor, TableWithJoins, Visit, Visitor,
};

use super::{JoinPair, QueryRefs};
use crate::types::{ColumnRef, DbModel};

pub(super) fn lower_ref(c: &ColumnRef) -> ColumnRef {
    ColumnRef::new(c.table.to_ascii_lowercase(), c.column.to_ascii_lowercase())
}

/// `"T.c"` → `ColumnRef` (the last dot separates the column).
pub(super) fn split_ref(s: &str) -> Option<ColumnRef> {
    let (t, c) = s.rsplit_once('.')?;
    Some(lower_ref(&ColumnRef::new(t, c)))
}

fn ident(i: &Ident) -> String {
    i.value.to_ascii_lowercase()
}

fn last_name(name: &ObjectName) -> Option<String> {
    name.0.last().and_then(|p| p.as_ident()).map(ident)
}

/// An output column of a derived table, CTE or view, with the base column
/// it passes through unchanged (none for computed expressions).
#[derive(Debug, Clone)]
pub(super) struct OutputCol {
    pub(super) name: String,
    pub(super) source: Option<ColumnRef>,
}

/// The lucy view seen as a relation of the analyzed query.
pub(super) struct ViewBase {
    pub(super) name: String,
    pub(super) cols: Vec<OutputCol>,
    pub(super) tables: Vec<String>,
    pub(super) pairs: Vec<JoinPair>,
}

#[derive(Debug, Clone)]
enum RelKind {
    Base(String),
    Derived(Vec<OutputCol>),
}

#[derive(Debug, Clone)]
struct Relation {
    /// Alias, or table name when unaliased (lower-case).
    name: String,
    /// Unique per occurrence: two aliases of one table are two instances.
    instance: usize,
    kind: RelKind,
}

/// Name resolution context of one SELECT.
struct Scope<'p> {
    parent: Option<&'p Scope<'p>>,
    ctes: Vec<(String, Vec<OutputCol>)>,
    relations: Vec<Relation>,
    select_aliases: Vec<String>,
}

impl Scope<'_> {
    fn cte(&self, name: &str) -> Option<&Vec<OutputCol>> {
        self.ctes
            .iter()
            .rev()
            .find(|(n, _)| n == name)
            .map(|(_, c)| c)
            .or_else(|| self.parent.and_then(|p| p.cte(name)))
    }
}

/// A resolved column reference.
#[derive(Debug, Clone)]
struct Resolved {
    col: Option<ColumnRef>,
    instance: usize,
}

pub(super) struct Analyzer<'m> {
    model: Option<&'m DbModel>,
    pub(super) refs: QueryRefs,
    next_instance: usize,
    view: Option<(String, Vec<OutputCol>)>,
}

impl<'m> Analyzer<'m> {
    pub(super) fn new(model: Option<&'m DbModel>) -> Self {
        Analyzer { model, refs: QueryRefs::default(), next_instance: 0, view: None }
    }

    pub(super) fn top_level(&mut self, q: &Query, view: Option<&ViewBase>) {
        if let Some(v) = view {
            for t in &v.tables {
                self.refs.tables.insert(t.clone());
                *self.refs.table_uses.entry(t.clone()).or_default() += 1;
            }
            for p in &v.pairs {
                self.refs.columns.insert(p.left.clone());
                self.refs.columns.insert(p.right.clone());
                self.refs.join_pairs.insert(p.clone());
            }
            self.view = Some((v.name.clone(), v.cols.clone()));
        }
        self.refs.ordered = q.order_by.is_some();
        let root = Scope { parent: None, ctes: Vec::new(), relations: Vec::new(), select_aliases: Vec::new() };
        self.query(q, &root);
    }

    fn instance(&mut self) -> usize {
        self.next_instance += 1;
        self.next_instance
    }

    fn model_columns(&self, table: &str) -> Option<Vec<String>> {
        let t = self.model?.table(table)?;
        Some(t.columns.iter().map(|c| c.name.to_ascii_lowercase()).collect())
    }

    /// Analyze a (sub)query; returns its output columns.
    fn query(&mut self, q: &Query, parent: &Scope) -> Vec<OutputCol> {
        let mut with_scope = Scope { parent: Some(parent), ctes: Vec::new(), relations: Vec::new(), select_aliases: Vec::new() };
        if let Some(with) = &q.with {
            for cte in &with.cte_tables {
                let name = ident(&cte.alias.name);
                // Registered before its body so a recursive CTE refers to
                // itself instead of to a base table of the same name.
                with_scope.ctes.push((name.clone(), Vec::new()));
                let cols = self.query(&cte.query, &with_scope);
                let cols = rename_outputs(cols, &cte.alias);
                if let Some(slot) = with_scope.ctes.iter_mut().rev().find(|(n, _)| *n == name) {
                    slot.1 = cols;
                }
            }
        }
        let order: Vec<&Expr> = match q.order_by.as_ref().map(|o| &o.kind) {
            Some(sqlparser::ast::OrderByKind::Expressions(v)) => v.iter().map(|e| &e.expr).collect(),
            _ => Vec::new(),
        };
        self.set_expr(&q.body, &with_scope, &order)
    }

    fn set_expr(&mut self, body: &SetExpr, scope: &Scope, order: &[&Expr]) -> Vec<OutputCol> {
        match body {
            SetExpr::Select(s) => self.select(s, scope, order),
            SetExpr::Query(q) => self.query(q, scope),
            SetExpr::SetOperation { left, right, .. } => {
                self.refs.set_operation = true;
                let out = self.set_expr(left, scope, &[]);
                self.set_expr(right, scope, &[]);
                out
            }
            other => {
                // VALUES / TABLE: still collect whatever it references.
                self.exprs_in(other, scope);
                Vec::new()
            }
        }
    }

    fn select(&mut self, s: &Select, parent: &Scope, order: &[&Expr]) -> Vec<OutputCol> {
        let mut scope = Scope { parent: Some(parent), ctes: Vec::new(), relations: Vec::new(), select_aliases: Vec::new() };
        let mut on_exprs: Vec<Expr> = Vec::new();
        for twj in &s.from {
            self.from_item(twj, &mut scope, &mut on_exprs);
        }
        scope.select_aliases = s
            .projection
            .iter()
            .filter_map(|p| match p {
                SelectItem::ExprWithAlias { alias, .. } => Some(ident(alias)),
                _ => None,
            })
            .collect();
        for e in &on_exprs {
            self.join_condition(e, &scope);
        }
        if let Some(w) = &s.selection {
            self.join_condition(w, &scope);
        }
        let mut out = Vec::new();
        for item in &s.projection {
            match item {
                SelectItem::UnnamedExpr(e) => {
                    let source = self.expr(e, &scope);
                    let name = match e {
                        Expr::Identifier(i) => ident(i),
                        Expr::CompoundIdentifier(v) => v.last().map(ident).unwrap_or_default(),
                        other => other.to_string().to_ascii_lowercase(),
                    };
                    out.push(OutputCol { name, source });
                }
                SelectItem::ExprWithAlias { expr, alias } => {
                    let source = self.expr(expr, &scope);
                    out.push(OutputCol { name: ident(alias), source });
                }
                SelectItem::ExprWithAliases { expr, aliases } => {
                    let source = self.expr(expr, &scope);
                    for a in aliases {
                        out.push(OutputCol { name: ident(a), source: source.clone() });
                    }
                }
                SelectItem::Wildcard(_) => {
                    for r in scope.relations.clone() {
                        out.extend(self.expand(&r));
                    }
                }
                SelectItem::QualifiedWildcard(kind, _) => {
                    let q = match kind {
                        SelectItemQualifiedWildcardKind::ObjectName(n) => last_name(n),
                        SelectItemQualifiedWildcardKind::Expr(e) => {
                            self.expr(e, &scope);
                            None
                        }
                    };
                    if let Some(r) = q.and_then(|q| scope.relations.iter().find(|r| r.name == q).cloned()) {
                        out.extend(self.expand(&r));
                    }
                }
            }
        }
        // Everything else (GROUP BY, HAVING, QUALIFY, ORDER BY, …): the
        // projection and FROM were handled above, so visit the rest.
        for e in s.prewhere.iter().chain(s.having.iter()).chain(s.qualify.iter()) {
            self.expr(e, &scope);
        }
        self.exprs_in(&s.group_by, &scope);
        for e in order {
            self.expr(e, &scope);
        }
        out
    }

    /// Output columns of `*` over one relation; records base columns.
    fn expand(&mut self, r: &Relation) -> Vec<OutputCol> {
        match &r.kind {
            RelKind::Base(t) => {
                let cols = self.model_columns(t).unwrap_or_default();
                cols.into_iter()
                    .map(|c| {
                        let cr = ColumnRef::new(t.clone(), c.clone());
                        self.refs.columns.insert(cr.clone());
                        OutputCol { name: c, source: Some(cr) }
                    })
                    .collect()
            }
            RelKind::Derived(cols) => {
                for c in cols.iter().filter_map(|c| c.source.clone()) {
                    self.refs.columns.insert(c);
                }
                cols.clone()
            }
        }
    }

    fn from_item(&mut self, twj: &TableWithJoins, scope: &mut Scope, on_exprs: &mut Vec<Expr>) {
        let first = scope.relations.len();
        self.table_factor(&twj.relation, scope, on_exprs);
        for join in &twj.joins {
            let before = scope.relations.len();
            self.table_factor(&join.relation, scope, on_exprs);
            let constraint = match &join.join_operator {
                JoinOperator::Join(c)
                | JoinOperator::Inner(c)
                | JoinOperator::Left(c)
                | JoinOperator::LeftOuter(c)
                | JoinOperator::Right(c)
                | JoinOperator::RightOuter(c)
                | JoinOperator::FullOuter(c)
                | JoinOperator::CrossJoin(c)
                | JoinOperator::Semi(c)
                | JoinOperator::LeftSemi(c)
                | JoinOperator::RightSemi(c)
                | JoinOperator::Anti(c)
                | JoinOperator::LeftAnti(c)
                | JoinOperator::RightAnti(c)
                | JoinOperator::StraightJoin(c) => Some(c),
                JoinOperator::AsOf { constraint, .. } => Some(constraint),
                _ => None,
            };
            let (left, right) = (first..before, before..scope.relations.len());
            match constraint {
                Some(JoinConstraint::On(e)) => on_exprs.push(e.clone()),
                Some(JoinConstraint::Using(cols)) => {
                    for c in cols.iter().filter_map(last_name) {
                        self.using_pair(&c, scope, left.clone(), right.clone(), true);
                    }
                }
                Some(JoinConstraint::Natural) => {
                    let names: Vec<String> =
                        right.clone().flat_map(|i| self.relation_columns(&scope.relations[i])).collect();
                    for c in names {
                        self.using_pair(&c, scope, left.clone(), right.clone(), false);
                    }
                }
                _ => {}
            }
        }
    }

    /// Column names a relation is known to have (model or derived outputs).
    fn relation_columns(&self, r: &Relation) -> Vec<String> {
        match &r.kind {
            RelKind::Base(t) => self.model_columns(t).unwrap_or_default(),
            RelKind::Derived(cols) => cols.iter().map(|c| c.name.clone()).collect(),
        }
    }

    fn has_column(&self, r: &Relation, c: &str) -> Option<bool> {
        match &r.kind {
            RelKind::Base(t) => self.model_columns(t).map(|cols| cols.iter().any(|x| x == c)),
            RelKind::Derived(cols) => Some(cols.iter().any(|x| x.name == c)),
        }
    }

    fn column_of(&self, r: &Relation, c: &str) -> Resolved {
        let col = match &r.kind {
            RelKind::Base(t) => Some(ColumnRef::new(t.clone(), c)),
            RelKind::Derived(cols) => cols.iter().find(|x| x.name == c).and_then(|x| x.source.clone()),
        };
        Resolved { col, instance: r.instance }
    }

    /// `USING (c)` / NATURAL: pair the right relation's `c` with the last
    /// left relation that has it. Without a model a base table is assumed to
    /// have it (`assume`), which is what USING promises.
    fn using_pair(&mut self, c: &str, scope: &Scope, left: std::ops::Range<usize>, right: std::ops::Range<usize>, assume: bool) {
        let pick = |range: std::ops::Range<usize>| {
            range.rev().find(|&i| self.has_column(&scope.relations[i], c).unwrap_or(assume))
        };
        let (Some(l), Some(r)) = (pick(left), pick(right)) else { return };
        let a = self.column_of(&scope.relations[l], c);
        let b = self.column_of(&scope.relations[r], c);
        for x in [&a, &b] {
            if let Some(col) = &x.col {
                self.refs.columns.insert(col.clone());
            }
        }
        if let (Some(x), Some(y)) = (a.col, b.col) {
            self.refs.join_pairs.insert(JoinPair::new(&x, &y));
        }
    }

    fn table_factor(&mut self, tf: &TableFactor, scope: &mut Scope, on_exprs: &mut Vec<Expr>) {
        match tf {
            TableFactor::Table { name, alias, args, .. } => {
                let Some(tname) = last_name(name) else { return };
                let instance = self.instance();
                let rel_name = alias.as_ref().map(|a| ident(&a.name)).unwrap_or_else(|| tname.clone());
                if let Some(a) = args {
                    for arg in &a.args {
                        self.exprs_in(arg, scope);
                    }
                }
                let single = name.0.len() == 1;
                let kind = if let Some(cols) = single.then(|| scope.cte(&tname)).flatten() {
                    RelKind::Derived(cols.clone())
                } else if let Some((_, vcols)) = self.view.as_ref().filter(|(v, _)| single && *v == tname) {
                    RelKind::Derived(vcols.clone())
                } else {
                    self.refs.tables.insert(tname.clone());
                    *self.refs.table_uses.entry(tname.clone()).or_default() += 1;
                    RelKind::Base(tname)
                };
                let kind = match (kind, alias) {
                    (RelKind::Derived(cols), Some(a)) => RelKind::Derived(rename_outputs(cols, a)),
                    (k, _) => k,
                };
                scope.relations.push(Relation { name: rel_name, instance, kind });
            }
            TableFactor::Derived { subquery, alias, .. } => {
                let cols = self.query(subquery, scope);
                let instance = self.instance();
                let (name, cols) = match alias {
                    Some(a) => (ident(&a.name), rename_outputs(cols, a)),
                    None => (String::new(), cols),
                };
                scope.relations.push(Relation { name, instance, kind: RelKind::Derived(cols) });
            }
            TableFactor::NestedJoin { table_with_joins, .. } => {
                self.from_item(table_with_joins, scope, on_exprs);
            }
            other => self.exprs_in(other, scope),
        }
    }

    /// Record join pairs from the AND-conjuncts of an ON/WHERE condition,
    /// then every column reference in it.
    fn join_condition(&mut self, e: &Expr, scope: &Scope) {
        let mut conjuncts = Vec::new();
        split_and(e, &mut conjuncts);
        for c in conjuncts {
            if let Expr::BinaryOp { left, op: BinaryOperator::Eq, right } = c {
                if let (Some(l), Some(r)) = (self.column_expr(strip(left), scope), self.column_expr(strip(right), scope)) {
                    if l.instance != r.instance {
                        if let (Some(a), Some(b)) = (&l.col, &r.col) {
                            self.refs.join_pairs.insert(JoinPair::new(a, b));
                        }
                    }
                }
            }
        }
        self.expr(e, scope);
    }

    /// Resolve an expression if it is a plain column reference.
    fn column_expr(&mut self, e: &Expr, scope: &Scope) -> Option<Resolved> {
        match e {
            // SQLite reads an unresolvable "double-quoted" name as a string.
            Expr::Identifier(i) => self.resolve(None, &ident(i), scope, i.quote_style == Some('"')),
            Expr::CompoundIdentifier(parts) if parts.len() >= 2 => {
                let n = parts.len();
                self.resolve(Some(&ident(&parts[n - 2])), &ident(&parts[n - 1]), scope, false)
            }
            _ => None,
        }
    }

    fn resolve(&mut self, qualifier: Option<&str>, col: &str, scope: &Scope, maybe_string: bool) -> Option<Resolved> {
        let mut s = Some(scope);
        while let Some(sc) = s {
            if let Some(q) = qualifier {
                if let Some(r) = sc.relations.iter().rev().find(|r| r.name == q) {
                    return Some(self.column_of(r, col));
                }
            } else {
                // Several matches is an ambiguous query; attribute it to the
                // first relation rather than drop it.
                if let Some(r) = sc.relations.iter().find(|r| self.has_column(r, col) == Some(true)) {
                    return Some(self.column_of(r, col));
                }
                if sc.select_aliases.iter().any(|a| a == col) {
                    return None;
                }
            }
            s = sc.parent;
        }
        if maybe_string {
            return None;
        }
        // Nothing claims it and no model knows the table: in a scope with a
        // single base table, that table must own it.
        if qualifier.is_none() {
            let mut s = Some(scope);
            while let Some(sc) = s {
                if let [r @ Relation { kind: RelKind::Base(_), .. }] = sc.relations.as_slice() {
                    if self.has_column(r, col).is_none() {
                        return Some(self.column_of(r, col));
                    }
                }
                if !sc.relations.is_empty() {
                    break;
                }
                s = sc.parent;
            }
        }
        let name = match qualifier {
            Some(q) => format!("{q}.{col}"),
            None => col.to_string(),
        };
        self.refs.unresolved.insert(name);
        None
    }

    /// Record every column of an expression (and analyze its subqueries);
    /// returns the base column when the expression is a plain column.
    fn expr(&mut self, e: &Expr, scope: &Scope) -> Option<ColumnRef> {
        let direct = match strip(e) {
            x @ (Expr::Identifier(_) | Expr::CompoundIdentifier(_)) => self.column_expr(x, scope).and_then(|r| r.col),
            _ => None,
        };
        if let Some(c) = &direct {
            self.refs.columns.insert(c.clone());
            return direct;
        }
        self.exprs_in(e, scope);
        None
    }

    /// Visit any AST node: columns it references, subqueries it contains.
    fn exprs_in<V: Visit>(&mut self, node: &V, scope: &Scope) {
        let mut v = ExprVisitor { a: self, scope, depth: 0, done: HashSet::new() };
        let _ = node.visit(&mut v);
    }
}

/// Apply a table alias's column list (`AS t(a, b)`) to output columns.
fn rename_outputs(mut cols: Vec<OutputCol>, alias: &TableAlias) -> Vec<OutputCol> {
    for (c, a) in cols.iter_mut().zip(alias.columns.iter()) {
        c.name = ident(&a.name);
    }
    cols
}

fn strip(e: &Expr) -> &Expr {
    match e {
        Expr::Nested(inner) => strip(inner),
        other => other,
    }
}

fn split_and<'e>(e: &'e Expr, out: &mut Vec<&'e Expr>) {
    match strip(e) {
        Expr::BinaryOp { left, op: BinaryOperator::And, right } => {
            split_and(left, out);
            split_and(right, out);
        }
        other => out.push(other),
    }
}

/// Walks expressions at depth 0 of one scope; subqueries are handed back
/// to the analyzer with this scope as parent and skipped by the walk.
struct ExprVisitor<'a, 'm, 's, 'p> {
    a: &'a mut Analyzer<'m>,
    scope: &'s Scope<'p>,
    depth: usize,
    done: HashSet<*const Query>,
}

impl ExprVisitor<'_, '_, '_, '_> {
    /// Analyze `subquery` now (the walk skips it) and link its first output
    /// column to `outer` when both are plain columns.
    fn semi_join(&mut self, outer: &Expr, subquery: &Query) {
        if self.done.contains(&(subquery as *const Query)) {
            return;
        }
        let outs = self.a.query(subquery, self.scope);
        self.done.insert(subquery as *const Query);
        let inner = outs.first().and_then(|o| o.source.clone());
        let outer = self.a.column_expr(strip(outer), self.scope).and_then(|r| r.col);
        if let (Some(x), Some(y)) = (outer, inner) {
            self.a.refs.semi_join_pairs.insert(JoinPair::new(&x, &y));
        }
    }
}

impl Visitor for ExprVisitor<'_, '_, '_, '_> {
    type Break = ();

    fn pre_visit_query(&mut self, q: &Query) -> ControlFlow<()> {
        if self.depth == 0 && !self.done.contains(&(q as *const Query)) {
            self.a.query(q, self.scope);
        }
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
        match e {
            Expr::Identifier(_) | Expr::CompoundIdentifier(_) => {
                if let Some(c) = self.a.column_expr(e, self.scope).and_then(|r| r.col) {
                    self.a.refs.columns.insert(c);
                }
            }
            Expr::InSubquery { expr, subquery, .. } => self.semi_join(expr, subquery),
            // `col = (SELECT col2 …)`: a scalar subquery compared with a column.
            Expr::BinaryOp { left, op: BinaryOperator::Eq, right } => match (strip(left), strip(right)) {
                (Expr::Subquery(q), other) | (other, Expr::Subquery(q)) => self.semi_join(other, q),
                _ => {}
            },
            _ => {}
        }
        ControlFlow::Continue(())
    }
}

