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
//!
//! Names are resolved by the one SQL scope resolver, the guard's and the
//! analyser's ([`observe_selects`]): it hands over each SELECT's relations,
//! equalities and column references; this module only judges them.

use std::collections::{BTreeSet, VecDeque};

use sqlparser::ast::{GroupByExpr, OrderBy, Select, Statement};
use sqlparser::parser::Parser;

use super::aggregates::counting_aggregates;
use crate::error::{Error, Result};
use crate::graph::{RelId, SchemaGraph, TableId};
use crate::sql::analyze::{
    column_name, observe_selects, ColumnOutcome, ColumnUse, Equality, ScopeColumn, SelectObserver, SelectScope,
};
use crate::sql::guard::parser_dialect;
pub use crate::types::check::{CheckReport, Finding, FindingKind};
use crate::types::grain::multipliers;
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
    observe_selects(q, dialect, graph.model(), &mut c);
    let mut seen = BTreeSet::new();
    let findings = c.findings.into_iter().filter(|f| seen.insert(f.clone())).collect();
    Ok(CheckReport { model: graph.model().name.clone(), tables: c.tables.into_iter().collect(), findings })
}

/// A relation of one SELECT's FROM clause.
#[derive(Debug, Clone)]
struct Rel {
    /// As written, for messages.
    display: String,
    /// The model table, for base tables.
    table: Option<TableId>,
}

/// `lookup` of [`SelectObserver::select`]: a column resolved in the SELECT's scope.
type Lookup<'a> = dyn Fn(Option<&str>, &str) -> Option<ScopeColumn> + 'a;

struct Checker<'g> {
    graph: &'g SchemaGraph,
    dialect: Dialect,
    findings: Vec<Finding>,
    tables: BTreeSet<String>,
}

/// The order `lucy check` reports names in: a SELECT's ON conditions, then
/// its clauses as written; `None` for clauses it does not check.
fn clause_rank(clause: &str) -> Option<usize> {
    if clause.starts_with("JOIN ") {
        return Some(0);
    }
    ["SELECT", "WHERE", "GROUP BY", "HAVING", "ORDER BY"].iter().position(|c| *c == clause).map(|i| i + 1)
}

impl SelectObserver for Checker<'_> {
    /// One SELECT (after the ones inside it): its tables, the names in its
    /// clauses, then its join graph.
    fn select(
        &mut self,
        s: &Select,
        order: Option<&OrderBy>,
        scope: &SelectScope,
        columns: &[ColumnUse],
        lookup: &Lookup<'_>,
    ) {
        let rels: Vec<Rel> = scope
            .relations
            .iter()
            .map(|r| Rel {
                display: r.display.clone(),
                table: r.table.as_deref().and_then(|t| self.table(t, &r.written)),
            })
            .collect();
        let mut named: Vec<(usize, &ColumnUse)> =
            columns.iter().filter_map(|u| Some((clause_rank(u.clause.as_deref()?)?, u))).collect();
        named.sort_by_key(|(rank, _)| *rank);
        for (_, u) in named {
            self.check_name(u, scope);
        }
        self.joins(s, &rels, &scope.equalities, &scope.links, order, lookup);
    }
}

impl<'g> Checker<'g> {
    fn add(&mut self, kind: FindingKind, clause: &str, message: String, hint: String) {
        self.findings.push(Finding { kind, clause: clause.to_string(), message, hint });
    }

    /// The model table of a FROM relation (lower-cased `name`, `written` as
    /// written), reported when it is unknown or forbidden.
    fn table(&mut self, name: &str, written: &str) -> Option<TableId> {
        let Some(t) = self.graph.table_id(name) else {
            let names = self.graph.model().tables.iter().map(|t| t.name.as_str());
            let hint = match crate::model::closest(written, names) {
                Some(c) => format!("did you mean {c}?"),
                None => "use a table of the model (`lucy model show`)".into(),
            };
            self.add(
                FindingKind::UnknownTable,
                "FROM",
                format!("table `{written}` is not in model {}", self.graph.model().name),
                hint,
            );
            return None;
        };
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
    }

    /// An unknown column, reported with the closest known name.
    fn check_name(&mut self, u: &ColumnUse, scope: &SelectScope) {
        let Some(clause) = u.clause.as_deref() else { return };
        let col = u.column.to_ascii_lowercase();
        match (&u.qualifier, &u.outcome) {
            (Some(q), ColumnOutcome::NotInRelation { relation, catalog: true, display }) => {
                let Some(t) = self.graph.table_id(relation) else { return };
                let table = self.graph.table(t);
                let hint = match crate::model::closest(&col, table.columns.iter().map(|c| c.name.as_str())) {
                    Some(c) => format!("did you mean {display}.{c}?"),
                    None => format!("{} has columns {}", table.name, column_list(table)),
                };
                let message = format!("`{q}.{}`: {} has no column `{col}`", u.column, table.name);
                self.add(FindingKind::UnknownColumn, clause, message, hint);
            }
            // Not a relation in scope: maybe `schema.table.col` or a struct
            // field; only report when it names nothing the model knows.
            (Some(q), ColumnOutcome::NoSuchQualifier) => {
                let written = format!("{q}.{}", u.column);
                let q = q.to_ascii_lowercase();
                if self.graph.table_id(&q).is_some() {
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
            }
            (None, ColumnOutcome::NotFound) => {
                let g = self.graph;
                let in_scope: Vec<&str> = scope
                    .tables_in_scope
                    .iter()
                    .filter_map(|t| g.table_id(t))
                    .flat_map(|t| g.table(t).columns.iter().map(|c| c.name.as_str()))
                    .collect();
                // SQLite (and MySQL without ANSI_QUOTES) read a double-quoted
                // name that is no column as a string literal: valid, if fragile.
                // (Spark reads every double-quoted text as a string literal.)
                if in_scope.is_empty()
                    || (u.quoted && matches!(self.dialect, Dialect::Sqlite | Dialect::Mysql | Dialect::Spark))
                {
                    return;
                }
                let mut hint = match crate::model::closest(&col, in_scope.iter().copied()) {
                    Some(c) => format!("did you mean {c}?"),
                    None => "use a column of the tables in FROM".into(),
                };
                if u.quoted {
                    hint.push_str(" (\"text\" is a name here: string literals take single quotes)");
                }
                self.add(
                    FindingKind::UnknownColumn,
                    clause,
                    format!("column `{}` is not a column of any table in FROM", u.column),
                    hint,
                );
            }
            _ => {}
        }
    }

    /// The join graph of one SELECT: declared relationships, filters,
    /// undeclared joins, C3, C4, forbidden relationships, cross joins and
    /// fan-out.
    fn joins(
        &mut self,
        s: &Select,
        rels: &[Rel],
        eqs: &[Equality],
        links: &[(usize, usize)],
        order: Option<&OrderBy>,
        lookup: &Lookup<'_>,
    ) {
        let n = rels.len();
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
            let (tx, ty) = (rels[*x].table, rels[*y].table);
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
                            format!(
                                "{} joins along {}, which the model's constraints forbid",
                                list[0].text,
                                g.relationship(rel).id()
                            ),
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
            let (tx, ty) = (rels[x].table.unwrap_or(0), rels[y].table.unwrap_or(0));
            let (dx, dy) = (&rels[x].display, &rels[y].display);
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
            let Some(tl) = rels[l].table else { continue };
            if !g.is_lookup(tl) {
                continue;
            }
            let nb: Vec<usize> = edges
                .iter()
                .filter_map(|&(a, b, _)| {
                    if a == l {
                        Some(b)
                    } else if b == l {
                        Some(a)
                    } else {
                        None
                    }
                })
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
                        let (dp, dq) = (&rels[p].display, &rels[q].display);
                        let hint = match (rels[p].table, rels[q].table) {
                            (Some(tp), Some(tq)) => self.path_hint(tp, tq),
                            _ => String::new(),
                        };
                        self.add(
                            FindingKind::LookupBridge,
                            "FROM",
                            format!(
                                "{} is a lookup, and here it is the only link between {dp} and {dq}: rows that merely share a {} are related (C4)",
                                rels[l].display,
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
            let Some(tj) = rels[j].table else { continue };
            let Some(junction) = g.junction_of(tj) else { continue };
            for side in junction.sides {
                let k = edges
                    .iter()
                    .filter(|&&(a, b, _)| {
                        (a == j && rels[b].table == Some(side)) || (b == j && rels[a].table == Some(side))
                    })
                    .count();
                if k >= 2 {
                    self.add(
                        FindingKind::JunctionBypass,
                        "FROM",
                        format!(
                            "junction {} is joined to {} twice: an m:m junction relates its two sides (C3)",
                            rels[j].display,
                            g.name(side)
                        ),
                        format!(
                            "join {} to {} once and to {} once",
                            rels[j].display,
                            g.name(junction.sides[0]),
                            g.name(junction.sides[1])
                        ),
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
        let bases: Vec<usize> = (0..n).filter(|&i| rels[i].table.is_some()).collect();
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
                .map(|&c| {
                    bases
                        .iter()
                        .filter(|&&i| comp[i] == c)
                        .map(|&i| rels[i].display.clone())
                        .collect::<Vec<_>>()
                        .join("+")
                })
                .collect();
            let first = bases[0];
            let other = bases.iter().copied().find(|&i| comp[i] != comp[first]);
            let hint = match (rels[first].table, other.and_then(|i| rels[i].table)) {
                (Some(a), Some(b)) => self.declared_or_path(a, b),
                _ => String::new(),
            };
            self.add(
                FindingKind::CrossJoin,
                "FROM",
                format!(
                    "no join condition connects {}: every row of one is paired with every row of the other",
                    groups.join(" and ")
                ),
                hint,
            );
        }
        // Correlated equalities (a subquery's table = an outer table).
        for e in eqs.iter().filter(|e| (e.a.up == 0) != (e.b.up == 0)) {
            let (inner, outer) = if e.a.up == 0 { (&e.a, &e.b) } else { (&e.b, &e.a) };
            let ti = rels[inner.rel].table;
            let to = outer.table.as_deref().and_then(|t| g.table_id(t));
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
                    format!(
                        "`{}` relates {} and {} only through the lookup {}.{c} (C4)",
                        e.text,
                        g.name(ti),
                        g.name(to),
                        g.name(t)
                    ),
                    self.path_hint(ti, to),
                ),
                Some(_) => {}
                None => self.add(
                    FindingKind::UndeclaredJoin,
                    &e.clause,
                    format!(
                        "`{}` relates a subquery's {} to the outer {}, but no relationship of the model joins {} to {}",
                        e.text,
                        g.name(ti),
                        g.name(to),
                        inner.display,
                        outer.display
                    ),
                    self.declared_or_path(ti, to),
                ),
            }
        }
        self.fanout(s, rels, &edges, order, lookup);
    }

    /// Counting aggregates over rows the declared joins repeat.
    fn fanout(
        &mut self,
        s: &Select,
        rels: &[Rel],
        edges: &[(usize, usize, Cardinality)],
        order: Option<&OrderBy>,
        lookup: &Lookup<'_>,
    ) {
        let n = rels.len();
        if n < 2 || edges.is_empty() {
            return;
        }
        let g = self.graph;
        let resolve = |q: Option<&str>, c: &str| lookup(q, c).filter(|c| c.up == 0).map(|c| c.rel.to_string());
        let uses = counting_aggregates(s, order, &resolve);
        if uses.is_empty() {
            return;
        }
        let junction: Vec<bool> = rels.iter().map(|r| r.table.is_some_and(|t| g.junction_of(t).is_some())).collect();
        // Relations a GROUP BY fixes: their whole key is grouped on.
        let mut grouped: Vec<(usize, String)> = Vec::new();
        if let GroupByExpr::Expressions(v, _) = &s.group_by {
            for e in v {
                if let Some(c) = column_name(e).and_then(|(q, c)| lookup(q.as_deref(), &c)).filter(|c| c.up == 0) {
                    grouped.push((c.rel, c.col));
                }
            }
        }
        let fixed: Vec<usize> = (0..n)
            .filter(|&i| {
                rels[i].table.is_some_and(|t| {
                    let pk = &g.table(t).primary_key;
                    !pk.is_empty()
                        && pk.iter().all(|k| grouped.iter().any(|(r, c)| *r == i && c.eq_ignore_ascii_case(k)))
                })
            })
            .collect();
        let mult = |set: &[usize]| {
            let mut all = set.to_vec();
            all.extend(&fixed);
            multipliers(n, edges, &junction, &all)
        };
        let names = |v: &[usize]| v.iter().map(|&i| rels[i].display.clone()).collect::<Vec<_>>().join(", ");
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
                    format!(
                        "{} counts rows of the join of {}, and no table's rows appear once each in it",
                        u.text,
                        names(&all)
                    ),
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
                format!(
                    "{} reads {} rows, which the joins repeat once per matching row of {}",
                    u.text,
                    names(&set),
                    names(&by)
                ),
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
        if d.is_empty() {
            self.path_hint(a, b)
        } else {
            d
        }
    }

    fn declared_hint(&self, a: TableId, b: TableId) -> String {
        let g = self.graph;
        let rels: Vec<String> = g
            .relationships_between(a, b)
            .into_iter()
            .map(|r| {
                let rel = g.relationship(r);
                rel.on
                    .iter()
                    .map(|p| format!("{}.{} = {}.{}", rel.from, p[0], rel.to, p[1]))
                    .collect::<Vec<_>>()
                    .join(" AND ")
            })
            .collect();
        if rels.is_empty() {
            String::new()
        } else {
            format!("the declared join is {}", rels.join(" or "))
        }
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
    let rel = g
        .relationships_between(tx, ty)
        .into_iter()
        .find(|&r| g.relationship(r).on.len() > 1 && matches_pair(g, r, ta, &e.a.col, tb, &e.b.col))?;
    let r = g.relationship(rel);
    let (from, _) = g.endpoints(rel);
    let (qa, qb) = (
        e.a.display.rsplit_once('.').map(|p| p.0).unwrap_or(""),
        e.b.display.rsplit_once('.').map(|p| p.0).unwrap_or(""),
    );
    let missing =
        r.on.iter()
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
fn matches_rel(
    g: &SchemaGraph,
    rel: RelId,
    tx: TableId,
    ty: TableId,
    x: usize,
    list: &[&Equality],
) -> Option<Vec<usize>> {
    let r = g.relationship(rel);
    let (from, to) = g.endpoints(rel);
    // (column on x's side, column on the other side)
    let orient = |i: usize| {
        let e = list[i];
        if e.a.rel == x {
            (e.a.col.as_str(), e.b.col.as_str())
        } else {
            (e.b.col.as_str(), e.a.col.as_str())
        }
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

#[cfg(test)]
#[path = "base_tests.rs"]
mod tests;
