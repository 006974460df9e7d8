//! Tables, columns and join pairs referenced by a query.
//!
//! Used by the benchmark metrics (coverage, eq. 10 of the Lucy paper), the
//! oracle mode (the gold SQL's tables and join pairs) and failure
//! attribution. Scoping is done by hand over the query structure (CTEs,
//! derived tables, set operations, correlated subqueries), so a column is
//! attributed to the base table it really comes from; expressions are walked
//! with sqlparser's visitor so no expression kind is missed.
//!
//! The same resolver backs the SQL guard ([`resolve_scopes`]): there is one
//! notion of "what does this name refer to here" in lucy.
//!
//! Every name in a [`QueryRefs`] is lower-cased: that is the canonical form
//! for comparisons (SQL identifiers are compared case-insensitively here).

mod resolve;
pub mod scope;
mod walk;

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};
use sqlparser::ast::{Expr, OrderBy, Query, Select, Statement};
use sqlparser::dialect::{Dialect as SqlDialect, GenericDialect, MySqlDialect};
use sqlparser::parser::Parser;

use crate::error::{Error, Result};
use crate::graph::SchemaGraph;
use crate::types::{ColumnRef, DbModel, Dialect, ViewResult};

use resolve::{lower_ref, split_ref, Analyzer, Catalog, OutputCol, ViewBase};
pub use scope::{
    ColumnOutcome, ColumnUse, Equality, RelationTarget, RelationUse, Resolution, ScopeColumn, ScopeRelation,
    SelectScope,
};
pub use walk::{top_level_exprs, walk_top_level, TopLevel};

/// An equality between columns of two different relations, ordered so that
/// `left <= right` (lower-cased `table.column`).
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct JoinPair {
    pub left: ColumnRef,
    pub right: ColumnRef,
}

impl JoinPair {
    /// A normalized pair: lower-cased, ordered.
    pub fn new(a: &ColumnRef, b: &ColumnRef) -> Self {
        let a = lower_ref(a);
        let b = lower_ref(b);
        if a <= b {
            JoinPair { left: a, right: b }
        } else {
            JoinPair { left: b, right: a }
        }
    }

    /// Both tables of the pair.
    pub fn tables(&self) -> (&str, &str) {
        (&self.left.table, &self.right.table)
    }
}

impl std::fmt::Display for JoinPair {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} = {}", self.left, self.right)
    }
}

/// What a query references, resolved to base tables and columns.
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct QueryRefs {
    /// Base tables read anywhere in the query (FROM/JOIN, subqueries, CTEs,
    /// set-operation branches; for a query over a lucy view, the view's tables).
    pub tables: BTreeSet<String>,
    /// How many times each base table occurs as a relation. More than one
    /// means a self join or a table used twice (e.g. in a subquery).
    pub table_uses: BTreeMap<String, usize>,
    /// Base columns referenced anywhere (projection, filters, grouping,
    /// ordering, join conditions).
    pub columns: BTreeSet<ColumnRef>,
    /// Equalities between columns of two different relations, from
    /// `JOIN … ON`, `USING`, `NATURAL`, and WHERE conjuncts (including
    /// correlated subqueries); for a view query, the view's join pairs.
    pub join_pairs: BTreeSet<JoinPair>,
    /// `col [NOT] IN (SELECT col2 …)` links, kept apart from real joins.
    pub semi_join_pairs: BTreeSet<JoinPair>,
    /// Column names that could not be attributed to a table (ambiguous
    /// without a model, string literals in double quotes, unknown names).
    pub unresolved: BTreeSet<String>,
    /// The top-level query has ORDER BY (row order matters for ex).
    pub ordered: bool,
    /// The query contains UNION / INTERSECT / EXCEPT.
    pub set_operation: bool,
    /// Every occurrence of a base table as a relation (a FROM or JOIN item,
    /// aliased or not), in the order the walk meets them: what
    /// `table_uses` counts, one by one. Two aliases of one table are two
    /// occurrences; the oracle turns them into table instances.
    #[serde(skip)]
    pub occurrences: Vec<Occurrence>,
    /// Column equalities between two occurrences (join conditions, USING,
    /// correlations, semi-joins): `join_pairs` and `semi_join_pairs` with
    /// the occurrence each column comes from. Columns that reach the
    /// equality through a derived table or CTE are not attributed here.
    #[serde(skip)]
    pub occurrence_pairs: Vec<OccurrencePair>,
}

/// One occurrence of a base table in a query.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Occurrence {
    /// The table, lower-cased.
    pub table: String,
    /// The name columns qualify it by (alias, or table name), lower-cased.
    pub alias: String,
    /// The SELECT whose FROM clause holds it (numbered in walk order, as
    /// [`SelectScope::id`]).
    pub select: usize,
}

/// A column equality between two occurrences: `a.left = b.right`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OccurrencePair {
    /// Index into [`QueryRefs::occurrences`] of the left column's occurrence.
    pub a: usize,
    /// Index of the right column's occurrence.
    pub b: usize,
    /// Column of `a`, lower-cased.
    pub left: ColumnRef,
    /// Column of `b`, lower-cased.
    pub right: ColumnRef,
    /// A semi-join (`x IN (SELECT y …)`, `x = (SELECT y …)`), not a join.
    pub semi: bool,
}

impl QueryRefs {
    /// Tables used more than once.
    pub fn multi_use_tables(&self) -> Vec<&str> {
        self.table_uses.iter().filter(|(_, &n)| n > 1).map(|(t, _)| t.as_str()).collect()
    }

    /// Join pairs and semi-join pairs together.
    pub fn all_pairs(&self) -> BTreeSet<JoinPair> {
        self.join_pairs.union(&self.semi_join_pairs).cloned().collect()
    }
}

/// Analyze one SELECT query. With a model, unqualified columns are resolved
/// through the model's tables and `*` expands to the model's columns.
pub fn analyze(sql: &str, dialect: Dialect, model: Option<&DbModel>) -> Result<QueryRefs> {
    let query = parse_query(sql, dialect)?;
    let catalog = model.map_or(Catalog::None, Catalog::Model);
    let mut a = Analyzer::new(catalog, dialect);
    a.top_level(&query, None);
    Ok(a.refs)
}

/// Resolve every relation and column reference of a parsed query, in
/// `dialect`'s scoping rules, against `tables` (name and columns; matched
/// case-insensitively): the facts the SQL guard decides on.
pub fn resolve_scopes(query: &Query, dialect: Dialect, tables: &[(String, Vec<String>)]) -> Resolution {
    let catalog = tables
        .iter()
        .map(|(t, cols)| (t.to_ascii_lowercase(), cols.iter().map(|c| c.to_ascii_lowercase()).collect()))
        .collect();
    let mut a = Analyzer::new(Catalog::Tables(catalog), dialect);
    a.top_level(query, None);
    a.facts
}

/// A plain column reference's qualifier (the part before the column, if
/// any) and column, lower-cased; `None` for any other expression.
pub fn column_name(e: &Expr) -> Option<(Option<String>, String)> {
    match e {
        Expr::Nested(inner) => column_name(inner),
        Expr::Identifier(i) => Some((None, i.value.to_ascii_lowercase())),
        Expr::CompoundIdentifier(p) if p.len() >= 2 => {
            let n = p.len();
            Some((Some(p[n - 2].value.to_ascii_lowercase()), p[n - 1].value.to_ascii_lowercase()))
        }
        _ => None,
    }
}

/// Told about every SELECT of a query as the scope resolver leaves it
/// (after the SELECTs inside it): what `lucy check` judges joins and names
/// on, so that it resolves nothing itself.
pub trait SelectObserver {
    /// `sel` with the ORDER BY of its query (when it is the query's body),
    /// what the resolver found in it, the column references written in its
    /// clauses, and `lookup`: a column (qualifier, name; lower-cased) resolved
    /// in its scope, as the resolver resolves one.
    fn select(
        &mut self,
        sel: &Select,
        order: Option<&OrderBy>,
        scope: &SelectScope,
        columns: &[ColumnUse],
        lookup: &dyn Fn(Option<&str>, &str) -> Option<ScopeColumn>,
    );
}

/// [`resolve_scopes`] over a dbModel's tables, telling `observer` about
/// every SELECT.
pub fn observe_selects(
    query: &Query,
    dialect: Dialect,
    model: &DbModel,
    observer: &mut dyn SelectObserver,
) -> Resolution {
    let mut a = Analyzer::new(Catalog::Model(model), dialect);
    a.observer = Some(observer);
    a.top_level(query, None);
    a.facts
}

/// Analyze a query written over a lucy view (`FROM <view_name>`): view
/// columns map back to their base `table.column`, the view counts as all of
/// its tables, and its join pairs and join columns are part of the result
/// (the view is part of what runs).
///
/// With the `graph` the view was built on, instances and join pairs are read
/// from the view's ids ([`ViewResult::instances`], [`Join::pairs`]); without
/// it (or for a view read back from JSON, which carries no ids) they are read
/// from the view's text fields.
///
/// [`Join::pairs`]: crate::types::Join::pairs
pub fn analyze_view_query(sql: &str, view: &ViewResult, graph: Option<&SchemaGraph>) -> Result<QueryRefs> {
    let query = parse_query(sql, Dialect::Sqlite)?;
    let mut a = Analyzer::new(Catalog::None, Dialect::Sqlite);
    let cols: Vec<OutputCol> = view
        .columns
        .iter()
        .map(|c| OutputCol {
            name: c.alias.to_ascii_lowercase(),
            source: Some(lower_ref(&ColumnRef::new(&c.table, &c.column))),
        })
        .collect();
    let mut base = ViewBase { name: view.view_name.to_ascii_lowercase(), cols, tables: Vec::new(), pairs: Vec::new() };
    let tables: Vec<String> = match ids_of(view, graph) {
        Some(g) => view.instances.iter().map(|i| g.name(i.table).to_ascii_lowercase()).collect(),
        None => view.tables.iter().map(|t| view_base_table(view, t).to_ascii_lowercase()).collect(),
    };
    for b in tables {
        if !base.tables.contains(&b) {
            base.tables.push(b);
        }
    }
    base.pairs = view_pairs(view, graph).into_iter().flatten().collect();
    a.top_level(&query, Some(&base));
    Ok(a.refs)
}

/// The graph, when the view carries the ids that let it be read through it.
fn ids_of<'g>(view: &ViewResult, graph: Option<&'g SchemaGraph>) -> Option<&'g SchemaGraph> {
    let complete = !view.instances.is_empty()
        && view.joins.iter().all(|j| j.pairs.len() == j.on.len())
        && view.joins.iter().flat_map(|j| &j.pairs).flatten().all(|c| c.instance < view.instances.len());
    graph.filter(|_| complete)
}

/// The base table behind a table name of a view read back from JSON (no
/// ids): the grain names every instance's table (`LOCATION_CLIENT`,
/// `EMPLOYEE_manager`, `CLIENT_2`); a view without a grain (written before
/// it existed) is read by its walk: a table that occurs twice joins again
/// under an alias `<table>_<n>`. Views built in this process are read
/// through their [`ViewResult::instances`] instead (see
/// [`analyze_view_query`]).
pub fn view_base_table<'v>(view: &'v ViewResult, name: &'v str) -> &'v str {
    if let Some(i) = view.grain.instance(name) {
        return &i.table;
    }
    let known = |n: &str| {
        view.walk
            .iter()
            .chain(&view.relevant)
            .chain(view.columns.iter().map(|c| &c.table))
            .any(|w| w.eq_ignore_ascii_case(n))
    };
    if known(name) {
        return name;
    }
    match name.rsplit_once('_') {
        Some((prefix, n)) if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) && known(prefix) => prefix,
        _ => name,
    }
}

/// The join pairs of a view, one list per join, on base tables: from the
/// view's ids with the `graph` it was built on, else (a view read from JSON)
/// from its `on` text.
pub fn view_pairs(view: &ViewResult, graph: Option<&SchemaGraph>) -> Vec<Vec<JoinPair>> {
    if let Some(g) = ids_of(view, graph) {
        let base = |c: &crate::types::InstanceColumn| {
            let (_, col) = g.column_names(c.column);
            ColumnRef::new(g.name(view.instances[c.instance].table).to_ascii_lowercase(), col.to_ascii_lowercase())
        };
        return view
            .joins
            .iter()
            .map(|j| j.pairs.iter().map(|[l, r]| JoinPair::new(&base(l), &base(r))).collect())
            .collect();
    }
    let base = |s: &str| {
        let c = split_ref(s)?;
        Some(ColumnRef::new(view_base_table(view, &c.table).to_ascii_lowercase(), c.column))
    };
    view.joins
        .iter()
        .map(|j| j.on.iter().filter_map(|[l, r]| Some(JoinPair::new(&base(l)?, &base(r)?))).collect())
        .collect()
}

/// Parse exactly one query statement, trying the requested dialect first and
/// then the generic and MySQL dialects (benchmark gold SQL is written in
/// several dialects).
pub fn parse_query(sql: &str, dialect: Dialect) -> Result<Query> {
    let first = dialect.parser();
    let tries: [&dyn SqlDialect; 3] = [first.as_ref(), &GenericDialect {}, &MySqlDialect {}];
    let mut first_err = None;
    for d in tries {
        match Parser::parse_sql(d, sql) {
            Ok(mut stmts) => {
                if stmts.len() != 1 {
                    return Err(Error::Sql(format!("expected exactly one statement, found {}", stmts.len())));
                }
                return match stmts.pop() {
                    Some(Statement::Query(q)) => Ok(*q),
                    Some(other) => Err(Error::Sql(format!(
                        "expected a SELECT query, found `{}`",
                        other.to_string().chars().take(60).collect::<String>()
                    ))),
                    None => Err(Error::Sql("empty SQL".into())),
                };
            }
            Err(e) => {
                first_err.get_or_insert(e);
            }
        }
    }
    Err(Error::Sql(format!(
        "cannot parse as {} SQL: {}",
        dialect.as_str(),
        first_err.map(|e| e.to_string()).unwrap_or_default()
    )))
}

#[cfg(test)]
mod tests;
