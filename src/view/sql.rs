//! Identifier quoting and the `CREATE VIEW` text for each dialect.

use crate::types::Dialect;

/// Words quoted in every dialect when used as identifiers (the union of the
/// commonly reserved words of SQLite, MySQL and Postgres that can plausibly
/// be table or column names).
const RESERVED: &[&str] = &[
    "add",
    "all",
    "alter",
    "analyze",
    "and",
    "as",
    "asc",
    "between",
    "by",
    "case",
    "cast",
    "check",
    "collate",
    "column",
    "constraint",
    "create",
    "cross",
    "current_date",
    "current_time",
    "current_timestamp",
    "current_user",
    "database",
    "default",
    "delete",
    "desc",
    "distinct",
    "drop",
    "else",
    "end",
    "except",
    "exists",
    "false",
    "fetch",
    "for",
    "foreign",
    "from",
    "full",
    "grant",
    "group",
    "having",
    "if",
    "in",
    "index",
    "inner",
    "insert",
    "intersect",
    "interval",
    "into",
    "is",
    "join",
    "key",
    "keys",
    "left",
    "like",
    "limit",
    "natural",
    "not",
    "null",
    "offset",
    "on",
    "or",
    "order",
    "outer",
    "primary",
    "range",
    "references",
    "rank",
    "right",
    "row",
    "rows",
    "select",
    "set",
    "table",
    "then",
    "to",
    "true",
    "union",
    "unique",
    "update",
    "user",
    "using",
    "values",
    "view",
    "when",
    "where",
    "window",
    "with",
];

fn is_simple(s: &str) -> bool {
    let mut ch = s.chars();
    matches!(ch.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && ch.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn is_reserved(s: &str) -> bool {
    RESERVED.contains(&s.to_ascii_lowercase().as_str())
}

/// `s` in the dialect's name quotes, a quote inside doubled.
fn wrap(s: &str, dialect: Dialect) -> String {
    let q = dialect.name_quote();
    format!("{q}{}{q}", s.replace(q, &format!("{q}{q}")))
}

/// Quote a table or column name of the source database when needed:
/// non-simple names, reserved words, and — in Postgres, which folds unquoted
/// names to lower case — names with upper-case letters (the dbModel records
/// the catalog spelling).
pub fn quote_name(s: &str, dialect: Dialect) -> String {
    let fold = dialect == Dialect::Postgres && s.chars().any(|c| c.is_ascii_uppercase());
    if !is_simple(s) || is_reserved(s) || fold {
        wrap(s, dialect)
    } else {
        s.to_string()
    }
}

/// The SQL that names `table` in a FROM clause: its `relation` parts,
/// each quoted as [`quote_name`] quotes, joined by dots (`marts."Orders"`),
/// or its name when it has no relation.
pub fn quote_table(table: &crate::types::Table, dialect: Dialect) -> String {
    if table.relation.is_empty() {
        quote_name(&table.name, dialect)
    } else {
        table.relation.iter().map(|p| quote_name(p, dialect)).collect::<Vec<_>>().join(".")
    }
}

/// Quote a name lucy invents (view name, column alias): only non-simple
/// names and reserved words, so queries may write them unquoted in every
/// dialect.
pub fn quote_alias(s: &str, dialect: Dialect) -> String {
    if !is_simple(s) || is_reserved(s) {
        wrap(s, dialect)
    } else {
        s.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_relation_is_quoted_part_by_part() {
        let t = crate::types::Table { name: "orders".into(), ..Default::default() };
        assert_eq!(quote_table(&t, Dialect::Postgres), "orders");
        let t = crate::types::Table { relation: vec!["Marts".into(), "order".into()], ..t };
        assert_eq!(quote_table(&t, Dialect::Postgres), "\"Marts\".\"order\"");
        assert_eq!(quote_table(&t, Dialect::Mysql), "Marts.`order`");
        assert_eq!(quote_table(&t, Dialect::Spark), "Marts.`order`");
    }

    #[test]
    fn plain_names_stay_bare() {
        assert_eq!(quote_name("client", Dialect::Sqlite), "client");
        assert_eq!(quote_name("CLIENT", Dialect::Mysql), "CLIENT");
        assert_eq!(quote_name("client_id", Dialect::Postgres), "client_id");
    }

    #[test]
    fn reserved_and_odd_names_are_quoted_per_dialect() {
        assert_eq!(quote_name("order", Dialect::Sqlite), "\"order\"");
        assert_eq!(quote_name("order", Dialect::Mysql), "`order`");
        assert_eq!(quote_name("Order Details", Dialect::Mysql), "`Order Details`");
        assert_eq!(quote_name("we\"ird", Dialect::Postgres), "\"we\"\"ird\"");
        assert_eq!(quote_name("we`ird", Dialect::Mysql), "`we``ird`");
        assert_eq!(quote_name("2col", Dialect::Sqlite), "\"2col\"");
    }

    #[test]
    fn postgres_keeps_catalog_case() {
        assert_eq!(quote_name("CLIENT", Dialect::Postgres), "\"CLIENT\"");
        assert_eq!(quote_alias("CLIENT_name", Dialect::Postgres), "CLIENT_name");
        assert_eq!(quote_alias("select", Dialect::Postgres), "\"select\"");
    }
}
