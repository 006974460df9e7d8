//! Port SQL written for SQLite to a server's dialect, as far as names go:
//! the model's tables and columns are written in their catalog spelling and
//! quoted the server's way (PostgreSQL folds unquoted names to lower case;
//! MySQL compares table names case-sensitively on Linux), and a
//! double-quoted word that names no table or column becomes a string
//! literal (SQLite's own fallback, which Spider's gold SQL relies on).
//! Functions and other dialect differences are left alone: what still
//! fails after this is a genuine dialect difference, reported as such.

use std::collections::HashMap;
use std::ops::ControlFlow;

use sqlparser::ast::{visit_expressions_mut, visit_relations_mut, Expr, Ident, ObjectNamePart, Statement, Value};
use sqlparser::dialect::SQLiteDialect;
use sqlparser::parser::Parser;

use crate::error::{Error, Result};
use crate::types::{DbModel, Dialect};

/// The catalog spelling of a model's names, looked up case-insensitively.
#[derive(Debug, Clone, Default)]
pub struct Names {
    tables: HashMap<String, String>,
    columns: HashMap<String, String>,
}

impl Names {
    /// The names of `model`.
    pub fn of(model: &DbModel) -> Names {
        let mut n = Names::default();
        for t in &model.tables {
            n.tables.insert(t.name.to_ascii_lowercase(), t.name.clone());
            for c in &t.columns {
                n.columns.entry(c.name.to_ascii_lowercase()).or_insert_with(|| c.name.clone());
            }
        }
        n
    }
}

fn requote(id: &mut Ident, spelling: &str, to: Dialect) -> bool {
    let q = Some(to.name_quote());
    if id.value == spelling && id.quote_style == q {
        return false;
    }
    id.value = spelling.to_string();
    id.quote_style = q;
    true
}

/// `sql` (SQLite) rewritten for `to`; the second value counts the names
/// changed. SQLite in, SQLite out returns the input unchanged.
pub fn port_sql(sql: &str, to: Dialect, names: &Names) -> Result<(String, usize)> {
    if to == Dialect::Sqlite {
        return Ok((sql.to_string(), 0));
    }
    let mut stmts = Parser::parse_sql(&SQLiteDialect {}, sql)
        .map_err(|e| Error::Sql(format!("cannot parse as SQLite SQL: {e}")))?;
    if stmts.len() != 1 || !matches!(stmts[0], Statement::Query(_)) {
        return Err(Error::Sql("expected exactly one SELECT statement".into()));
    }
    let mut changed = 0usize;
    let _ = visit_relations_mut(&mut stmts, |name| {
        if let Some(ObjectNamePart::Identifier(id)) = name.0.last_mut() {
            if let Some(sp) = names.tables.get(&id.value.to_ascii_lowercase()) {
                changed += usize::from(requote(id, sp, to));
            }
        }
        ControlFlow::<()>::Continue(())
    });
    let _ = visit_expressions_mut(&mut stmts, |e| {
        match e {
            Expr::Identifier(id) => {
                let key = id.value.to_ascii_lowercase();
                if let Some(sp) = names.columns.get(&key) {
                    changed += usize::from(requote(id, sp, to));
                } else if id.quote_style == Some('"') {
                    // SQLite reads a double-quoted word that names nothing as a string.
                    *e = Expr::Value(Value::SingleQuotedString(id.value.clone()).into());
                    changed += 1;
                } else if to.backtick_names() && id.quote_style.is_some() {
                    id.quote_style = Some('`');
                }
            }
            Expr::CompoundIdentifier(parts) => {
                let n = parts.len();
                for (i, id) in parts.iter_mut().enumerate() {
                    let key = id.value.to_ascii_lowercase();
                    let sp = if i + 1 == n { names.columns.get(&key) } else { names.tables.get(&key) };
                    match sp {
                        Some(sp) => changed += usize::from(requote(id, sp, to)),
                        None if to.backtick_names() && id.quote_style.is_some() => id.quote_style = Some('`'),
                        None => {}
                    }
                }
            }
            _ => {}
        }
        ControlFlow::<()>::Continue(())
    });
    Ok((stmts[0].to_string(), changed))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn names() -> Names {
        let mut n = Names::default();
        for t in ["CLIENT", "Claim"] {
            n.tables.insert(t.to_ascii_lowercase(), t.into());
        }
        for c in ["name", "Claim_Identifier", "id"] {
            n.columns.insert(c.to_ascii_lowercase(), c.into());
        }
        n
    }

    #[test]
    fn names_take_the_catalog_spelling() {
        let (pg, k) = port_sql("SELECT CLIENT.name FROM CLIENT WHERE id = 1", Dialect::Postgres, &names()).unwrap();
        assert_eq!(pg, r#"SELECT "CLIENT"."name" FROM "CLIENT" WHERE "id" = 1"#);
        assert_eq!(k, 4);
        let (my, _) = port_sql("select claim_identifier from claim as c", Dialect::Mysql, &names()).unwrap();
        assert_eq!(my, "SELECT `Claim_Identifier` FROM `Claim` AS c");
    }

    #[test]
    fn double_quoted_words_that_name_nothing_are_strings() {
        let (pg, _) =
            port_sql(r#"SELECT name FROM CLIENT WHERE name = "Ann" AND T1.id = 2"#, Dialect::Postgres, &names())
                .unwrap();
        assert_eq!(pg, r#"SELECT "name" FROM "CLIENT" WHERE "name" = 'Ann' AND T1."id" = 2"#);
        let (same, k) = port_sql("SELECT 1", Dialect::Sqlite, &names()).unwrap();
        assert_eq!((same.as_str(), k), ("SELECT 1", 0));
        assert!(port_sql("DELETE FROM CLIENT", Dialect::Postgres, &names()).is_err());
    }
}
