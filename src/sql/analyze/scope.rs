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
    /// `q` is bound to (a catalog table, lower-cased, or the alias itself).
    NotInRelation { relation: String, catalog: bool },
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
