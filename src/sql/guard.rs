//! The SQL guard: admits exactly one read-only query over an allowed set of
//! relations (the view for QueryView, the model's tables for the direct
//! baseline) and only their columns — before anything runs.
//!
//! Column resolution is deliberately simple rather than a full SQL scoper:
//! a bare column must be a column of some allowed relation the query reads,
//! or a name the query itself defines (a select-list alias, a CTE or derived
//! table output, a CTE/derived column alias). A qualified `q.c` must name an
//! allowed relation, an alias of one, a CTE or a derived table, and `c` must
//! be one of its columns. This rejects every hallucinated column while
//! accepting the usual alias uses (ORDER BY/GROUP BY/HAVING on aliases).

use std::collections::{BTreeSet, HashMap, HashSet};
use std::ops::ControlFlow;

use serde::{Deserialize, Serialize};
use sqlparser::ast::{
    Expr, Ident, ObjectName, ObjectNamePart, Query, Select, SelectItem, SetExpr, Statement, TableFactor, Visit, Visitor,
};
use sqlparser::dialect::{Dialect as SqlDialect, MySqlDialect, PostgreSqlDialect, SQLiteDialect};
use sqlparser::parser::Parser;

use crate::error::{Error, Result};
use crate::types::Dialect;

/// A query the guard admitted.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct CheckedSql {
    /// The query text to run (trimmed, without a trailing `;`).
    pub sql: String,
    /// Allowed relations the query reads.
    pub relations: Vec<String>,
    /// Column references as written (`col` or `q.col`), deduplicated.
    pub columns: Vec<String>,
    /// Names the query defines itself (CTEs, derived tables).
    pub ctes: Vec<String>,
}

/// Check that `sql` is one read-only query that reads only `view_name` and
/// only its `view_columns`.
pub fn check_query(sql: &str, view_name: &str, view_columns: &[String], dialect: Dialect) -> Result<CheckedSql> {
    let allowed = vec![(view_name.to_string(), view_columns.to_vec())];
    check_against(sql, &allowed, dialect, &format!("the view {view_name}"))
}

/// Check that `sql` is one read-only query over the given tables (name,
/// columns) — the guard of the direct baseline.
pub fn check_over_tables(sql: &str, tables: &[(String, Vec<String>)], dialect: Dialect) -> Result<CheckedSql> {
    check_against(sql, tables, dialect, "the model's tables")
}

/// sqlparser dialect for one of lucy's dialects.
pub fn parser_dialect(d: Dialect) -> Box<dyn SqlDialect> {
    match d {
        Dialect::Sqlite => Box::new(SQLiteDialect {}),
        Dialect::Mysql => Box::new(MySqlDialect {}),
        Dialect::Postgres => Box::new(PostgreSqlDialect {}),
    }
}

/// Leading keywords of statements that are never a read-only query.
const NOT_QUERIES: &[&str] = &[
    "INSERT", "UPDATE", "DELETE", "DROP", "CREATE", "ALTER", "PRAGMA", "ATTACH", "DETACH", "REPLACE", "VACUUM", "GRANT",
    "REVOKE", "TRUNCATE", "MERGE", "BEGIN", "COMMIT", "ROLLBACK", "REINDEX", "ANALYZE", "SET", "CALL", "COPY", "LOAD",
    "INSTALL", "USE", "LOCK", "UPSERT", "SAVEPOINT", "RELEASE",
];

/// Functions that reach outside the database or stall it.
const DENIED_FUNCTIONS: &[&str] = &[
    "load_extension", "writefile", "readfile", "edit", "fts3_tokenizer", "sleep", "benchmark", "load_file",
    "pg_sleep", "pg_read_file", "pg_read_binary_file", "pg_ls_dir", "lo_import", "lo_export", "dblink",
    "pg_terminate_backend", "pg_cancel_backend", "set_config",
];

fn check_against(sql: &str, allowed: &[(String, Vec<String>)], dialect: Dialect, what: &str) -> Result<CheckedSql> {
    let text = sql.trim().trim_end_matches(';').trim();
    if text.is_empty() {
        return Err(Error::Sql("no SQL statement found".into()));
    }
    let stmts = Parser::parse_sql(&*parser_dialect(dialect), text).map_err(|e| {
        let first: String = text.chars().take_while(|c| c.is_ascii_alphabetic()).collect::<String>().to_ascii_uppercase();
        if NOT_QUERIES.contains(&first.as_str()) {
            Error::Sql(format!("only a read-only SELECT is allowed, got {first}"))
        } else {
            Error::Sql(format!("cannot parse the SQL as {}: {e}", dialect.as_str()))
        }
    })?;
    if stmts.len() != 1 {
        let kinds: Vec<String> = stmts.iter().map(statement_kind).collect();
        return Err(Error::Sql(format!(
            "expected exactly one statement, found {} ({}); send a single SELECT",
            stmts.len(),
            kinds.join(", ")
        )));
    }
    let stmt = &stmts[0];
    if !matches!(stmt, Statement::Query(_)) {
        return Err(Error::Sql(format!(
            "only a read-only SELECT is allowed, got {}",
            statement_kind(stmt)
        )));
    }
    let mut c = Collector::default();
    let _ = stmt.visit(&mut c);
    let mut problems: Vec<String> = c.problems.clone();
    let rels: HashMap<String, (&str, Vec<String>)> = allowed
        .iter()
        .map(|(n, cols)| (n.to_ascii_lowercase(), (n.as_str(), cols.iter().map(|c| c.to_ascii_lowercase()).collect())))
        .collect();
    let cte_names: HashSet<String> = c.defined.keys().cloned().collect();
    // Relations: allowed ones or names the query defines.
    let mut read: Vec<String> = Vec::new();
    for (name, has_args) in &c.relations {
        let key = name.to_ascii_lowercase();
        if *has_args {
            problems.push(format!("table function `{name}(…)` is not allowed; read only {what}"));
        } else if cte_names.contains(&key) {
        } else if let Some((display, _)) = rels.get(&key) {
            if !read.iter().any(|r| r == display) {
                read.push(display.to_string());
            }
        } else {
            problems.push(format!("relation `{name}` is not allowed: the query may read only {what}{}", cte_hint(&c)));
        }
    }
    // Columns visible unqualified: those of the relations read, and names
    // the query defines.
    let mut visible: HashSet<String> = HashSet::new();
    let read_lower: Vec<String> = read.iter().map(|r| r.to_ascii_lowercase()).collect();
    let scope: Vec<&String> = if read_lower.is_empty() { rels.keys().collect() } else { read_lower.iter().collect() };
    for r in &scope {
        if let Some((_, cols)) = rels.get(*r) {
            visible.extend(cols.iter().cloned());
        }
    }
    let wildcard_defined = c.defined.values().any(|d| d.wildcard);
    for d in c.defined.values() {
        visible.extend(d.columns.iter().cloned());
    }
    visible.extend(c.select_aliases.iter().cloned());
    let mut columns = Vec::new();
    for (parts, quoted) in &c.idents {
        let written = parts.join(".");
        if !columns.contains(&written) {
            columns.push(written.clone());
        }
        let col = parts[parts.len() - 1].to_ascii_lowercase();
        if parts.len() == 1 {
            if visible.contains(&col) || (wildcard_defined && rels.values().any(|(_, cs)| cs.contains(&col))) {
                continue;
            }
            let mut msg = format!("column `{written}` is not a column of {what}; available: {}", available(allowed, &scope));
            if *quoted && dialect == Dialect::Sqlite {
                msg.push_str(" (string literals take single quotes: 'text', not \"text\")");
            }
            problems.push(msg);
            continue;
        }
        let q = parts[parts.len() - 2].to_ascii_lowercase();
        let target = c.aliases.get(&q).cloned().unwrap_or_else(|| q.clone());
        if let Some(d) = c.defined.get(&target) {
            if d.wildcard || d.columns.contains(&col) || d.columns.is_empty() {
                continue;
            }
            problems.push(format!("column `{written}`: `{}` defines no column `{}`", parts[parts.len() - 2], parts[parts.len() - 1]));
        } else if let Some((display, cols)) = rels.get(&target) {
            if !cols.contains(&col) {
                problems.push(format!(
                    "column `{written}` is not a column of {display}; available: {}",
                    available(allowed, &[&target])
                ));
            }
        } else {
            problems.push(format!(
                "column `{written}`: `{}` is not {what} nor an alias defined in the query",
                parts[parts.len() - 2]
            ));
        }
    }
    dedup(&mut problems);
    if !problems.is_empty() {
        return Err(Error::Sql(problems.join("; ")));
    }
    let mut ctes: Vec<String> = c.defined_order.clone();
    dedup(&mut ctes);
    Ok(CheckedSql { sql: text.to_string(), relations: read, columns, ctes })
}

fn cte_hint(c: &Collector) -> String {
    if c.defined_order.is_empty() {
        String::new()
    } else {
        format!(" (or the names the query defines: {})", c.defined_order.join(", "))
    }
}

fn available(allowed: &[(String, Vec<String>)], scope: &[&String]) -> String {
    let in_scope: Vec<&(String, Vec<String>)> =
        allowed.iter().filter(|(n, _)| scope.iter().any(|s| s.eq_ignore_ascii_case(n))).collect();
    let qualify = in_scope.len() > 1;
    let mut out: Vec<String> = Vec::new();
    for (table, cols) in in_scope {
        out.extend(cols.iter().map(|c| if qualify { format!("{table}.{c}") } else { c.clone() }));
    }
    if out.len() > 40 {
        let n = out.len();
        out.truncate(40);
        out.push(format!("… ({n} in all)"));
    }
    out.join(", ")
}

fn dedup(v: &mut Vec<String>) {
    let mut seen = HashSet::new();
    v.retain(|x| seen.insert(x.clone()));
}

/// The leading keyword(s) of a statement, e.g. `DROP`, `PRAGMA`, `INSERT`.
fn statement_kind(s: &Statement) -> String {
    let text = s.to_string();
    let words: Vec<&str> = text.split_whitespace().take(2).collect();
    match words.as_slice() {
        [w, _] if w.eq_ignore_ascii_case("CREATE") || w.eq_ignore_ascii_case("DROP") || w.eq_ignore_ascii_case("ALTER") => {
            format!("{} {}", w.to_ascii_uppercase(), words[1].to_ascii_uppercase())
        }
        [w, ..] => w.to_ascii_uppercase(),
        [] => "an empty statement".into(),
    }
}

/// What a CTE or derived table exposes.
#[derive(Debug, Default, Clone)]
struct Defined {
    columns: BTreeSet<String>,
    wildcard: bool,
}

#[derive(Default)]
struct Collector {
    depth_statements: usize,
    relations: Vec<(String, bool)>,
    /// alias (lower) -> relation or defined name (lower)
    aliases: HashMap<String, String>,
    defined: HashMap<String, Defined>,
    defined_order: Vec<String>,
    select_aliases: HashSet<String>,
    /// Column references: name parts and whether the last part was double-quoted.
    idents: Vec<(Vec<String>, bool)>,
    problems: Vec<String>,
}

fn outputs(q: &Query) -> Defined {
    fn of_set(s: &SetExpr, d: &mut Defined) {
        match s {
            SetExpr::Select(sel) => of_select(sel, d),
            SetExpr::Query(q) => of_set(&q.body, d),
            SetExpr::SetOperation { left, .. } => of_set(left, d),
            _ => d.wildcard = true,
        }
    }
    fn of_select(sel: &Select, d: &mut Defined) {
        for item in &sel.projection {
            match item {
                SelectItem::ExprWithAlias { alias, .. } => {
                    d.columns.insert(alias.value.to_ascii_lowercase());
                }
                SelectItem::UnnamedExpr(Expr::Identifier(i)) => {
                    d.columns.insert(i.value.to_ascii_lowercase());
                }
                SelectItem::UnnamedExpr(Expr::CompoundIdentifier(p)) => {
                    if let Some(i) = p.last() {
                        d.columns.insert(i.value.to_ascii_lowercase());
                    }
                }
                SelectItem::Wildcard(_) | SelectItem::QualifiedWildcard(..) => d.wildcard = true,
                // An unnamed expression gets a dialect-specific name; let
                // any reference through this name pass.
                _ => d.wildcard = true,
            }
        }
    }
    let mut d = Defined::default();
    of_set(&q.body, &mut d);
    d
}

fn last_part(name: &ObjectName) -> String {
    match name.0.last() {
        Some(ObjectNamePart::Identifier(i)) => i.value.clone(),
        Some(other) => other.to_string(),
        None => String::new(),
    }
}

impl Collector {
    fn define(&mut self, name: &Ident, mut d: Defined, column_aliases: Vec<String>) {
        if !column_aliases.is_empty() {
            d.columns.extend(column_aliases.iter().map(|c| c.to_ascii_lowercase()));
        }
        let key = name.value.to_ascii_lowercase();
        self.defined.entry(key).or_default().columns.extend(d.columns);
        if d.wildcard {
            if let Some(e) = self.defined.get_mut(&name.value.to_ascii_lowercase()) {
                e.wildcard = true;
            }
        }
        self.defined_order.push(name.value.clone());
    }
}

impl Visitor for Collector {
    type Break = ();

    fn pre_visit_statement(&mut self, s: &Statement) -> ControlFlow<()> {
        self.depth_statements += 1;
        if self.depth_statements > 1 {
            self.problems.push(format!("a nested {} is not allowed in a read-only query", statement_kind(s)));
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_query(&mut self, q: &Query) -> ControlFlow<()> {
        if let Some(with) = &q.with {
            for cte in &with.cte_tables {
                let cols = cte.alias.columns.iter().map(|c| c.name.value.clone()).collect();
                self.define(&cte.alias.name, outputs(&cte.query), cols);
            }
        }
        if !q.locks.is_empty() {
            self.problems.push("locking clauses (FOR UPDATE/FOR SHARE) are not allowed in a read-only query".into());
        }
        for_each_select(&q.body, &mut |sel| {
            for item in &sel.projection {
                if let SelectItem::ExprWithAlias { alias, .. } = item {
                    self.select_aliases.insert(alias.value.to_ascii_lowercase());
                }
            }
        });
        match &*q.body {
            SetExpr::Insert(_) | SetExpr::Update(_) | SetExpr::Delete(_) | SetExpr::Merge(_) => {
                self.problems.push("data-modifying statements are not allowed".into())
            }
            _ => {}
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_select(&mut self, s: &Select) -> ControlFlow<()> {
        if s.into.is_some() {
            self.problems.push("SELECT … INTO creates a table and is not allowed; return the rows instead".into());
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_table_factor(&mut self, t: &TableFactor) -> ControlFlow<()> {
        match t {
            TableFactor::Table { name, alias, args, .. } => {
                let n = last_part(name);
                self.relations.push((n.clone(), args.is_some()));
                if let Some(a) = alias {
                    self.aliases.insert(a.name.value.to_ascii_lowercase(), n.to_ascii_lowercase());
                }
            }
            TableFactor::Derived { subquery, alias, .. } => {
                if let Some(a) = alias {
                    let cols = a.columns.iter().map(|c| c.name.value.clone()).collect();
                    self.define(&a.name, outputs(subquery), cols);
                }
            }
            TableFactor::NestedJoin { .. } => {}
            other => {
                let text = other.to_string();
                let head: String = text.chars().take(40).collect();
                self.problems.push(format!("table source `{head}` is not allowed; read only from the allowed relations"));
            }
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_expr(&mut self, e: &Expr) -> ControlFlow<()> {
        match e {
            Expr::Identifier(i) => self.idents.push((vec![i.value.clone()], i.quote_style == Some('"'))),
            Expr::CompoundIdentifier(parts) => {
                let q = parts.last().is_some_and(|i| i.quote_style == Some('"'));
                self.idents.push((parts.iter().map(|i| i.value.clone()).collect(), q));
            }
            Expr::Function(f) => {
                let name = last_part(&f.name).to_ascii_lowercase();
                if DENIED_FUNCTIONS.contains(&name.as_str()) {
                    self.problems.push(format!("function `{name}` is not allowed"));
                }
            }
            _ => {}
        }
        ControlFlow::Continue(())
    }
}

fn for_each_select(s: &SetExpr, f: &mut dyn FnMut(&Select)) {
    match s {
        SetExpr::Select(sel) => f(sel),
        SetExpr::Query(q) => for_each_select(&q.body, f),
        SetExpr::SetOperation { left, right, .. } => {
            for_each_select(left, f);
            for_each_select(right, f);
        }
        _ => {}
    }
}

#[cfg(test)]
#[path = "guard_tests.rs"]
mod tests;
