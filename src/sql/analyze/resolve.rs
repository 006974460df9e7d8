//! The one SQL scope resolver: scopes (WITH lists with each dialect's CTE
//! visibility, derived tables, set-operation branches, correlated and lateral
//! subqueries) walked by hand, expressions walked with sqlparser's visitor.
//!
//! `sql::analyze` reads the [`QueryRefs`] it fills; the SQL guard reads the
//! [`Resolution`]: what every relation and column reference resolved to, and
//! which AST nodes the walk reached (the guard rejects a query with any node
//! the walk did not reach, so a clause this walk forgets cannot smuggle a
//! relation past it).

use std::collections::{HashMap, HashSet};
use std::ops::{ControlFlow, Range};

use sqlparser::ast::{
    BinaryOperator, Distinct, Expr, GroupByExpr, Ident, JoinConstraint, JoinOperator, ObjectName, OrderBy, OrderByKind,
    Query, Select, SelectItem, SelectItemQualifiedWildcardKind, SetExpr, TableAlias, TableFactor, TableWithJoins,
    Visit, Visitor,
};

use super::scope::{
    ColumnOutcome, ColumnUse, Equality, RelationTarget, RelationUse, Resolution, ScopeColumn, ScopeRelation,
    SelectScope,
};
use super::walk::{top_level_exprs, walk_top_level, TopLevel};
use super::{JoinPair, Occurrence, OccurrencePair, QueryRefs, SelectObserver};
use crate::types::{ColumnRef, DbModel, Dialect};

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

/// The output columns of a (sub)query; `open` when more columns may exist
/// than are listed (`VALUES`, `*` over a table nobody knows).
#[derive(Debug, Clone, Default)]
pub(super) struct Outputs {
    pub(super) cols: Vec<OutputCol>,
    pub(super) open: bool,
}

impl Outputs {
    fn open() -> Self {
        Outputs { cols: Vec::new(), open: true }
    }
}

/// The lucy view seen as a relation of the analyzed query.
pub(super) struct ViewBase {
    pub(super) name: String,
    pub(super) cols: Vec<OutputCol>,
    pub(super) tables: Vec<String>,
    pub(super) pairs: Vec<JoinPair>,
}

/// The tables whose columns the resolver knows.
pub(super) enum Catalog<'m> {
    None,
    Model(&'m DbModel),
    /// Lower-cased table name → lower-cased columns.
    Tables(HashMap<String, Vec<String>>),
}

#[derive(Debug, Clone)]
enum RelKind {
    Base(String),
    Derived(Outputs),
}

#[derive(Debug, Clone)]
struct Relation {
    /// Alias, or table name when unaliased (lower-case).
    name: String,
    /// Alias or name as written, for messages.
    display: String,
    /// The table name's last part as written (empty for other sources).
    written: String,
    /// Unique per occurrence: two aliases of one table are two instances.
    instance: usize,
    kind: RelKind,
}

impl Relation {
    fn derived(name: String, display: String, instance: usize, out: Outputs) -> Self {
        Relation { name, display, written: String::new(), instance, kind: RelKind::Derived(out) }
    }
}

/// Name resolution context of one SELECT or one WITH list.
struct Scope<'p> {
    parent: Option<&'p Scope<'p>>,
    /// CTEs visible here; `None` outputs while a body is being resolved
    /// and the dialect lets it see itself or a later sibling.
    ctes: Vec<(String, Outputs)>,
    relations: Vec<Relation>,
    select_aliases: Vec<String>,
}

impl<'p> Scope<'p> {
    fn child(parent: &'p Scope<'p>) -> Self {
        Scope { parent: Some(parent), ctes: Vec::new(), relations: Vec::new(), select_aliases: Vec::new() }
    }

    fn cte(&self, name: &str) -> Option<&Outputs> {
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
    /// The base column it reads (none for a derived table's computed column).
    col: Option<ColumnRef>,
    instance: usize,
    /// Where: `up` scopes out, relation `rel` there.
    at: ScopeColumn,
}

/// The SELECT being walked: its number and the clause the walk is in.
#[derive(Debug, Clone, Default)]
struct Context {
    select: Option<usize>,
    clause: Option<String>,
}

/// What one SELECT gathers while it is walked.
#[derive(Default)]
struct Gathered {
    scope: SelectScope,
    /// USING / NATURAL equalities, listed after the ON and WHERE ones.
    using: Vec<Equality>,
}

fn addr<T>(x: &T) -> usize {
    x as *const T as usize
}

pub(super) struct Analyzer<'m> {
    catalog: Catalog<'m>,
    dialect: Dialect,
    pub(super) refs: QueryRefs,
    pub(super) facts: Resolution,
    next_instance: usize,
    view: Option<(String, Vec<OutputCol>)>,
    pub(super) observer: Option<&'m mut dyn SelectObserver>,
    context: Context,
    /// The SELECTs being walked, innermost last.
    selects: Vec<Gathered>,
    next_select: usize,
    /// Relation instance → index in `refs.occurrences` (base tables only).
    occurrence_of: HashMap<usize, usize>,
}

impl<'m> Analyzer<'m> {
    pub(super) fn new(catalog: Catalog<'m>, dialect: Dialect) -> Self {
        Analyzer {
            catalog,
            dialect,
            refs: QueryRefs::default(),
            facts: Resolution::default(),
            next_instance: 0,
            view: None,
            observer: None,
            context: Context::default(),
            selects: Vec::new(),
            next_select: 0,
            occurrence_of: HashMap::new(),
        }
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
        let _ = q.visit(&mut CteNames(&mut self.facts.cte_names));
        let root = Scope { parent: None, ctes: Vec::new(), relations: Vec::new(), select_aliases: Vec::new() };
        self.query(q, &root);
    }

    fn instance(&mut self) -> usize {
        self.next_instance += 1;
        self.next_instance
    }

    fn model_columns(&self, table: &str) -> Option<Vec<String>> {
        match &self.catalog {
            Catalog::None => None,
            Catalog::Model(m) => {
                let t = m.table(table)?;
                Some(t.columns.iter().map(|c| c.name.to_ascii_lowercase()).collect())
            }
            Catalog::Tables(t) => t.get(table).cloned(),
        }
    }

    /// Which CTEs of one WITH list a body sees besides the earlier ones:
    /// (itself, the later siblings). SQLite resolves a name to any CTE of
    /// the list, whatever the order and with or without RECURSIVE;
    /// PostgreSQL does so only under RECURSIVE; MySQL's RECURSIVE adds only
    /// the CTE itself. Without it, a CTE's own name in its body means the
    /// table of that name (PostgreSQL, MySQL).
    fn cte_visibility(&self, recursive: bool) -> (bool, bool) {
        match self.dialect {
            Dialect::Sqlite => (true, true),
            Dialect::Postgres => (recursive, recursive),
            Dialect::Mysql | Dialect::Spark => (recursive, false),
        }
    }

    /// Analyze a (sub)query; returns its output columns.
    fn query(&mut self, q: &Query, parent: &Scope) -> Outputs {
        let outer = std::mem::take(&mut self.context);
        let out = self.query_in(q, parent);
        self.context = outer;
        out
    }

    fn query_in(&mut self, q: &Query, parent: &Scope) -> Outputs {
        self.facts.queries.insert(addr(q));
        let mut with_scope = Scope::child(parent);
        if let Some(with) = &q.with {
            let (own, later) = self.cte_visibility(with.recursive);
            let placeholder = |alias: &TableAlias| {
                if alias.columns.is_empty() {
                    Outputs::open()
                } else {
                    let cols = alias.columns.iter().map(|c| OutputCol { name: ident(&c.name), source: None }).collect();
                    Outputs { cols, open: false }
                }
            };
            let base = with_scope.ctes.len();
            if later {
                for cte in &with.cte_tables {
                    with_scope.ctes.push((ident(&cte.alias.name), placeholder(&cte.alias)));
                }
            }
            for (i, cte) in with.cte_tables.iter().enumerate() {
                let name = ident(&cte.alias.name);
                if !later && own {
                    with_scope.ctes.push((name.clone(), placeholder(&cte.alias)));
                }
                let out = self.query(&cte.query, &with_scope);
                let out = rename_outputs(out, &cte.alias);
                if later {
                    with_scope.ctes[base + i].1 = out;
                } else if own {
                    if let Some(slot) = with_scope.ctes.last_mut() {
                        slot.1 = out;
                    }
                } else {
                    with_scope.ctes.push((name, out));
                }
            }
        }
        let order: Vec<&Expr> = match q.order_by.as_ref().map(|o| &o.kind) {
            Some(OrderByKind::Expressions(v)) => v.iter().map(|e| &e.expr).collect(),
            _ => Vec::new(),
        };
        let out = match &*q.body {
            SetExpr::Select(s) => self.select(s, &with_scope, q.order_by.as_ref()),
            other => {
                let out = self.set_expr(other, &with_scope);
                // ORDER BY of a set operation names output columns (of any
                // branch, in SQLite): resolve it over them.
                let mut outer = Scope::child(&with_scope);
                let mut all = Self::branch_outputs(other);
                all.open |= out.open;
                let instance = self.instance();
                outer.relations.push(Relation::derived(String::new(), String::new(), instance, all));
                for e in &order {
                    self.expr(e, &outer);
                }
                out
            }
        };
        if let Some(l) = &q.limit_clause {
            self.exprs_in(l, &with_scope);
        }
        if let Some(f) = &q.fetch {
            self.exprs_in(f, &with_scope);
        }
        out
    }

    /// The output names of every branch of a set operation, without
    /// walking the branches again (their outputs were recorded already).
    fn branch_outputs(body: &SetExpr) -> Outputs {
        match body {
            SetExpr::SetOperation { left, right, .. } => {
                let mut a = Self::branch_outputs(left);
                let b = Self::branch_outputs(right);
                a.cols.extend(b.cols);
                a.open |= b.open;
                a
            }
            SetExpr::Select(s) => select_output_names(s),
            SetExpr::Query(q) => match &*q.body {
                b @ (SetExpr::Select(_) | SetExpr::SetOperation { .. } | SetExpr::Query(_)) => Self::branch_outputs(b),
                _ => Outputs::open(),
            },
            _ => Outputs::open(),
        }
    }

    fn set_expr(&mut self, body: &SetExpr, scope: &Scope) -> Outputs {
        match body {
            SetExpr::Select(s) => self.select(s, scope, None),
            SetExpr::Query(q) => self.query(q, scope),
            SetExpr::SetOperation { left, right, .. } => {
                self.refs.set_operation = true;
                let mut out = self.set_expr(left, scope);
                let r = self.set_expr(right, scope);
                out.open |= r.open;
                out
            }
            SetExpr::Table(t) => {
                let text = t.to_string();
                self.facts.relations.push(RelationUse {
                    written: text.clone(),
                    target: RelationTarget::Unsupported(text),
                    defined_elsewhere: false,
                });
                Outputs::open()
            }
            other => {
                // VALUES (or a data-modifying body the guard rejects):
                // still collect whatever it references.
                self.exprs_in(other, scope);
                Outputs::open()
            }
        }
    }

    fn set_clause(&mut self, clause: Option<&str>) {
        self.context.clause = clause.map(str::to_string);
    }

    /// One SELECT: walked (`select_in`), then what it gathered handed to
    /// the observer.
    fn select(&mut self, s: &Select, parent: &Scope, order_by: Option<&OrderBy>) -> Outputs {
        let id = self.next_select;
        self.next_select += 1;
        self.selects.push(Gathered { scope: SelectScope { id, ..SelectScope::default() }, using: Vec::new() });
        self.context = Context { select: Some(id), clause: None };
        let mut scope = Scope::child(parent);
        let out = self.select_in(s, &mut scope, order_by);
        let Some(Gathered { scope: mut facts, using }) = self.selects.pop() else { return out };
        facts.equalities.extend(using);
        facts.relations = scope
            .relations
            .iter()
            .map(|r| ScopeRelation {
                name: r.name.clone(),
                display: r.display.clone(),
                table: match &r.kind {
                    RelKind::Base(t) => Some(t.clone()),
                    RelKind::Derived(_) => None,
                },
                written: r.written.clone(),
            })
            .collect();
        let mut sc = Some(&scope);
        while let Some(x) = sc {
            facts.tables_in_scope.extend(x.relations.iter().filter_map(|r| match &r.kind {
                RelKind::Base(t) => Some(t.clone()),
                RelKind::Derived(_) => None,
            }));
            sc = x.parent;
        }
        if let Some(observer) = self.observer.take() {
            let columns: Vec<ColumnUse> = self.facts.columns.iter().filter(|u| u.select == Some(id)).cloned().collect();
            let this = &*self;
            let lookup = |q: Option<&str>, c: &str| this.lookup(q, c, &scope, false).0.map(|r| r.at);
            observer.select(s, order_by, &facts, &columns, &lookup);
            self.observer = Some(observer);
        }
        out
    }

    fn select_in(&mut self, s: &Select, scope: &mut Scope, order_by: Option<&OrderBy>) -> Outputs {
        let order: Vec<&Expr> = match order_by.map(|o| &o.kind) {
            Some(OrderByKind::Expressions(v)) => v.iter().map(|e| &e.expr).collect(),
            _ => Vec::new(),
        };
        let mut on_exprs: Vec<(String, &Expr)> = Vec::new();
        for twj in &s.from {
            self.from_item(twj, scope, &mut on_exprs);
        }
        // A select-list alias is in scope only where the dialect reads it
        // (`alias_scope`): never inside the select list itself.
        let aliases: Vec<String> = s
            .projection
            .iter()
            .filter_map(|p| match p {
                SelectItem::ExprWithAlias { alias, .. } => Some(ident(alias)),
                _ => None,
            })
            .collect();
        let dialect = self.dialect;
        let in_clause = |clause: AliasClause| if alias_scope(dialect, clause) { aliases.clone() } else { Vec::new() };
        scope.select_aliases = in_clause(AliasClause::Where);
        for (clause, e) in &on_exprs {
            self.set_clause(Some(clause));
            self.join_condition(e, scope, clause);
        }
        if let Some(w) = &s.selection {
            self.set_clause(Some("WHERE"));
            self.join_condition(w, scope, "WHERE");
        }
        scope.select_aliases = Vec::new();
        self.set_clause(Some("SELECT"));
        let mut out = Outputs::default();
        for item in &s.projection {
            match item {
                SelectItem::UnnamedExpr(e) => {
                    let source = self.expr(e, scope);
                    out.cols.push(OutputCol { name: unnamed_output(e), source });
                }
                SelectItem::ExprWithAlias { expr, alias } => {
                    let source = self.expr(expr, scope);
                    out.cols.push(OutputCol { name: ident(alias), source });
                }
                SelectItem::ExprWithAliases { expr, aliases } => {
                    let source = self.expr(expr, scope);
                    for a in aliases {
                        out.cols.push(OutputCol { name: ident(a), source: source.clone() });
                    }
                }
                SelectItem::Wildcard(opts) => {
                    self.exprs_in(opts, scope);
                    for r in scope.relations.clone() {
                        let o = self.expand(&r);
                        out.cols.extend(o.cols);
                        out.open |= o.open;
                    }
                }
                SelectItem::QualifiedWildcard(kind, opts) => {
                    self.exprs_in(opts, scope);
                    let q = match kind {
                        SelectItemQualifiedWildcardKind::ObjectName(n) => last_name(n),
                        SelectItemQualifiedWildcardKind::Expr(e) => {
                            self.expr(e, scope);
                            None
                        }
                    };
                    match q.and_then(|q| scope.relations.iter().find(|r| r.name == q).cloned()) {
                        Some(r) => {
                            let o = self.expand(&r);
                            out.cols.extend(o.cols);
                            out.open |= o.open;
                        }
                        None => out.open = true,
                    }
                }
            }
        }
        // Everything else (GROUP BY, HAVING, QUALIFY, ORDER BY, windows, …):
        // the projection and FROM were handled above, so visit the rest.
        self.set_clause(None);
        if let Some(e) = &s.prewhere {
            self.expr(e, scope);
        }
        if let Some(e) = &s.having {
            scope.select_aliases = in_clause(AliasClause::Having);
            self.set_clause(Some("HAVING"));
            self.expr(e, scope);
            self.set_clause(None);
        }
        // GROUP BY, ORDER BY and the rest: every dialect reads aliases there.
        scope.select_aliases = aliases.clone();
        if let Some(e) = &s.qualify {
            self.expr(e, scope);
        }
        if let Some(Distinct::On(exprs)) = &s.distinct {
            for e in exprs {
                self.expr(e, scope);
            }
        }
        if let GroupByExpr::Expressions(..) = &s.group_by {
            self.set_clause(Some("GROUP BY"));
        }
        self.exprs_in(&s.group_by, scope);
        self.set_clause(None);
        self.exprs_in(&s.named_window, scope);
        self.exprs_in(&s.top, scope);
        self.exprs_in(&s.sort_by, scope);
        self.exprs_in(&s.cluster_by, scope);
        self.exprs_in(&s.distribute_by, scope);
        self.exprs_in(&s.connect_by, scope);
        self.exprs_in(&s.lateral_views, scope);
        self.set_clause(Some("ORDER BY"));
        for e in order {
            self.expr(e, scope);
        }
        out
    }

    /// Output columns of `*` over one relation; records base columns.
    fn expand(&mut self, r: &Relation) -> Outputs {
        match &r.kind {
            RelKind::Base(t) => match self.model_columns(t) {
                Some(cols) => {
                    let cols = cols
                        .into_iter()
                        .map(|c| {
                            let cr = ColumnRef::new(t.clone(), c.clone());
                            self.refs.columns.insert(cr.clone());
                            OutputCol { name: c, source: Some(cr) }
                        })
                        .collect();
                    Outputs { cols, open: false }
                }
                None => Outputs::open(),
            },
            RelKind::Derived(out) => {
                for c in out.cols.iter().filter_map(|c| c.source.clone()) {
                    self.refs.columns.insert(c);
                }
                out.clone()
            }
        }
    }

    /// One FROM item; its ON conditions go to `on_exprs`, each with its
    /// clause (`JOIN <relation> ON`).
    fn from_item<'q>(&mut self, twj: &'q TableWithJoins, scope: &mut Scope, on_exprs: &mut Vec<(String, &'q Expr)>) {
        let first = scope.relations.len();
        self.table_factor(&twj.relation, scope, on_exprs);
        for join in &twj.joins {
            let before = scope.relations.len();
            self.table_factor(&join.relation, scope, on_exprs);
            let joined = scope.relations.get(before).map(|r| r.display.clone()).unwrap_or_default();
            let on = format!("JOIN {joined} ON");
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
                JoinOperator::AsOf { constraint, match_condition } => {
                    on_exprs.push((on.clone(), match_condition));
                    Some(constraint)
                }
                _ => None,
            };
            let (left, right) = (first..before, before..scope.relations.len());
            match constraint {
                Some(JoinConstraint::On(e)) => on_exprs.push((on, e)),
                Some(JoinConstraint::Using(cols)) => {
                    let clause = format!("JOIN {joined} USING");
                    for c in cols.iter().filter_map(last_name) {
                        self.using_pair(&c, scope, (left.clone(), right.clone()), true, &clause);
                    }
                }
                Some(JoinConstraint::Natural) => {
                    let clause = format!("NATURAL JOIN {joined}");
                    let names: Vec<String> =
                        right.clone().flat_map(|i| self.relation_columns(&scope.relations[i])).collect();
                    for c in names {
                        self.using_pair(&c, scope, (left.clone(), right.clone()), false, &clause);
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
            RelKind::Derived(out) => out.cols.iter().map(|c| c.name.clone()).collect(),
        }
    }

    /// Whether `r` has column `c`; `None` when nobody knows.
    fn has_column(&self, r: &Relation, c: &str) -> Option<bool> {
        match &r.kind {
            RelKind::Base(t) => self.model_columns(t).map(|cols| cols.iter().any(|x| x == c)),
            RelKind::Derived(out) => {
                if out.cols.iter().any(|x| x.name == c) {
                    Some(true)
                } else if out.open {
                    None
                } else {
                    Some(false)
                }
            }
        }
    }

    /// Column `c` of relation `rel` of a scope `up` scopes out.
    fn column_of(&self, r: &Relation, c: &str, up: usize, rel: usize) -> Resolved {
        let (col, table) = match &r.kind {
            RelKind::Base(t) => (Some(ColumnRef::new(t.clone(), c)), Some(t.clone())),
            RelKind::Derived(out) => (out.cols.iter().find(|x| x.name == c).and_then(|x| x.source.clone()), None),
        };
        let display = if r.name.is_empty() { c.to_string() } else { format!("{}.{c}", r.display) };
        Resolved { col, instance: r.instance, at: ScopeColumn { up, rel, table, col: c.to_string(), display } }
    }

    /// `USING (c)` / NATURAL: pair the first right relation that has `c`
    /// with the last left one that has it. Without a model a base table is
    /// assumed to have it (`assume`), which is what USING promises.
    fn using_pair(
        &mut self,
        c: &str,
        scope: &Scope,
        (left, right): (Range<usize>, Range<usize>),
        assume: bool,
        clause: &str,
    ) {
        let has = |i: &usize| self.has_column(&scope.relations[*i], c).unwrap_or(assume);
        let (Some(l), Some(r)) = (left.rev().find(has), right.clone().find(has)) else { return };
        let a = self.column_of(&scope.relations[l], c, 0, l);
        let b = self.column_of(&scope.relations[r], c, 0, r);
        for x in [&a, &b] {
            if let Some(col) = &x.col {
                self.refs.columns.insert(col.clone());
            }
        }
        if let (Some(x), Some(y)) = (&a.col, &b.col) {
            self.refs.join_pairs.insert(JoinPair::new(x, y));
            self.occurrence_pair(a.instance, x, b.instance, y, false);
        }
        if let Some(g) = self.selects.last_mut() {
            g.using.push(Equality { a: a.at, b: b.at, clause: clause.to_string(), text: format!("USING ({c})") });
        }
    }

    /// Record `x = y` between the occurrences behind relation instances
    /// `ix` and `iy`, when both are base tables.
    fn occurrence_pair(&mut self, ix: usize, x: &ColumnRef, iy: usize, y: &ColumnRef, semi: bool) {
        if let (Some(&a), Some(&b)) = (self.occurrence_of.get(&ix), self.occurrence_of.get(&iy)) {
            if a != b {
                self.refs.occurrence_pairs.push(OccurrencePair { a, b, left: lower_ref(x), right: lower_ref(y), semi });
            }
        }
    }

    fn relation_use(&mut self, written: String, target: RelationTarget, lower: &str) {
        let defined_elsewhere = !matches!(target, RelationTarget::Cte) && self.facts.cte_names.contains(lower);
        self.facts.relations.push(RelationUse { written, target, defined_elsewhere });
    }

    fn table_factor<'q>(&mut self, tf: &'q TableFactor, scope: &mut Scope, on_exprs: &mut Vec<(String, &'q Expr)>) {
        self.facts.factors.insert(addr(tf));
        match tf {
            TableFactor::Table { name, alias, args, .. } => {
                let written = name.to_string();
                let Some(tname) = last_name(name) else {
                    self.facts.relations.push(RelationUse {
                        written: written.clone(),
                        target: RelationTarget::Unsupported(written),
                        defined_elsewhere: false,
                    });
                    return;
                };
                let instance = self.instance();
                let rel_name = alias.as_ref().map(|a| ident(&a.name)).unwrap_or_else(|| tname.clone());
                let as_written = name.0.last().and_then(|p| p.as_ident()).map(|i| i.value.clone()).unwrap_or_default();
                let display = alias.as_ref().map(|a| a.name.value.clone()).unwrap_or_else(|| as_written.clone());
                if let Some(a) = args {
                    for arg in &a.args {
                        self.exprs_in(arg, scope);
                    }
                }
                let single = name.0.len() == 1;
                let (kind, target) = if args.is_some() {
                    (RelKind::Derived(Outputs::open()), RelationTarget::TableFunction(tname.clone()))
                } else if let Some(out) = single.then(|| scope.cte(&tname)).flatten() {
                    (RelKind::Derived(out.clone()), RelationTarget::Cte)
                } else if let Some((_, vcols)) = self.view.as_ref().filter(|(v, _)| single && *v == tname) {
                    (RelKind::Derived(Outputs { cols: vcols.clone(), open: false }), RelationTarget::View)
                } else {
                    self.refs.tables.insert(tname.clone());
                    *self.refs.table_uses.entry(tname.clone()).or_default() += 1;
                    self.occurrence_of.insert(instance, self.refs.occurrences.len());
                    self.refs.occurrences.push(Occurrence {
                        table: tname.clone(),
                        alias: rel_name.clone(),
                        select: self.context.select.unwrap_or(usize::MAX),
                    });
                    let qualified = (!single).then(|| {
                        name.0
                            .iter()
                            .map(|p| p.as_ident().map(ident).unwrap_or_else(|| p.to_string()))
                            .collect::<Vec<_>>()
                            .join(".")
                    });
                    (RelKind::Base(tname.clone()), RelationTarget::Table { name: tname.clone(), qualified })
                };
                self.relation_use(written, target, &tname);
                let kind = match (kind, alias) {
                    (RelKind::Derived(out), Some(a)) => RelKind::Derived(rename_outputs(out, a)),
                    (k, _) => k,
                };
                scope.relations.push(Relation { name: rel_name, display, written: as_written, instance, kind });
            }
            TableFactor::Derived { subquery, alias, .. } => {
                let out = self.query(subquery, scope);
                let instance = self.instance();
                let (name, display, out) = match alias {
                    Some(a) => (ident(&a.name), a.name.value.clone(), rename_outputs(out, a)),
                    None => (String::new(), "(subquery)".to_string(), out),
                };
                self.facts.relations.push(RelationUse {
                    written: String::new(),
                    target: RelationTarget::Derived,
                    defined_elsewhere: false,
                });
                scope.relations.push(Relation::derived(name, display, instance, out));
            }
            TableFactor::NestedJoin { table_with_joins, alias } => {
                let first = scope.relations.len();
                self.from_item(table_with_joins, scope, on_exprs);
                self.facts.relations.push(RelationUse {
                    written: String::new(),
                    target: RelationTarget::Derived,
                    defined_elsewhere: false,
                });
                // `(a JOIN b) AS x`: x names the join's columns together.
                if let Some(a) = alias {
                    let mut out = Outputs::default();
                    for r in scope.relations[first..].iter() {
                        let o = self.expand(r);
                        out.cols.extend(o.cols);
                        out.open |= o.open;
                    }
                    let instance = self.instance();
                    let out = rename_outputs(out, a);
                    scope.relations.push(Relation::derived(ident(&a.name), a.name.value.clone(), instance, out));
                }
            }
            other => {
                let text: String = other.to_string();
                self.facts.relations.push(RelationUse {
                    written: text.clone(),
                    target: RelationTarget::Unsupported(text.clone()),
                    defined_elsewhere: false,
                });
                self.exprs_in(other, scope);
                // Its columns are unknown, but they are in scope.
                let instance = self.instance();
                scope.relations.push(Relation::derived(String::new(), text, instance, Outputs::open()));
            }
        }
    }

    /// Record join pairs from the AND-conjuncts of an ON/WHERE condition
    /// (and, for the SELECT, its equalities and links), then every column
    /// reference in it.
    fn join_condition(&mut self, e: &Expr, scope: &Scope, clause: &str) {
        let mut conjuncts = Vec::new();
        split_and(e, &mut conjuncts);
        for c in conjuncts {
            if let Expr::BinaryOp { left, op: BinaryOperator::Eq, right } = c {
                if let (Some(l), Some(r)) =
                    (self.column_expr(strip(left), scope), self.column_expr(strip(right), scope))
                {
                    if l.instance != r.instance {
                        if let (Some(a), Some(b)) = (&l.col, &r.col) {
                            self.refs.join_pairs.insert(JoinPair::new(a, b));
                            self.occurrence_pair(l.instance, a, r.instance, b, false);
                        }
                    }
                    if let Some(g) = self.selects.last_mut().filter(|_| (l.at.up, l.at.rel) != (r.at.up, r.at.rel)) {
                        g.scope.equalities.push(Equality {
                            a: l.at,
                            b: r.at,
                            clause: clause.to_string(),
                            text: c.to_string(),
                        });
                    }
                    continue;
                }
            }
            // Any other condition over two relations still relates them
            // (`a.x = b.y OR a.x = b.z`).
            let mut rels = Vec::new();
            top_level_exprs(c, |x| {
                if let Some(r) = column_parts(x).and_then(|p| self.lookup_parts(&p, scope).0) {
                    if r.at.up == 0 {
                        rels.push(r.at.rel);
                    }
                }
            });
            rels.sort_unstable();
            rels.dedup();
            if let Some(g) = self.selects.last_mut() {
                g.scope.links.extend(rels.windows(2).map(|w| (w[0], w[1])));
            }
        }
        self.expr(e, scope);
    }

    /// Resolve an expression if it is a plain column reference.
    fn column_expr(&mut self, e: &Expr, scope: &Scope) -> Option<Resolved> {
        let p = column_parts(e)?;
        let first_time = self.facts.idents.insert(addr(e));
        let (mut resolved, outcome) = self.lookup_parts(&p, scope);
        let n = p.parts.len();
        let written = p.parts.iter().map(|i| i.value.as_str()).collect::<Vec<_>>().join(".");
        if resolved.is_none() && !p.maybe_string && outcome != ColumnOutcome::Alias {
            let name = match &p.qualifier {
                Some(q) => format!("{q}.{}", p.column),
                None => p.column.clone(),
            };
            self.refs.unresolved.insert(name);
        }
        if let Some(r) = &mut resolved {
            r.at.display = match n {
                1 => p.parts[0].value.clone(),
                _ => format!("{}.{}", p.parts[n - 2].value, p.parts[n - 1].value),
            };
        }
        if first_time {
            self.facts.columns.push(ColumnUse {
                written,
                qualifier: (n >= 2).then(|| p.parts[n - 2].value.clone()),
                column: p.parts[n - 1].value.clone(),
                quoted: p.quoted,
                outcome,
                select: self.context.select,
                clause: self.context.clause.clone(),
            });
        }
        resolved
    }

    fn lookup_parts(&self, p: &ColumnParts, scope: &Scope) -> (Option<Resolved>, ColumnOutcome) {
        self.lookup(p.qualifier.as_deref(), &p.column, scope, p.maybe_string)
    }

    /// What a column reference resolves to in `scope`, recording nothing:
    /// the innermost scope that has the column wins; a scope with a relation
    /// whose columns nobody knows stops the search (that relation may well
    /// own it).
    fn lookup(
        &self,
        qualifier: Option<&str>,
        col: &str,
        scope: &Scope,
        maybe_string: bool,
    ) -> (Option<Resolved>, ColumnOutcome) {
        let mut unknown = false;
        let (mut s, mut up) = (Some(scope), 0);
        while let Some(sc) = s {
            if let Some(q) = qualifier {
                if let Some(i) = sc.relations.iter().rposition(|r| r.name == q) {
                    let r = &sc.relations[i];
                    let outcome = match self.has_column(r, col) {
                        Some(true) => ColumnOutcome::Column,
                        None => ColumnOutcome::Unknown,
                        Some(false) => ColumnOutcome::NotInRelation {
                            relation: match &r.kind {
                                RelKind::Base(t) => t.clone(),
                                RelKind::Derived(_) => r.name.clone(),
                            },
                            catalog: matches!(r.kind, RelKind::Base(_)),
                            display: r.display.clone(),
                        },
                    };
                    return (Some(self.column_of(r, col, up, i)), outcome);
                }
            } else {
                // Several matches is an ambiguous query; attribute it to the
                // first relation rather than drop it.
                if let Some(i) = sc.relations.iter().position(|r| self.has_column(r, col) == Some(true)) {
                    return (Some(self.column_of(&sc.relations[i], col, up, i)), ColumnOutcome::Column);
                }
                if sc.select_aliases.iter().any(|a| a == col) {
                    return (None, ColumnOutcome::Alias);
                }
                if sc.relations.iter().any(|r| self.has_column(r, col).is_none()) {
                    unknown = true;
                    break;
                }
            }
            s = sc.parent;
            up += 1;
        }
        let miss = match (qualifier, unknown) {
            (Some(_), _) => ColumnOutcome::NoSuchQualifier,
            (None, true) => ColumnOutcome::Unknown,
            (None, false) => ColumnOutcome::NotFound,
        };
        if maybe_string || qualifier.is_some() {
            return (None, miss);
        }
        // Nothing claims it and no model knows the table: in a scope with a
        // single base table, that table must own it.
        let (mut s, mut up) = (Some(scope), 0);
        while let Some(sc) = s {
            if let [r @ Relation { kind: RelKind::Base(_), .. }] = sc.relations.as_slice() {
                if self.has_column(r, col).is_none() {
                    return (Some(self.column_of(r, col, up, 0)), miss);
                }
            }
            if !sc.relations.is_empty() {
                break;
            }
            s = sc.parent;
            up += 1;
        }
        (None, miss)
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
        walk_top_level(node, &mut ExprVisitor { a: self, scope, done: HashSet::new() });
    }
}

/// The clauses where a select-list alias might be read, besides GROUP BY
/// and ORDER BY (which read it in every dialect here).
#[derive(Clone, Copy)]
enum AliasClause {
    Where,
    Having,
}

/// Whether `dialect` reads a select-list alias in `clause` (`Where` also
/// stands for a join's ON). SQLite resolves an alias in ON, WHERE, GROUP BY,
/// HAVING and ORDER BY (checked with sqlite3 3.x); MySQL and Spark in GROUP
/// BY, HAVING and ORDER BY; PostgreSQL in GROUP BY and ORDER BY. None reads one inside
/// the select list that defines it: `SELECT x AS x` does not make `x` a
/// column (SQLite: `no such column: x`).
fn alias_scope(dialect: Dialect, clause: AliasClause) -> bool {
    match clause {
        AliasClause::Where => dialect == Dialect::Sqlite,
        AliasClause::Having => dialect != Dialect::Postgres,
    }
}

/// A plain column reference's parts: as written, its qualifier and column
/// (lower-cased), whether it may be a string (SQLite reads an unresolvable
/// "double-quoted" name as one).
struct ColumnParts<'e> {
    parts: Vec<&'e Ident>,
    qualifier: Option<String>,
    column: String,
    quoted: bool,
    maybe_string: bool,
}

fn column_parts(e: &Expr) -> Option<ColumnParts<'_>> {
    let (parts, quoted): (Vec<&Ident>, bool) = match e {
        Expr::Identifier(i) => (vec![i], i.quote_style == Some('"')),
        Expr::CompoundIdentifier(parts) if !parts.is_empty() => {
            (parts.iter().collect(), parts.last().is_some_and(|i| i.quote_style == Some('"')))
        }
        _ => return None,
    };
    let n = parts.len();
    Some(ColumnParts {
        qualifier: (n >= 2).then(|| ident(parts[n - 2])),
        column: ident(parts[n - 1]),
        quoted,
        maybe_string: n == 1 && quoted,
        parts,
    })
}

/// The output name of an unaliased select item.
fn unnamed_output(e: &Expr) -> String {
    match e {
        Expr::Identifier(i) => ident(i),
        Expr::CompoundIdentifier(v) => v.last().map(ident).unwrap_or_default(),
        other => other.to_string().to_ascii_lowercase(),
    }
}

/// Output names of one SELECT, read off its projection (no resolution).
fn select_output_names(s: &Select) -> Outputs {
    let mut out = Outputs::default();
    for item in &s.projection {
        match item {
            SelectItem::UnnamedExpr(e) => out.cols.push(OutputCol { name: unnamed_output(e), source: None }),
            SelectItem::ExprWithAlias { alias, .. } => out.cols.push(OutputCol { name: ident(alias), source: None }),
            SelectItem::ExprWithAliases { aliases, .. } => {
                out.cols.extend(aliases.iter().map(|a| OutputCol { name: ident(a), source: None }))
            }
            SelectItem::Wildcard(_) | SelectItem::QualifiedWildcard(..) => out.open = true,
        }
    }
    out
}

/// Apply a table alias's column list (`AS t(a, b)`) to output columns; a
/// list longer than the known outputs names the rest (PostgreSQL keeps the
/// names of columns beyond a shorter list).
fn rename_outputs(mut out: Outputs, alias: &TableAlias) -> Outputs {
    for (i, a) in alias.columns.iter().enumerate() {
        match out.cols.get_mut(i) {
            Some(c) => c.name = ident(&a.name),
            None => out.cols.push(OutputCol { name: ident(&a.name), source: None }),
        }
    }
    out
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

/// Collects the name of every CTE defined anywhere in a query.
struct CteNames<'a>(&'a mut HashSet<String>);

impl Visitor for CteNames<'_> {
    type Break = ();

    fn pre_visit_query(&mut self, q: &Query) -> ControlFlow<()> {
        if let Some(w) = &q.with {
            self.0.extend(w.cte_tables.iter().map(|c| ident(&c.alias.name)));
        }
        ControlFlow::Continue(())
    }
}

/// Walks expressions at depth 0 of one scope; subqueries are handed back
/// to the analyzer with this scope as parent.
struct ExprVisitor<'a, 'm, 's, 'p> {
    a: &'a mut Analyzer<'m>,
    scope: &'s Scope<'p>,
    done: HashSet<*const Query>,
}

impl ExprVisitor<'_, '_, '_, '_> {
    /// Analyze `subquery` now (the walk skips it) and link its first output
    /// column to `outer` when both are plain columns.
    fn semi_join(&mut self, outer: &Expr, subquery: &Query) {
        if self.done.contains(&(subquery as *const Query)) {
            return;
        }
        let first_occurrence = self.a.refs.occurrences.len();
        let outs = self.a.query(subquery, self.scope);
        self.done.insert(subquery as *const Query);
        let inner = outs.cols.first().and_then(|o| o.source.clone());
        let outer = self.a.column_expr(strip(outer), self.scope);
        if let (Some(o), Some(y)) = (outer, inner) {
            if let Some(x) = o.col {
                self.a.refs.semi_join_pairs.insert(JoinPair::new(&x, &y));
                // The subquery's first occurrence of the column's table is
                // where the column comes from (the first branch of a set
                // operation, as for `inner` itself).
                let y = lower_ref(&y);
                let inner_occ = (first_occurrence..self.a.refs.occurrences.len())
                    .find(|&i| self.a.refs.occurrences[i].table == y.table);
                if let (Some(&a), Some(b)) = (self.a.occurrence_of.get(&o.instance), inner_occ) {
                    if a != b {
                        self.a.refs.occurrence_pairs.push(OccurrencePair {
                            a,
                            b,
                            left: lower_ref(&x),
                            right: y,
                            semi: true,
                        });
                    }
                }
            }
        }
    }
}

impl TopLevel for ExprVisitor<'_, '_, '_, '_> {
    fn query(&mut self, q: &Query) {
        if !self.done.contains(&(q as *const Query)) {
            self.a.query(q, self.scope);
        }
    }

    fn expr(&mut self, e: &Expr) {
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
    }
}
