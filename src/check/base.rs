//! `lucy check`: SQL over the model's base tables checked against the
//! model, whoever wrote it (the direct baseline, a person, another tool).
//!
//! Per SELECT, the relations of its FROM clause are the nodes of a join
//! graph and the column equalities of its ON and WHERE conjuncts the
//! candidate edges. An equality is a *join* when it connects relations that
//! the declared joins do not already connect; a join must be a declared
//! relationship (all its column pairs). Then the model's patterns apply: an
//! m:m pattern's sides meet through their junction (C3), a lookup table
//! does not bridge two tables (C4), forbidden tables and relationships are
//! not used; names are checked (unknown tables and columns, with the
//! closest match); and counting aggregates over rows the declared joins
//! repeat are reported (fan-out, as for the view in [`super::fanout`]).
//!
//! An equality between relations already connected by declared joins is a
//! filter, not a join (e.g. "clients in the same city as their datacenter"
//! compares `CLIENT.loc_id = DATACENTER.loc_id` after joining them through
//! the m:m path), and is not reported.

use std::collections::{BTreeSet, VecDeque};
use std::ops::ControlFlow;

use sqlparser::ast::{
    BinaryOperator, Expr, GroupByExpr, JoinConstraint, JoinOperator, ObjectName, OrderBy, OrderByKind, Query, Select,
    SelectItem, SetExpr, Statement, TableFactor, TableWithJoins, Visit, Visitor,
};
use sqlparser::parser::Parser;

use super::aggregates::counting_aggregates;
use crate::error::{Error, Result};
use crate::graph::{RelId, SchemaGraph, TableId};
use crate::sql::guard::parser_dialect;
use crate::types::grain::multipliers;
pub use crate::types::check::{CheckReport, Finding, FindingKind};
use crate::types::{Cardinality, Dialect};

/// Check one SQL query over the model's base tables. `Err(Error::Sql)` when
/// the text is not exactly one parseable SELECT query.
pub fn check_sql(graph: &SchemaGraph, sql: &str, dialect: Dialect) -> Result<CheckReport> {
    let text = sql.trim().trim_end_matches(';').trim();
    if text.is_empty() {
        return Err(Error::Sql("no SQL statement found".into()));
    }
    let stmts = Parser::parse_sql(&*parser_dialect(dialect), text)
        .map_err(|e| Error::Sql(format!("cannot parse the SQL as {}: {e}", dialect.as_str())))?;
    let [Statement::Query(q)] = stmts.as_slice() else {
        return Err(Error::Sql(format!("expected exactly one SELECT query, found {} statement(s)", stmts.len())));
    };
    let mut c = Checker { graph, dialect, findings: Vec::new(), tables: BTreeSet::new() };
    let root = Scope { parent: None, ctes: Vec::new(), rels: Vec::new(), aliases: Vec::new() };
    c.query(q, &root);
    let mut seen = BTreeSet::new();
    let findings = c.findings.into_iter().filter(|f| seen.insert(f.clone())).collect();
    Ok(CheckReport { model: graph.model().name.clone(), tables: c.tables.into_iter().collect(), findings })
}

/// A relation of one SELECT's FROM clause.
#[derive(Debug, Clone)]
struct Rel {
    /// Alias, or the table name (lower-cased).
    name: String,
    /// As written, for messages.
    display: String,
    /// The model table, for base tables.
    table: Option<TableId>,
}

struct Scope<'p> {
    parent: Option<&'p Scope<'p>>,
    /// CTE names visible here (lower-cased).
    ctes: Vec<String>,
    rels: Vec<Rel>,
    /// Select-list aliases.
    aliases: Vec<String>,
}

impl Scope<'_> {
    fn has_cte(&self, n: &str) -> bool {
        self.ctes.iter().any(|c| c == n) || self.parent.is_some_and(|p| p.has_cte(n))
    }
}

/// A column reference resolved to a relation: how many scopes up, which
/// relation there, the column (lower-cased).
#[derive(Debug, Clone)]
struct Col {
    up: usize,
    rel: usize,
    col: String,
    display: String,
}

/// A column equality of an ON or WHERE conjunct.
#[derive(Debug, Clone)]
struct Equality {
    a: Col,
    b: Col,
    clause: String,
    text: String,
}

struct Checker<'g> {
    graph: &'g SchemaGraph,
    dialect: Dialect,
    findings: Vec<Finding>,
    tables: BTreeSet<String>,
}

fn lower(i: &sqlparser::ast::Ident) -> String {
    i.value.to_ascii_lowercase()
}

fn last_name(n: &ObjectName) -> Option<&sqlparser::ast::Ident> {
    n.0.last().and_then(|p| p.as_ident())
}

fn strip(e: &Expr) -> &Expr {
    match e {
        Expr::Nested(x) => strip(x),
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

impl<'g> Checker<'g> {
    fn add(&mut self, kind: FindingKind, clause: &str, message: String, hint: String) {
        self.findings.push(Finding { kind, clause: clause.to_string(), message, hint });
    }

    fn query(&mut self, q: &Query, parent: &Scope) {
        let mut scope = Scope { parent: Some(parent), ctes: Vec::new(), rels: Vec::new(), aliases: Vec::new() };
        if let Some(with) = &q.with {
            for cte in &with.cte_tables {
                scope.ctes.push(lower(&cte.alias.name));
                self.query(&cte.query, &scope);
            }
        }
        self.set_expr(&q.body, &scope, q.order_by.as_ref());
    }

    fn set_expr(&mut self, body: &SetExpr, scope: &Scope, order: Option<&OrderBy>) {
        match body {
            SetExpr::Select(s) => self.select(s, scope, order),
            SetExpr::Query(q) => self.query(q, scope),
            SetExpr::SetOperation { left, right, .. } => {
                self.set_expr(left, scope, None);
                self.set_expr(right, scope, None);
            }
            _ => {}
        }
    }

    fn select(&mut self, s: &Select, parent: &Scope, order: Option<&OrderBy>) {
        let mut scope = Scope { parent: Some(parent), ctes: Vec::new(), rels: Vec::new(), aliases: Vec::new() };
        let mut conds: Vec<(String, &Expr)> = Vec::new();
        let mut using: Vec<(String, usize, usize, String)> = Vec::new();
        for twj in &s.from {
            self.from_item(twj, &mut scope, &mut conds, &mut using);
        }
        scope.aliases = s
            .projection
            .iter()
            .filter_map(|p| match p {
                SelectItem::ExprWithAlias { alias, .. } => Some(lower(alias)),
                _ => None,
            })
            .collect();
        // Names (and subqueries) everywhere in the SELECT.
        for (clause, e) in &conds {
            self.walk(*e, &scope, clause);
        }
        for item in &s.projection {
            match item {
                SelectItem::UnnamedExpr(e) | SelectItem::ExprWithAlias { expr: e, .. } => self.walk(e, &scope, "SELECT"),
                SelectItem::ExprWithAliases { expr, .. } => self.walk(expr, &scope, "SELECT"),
                _ => {}
            }
        }
        if let Some(w) = &s.selection {
            self.walk(w, &scope, "WHERE");
        }
        if let GroupByExpr::Expressions(v, _) = &s.group_by {
            for e in v {
                self.walk(e, &scope, "GROUP BY");
            }
        }
        if let Some(h) = &s.having {
            self.walk(h, &scope, "HAVING");
        }
        if let Some(OrderBy { kind: OrderByKind::Expressions(v), .. }) = order {
            for o in v {
                self.walk(&o.expr, &scope, "ORDER BY");
            }
        }
        // Joins.
        let mut eqs: Vec<Equality> = Vec::new();
        let mut links: Vec<(usize, usize)> = Vec::new();
        for (clause, e) in conds.iter().map(|(c, e)| (c.clone(), *e)).chain(s.selection.iter().map(|w| ("WHERE".to_string(), w))) {
            let mut parts = Vec::new();
            split_and(e, &mut parts);
            for p in parts {
                if let Expr::BinaryOp { left, op: BinaryOperator::Eq, right } = p {
                    if let (Some(a), Some(b)) = (self.column(strip(left), &scope), self.column(strip(right), &scope)) {
                        if (a.up, a.rel) != (b.up, b.rel) {
                            eqs.push(Equality { a, b, clause: clause.clone(), text: p.to_string() });
                        }
                        continue;
                    }
                }
                // Any other condition over two relations still links them
                // (e.g. `a.x = b.y OR a.x = b.z`): not a cross join.
                let mut cols = Cols { c: self, scope: &scope, depth: 0, out: Vec::new() };
                let _ = p.visit(&mut cols);
                let mut rels = cols.out;
                rels.sort_unstable();
                rels.dedup();
                for w in rels.windows(2) {
                    links.push((w[0], w[1]));
                }
            }
        }
        for (clause, l, r, col) in using {
            let a = Col { up: 0, rel: l, col: col.clone(), display: format!("{}.{col}", scope.rels[l].display) };
            let b = Col { up: 0, rel: r, col: col.clone(), display: format!("{}.{col}", scope.rels[r].display) };
            let text = format!("USING ({col})");
            eqs.push(Equality { a, b, clause, text });
        }
        self.joins(s, &scope, &eqs, &links, order);
    }

    fn from_item<'q>(
        &mut self,
        twj: &'q TableWithJoins,
        scope: &mut Scope,
        conds: &mut Vec<(String, &'q Expr)>,
        using: &mut Vec<(String, usize, usize, String)>,
    ) {
        let first = scope.rels.len();
        self.factor(&twj.relation, scope, conds, using);
        for j in &twj.joins {
            let before = scope.rels.len();
            self.factor(&j.relation, scope, conds, using);
            let right = scope.rels.get(before).map(|r| r.display.clone()).unwrap_or_default();
            let clause = format!("JOIN {right} ON");
            let constraint = match &j.join_operator {
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
                _ => None,
            };
            match constraint {
                Some(JoinConstraint::On(e)) => conds.push((clause, e)),
                Some(JoinConstraint::Using(cols)) => {
                    for c in cols.iter().filter_map(last_name) {
                        let c = lower(c);
                        let has = |i: usize| {
                            scope.rels[i].table.map_or(true, |t| self.graph.table(t).column(&c).is_some())
                        };
                        let l = (first..before).rev().find(|&i| has(i));
                        let r = (before..scope.rels.len()).find(|&i| has(i));
                        if let (Some(l), Some(r)) = (l, r) {
                            using.push((format!("JOIN {right} USING"), l, r, c));
                        }
                    }
                }
                _ => {}
            }
        }
    }

    fn factor<'q>(
        &mut self,
        tf: &'q TableFactor,
        scope: &mut Scope,
        conds: &mut Vec<(String, &'q Expr)>,
        using: &mut Vec<(String, usize, usize, String)>,
    ) {
        match tf {
            TableFactor::Table { name, alias, args, .. } => {
                let Some(id) = last_name(name) else { return };
                let tname = lower(id);
                let display = alias.as_ref().map(|a| a.name.value.clone()).unwrap_or_else(|| id.value.clone());
                let rel_name = alias.as_ref().map(|a| lower(&a.name)).unwrap_or_else(|| tname.clone());
                let table = if args.is_some() || (name.0.len() == 1 && scope.has_cte(&tname)) {
                    None
                } else if let Some(t) = self.graph.table_id(&tname) {
                    self.tables.insert(self.graph.name(t).to_string());
                    if self.graph.forbidden_tables().contains(&t) {
                        self.add(
                            FindingKind::ForbiddenTable,
                            "FROM",
                            format!("table {} is forbidden by the model's constraints", self.graph.name(t)),
                            "answer without it, or remove it from constraints.forbid_tables".into(),
                        );
                    }
                    Some(t)
                } else {
                    let names = self.graph.model().tables.iter().map(|t| t.name.as_str());
                    let hint = match crate::model::closest(&id.value, names) {
                        Some(c) => format!("did you mean {c}?"),
                        None => "use a table of the model (`lucy model show`)".into(),
                    };
                    self.add(FindingKind::UnknownTable, "FROM", format!("table `{}` is not in model {}", id.value, self.graph.model().name), hint);
                    None
                };
                scope.rels.push(Rel { name: rel_name, display, table });
            }
            TableFactor::Derived { subquery, alias, .. } => {
                self.query(subquery, scope);
                let name = alias.as_ref().map(|a| lower(&a.name)).unwrap_or_default();
                let display = alias.as_ref().map(|a| a.name.value.clone()).unwrap_or_else(|| "(subquery)".into());
                scope.rels.push(Rel { name, display, table: None });
            }
            TableFactor::NestedJoin { table_with_joins, alias, .. } => {
                self.from_item(table_with_joins, scope, conds, using);
                if let Some(a) = alias {
                    scope.rels.push(Rel { name: lower(&a.name), display: a.name.value.clone(), table: None });
                }
            }
            _ => {
                let display = tf.to_string();
                scope.rels.push(Rel { name: String::new(), display, table: None });
            }
        }
    }

    /// Resolve a plain column reference through the scope chain.
    fn column(&self, e: &Expr, scope: &Scope) -> Option<Col> {
        let (qual, col, display) = match e {
            Expr::Identifier(i) => (None, lower(i), i.value.clone()),
            Expr::CompoundIdentifier(p) if p.len() >= 2 => {
                let n = p.len();
                (Some(lower(&p[n - 2])), lower(&p[n - 1]), format!("{}.{}", p[n - 2].value, p[n - 1].value))
            }
            _ => return None,
        };
        let mut up = 0;
        let mut s = Some(scope);
        while let Some(sc) = s {
            match &qual {
                Some(q) => {
                    if let Some(i) = sc.rels.iter().rposition(|r| &r.name == q) {
                        return Some(Col { up, rel: i, col, display });
                    }
                }
                None => {
                    if let Some(i) =
                        sc.rels.iter().position(|r| r.table.is_some_and(|t| self.graph.table(t).column(&col).is_some()))
                    {
                        return Some(Col { up, rel: i, col, display });
                    }
                    if sc.aliases.contains(&col) || sc.rels.iter().any(|r| r.table.is_none()) {
                        return None;
                    }
                }
            }
            up += 1;
            s = sc.parent;
        }
        None
    }

    /// Check every name of `e` (and the subqueries in it) in `scope`.
    fn walk(&mut self, e: &Expr, scope: &Scope, clause: &str) {
        let mut v = Walk { c: self, scope, clause, depth: 0 };
        let _ = e.visit(&mut v);
    }

    /// An unknown column, reported with the closest known name.
    fn check_name(&mut self, e: &Expr, scope: &Scope, clause: &str) {
        let (qual, col, written, quoted) = match e {
            Expr::Identifier(i) => (None, lower(i), i.value.clone(), i.quote_style == Some('"')),
            Expr::CompoundIdentifier(p) if p.len() >= 2 => {
                let n = p.len();
                (Some(lower(&p[n - 2])), lower(&p[n - 1]), format!("{}.{}", p[n - 2].value, p[n - 1].value), false)
            }
            _ => return,
        };
        if let Some(q) = &qual {
            let mut s = Some(scope);
            while let Some(sc) = s {
                if let Some(r) = sc.rels.iter().rev().find(|r| &r.name == q) {
                    let Some(t) = r.table else { return };
                    let table = self.graph.table(t);
                    if table.column(&col).is_none() {
                        let hint = match crate::model::closest(&col, table.columns.iter().map(|c| c.name.as_str())) {
                            Some(c) => format!("did you mean {}.{c}?", r.display),
                            None => format!("{} has columns {}", table.name, column_list(table)),
                        };
                        self.add(FindingKind::UnknownColumn, clause, format!("`{written}`: {} has no column `{col}`", table.name), hint);
                    }
                    return;
                }
                s = sc.parent;
            }
            // Not a relation in scope: maybe `schema.table.col` or a struct
            // field; only report when it names nothing the model knows.
            if self.graph.table_id(q).is_some() {
                self.add(
                    FindingKind::UnknownColumn,
                    clause,
                    format!("`{written}`: table {q} is not in this query's FROM clause"),
                    format!("add {q} to FROM (joined by a declared relationship) or use the alias it has there"),
                );
            } else {
                self.add(
                    FindingKind::UnknownColumn,
                    clause,
                    format!("`{written}`: no relation `{q}` in the FROM clause"),
                    "qualify the column with a table or alias of the FROM clause".into(),
                );
            }
            return;
        }
        let mut in_scope: Vec<&str> = Vec::new();
        let mut s = Some(scope);
        while let Some(sc) = s {
            for r in &sc.rels {
                match r.table {
                    None => return,
                    Some(t) => {
                        let table = self.graph.table(t);
                        if table.column(&col).is_some() {
                            return;
                        }
                        in_scope.extend(table.columns.iter().map(|c| c.name.as_str()));
                    }
                }
            }
            if sc.aliases.contains(&col) {
                return;
            }
            s = sc.parent;
        }
        if in_scope.is_empty() {
            return;
        }
        // SQLite (and MySQL without ANSI_QUOTES) read a double-quoted name
        // that is no column as a string literal: valid, if fragile.
        if quoted && matches!(self.dialect, Dialect::Sqlite | Dialect::Mysql) {
            return;
        }
        let mut hint = match crate::model::closest(&col, in_scope.iter().copied()) {
            Some(c) => format!("did you mean {c}?"),
            None => "use a column of the tables in FROM".into(),
        };
        if quoted {
            hint.push_str(" (\"text\" is a name here: string literals take single quotes)");
        }
        self.add(FindingKind::UnknownColumn, clause, format!("column `{written}` is not a column of any table in FROM"), hint);
    }

    /// The join graph of one SELECT: declared relationships, filters,
    /// undeclared joins, C3, C4, forbidden relationships, cross joins and
    /// fan-out.
    fn joins(&mut self, s: &Select, scope: &Scope, eqs: &[Equality], links: &[(usize, usize)], order: Option<&OrderBy>) {
        let n = scope.rels.len();
        let g = self.graph;
        // Equalities grouped per relation pair (current scope only).
        let mut pairs: Vec<((usize, usize), Vec<&Equality>)> = Vec::new();
        for e in eqs.iter().filter(|e| e.a.up == 0 && e.b.up == 0) {
            let key = (e.a.rel.min(e.b.rel), e.a.rel.max(e.b.rel));
            match pairs.iter_mut().find(|(k, _)| *k == key) {
                Some((_, v)) => v.push(e),
                None => pairs.push((key, vec![e])),
            }
        }
        let mut uf: Vec<usize> = (0..n).collect();
        // Declared (and identity) edges with their cardinality, for fan-out.
        let mut edges: Vec<(usize, usize, Cardinality)> = Vec::new();
        let mut loose: Vec<(&Equality, Loose)> = Vec::new();
        for ((x, y), list) in &pairs {
            let (tx, ty) = (scope.rels[*x].table, scope.rels[*y].table);
            let (Some(tx), Some(ty)) = (tx, ty) else {
                // A CTE or derived table: its columns are the query's own.
                union(&mut uf, *x, *y);
                continue;
            };
            let mut used = vec![false; list.len()];
            for rel in g.relationships_between(tx, ty) {
                if let Some(hit) = matches_rel(g, rel, tx, ty, *x, list) {
                    for i in hit {
                        used[i] = true;
                    }
                    union(&mut uf, *x, *y);
                    edges.push((*x, *y, g.cardinality_from(rel, tx)));
                    if g.forbidden_relationships().contains(&rel) {
                        self.add(
                            FindingKind::ForbiddenRelationship,
                            &list[0].clause,
                            format!("{} joins along {}, which the model's constraints forbid", list[0].text, g.relationship(rel).id()),
                            "answer without this join, or remove it from constraints.forbid_relationships".into(),
                        );
                    }
                }
            }
            for (i, e) in list.iter().enumerate() {
                if used[i] {
                    continue;
                }
                if tx == ty && e.a.col == e.b.col && is_key(g, tx, &e.a.col) {
                    union(&mut uf, *x, *y);
                    edges.push((*x, *y, Cardinality::OneToOne));
                    continue;
                }
                let (ta, tb) = if e.a.rel == *x { (tx, ty) } else { (ty, tx) };
                let kind = match partial_of(g, tx, ty, e, *x) {
                    Some(p) => Loose::Partial(p),
                    None => shared(&references(g, ta, &e.a.col), &references(g, tb, &e.b.col))
                        .map(Loose::Shared)
                        .unwrap_or(Loose::Undeclared),
                };
                loose.push((*e, kind));
            }
        }
        // Loose equalities: filters when the declared joins already connect
        // their relations, otherwise joins the model does not declare.
        for (e, kind) in loose {
            let (x, y) = (e.a.rel, e.b.rel);
            if find(&mut uf, x) == find(&mut uf, y) {
                continue;
            }
            union(&mut uf, x, y);
            let (tx, ty) = (scope.rels[x].table.unwrap_or(0), scope.rels[y].table.unwrap_or(0));
            let (dx, dy) = (&scope.rels[x].display, &scope.rels[y].display);
            match kind {
                Loose::Shared((t, c)) if g.is_lookup(t) => self.add(
                    FindingKind::LookupBridge,
                    &e.clause,
                    format!(
                        "`{}` relates {dx} and {dy} only because both reference the lookup {}.{c}: a lookup does not bridge two tables (C4)",
                        e.text,
                        g.name(t)
                    ),
                    self.path_hint(tx, ty),
                ),
                Loose::Shared((t, c)) => self.add(
                    FindingKind::UndeclaredJoin,
                    &e.clause,
                    format!("`{}` joins {dx} and {dy}, which only share a reference to {}.{c}; no relationship of the model joins them", e.text, g.name(t)),
                    format!("join both to {} through their declared relationships; {}", g.name(t), self.path_hint(tx, ty)),
                ),
                Loose::Partial((rel, missing)) => {
                    self.add(
                        FindingKind::PartialJoin,
                        &e.clause,
                        format!(
                            "`{}` joins {dx} and {dy} on part of the relationship {}, which pairs {} columns",
                            e.text,
                            g.relationship(rel).id(),
                            g.relationship(rel).on.len()
                        ),
                        format!("add {}", missing.join(" AND ")),
                    );
                }
                Loose::Undeclared => {
                    let sides = g.junctions().iter().find(|j| {
                        (j.sides[0] == tx && j.sides[1] == ty) || (j.sides[0] == ty && j.sides[1] == tx)
                    });
                    match sides {
                        Some(j) => self.add(
                            FindingKind::JunctionBypass,
                            &e.clause,
                            format!(
                                "`{}` joins {dx} and {dy} directly, but they are the two sides of the m:m pattern with junction {} (C3)",
                                e.text,
                                g.name(j.junction)
                            ),
                            format!("join {} to both sides: {}", g.name(j.junction), self.declared_hint(tx, j.junction)),
                        ),
                        None => self.add(
                            FindingKind::UndeclaredJoin,
                            &e.clause,
                            format!("`{}`: no relationship of the model joins {} to {}", e.text, e.a.display, e.b.display),
                            self.declared_or_path(tx, ty),
                        ),
                    }
                }
            }
        }
        // C4 on lookup instances joined to two relations it alone connects.
        for l in 0..n {
            let Some(tl) = scope.rels[l].table else { continue };
            if !g.is_lookup(tl) {
                continue;
            }
            let nb: Vec<usize> = edges
                .iter()
                .filter_map(|&(a, b, _)| if a == l { Some(b) } else if b == l { Some(a) } else { None })
                .collect();
            let mut uf2: Vec<usize> = (0..n).collect();
            for &(a, b, _) in &edges {
                if a != l && b != l {
                    union(&mut uf2, a, b);
                }
            }
            for (i, &p) in nb.iter().enumerate() {
                for &q in &nb[i + 1..] {
                    if p != q && find(&mut uf2, p) != find(&mut uf2, q) {
                        let (dp, dq) = (&scope.rels[p].display, &scope.rels[q].display);
                        let hint = match (scope.rels[p].table, scope.rels[q].table) {
                            (Some(tp), Some(tq)) => self.path_hint(tp, tq),
                            _ => String::new(),
                        };
                        self.add(
                            FindingKind::LookupBridge,
                            "FROM",
                            format!(
                                "{} is a lookup, and here it is the only link between {dp} and {dq}: rows that merely share a {} are related (C4)",
                                scope.rels[l].display,
                                g.name(tl)
                            ),
                            hint,
                        );
                        union(&mut uf2, p, q);
                    }
                }
            }
        }
        // C3: a junction joined to the same side twice.
        for j in 0..n {
            let Some(tj) = scope.rels[j].table else { continue };
            let Some(junction) = g.junction_of(tj) else { continue };
            for side in junction.sides {
                let k = edges
                    .iter()
                    .filter(|&&(a, b, _)| {
                        (a == j && scope.rels[b].table == Some(side)) || (b == j && scope.rels[a].table == Some(side))
                    })
                    .count();
                if k >= 2 {
                    self.add(
                        FindingKind::JunctionBypass,
                        "FROM",
                        format!("junction {} is joined to {} twice: an m:m junction relates its two sides (C3)", scope.rels[j].display, g.name(side)),
                        format!("join {} to {} once and to {} once", scope.rels[j].display, g.name(junction.sides[0]), g.name(junction.sides[1])),
                    );
                }
            }
        }
        // Cross joins: base relations no condition connects (correlated
        // subqueries link to the outer query, which counts as a link).
        let linked_out: Vec<usize> = eqs
            .iter()
            .filter_map(|e| match (e.a.up, e.b.up) {
                (0, u) if u > 0 => Some(e.a.rel),
                (u, 0) if u > 0 => Some(e.b.rel),
                _ => None,
            })
            .collect();
        let bases: Vec<usize> = (0..n).filter(|&i| scope.rels[i].table.is_some()).collect();
        for &(a, b) in links {
            union(&mut uf, a, b);
        }
        let comp: Vec<usize> = (0..n).map(|i| find(&mut uf, i)).collect();
        let mut comps: Vec<usize> = bases.iter().map(|&i| comp[i]).collect();
        comps.sort_unstable();
        comps.dedup();
        let linked = comps.iter().any(|&c| linked_out.iter().any(|&r| comp[r] == c));
        if comps.len() > 1 && !linked {
            let groups: Vec<String> = comps
                .iter()
                .map(|&c| bases.iter().filter(|&&i| comp[i] == c).map(|&i| scope.rels[i].display.clone()).collect::<Vec<_>>().join("+"))
                .collect();
            let first = bases[0];
            let other = bases.iter().copied().find(|&i| comp[i] != comp[first]);
            let hint = match (scope.rels[first].table, other.and_then(|i| scope.rels[i].table)) {
                (Some(a), Some(b)) => self.declared_or_path(a, b),
                _ => String::new(),
            };
            self.add(
                FindingKind::CrossJoin,
                "FROM",
                format!("no join condition connects {}: every row of one is paired with every row of the other", groups.join(" and ")),
                hint,
            );
        }
        // Correlated equalities (a subquery's table = an outer table).
        for e in eqs.iter().filter(|e| (e.a.up == 0) != (e.b.up == 0)) {
            let (inner, outer) = if e.a.up == 0 { (&e.a, &e.b) } else { (&e.b, &e.a) };
            let ti = scope.rels[inner.rel].table;
            let to = nth_scope(scope, outer.up).and_then(|s| s.rels.get(outer.rel)).and_then(|r| r.table);
            let (Some(ti), Some(to)) = (ti, to) else { continue };
            if g.relationships_between(ti, to).into_iter().any(|r| matches_pair(g, r, ti, &inner.col, to, &outer.col)) {
                continue;
            }
            if ti == to && inner.col == outer.col {
                continue;
            }
            match shared(&references(g, ti, &inner.col), &references(g, to, &outer.col)) {
                Some((t, c)) if g.is_lookup(t) => self.add(
                    FindingKind::LookupBridge,
                    &e.clause,
                    format!("`{}` relates {} and {} only through the lookup {}.{c} (C4)", e.text, g.name(ti), g.name(to), g.name(t)),
                    self.path_hint(ti, to),
                ),
                Some(_) => {}
                None => self.add(
                    FindingKind::UndeclaredJoin,
                    &e.clause,
                    format!("`{}` relates a subquery's {} to the outer {}, but no relationship of the model joins {} to {}", e.text, g.name(ti), g.name(to), inner.display, outer.display),
                    self.declared_or_path(ti, to),
                ),
            }
        }
        self.fanout(s, scope, &edges, order);
    }

    /// Counting aggregates over rows the declared joins repeat.
    fn fanout(&mut self, s: &Select, scope: &Scope, edges: &[(usize, usize, Cardinality)], order: Option<&OrderBy>) {
        let n = scope.rels.len();
        if n < 2 || edges.is_empty() {
            return;
        }
        let g = self.graph;
        let resolve = |q: Option<&str>, c: &str| -> Option<String> {
            let i = match q {
                Some(q) => scope.rels.iter().rposition(|r| r.name == q)?,
                None => scope.rels.iter().position(|r| r.table.is_some_and(|t| g.table(t).column(c).is_some()))?,
            };
            Some(i.to_string())
        };
        let uses = counting_aggregates(s, order, &resolve);
        if uses.is_empty() {
            return;
        }
        let junction: Vec<bool> = scope.rels.iter().map(|r| r.table.is_some_and(|t| g.junction_of(t).is_some())).collect();
        // Relations a GROUP BY fixes: their whole key is grouped on.
        let mut grouped: Vec<(usize, String)> = Vec::new();
        if let GroupByExpr::Expressions(v, _) = &s.group_by {
            for e in v {
                if let Some(c) = self.column(strip(e), scope).filter(|c| c.up == 0) {
                    grouped.push((c.rel, c.col));
                }
            }
        }
        let fixed: Vec<usize> = (0..n)
            .filter(|&i| {
                scope.rels[i].table.is_some_and(|t| {
                    let pk = &g.table(t).primary_key;
                    !pk.is_empty() && pk.iter().all(|k| grouped.iter().any(|(r, c)| *r == i && c.eq_ignore_ascii_case(k)))
                })
            })
            .collect();
        let mult = |set: &[usize]| {
            let mut all = set.to_vec();
            all.extend(&fixed);
            multipliers(n, edges, &junction, &all)
        };
        let names = |v: &[usize]| v.iter().map(|&i| scope.rels[i].display.clone()).collect::<Vec<_>>().join(", ");
        for u in uses {
            let set: Vec<usize> = u.instances.iter().filter_map(|i| i.parse().ok()).collect();
            if set.is_empty() {
                if (0..n).any(|i| mult(&[i]).is_empty()) {
                    continue;
                }
                let all: Vec<usize> = (0..n).collect();
                self.add(
                    FindingKind::Fanout,
                    u.clause,
                    format!("{} counts rows of the join of {}, and no table's rows appear once each in it", u.text, names(&all)),
                    "count one table's rows with COUNT(DISTINCT <its key>)".into(),
                );
                continue;
            }
            let by = mult(&set);
            if by.is_empty() {
                continue;
            }
            self.add(
                FindingKind::Fanout,
                u.clause,
                format!("{} reads {} rows, which the joins repeat once per matching row of {}", u.text, names(&set), names(&by)),
                format!(
                    "aggregate {} in a subquery before joining {}, or count distinct keys (COUNT(DISTINCT …))",
                    names(&set),
                    names(&by)
                ),
            );
        }
    }

    /// "declared: A.x = B.y" when the tables have relationships, otherwise
    /// the declared path between them.
    fn declared_or_path(&self, a: TableId, b: TableId) -> String {
        let d = self.declared_hint(a, b);
        if d.is_empty() { self.path_hint(a, b) } else { d }
    }

    fn declared_hint(&self, a: TableId, b: TableId) -> String {
        let g = self.graph;
        let rels: Vec<String> = g
            .relationships_between(a, b)
            .into_iter()
            .map(|r| {
                let rel = g.relationship(r);
                rel.on.iter().map(|p| format!("{}.{} = {}.{}", rel.from, p[0], rel.to, p[1])).collect::<Vec<_>>().join(" AND ")
            })
            .collect();
        if rels.is_empty() { String::new() } else { format!("the declared join is {}", rels.join(" or ")) }
    }

    /// The shortest declared path between two tables that does not pass
    /// through a lookup or a forbidden table.
    fn path_hint(&self, a: TableId, b: TableId) -> String {
        let g = self.graph;
        let forbidden = g.forbidden_tables();
        let mut prev: Vec<Option<TableId>> = vec![None; g.len()];
        let mut seen = vec![false; g.len()];
        let mut q = VecDeque::from([a]);
        seen[a] = true;
        while let Some(u) = q.pop_front() {
            if u == b {
                break;
            }
            if u != a && (g.is_lookup(u) || forbidden.contains(&u)) {
                continue;
            }
            for (v, _) in g.neighbors(u) {
                if !seen[v] {
                    seen[v] = true;
                    prev[v] = Some(u);
                    q.push_back(v);
                }
            }
        }
        if !seen[b] {
            return format!("the model declares no path between {} and {}", g.name(a), g.name(b));
        }
        let mut path = vec![b];
        while let Some(p) = prev[*path.last().unwrap_or(&a)] {
            path.push(p);
        }
        path.reverse();
        let names: Vec<&str> = path.iter().map(|&t| g.name(t)).collect();
        format!("join along the declared path {}", names.join(" – "))
    }
}

/// A composite relationship between the tables of `e` that has `e` as one
/// of its column pairs, and the equalities missing for the rest.
fn partial_of(g: &SchemaGraph, tx: TableId, ty: TableId, e: &Equality, x: usize) -> Option<(RelId, Vec<String>)> {
    let (ta, tb) = if e.a.rel == x { (tx, ty) } else { (ty, tx) };
    let rel = g.relationships_between(tx, ty).into_iter().find(|&r| g.relationship(r).on.len() > 1 && matches_pair(g, r, ta, &e.a.col, tb, &e.b.col))?;
    let r = g.relationship(rel);
    let (from, _) = g.endpoints(rel);
    let (qa, qb) = (e.a.display.rsplit_once('.').map(|p| p.0).unwrap_or(""), e.b.display.rsplit_once('.').map(|p| p.0).unwrap_or(""));
    let missing = r
        .on
        .iter()
        .filter(|p| {
            let (ca, cb) = if from == ta { (&p[0], &p[1]) } else { (&p[1], &p[0]) };
            !(ca.eq_ignore_ascii_case(&e.a.col) && cb.eq_ignore_ascii_case(&e.b.col))
        })
        .map(|p| {
            let (ca, cb) = if from == ta { (&p[0], &p[1]) } else { (&p[1], &p[0]) };
            format!("{qa}.{ca} = {qb}.{cb}")
        })
        .collect();
    Some((rel, missing))
}

/// How an equality no relationship declares relates its two columns.
enum Loose {
    /// Both columns reference this table's column.
    Shared((TableId, String)),
    /// One column pair of this composite relationship; the missing pairs.
    Partial((RelId, Vec<String>)),
    Undeclared,
}

fn union(uf: &mut [usize], a: usize, b: usize) {
    let (ra, rb) = (find(uf, a), find(uf, b));
    if ra != rb {
        uf[ra] = rb;
    }
}

fn find(uf: &mut [usize], mut x: usize) -> usize {
    while uf[x] != x {
        uf[x] = uf[uf[x]];
        x = uf[x];
    }
    x
}

fn nth_scope<'a, 'p>(s: &'a Scope<'p>, up: usize) -> Option<&'a Scope<'p>> {
    let mut cur: &Scope = s;
    for _ in 0..up {
        cur = cur.parent?;
    }
    Some(cur)
}

fn is_key(g: &SchemaGraph, t: TableId, col: &str) -> bool {
    let pk = &g.table(t).primary_key;
    pk.len() == 1 && pk[0].eq_ignore_ascii_case(col)
}

fn column_list(t: &crate::types::Table) -> String {
    t.columns.iter().map(|c| c.name.as_str()).collect::<Vec<_>>().join(", ")
}

/// Whether relationship `rel` is `ta.ca = tb.cb` (one of its column pairs).
fn matches_pair(g: &SchemaGraph, rel: RelId, ta: TableId, ca: &str, tb: TableId, cb: &str) -> bool {
    let r = g.relationship(rel);
    let (from, to) = g.endpoints(rel);
    r.on.iter().any(|p| {
        (from == ta && to == tb && p[0].eq_ignore_ascii_case(ca) && p[1].eq_ignore_ascii_case(cb))
            || (from == tb && to == ta && p[0].eq_ignore_ascii_case(cb) && p[1].eq_ignore_ascii_case(ca))
    })
}

/// Indexes of the equalities (between relations `x` of table `tx` and the
/// other of table `ty`) that make up every column pair of `rel`, if all are
/// there.
fn matches_rel(g: &SchemaGraph, rel: RelId, tx: TableId, ty: TableId, x: usize, list: &[&Equality]) -> Option<Vec<usize>> {
    let r = g.relationship(rel);
    let (from, to) = g.endpoints(rel);
    // (column on x's side, column on the other side)
    let orient = |i: usize| {
        let e = list[i];
        if e.a.rel == x { (e.a.col.as_str(), e.b.col.as_str()) } else { (e.b.col.as_str(), e.a.col.as_str()) }
    };
    let try_dir = |x_is_from: bool| -> Option<Vec<usize>> {
        if (x_is_from && (from != tx || to != ty)) || (!x_is_from && (from != ty || to != tx)) {
            return None;
        }
        let mut hit = Vec::new();
        for p in &r.on {
            let (cx, cy) = if x_is_from { (&p[0], &p[1]) } else { (&p[1], &p[0]) };
            let i = (0..list.len()).find(|&i| {
                let (a, b) = orient(i);
                a.eq_ignore_ascii_case(cx) && b.eq_ignore_ascii_case(cy)
            })?;
            hit.push(i);
        }
        Some(hit)
    };
    try_dir(true).or_else(|| try_dir(false))
}

/// The (table, column) pairs a column refers to through relationships: the
/// other end of every relationship whose join column it is, and the column
/// itself when it is its table's key.
fn references(g: &SchemaGraph, t: TableId, col: &str) -> Vec<(TableId, String)> {
    let mut out = Vec::new();
    if is_key(g, t, col) {
        out.push((t, col.to_ascii_lowercase()));
    }
    for (other, rel) in g.neighbors(t) {
        let r = g.relationship(rel);
        let (from, _) = g.endpoints(rel);
        for p in &r.on {
            let (mine, theirs) = if from == t { (&p[0], &p[1]) } else { (&p[1], &p[0]) };
            if mine.eq_ignore_ascii_case(col) && is_key(g, other, theirs) {
                out.push((other, theirs.to_ascii_lowercase()));
            }
        }
    }
    out
}

fn shared(a: &[(TableId, String)], b: &[(TableId, String)]) -> Option<(TableId, String)> {
    a.iter().find(|x| b.contains(x)).cloned()
}

/// Walks one clause's expression: names at this level, subqueries handed
/// back to the checker with this scope as their parent.
struct Walk<'c, 'g, 's, 'p> {
    c: &'c mut Checker<'g>,
    scope: &'s Scope<'p>,
    clause: &'s str,
    depth: usize,
}

impl Visitor for Walk<'_, '_, '_, '_> {
    type Break = ();
    fn pre_visit_query(&mut self, q: &Query) -> ControlFlow<()> {
        if self.depth == 0 {
            self.c.query(q, self.scope);
        }
        self.depth += 1;
        ControlFlow::Continue(())
    }
    fn post_visit_query(&mut self, _q: &Query) -> ControlFlow<()> {
        self.depth -= 1;
        ControlFlow::Continue(())
    }
    fn pre_visit_expr(&mut self, e: &Expr) -> ControlFlow<()> {
        if self.depth == 0 && matches!(e, Expr::Identifier(_) | Expr::CompoundIdentifier(_)) {
            self.c.check_name(e, self.scope, self.clause);
        }
        ControlFlow::Continue(())
    }
}

#[cfg(test)]
#[path = "base_tests.rs"]
mod tests;

/// Relations (of the current scope) whose columns an expression reads.
struct Cols<'c, 'g, 's, 'p> {
    c: &'c Checker<'g>,
    scope: &'s Scope<'p>,
    depth: usize,
    out: Vec<usize>,
}

impl Visitor for Cols<'_, '_, '_, '_> {
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
            if let Some(c) = self.c.column(e, self.scope).filter(|c| c.up == 0) {
                self.out.push(c.rel);
            }
        }
        ControlFlow::Continue(())
    }
}
