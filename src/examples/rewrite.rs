//! An example's SQL over the base tables rewritten over lucy's view, so the
//! QueryView prompt shows it in the view's own column names.
//!
//! The rewrite is deliberately narrow, because a wrong example teaches the
//! wrong query: it applies to one SELECT (no CTE, set operation, subquery or
//! derived table), whose FROM lists plain tables, each once, every one of
//! them in the view as exactly one instance, whose joins (and other
//! equalities between tables) are joins the view makes, and whose every
//! column reference is a column of the view. Then its FROM clause becomes
//! `FROM <view>` (the view makes the joins) and each column reference
//! (`T1.name`, `name`) becomes the view's alias of that table's column.
//! Anything else is left out of the prompt, with the reason.

use std::collections::{BTreeMap, BTreeSet};
use std::ops::ControlFlow;

use sqlparser::ast::{visit_expressions, visit_expressions_mut, Expr, Ident, Query, SelectItem, SetExpr, TableFactor};

use crate::graph::SchemaGraph;
use crate::sql::analyze::{analyze, parse_query, view_pairs, JoinPair};
use crate::types::{Dialect, ViewResult};

/// The example's SQL over `view`, or why it cannot be written there.
pub fn rewrite_over_view(
    graph: &SchemaGraph,
    sql: &str,
    view: &ViewResult,
    dialect: Dialect,
) -> std::result::Result<String, String> {
    let text = sql.trim().trim_end_matches(';').trim();
    let mut query = parse_query(text, dialect).map_err(|e| format!("does not parse: {e}"))?;
    if query.with.is_some() {
        return Err("uses WITH".into());
    }
    let nested = visit_expressions(&query, |e| match e {
        Expr::Subquery(_) | Expr::InSubquery { .. } | Expr::Exists { .. } => ControlFlow::Break(()),
        _ => ControlFlow::Continue(()),
    });
    if nested.is_break() {
        return Err("has a subquery".into());
    }
    // The view: (table, column) → alias, and tables with several instances.
    let mut by_column: BTreeMap<(String, String), Vec<&str>> = BTreeMap::new();
    for c in &view.columns {
        by_column.entry((c.table.to_lowercase(), c.column.to_lowercase())).or_default().push(&c.alias);
    }
    let mut instances: BTreeMap<String, usize> = BTreeMap::new();
    if view.instances.is_empty() {
        for t in &view.tables {
            *instances.entry(crate::sql::analyze::view_base_table(view, t).to_lowercase()).or_default() += 1;
        }
    } else {
        for i in &view.instances {
            *instances.entry(graph.name(i.table).to_lowercase()).or_default() += 1;
        }
    }
    // The example's joins must be the view's.
    let refs = analyze(text, dialect, Some(graph.model())).map_err(|e| format!("does not parse: {e}"))?;
    for t in &refs.tables {
        match instances.get(t) {
            None => return Err(format!("reads {t}, which is not in the view")),
            Some(n) if *n > 1 => return Err(format!("reads {t}, which the view holds {n} times")),
            _ => {}
        }
    }
    let view_joins: BTreeSet<JoinPair> = view_pairs(view, Some(graph)).into_iter().flatten().collect();
    if let Some(p) = refs.join_pairs.iter().find(|p| !view_joins.contains(p)) {
        return Err(format!("joins on {p}, which the view does not"));
    }
    let SetExpr::Select(select) = query.body.as_mut() else {
        return Err("is not a single SELECT".into());
    };
    // Relations of the FROM clause: qualifier → model table (lower-cased).
    let mut scope: BTreeMap<String, String> = BTreeMap::new();
    let mut tables = Vec::new();
    for twj in &select.from {
        for factor in std::iter::once(&twj.relation).chain(twj.joins.iter().map(|j| &j.relation)) {
            let TableFactor::Table { name, alias, args: None, .. } = factor else {
                return Err("reads something other than a table in FROM".into());
            };
            let Some(last) = name.0.last().and_then(|p| p.as_ident()) else {
                return Err(format!("reads {name} in FROM"));
            };
            let Some(t) = graph.model().tables.iter().find(|t| t.name.eq_ignore_ascii_case(&last.value)) else {
                return Err(format!("reads {name}, which the model does not have"));
            };
            let table = t.name.to_lowercase();
            if tables.contains(&table) {
                return Err(format!("reads {} twice", t.name));
            }
            tables.push(table.clone());
            let q = alias.as_ref().map_or(last.value.to_lowercase(), |a| a.name.value.to_lowercase());
            scope.insert(q, table.clone());
            scope.entry(last.value.to_lowercase()).or_insert(table);
        }
    }
    if tables.is_empty() {
        return Err("reads no table".into());
    }
    let outputs: BTreeSet<String> = select
        .projection
        .iter()
        .filter_map(|p| match p {
            SelectItem::ExprWithAlias { alias, .. } => Some(alias.value.to_lowercase()),
            _ => None,
        })
        .collect();
    if select.projection.iter().any(|p| matches!(p, SelectItem::Wildcard(_) | SelectItem::QualifiedWildcard(..))) {
        return Err("selects * (over the view that would read every view column)".into());
    }
    let has_column = |table: &str, col: &str| {
        graph
            .model()
            .tables
            .iter()
            .find(|t| t.name.eq_ignore_ascii_case(table))
            .is_some_and(|t| t.columns.iter().any(|c| c.name.eq_ignore_ascii_case(col)))
    };
    let alias_of = |table: &str, col: &str| -> std::result::Result<Ident, String> {
        match by_column.get(&(table.to_string(), col.to_lowercase())).map(Vec::as_slice) {
            Some([one]) => Ok(ident(one, dialect)),
            Some(_) => Err(format!("reads {table}.{col}, which the view holds several times")),
            None => Err(format!("reads {table}.{col}, which is not a column of the view")),
        }
    };
    // The view replaces the FROM clause.
    let view_name = view.body.as_ref().map_or(view.view_name.clone(), |b| b.name.clone());
    let from_view = parse_query(&format!("SELECT 1 FROM {view_name}"), dialect).map_err(|e| e.to_string())?;
    let SetExpr::Select(vs) = *from_view.body else { return Err("cannot write the view's FROM".into()) };
    select.from = vs.from;
    let result = visit_expressions_mut(&mut query, |e| {
        let replacement = match e {
            Expr::CompoundIdentifier(parts) if parts.len() >= 2 => {
                let col = &parts[parts.len() - 1].value;
                let q = parts[parts.len() - 2].value.to_lowercase();
                match scope.get(&q) {
                    Some(t) => alias_of(t, col),
                    None => Err(format!("qualifies {col} by {q}, which is not in FROM")),
                }
            }
            Expr::Identifier(id) => {
                let owners: Vec<&String> = tables.iter().filter(|t| has_column(t, &id.value)).collect();
                match owners.as_slice() {
                    [t] => alias_of(t, &id.value),
                    [] if outputs.contains(&id.value.to_lowercase()) || id.quote_style == Some('"') => {
                        return ControlFlow::Continue(())
                    }
                    [] => Err(format!("reads {}, which no table of its FROM has", id.value)),
                    _ => Err(format!("reads {} without saying which table's", id.value)),
                }
            }
            _ => return ControlFlow::Continue(()),
        };
        match replacement {
            Ok(i) => {
                *e = Expr::Identifier(i);
                ControlFlow::Continue(())
            }
            Err(m) => ControlFlow::Break(m),
        }
    });
    if let ControlFlow::Break(m) = result {
        return Err(m);
    }
    Ok(render(&query))
}

/// The view column alias as an identifier, quoted when it is not a plain name.
fn ident(alias: &str, dialect: Dialect) -> Ident {
    let plain = alias.chars().next().is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
        && alias.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
    if plain {
        Ident::new(alias)
    } else {
        Ident::with_quote(dialect.name_quote(), alias)
    }
}

fn render(q: &Query) -> String {
    q.to_string()
}
