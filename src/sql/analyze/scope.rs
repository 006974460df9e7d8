//! What the scope resolver found: every relation reference and every column
//! reference of a query with what it resolved to, and the AST nodes the walk
//! reached. The SQL guard decides on these facts; `sql::analyze` turns the
//! same walk into [`super::QueryRefs`].

use std::collections::HashSet;

use sqlparser::ast::{Expr, Query, TableFactor};

/// What a relation reference (`FROM x`, `JOIN x`, …) resolved to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RelationTarget {
    /// A CTE in scope at that point (the innermost one of that name).
    Cte,
    /// The lucy view given to [`super::analyze_view_query`].
    View,
    /// A table (or view) of the database, lower-cased as written (the last
    /// part of a qualified name); `qualified` keeps the full dotted name.
    Table { name: String, qualified: Option<String> },
    /// A table-valued function call, `name(…)`.
    TableFunction(String),
    /// A derived table `( SELECT … ) AS x` or a parenthesised join.
    Derived,
    /// A table source the resolver does not model (UNNEST, JSON_TABLE,
    /// PIVOT, `TABLE x`, …), as SQL text.
    Unsupported(String),
}

/// One relation reference.
#[derive(Debug, Clone)]
pub struct RelationUse {
    /// The name as written (empty for derived tables and other sources).
    pub written: String,
    pub target: RelationTarget,
    /// When the name is not in scope here but the query defines a CTE of
    /// that name elsewhere (a shadowing attempt or a scoping mistake).
    pub defined_elsewhere: bool,
}

/// What a column reference resolved to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ColumnOutcome {
    /// A column of a relation in scope.
    Column,
    /// A select-list alias of an enclosing SELECT.
    Alias,
    /// A relation in scope has columns nobody knows (a table outside the
    /// catalog, `VALUES`, `*` over such a relation): cannot tell.
    Unknown,
    /// `q.c` where `q` is in scope but has no column `c`; `relation` is what
    /// `q` is bound to (a catalog table, lower-cased, or the alias itself),
    /// `display` that relation's alias or name as its FROM clause writes it.
    NotInRelation { relation: String, catalog: bool, display: String },
    /// `q.c` where nothing named `q` is in scope.
    NoSuchQualifier,
    /// A bare `c` that no relation in scope has.
    NotFound,
}

/// One column reference.
#[derive(Debug, Clone)]
pub struct ColumnUse {
    /// As written, dotted (`c`, `v.c`).
    pub written: String,
    /// The qualifier as written (`v` in `v.c`).
    pub qualifier: Option<String>,
    /// The column name as written.
    pub column: String,
    /// The last part was double-quoted (SQLite may read it as a string).
    pub quoted: bool,
    pub outcome: ColumnOutcome,
    /// The SELECT whose clause holds it ([`SelectScope::id`]); none outside
    /// a SELECT's clauses (LIMIT, a set operation's ORDER BY).
    pub select: Option<usize>,
    /// That clause: `SELECT`, `WHERE`, `GROUP BY`, `HAVING`, `ORDER BY`,
    /// `JOIN <relation> ON`; none for the others (QUALIFY, windows, …).
    pub clause: Option<String>,
}

/// A relation of one SELECT's FROM clause.
#[derive(Debug, Clone)]
pub struct ScopeRelation {
    /// The name columns qualify it by: alias, or table name (lower-cased);
    /// empty for an unaliased derived table.
    pub name: String,
    /// The alias or name as written (`(subquery)` for an unaliased derived
    /// table), for messages.
    pub display: String,
    /// For a table of the database (not a CTE, derived table, table function
    /// or the lucy view): its name, lower-cased (the last part of a
    /// qualified name).
    pub table: Option<String>,
    /// That name as written.
    pub written: String,
}

/// A column reference resolved to a relation of the FROM clause `up`
/// scopes out (0: the SELECT's own).
#[derive(Debug, Clone)]
pub struct ScopeColumn {
    pub up: usize,
    /// The relation's index in its FROM clause.
    pub rel: usize,
    /// The relation's table ([`ScopeRelation::table`]).
    pub table: Option<String>,
    /// The column name, lower-cased.
    pub col: String,
    /// As written: `q.c` or `c`.
    pub display: String,
}

/// A column equality between two relations, from a conjunct of an ON or
/// WHERE condition, or from USING / NATURAL.
#[derive(Debug, Clone)]
pub struct Equality {
    pub a: ScopeColumn,
    pub b: ScopeColumn,
    /// `WHERE`, `JOIN <relation> ON`, `JOIN <relation> USING`, `NATURAL JOIN <relation>`.
    pub clause: String,
    /// The conjunct as SQL text (`USING (c)` for USING and NATURAL).
    pub text: String,
}

/// One SELECT as the resolver saw it: its FROM clause and the conditions
/// relating its relations.
#[derive(Debug, Clone, Default)]
pub struct SelectScope {
    /// Numbers the SELECTs of a query in the order the walk enters them.
    pub id: usize,
    pub relations: Vec<ScopeRelation>,
    /// ON and WHERE conjuncts that equate columns of two relations (one may
    /// be an enclosing query's: a correlation), then USING / NATURAL pairs.
    pub equalities: Vec<Equality>,
    /// Relations (indexes) of this FROM clause that another ON or WHERE
    /// conjunct reads together (`a.x = b.y OR a.x = b.z`), consecutive pairs.
    pub links: Vec<(usize, usize)>,
    /// The tables of the relations in scope here and in every enclosing
    /// scope, lower-cased, innermost first.
    pub tables_in_scope: Vec<String>,
}

/// Everything the resolver recorded about one query.
#[derive(Debug, Default)]
pub struct Resolution {
    pub relations: Vec<RelationUse>,
    pub columns: Vec<ColumnUse>,
    /// Addresses of the `Query` nodes the walk entered.
    pub(crate) queries: HashSet<usize>,
    /// Addresses of the `TableFactor` nodes the walk resolved.
    pub(crate) factors: HashSet<usize>,
    /// Addresses of the identifier `Expr` nodes the walk resolved.
    pub(crate) idents: HashSet<usize>,
    /// Names of every CTE the query defines, lower-cased.
    pub(crate) cte_names: HashSet<String>,
}

impl Resolution {
    /// Did the walk enter this query node?
    pub fn reached_query(&self, q: &Query) -> bool {
        self.queries.contains(&(q as *const Query as usize))
    }

    /// Did the walk resolve this table factor?
    pub fn reached_factor(&self, t: &TableFactor) -> bool {
        self.factors.contains(&(t as *const TableFactor as usize))
    }

    /// Did the walk resolve this identifier expression?
    pub fn reached_ident(&self, e: &Expr) -> bool {
        self.idents.contains(&(e as *const Expr as usize))
    }
}
