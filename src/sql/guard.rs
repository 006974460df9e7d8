//! The SQL guard: admits exactly one read-only query over an allowed set of
//! relations (the view for QueryView, the model's tables for the direct
//! baseline) and only their columns — before anything runs.
//!
//! Names are resolved by the one scope resolver of `sql::analyze`
//! ([`resolve_scopes`]), in the dialect's scoping rules: every relation
//! reference must resolve to the CTE or derived table *in scope at that
//! point* (WITH visibility, recursive CTEs, nesting, set-operation branches,
//! lateral and derived aliases), or else be an allowed relation; a CTE of
//! the same name elsewhere in the query does not count. Every column
//! reference must resolve in its scope too: a column of a relation in scope,
//! or a select-list alias. A query with any subquery, table source or name
//! that the scope walk did not reach is refused rather than half-checked.

use std::collections::{HashMap, HashSet};
use std::ops::ControlFlow;

use serde::{Deserialize, Serialize};
use sqlparser::ast::{
    Expr, ObjectName, ObjectNamePart, Query, Select, SetExpr, Statement, TableFactor, Visit, Visitor,
};
use sqlparser::dialect::Dialect as SqlDialect;
use sqlparser::parser::Parser;

use crate::error::{cut, odd_char, odd_char_in_name, Error, Result};
use crate::sql::analyze::{resolve_scopes, ColumnOutcome, RelationTarget};
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

/// A column reference that names no column of the allowed relations in
/// scope (the guard's "is not a column of" finding).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnknownColumn {
    /// As written, dotted (`c`, `v.c`).
    pub written: String,
    /// The qualifier as written (`v` in `v.c`).
    pub qualifier: Option<String>,
    /// The column name as written.
    pub column: String,
    /// The clause it is in (`SELECT`, `WHERE`, `GROUP BY`, `HAVING`,
    /// `ORDER BY`, `JOIN <relation> ON`), where known.
    pub clause: Option<String>,
}

/// The column references of `sql` that name no column of `allowed` (name,
/// columns) in their scope, each once, in the order written; empty when
/// `sql` is not exactly one query the parser reads. The guard's other
/// findings are not looked at.
pub fn unknown_columns(sql: &str, allowed: &[(String, Vec<String>)], dialect: Dialect) -> Vec<UnknownColumn> {
    let text = sql.trim().trim_end_matches(';').trim();
    let Ok(stmts) = Parser::parse_sql(&*parser_dialect(dialect), text) else { return Vec::new() };
    let [Statement::Query(query)] = stmts.as_slice() else { return Vec::new() };
    let mut out: Vec<UnknownColumn> = Vec::new();
    for u in resolve_scopes(query, dialect, allowed).columns {
        let unknown = matches!(u.outcome, ColumnOutcome::NotFound | ColumnOutcome::NotInRelation { catalog: true, .. });
        if unknown && !out.iter().any(|o| o.written == u.written) {
            out.push(UnknownColumn { written: u.written, qualifier: u.qualifier, column: u.column, clause: u.clause });
        }
    }
    out
}

/// sqlparser dialect for one of lucy's dialects.
pub fn parser_dialect(d: Dialect) -> Box<dyn SqlDialect> {
    d.parser()
}

/// Leading keywords of statements that are never a read-only query.
const NOT_QUERIES: &[&str] = &[
    "INSERT",
    "UPDATE",
    "DELETE",
    "DROP",
    "CREATE",
    "ALTER",
    "PRAGMA",
    "ATTACH",
    "DETACH",
    "REPLACE",
    "VACUUM",
    "GRANT",
    "REVOKE",
    "TRUNCATE",
    "MERGE",
    "BEGIN",
    "COMMIT",
    "ROLLBACK",
    "REINDEX",
    "ANALYZE",
    "SET",
    "CALL",
    "COPY",
    "LOAD",
    "INSTALL",
    "USE",
    "LOCK",
    "UPSERT",
    "SAVEPOINT",
    "RELEASE",
];

/// Functions that reach outside the database or stall it.
const DENIED_FUNCTIONS: &[&str] = &[
    "load_extension",
    "writefile",
    "readfile",
    "edit",
    "fts3_tokenizer",
    "sleep",
    "benchmark",
    "load_file",
    "pg_sleep",
    "pg_read_file",
    "pg_read_binary_file",
    "pg_ls_dir",
    "lo_import",
    "lo_export",
    "dblink",
    "pg_terminate_backend",
    "pg_cancel_backend",
    "set_config",
];

fn check_against(sql: &str, allowed: &[(String, Vec<String>)], dialect: Dialect, what: &str) -> Result<CheckedSql> {
    let text = sql.trim().trim_end_matches(';').trim();
    if text.is_empty() {
        return Err(Error::Sql("no SQL statement found".into()));
    }
    let stmts = Parser::parse_sql(&*parser_dialect(dialect), text).map_err(|e| {
        let first: String =
            text.chars().take_while(|c| c.is_ascii_alphabetic()).collect::<String>().to_ascii_uppercase();
        if NOT_QUERIES.contains(&first.as_str()) {
            Error::Sql(format!("only a read-only SELECT is allowed, got {first}"))
        } else {
            let mut msg = format!("cannot parse the SQL as {}: {}", dialect.as_str(), cut(&e.to_string(), 300));
            if let Some(odd) = odd_char(&mask_strings(text)) {
                msg.push_str(&format!("; the SQL contains {odd}: write it with plain ASCII spaces and quotes"));
            }
            Error::Sql(msg)
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
    let Statement::Query(query) = stmt else {
        return Err(Error::Sql(format!("only a read-only SELECT is allowed, got {}", statement_kind(stmt))));
    };
    let mut c = Collector::default();
    let _ = stmt.visit(&mut c);
    let mut problems: Vec<String> = c.problems.clone();
    let res = resolve_scopes(query, dialect, allowed);
    let rels: HashMap<String, (&str, &[String])> =
        allowed.iter().map(|(n, cols)| (n.to_ascii_lowercase(), (n.as_str(), cols.as_slice()))).collect();

    // Every relation reference resolves to a CTE in scope at that point, a
    // derived table, or an allowed relation.
    let mut read: Vec<String> = Vec::new();
    for r in &res.relations {
        let allowed_key = match &r.target {
            RelationTarget::Cte | RelationTarget::Derived | RelationTarget::View => continue,
            RelationTarget::Table { name, qualified: None } => rels.contains_key(name).then(|| name.clone()),
            RelationTarget::Table { name, qualified: Some(q) } => {
                let schema = &q[..q.len() - name.len()].trim_end_matches('.');
                if rels.contains_key(q) {
                    Some(q.clone())
                } else if dialect == Dialect::Sqlite && matches!(*schema, "main" | "temp") && rels.contains_key(name) {
                    Some(name.clone())
                } else {
                    None
                }
            }
            RelationTarget::TableFunction(name) => {
                problems.push(format!("table function `{}(…)` is not allowed; read only {what}", cut(name, 80)));
                continue;
            }
            RelationTarget::Unsupported(text) => {
                problems.push(format!("table source `{}` is not allowed; read only from {what}", cut(text, 40)));
                continue;
            }
        };
        match allowed_key.and_then(|k| rels.get(&k)) {
            Some((display, _)) => {
                if !read.iter().any(|x| x == display) {
                    read.push(display.to_string());
                }
            }
            None => {
                let hint = if r.defined_elsewhere {
                    format!(
                        " (the query defines a CTE named `{}`, but not in scope here: a WITH is visible only in its own query and the subqueries inside it)",
                        cut(&r.written, 80)
                    )
                } else {
                    cte_hint(&c)
                };
                let odd = odd_char_in_name(&r.written).map(|o| format!(" (the name contains {o})")).unwrap_or_default();
                problems.push(format!(
                    "relation `{}` is not allowed: the query may read only {what}{hint}{odd}",
                    cut(&r.written, 80)
                ));
            }
        }
    }

    // Every column reference resolves in its scope.
    let read_lower: Vec<String> = read.iter().map(|r| r.to_ascii_lowercase()).collect();
    let scope: Vec<&String> = if read_lower.is_empty() { rels.keys().collect() } else { read_lower.iter().collect() };
    let mut columns = Vec::new();
    let mut seen = HashSet::new();
    for u in &res.columns {
        if seen.insert(u.written.as_str()) {
            columns.push(u.written.clone());
        }
        let written = cut(&u.written, 120);
        match &u.outcome {
            ColumnOutcome::Column | ColumnOutcome::Alias | ColumnOutcome::Unknown => {}
            ColumnOutcome::NotFound => {
                let mut msg =
                    format!("column `{written}` is not a column of {what}; available: {}", available(allowed, &scope));
                if let Some(odd) = odd_char_in_name(&u.written) {
                    msg.push_str(&format!(" (the name contains {odd})"));
                }
                if u.quoted && dialect == Dialect::Sqlite {
                    msg.push_str(" (string literals take single quotes: 'text', not \"text\")");
                }
                problems.push(msg);
            }
            ColumnOutcome::NotInRelation { relation, catalog: true, .. } => {
                let display = rels.get(relation).map(|(d, _)| d.to_string()).unwrap_or_else(|| relation.clone());
                problems.push(format!(
                    "column `{written}` is not a column of {}; available: {}",
                    cut(&display, 80),
                    available(allowed, &[relation])
                ));
            }
            ColumnOutcome::NotInRelation { catalog: false, .. } => problems.push(format!(
                "column `{written}`: `{}` defines no column `{}`",
                cut(u.qualifier.as_deref().unwrap_or_default(), 80),
                cut(&u.column, 80)
            )),
            ColumnOutcome::NoSuchQualifier => problems.push(format!(
                "column `{written}`: `{}` is not {what} nor an alias in scope",
                cut(u.qualifier.as_deref().unwrap_or_default(), 80)
            )),
        }
    }

    // Whatever the scope walk did not reach is not checked: refuse it.
    let missed = Missed {
        queries: c.queries.iter().copied().filter(|a| !res.queries.contains(a)).collect(),
        factors: c.factors.iter().copied().filter(|a| !res.factors.contains(a)).collect(),
        idents: c.ident_exprs.iter().copied().filter(|a| !res.idents.contains(a)).collect(),
        texts: Vec::new(),
    };
    if !missed.is_empty() {
        let mut m = missed;
        let _ = stmt.visit(&mut m);
        for t in m.texts {
            problems.push(format!("{t} is in a position lucy cannot check; rewrite the query more plainly"));
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

/// `sql` with the inside of every '…' string literal replaced by `x`
/// (line breaks kept), so positions stay right and literals do not count
/// as odd characters.
fn mask_strings(sql: &str) -> String {
    let mut out = String::with_capacity(sql.len());
    let mut in_string = false;
    for ch in sql.chars() {
        if ch == '\'' {
            in_string = !in_string;
            out.push(ch);
        } else if in_string && ch != '\n' {
            out.push('x');
        } else {
            out.push(ch);
        }
    }
    out
}

fn cte_hint(c: &Collector) -> String {
    let mut names = c.cte_order.clone();
    dedup(&mut names);
    if names.is_empty() {
        String::new()
    } else {
        format!(" (or a CTE the query defines, where it is in scope: {})", cut(&names.join(", "), 200))
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
        [w, _]
            if w.eq_ignore_ascii_case("CREATE")
                || w.eq_ignore_ascii_case("DROP")
                || w.eq_ignore_ascii_case("ALTER") =>
        {
            format!("{} {}", w.to_ascii_uppercase(), words[1].to_ascii_uppercase())
        }
        [w, ..] => w.to_ascii_uppercase(),
        [] => "an empty statement".into(),
    }
}

/// Statement-level checks over every node (nested statements, locks, INTO,
/// denied functions, pipe syntax), the names the query defines, and the
/// address of every query, table source and identifier: the scope walk must
/// have reached each of them.
#[derive(Default)]
struct Collector {
    depth_statements: usize,
    defined_order: Vec<String>,
    /// CTE names only (what a FROM may name), for hints.
    cte_order: Vec<String>,
    queries: Vec<usize>,
    factors: Vec<usize>,
    ident_exprs: Vec<usize>,
    problems: Vec<String>,
}

fn last_part(name: &ObjectName) -> String {
    match name.0.last() {
        Some(ObjectNamePart::Identifier(i)) => i.value.clone(),
        Some(other) => other.to_string(),
        None => String::new(),
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
        self.queries.push(q as *const Query as usize);
        if let Some(with) = &q.with {
            self.defined_order.extend(with.cte_tables.iter().map(|c| c.alias.name.value.clone()));
            self.cte_order.extend(with.cte_tables.iter().map(|c| c.alias.name.value.clone()));
        }
        if !q.locks.is_empty() {
            self.problems.push("locking clauses (FOR UPDATE/FOR SHARE) are not allowed in a read-only query".into());
        }
        if !q.pipe_operators.is_empty() {
            self.problems.push("pipe syntax (`|>`) is not supported; write a plain SELECT".into());
        }
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
        self.factors.push(t as *const TableFactor as usize);
        if let TableFactor::Derived { alias: Some(a), .. } = t {
            self.defined_order.push(a.name.value.clone());
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_expr(&mut self, e: &Expr) -> ControlFlow<()> {
        match e {
            Expr::Identifier(_) | Expr::CompoundIdentifier(_) => self.ident_exprs.push(e as *const Expr as usize),
            Expr::Function(f) => {
                let name = last_part(&f.name).to_ascii_lowercase();
                if DENIED_FUNCTIONS.contains(&name.as_str()) {
                    self.problems.push(format!("function `{}` is not allowed", cut(&name, 80)));
                }
            }
            _ => {}
        }
        ControlFlow::Continue(())
    }
}

/// The nodes the scope walk did not reach, rendered for the error.
struct Missed {
    queries: HashSet<usize>,
    factors: HashSet<usize>,
    idents: HashSet<usize>,
    texts: Vec<String>,
}

impl Missed {
    fn is_empty(&self) -> bool {
        self.queries.is_empty() && self.factors.is_empty() && self.idents.is_empty()
    }
}

impl Visitor for Missed {
    type Break = ();

    fn pre_visit_query(&mut self, q: &Query) -> ControlFlow<()> {
        if self.queries.contains(&(q as *const Query as usize)) {
            self.texts.push(format!("the subquery `{}`", cut(&q.to_string(), 60)));
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_table_factor(&mut self, t: &TableFactor) -> ControlFlow<()> {
        if self.factors.contains(&(t as *const TableFactor as usize)) {
            self.texts.push(format!("the table source `{}`", cut(&t.to_string(), 60)));
        }
        ControlFlow::Continue(())
    }

    fn pre_visit_expr(&mut self, e: &Expr) -> ControlFlow<()> {
        if self.idents.contains(&(e as *const Expr as usize)) {
            self.texts.push(format!("the name `{}`", cut(&e.to_string(), 60)));
        }
        ControlFlow::Continue(())
    }
}

#[cfg(test)]
#[path = "guard_tests.rs"]
mod tests;
