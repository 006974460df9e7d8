//! The deterministic rename (`--rename-unknown on`): before any repair call,
//! each column the guard reports unknown that means exactly one view column
//! is rewritten to it in the parsed query, and the result goes back through
//! the guard. A name that could mean several columns is named in the trace
//! and left alone; nothing is guessed.
//!
//! The rule, for an unknown name `n` and the view's columns (alias, table,
//! column), taking the first step that yields any candidate:
//! 1. `n` is an alias in another letter case (`client_NAME`);
//! 2. `n` is an alias with its table's name written once more in front
//!    (`CLIENT_CLIENT_name` → `CLIENT_name`), case-insensitively;
//! 3. `n` is a column's own name without its table (`name`, `overallusage`).
//!
//! One candidate is the rename; several (`name` over `CLIENT_name` and
//! `DATACENTER_name`) make the name ambiguous: no rename, and later steps
//! are not tried. A name that matches no step (`Party_Identifier_Agent`, or
//! `RUNTIME_overallusage` over `RCPU_overallusage`: another table's column
//! may be what MatchTables missed) is left to the repair round.

use sqlparser::ast::{visit_expressions_mut, Expr, Ident, Statement};
use sqlparser::parser::Parser;
use std::ops::ControlFlow;

use crate::sql::guard::UnknownColumn;
use crate::types::{Dialect, ViewColumn};

/// What the rule makes of one unknown name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    /// The one view column (alias) it means.
    Column(String),
    /// Several view columns fit; nothing is renamed.
    Ambiguous(Vec<String>),
    /// No view column fits.
    NoMatch,
}

/// The view column `name` unambiguously means, by the rule in the module
/// documentation.
pub fn target(name: &str, columns: &[ViewColumn]) -> Target {
    let n = name.to_ascii_lowercase();
    let steps: [&dyn Fn(&ViewColumn) -> bool; 3] = [
        &|c| c.alias.to_ascii_lowercase() == n,
        &|c| format!("{}_{}", c.table, c.alias).to_ascii_lowercase() == n,
        &|c| c.column.to_ascii_lowercase() == n,
    ];
    for step in steps {
        let mut found: Vec<String> = Vec::new();
        for c in columns.iter().filter(|c| step(c)) {
            if !found.contains(&c.alias) {
                found.push(c.alias.clone());
            }
        }
        match found.len() {
            0 => continue,
            1 => return Target::Column(found.remove(0)),
            _ => return Target::Ambiguous(found),
        }
    }
    Target::NoMatch
}

/// The outcome of renaming one query's unknown names.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Renamed {
    /// The query with the renames applied (printed from the parsed query);
    /// `None` when nothing was renamed.
    pub sql: Option<String>,
    /// (name as written, view column) per rename.
    pub renames: Vec<(String, String)>,
    /// Why a name was not renamed, one line each (ambiguous, no match).
    pub notes: Vec<String>,
}

/// Apply [`target`] to each of `unknown` in `sql`: every reference whose
/// column part is an unknown name with a target (qualified or not) is
/// rewritten to that view column, unquoted. Any name without one leaves
/// the query as it is, since the guard would still reject it.
pub fn rename_unknown(sql: &str, unknown: &[UnknownColumn], columns: &[ViewColumn], dialect: Dialect) -> Renamed {
    let mut out = Renamed { sql: None, renames: Vec::new(), notes: Vec::new() };
    let mut map: Vec<(String, String)> = Vec::new();
    for u in unknown {
        match target(&u.column, columns) {
            Target::Column(to) => {
                out.renames.push((u.written.clone(), to.clone()));
                if !map.iter().any(|(from, _)| from.eq_ignore_ascii_case(&u.column)) {
                    map.push((u.column.clone(), to));
                }
            }
            Target::Ambiguous(c) => {
                out.notes.push(format!("`{}` is ambiguous: it could be {}; not renamed", u.written, c.join(", ")))
            }
            Target::NoMatch => out.notes.push(format!("`{}` matches no view column; not renamed", u.written)),
        }
    }
    if map.is_empty() || !out.notes.is_empty() {
        out.renames.clear();
        return out;
    }
    let text = sql.trim().trim_end_matches(';').trim();
    let Ok(mut stmts) = Parser::parse_sql(&*dialect.parser(), text) else { return out };
    let [Statement::Query(_)] = stmts.as_slice() else { return out };
    let fix = |id: &mut Ident| {
        if let Some((_, to)) = map.iter().find(|(from, _)| from.eq_ignore_ascii_case(&id.value)) {
            *id = Ident::new(to.clone());
        }
    };
    let _ = visit_expressions_mut(&mut stmts, |e| {
        match e {
            Expr::Identifier(id) => fix(id),
            Expr::CompoundIdentifier(parts) => {
                if let Some(last) = parts.last_mut() {
                    fix(last);
                }
            }
            _ => {}
        }
        ControlFlow::<()>::Continue(())
    });
    out.sql = Some(stmts[0].to_string());
    out
}

/// PostgreSQL folds an unquoted name to lower case and keeps a quoted one
/// as written, so over a view whose columns lucy names unquoted
/// (`CLIENT_name`, which the server stores as `client_name`) a reference
/// the model quoted, `"CLIENT_name"`, finds no column, although the guard,
/// which reads the view's names case-insensitively as every other dialect
/// does, admitted it. Every quoted word that spells one of `aliases` in
/// another case or quoting becomes that alias as the view writes it
/// (unquoted when simple), wherever it stands (a reference, an output
/// alias, a subquery's column), so the query means what the guard read.
/// `None` when nothing changes or the text does not tokenize.
pub fn fold_quoted_view_names(sql: &str, aliases: &[String], dialect: Dialect) -> Option<String> {
    use sqlparser::tokenizer::{Token, Tokenizer};
    let mut tokens = Tokenizer::new(&*dialect.parser(), sql).tokenize().ok()?;
    let mut changed = false;
    for t in tokens.iter_mut() {
        let Token::Word(w) = t else { continue };
        if w.quote_style.is_none() {
            continue;
        }
        let Some(alias) = aliases.iter().find(|a| a.eq_ignore_ascii_case(&w.value)) else { continue };
        let spelled = crate::view::sql::quote_alias(alias, dialect);
        if spelled.starts_with(dialect.name_quote()) {
            continue;
        }
        *t = Token::make_word(&spelled, None);
        changed = true;
    }
    changed.then(|| tokens.iter().map(|t| t.to_string()).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn view() -> Vec<ViewColumn> {
        [("CLIENT_id", "CLIENT", "id"), ("CLIENT_name", "CLIENT", "name"), ("DATACENTER_name", "DATACENTER", "name")]
            .iter()
            .map(|(a, t, c)| ViewColumn {
                alias: a.to_string(),
                table: t.to_string(),
                column: c.to_string(),
                description: None,
                note: None,
            })
            .collect()
    }

    #[test]
    fn quoted_view_names_fold_to_the_views_spelling() {
        let aliases: Vec<String> = view().into_iter().map(|c| c.alias).collect();
        let sql = "SELECT \"CLIENT_name\" AS \"CLIENT_name \", DATACENTER_name FROM lucy_view WHERE \"client_NAME\" LIKE 'a%' AND 'CLIENT_name' <> ''";
        assert_eq!(
            fold_quoted_view_names(sql, &aliases, Dialect::Postgres).unwrap(),
            "SELECT CLIENT_name AS \"CLIENT_name \", DATACENTER_name FROM lucy_view WHERE CLIENT_name LIKE 'a%' AND 'CLIENT_name' <> ''"
        );
        // Nothing quoted: nothing to do.
        assert_eq!(fold_quoted_view_names("SELECT CLIENT_name FROM lucy_view", &aliases, Dialect::Postgres), None);
        // An alias the view itself quotes (a reserved word) stays quoted.
        let reserved = vec!["order".to_string()];
        assert_eq!(fold_quoted_view_names("SELECT \"order\" FROM lucy_view", &reserved, Dialect::Postgres), None);
    }

    #[test]
    fn unambiguous_names_map_to_their_column() {
        assert_eq!(target("CLIENT_CLIENT_name", &view()), Target::Column("CLIENT_name".into()));
        assert_eq!(target("datacenter_DATACENTER_NAME", &view()), Target::Column("DATACENTER_name".into()));
        assert_eq!(target("client_NAME", &view()), Target::Column("CLIENT_name".into()));
        assert_eq!(target("id", &view()), Target::Column("CLIENT_id".into()));
    }

    #[test]
    fn ambiguous_and_unmatched_names_are_not_guessed() {
        assert_eq!(target("name", &view()), Target::Ambiguous(vec!["CLIENT_name".into(), "DATACENTER_name".into()]));
        assert_eq!(target("Party_Identifier_Agent", &view()), Target::NoMatch);
        // Another table's column of the same name is not assumed.
        assert_eq!(target("RUNTIME_name", &view()), Target::NoMatch);
        assert_eq!(target("DATACENTER_id", &view()), Target::NoMatch);
    }

    fn unknown(sql: &str) -> Vec<UnknownColumn> {
        let cols: Vec<String> = view().iter().map(|c| c.alias.clone()).collect();
        crate::sql::guard::unknown_columns(sql, &[("lucy_view".to_string(), cols)], Dialect::Sqlite)
    }

    #[test]
    fn renames_in_the_parsed_query() {
        let sql = "SELECT DISTINCT CLIENT_CLIENT_name, v.DATACENTER_DATACENTER_name FROM lucy_view AS v WHERE v.DATACENTER_DATACENTER_name LIKE 'dev%' ORDER BY CLIENT_CLIENT_name";
        let u = unknown(sql);
        assert_eq!(u.len(), 2, "each name once: {u:?}");
        let r = rename_unknown(sql, &u, &view(), Dialect::Sqlite);
        assert_eq!(
            r.sql.as_deref(),
            Some("SELECT DISTINCT CLIENT_name, v.DATACENTER_name FROM lucy_view AS v WHERE v.DATACENTER_name LIKE 'dev%' ORDER BY CLIENT_name")
        );
        assert!(r.notes.is_empty());
        // A string that spells the name is data, not a name.
        let sql = "SELECT CLIENT_CLIENT_name FROM lucy_view WHERE CLIENT_name = 'CLIENT_CLIENT_name'";
        let r = rename_unknown(sql, &unknown(sql), &view(), Dialect::Sqlite);
        assert_eq!(
            r.sql.as_deref(),
            Some("SELECT CLIENT_name FROM lucy_view WHERE CLIENT_name = 'CLIENT_CLIENT_name'")
        );
    }

    #[test]
    fn one_ambiguous_name_leaves_the_query_alone() {
        let sql = "SELECT CLIENT_CLIENT_name, name FROM lucy_view";
        let r = rename_unknown(sql, &unknown(sql), &view(), Dialect::Sqlite);
        assert_eq!(r.sql, None);
        assert!(r.renames.is_empty());
        assert_eq!(r.notes, ["`name` is ambiguous: it could be CLIENT_name, DATACENTER_name; not renamed"]);
        let sql = "SELECT Party_Identifier_Agent FROM lucy_view";
        let r = rename_unknown(sql, &unknown(sql), &view(), Dialect::Sqlite);
        assert_eq!(r.sql, None);
        assert_eq!(r.notes, ["`Party_Identifier_Agent` matches no view column; not renamed"]);
    }
}
