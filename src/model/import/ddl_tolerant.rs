//! A forgiving reader for one `CREATE TABLE` statement that sqlparser
//! rejected (vendor column options it does not know, a truncated
//! statement, unquoted comment text). It reads the column list item by
//! item: columns with their type, `NOT NULL`, inline `PRIMARY KEY`,
//! `UNIQUE`, `REFERENCES` and `COMMENT '…'`; table-level `PRIMARY KEY`,
//! `UNIQUE` and `FOREIGN KEY` constraints; anything else in an item is
//! skipped. It never fails on the body, only when there is no table name.

use super::build::{RawForeignKey, RawTable};
use crate::types::Column;

#[derive(Debug, Clone, PartialEq)]
enum Tok {
    /// A bare word or a quoted identifier (quotes removed).
    Word { text: String, quoted: bool },
    /// A single-quoted string (quotes removed, doubled quotes unescaped).
    Str(String),
    /// Any other single character: `( ) , . = ;` …
    Punct(char),
}

/// A token and its byte span in the statement.
#[derive(Debug, Clone)]
struct Spanned {
    tok: Tok,
    start: usize,
    end: usize,
}

fn tokenize(s: &str) -> Vec<Spanned> {
    let b = s.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < b.len() {
        let c = b[i];
        let start = i;
        if c.is_ascii_whitespace() {
            i += 1;
        } else if c == b'-' && b.get(i + 1) == Some(&b'-') || c == b'#' {
            while i < b.len() && b[i] != b'\n' {
                i += 1;
            }
        } else if c == b'/' && b.get(i + 1) == Some(&b'*') {
            i += 2;
            while i < b.len() && !(b[i] == b'*' && b.get(i + 1) == Some(&b'/')) {
                i += 1;
            }
            i = (i + 2).min(b.len());
        } else if matches!(c, b'\'' | b'"' | b'`' | b'[') {
            let close = if c == b'[' { b']' } else { c };
            let mut text = Vec::new();
            i += 1;
            while i < b.len() {
                if b[i] == close {
                    if b.get(i + 1) == Some(&close) {
                        text.push(close);
                        i += 2;
                        continue;
                    }
                    i += 1;
                    break;
                }
                if b[i] == b'\\' && c == b'\'' && i + 1 < b.len() {
                    i += 1;
                }
                text.push(b[i]);
                i += 1;
            }
            let text = String::from_utf8_lossy(&text).into_owned();
            let tok = if c == b'\'' { Tok::Str(text) } else { Tok::Word { text, quoted: true } };
            out.push(Spanned { tok, start, end: i });
        } else if c.is_ascii_alphanumeric() || c == b'_' || c == b'$' || c >= 0x80 {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'$' || b[i] >= 0x80) {
                i += 1;
            }
            out.push(Spanned { tok: Tok::Word { text: s[start..i].to_string(), quoted: false }, start, end: i });
        } else {
            // Step over a whole UTF-8 character so spans stay on boundaries.
            let ch = s[i..].chars().next().unwrap_or('?');
            i += ch.len_utf8().max(1);
            out.push(Spanned { tok: Tok::Punct(ch), start, end: i });
        }
    }
    out
}

fn is_kw(t: Option<&Spanned>, kw: &str) -> bool {
    matches!(t, Some(Spanned { tok: Tok::Word { text, quoted: false }, .. }) if text.eq_ignore_ascii_case(kw))
}

fn is_punct(t: Option<&Spanned>, p: char) -> bool {
    matches!(t, Some(Spanned { tok: Tok::Punct(c), .. }) if *c == p)
}

fn word(t: Option<&Spanned>) -> Option<&str> {
    match t {
        Some(Spanned { tok: Tok::Word { text, .. }, .. }) => Some(text),
        _ => None,
    }
}

/// Words that end a column's type and start its options.
const OPTION_WORDS: &[&str] = &[
    "NOT",
    "NULL",
    "DEFAULT",
    "PRIMARY",
    "REFERENCES",
    "COMMENT",
    "UNIQUE",
    "CHECK",
    "CONSTRAINT",
    "COLLATE",
    "AUTO_INCREMENT",
    "AUTOINCREMENT",
    "IDENTITY",
    "GENERATED",
    "ON",
    "KEY",
    "CHARACTER",
    "CHARSET",
    "AS",
];

/// Words that continue a type (`double precision`, `int unsigned`, …).
const TYPE_CONTINUATIONS: &[&str] =
    &["PRECISION", "VARYING", "UNSIGNED", "SIGNED", "ZEROFILL", "WITH", "WITHOUT", "TIME", "ZONE", "LOCAL", "ARRAY"];

/// Parse one `CREATE TABLE` statement; `origin` labels warnings. Returns
/// `None` when no table name can be found.
pub(crate) fn parse_create_table(sql: &str, origin: &str) -> Option<(RawTable, Vec<RawForeignKey>)> {
    let toks = tokenize(sql);
    let mut i = toks.iter().position(|t| is_kw(Some(t), "TABLE"))?;
    i += 1;
    if is_kw(toks.get(i), "IF") {
        i += 1;
        while i < toks.len() && !is_kw(toks.get(i), "EXISTS") {
            i += 1;
        }
        i += 1;
    }
    // Qualified name: keep the last part.
    let mut name = word(toks.get(i))?.to_string();
    i += 1;
    while is_punct(toks.get(i), '.') {
        if let Some(w) = word(toks.get(i + 1)) {
            name = w.to_string();
        }
        i += 2;
    }
    let mut table = RawTable { name: name.clone(), origin: origin.to_string(), ..Default::default() };
    let mut fks = Vec::new();
    if !is_punct(toks.get(i), '(') {
        return Some((table, fks));
    }
    i += 1;
    // Items of the column list, split at depth-0 commas.
    let mut items: Vec<&[Spanned]> = Vec::new();
    let mut depth = 0;
    let mut item_start = i;
    while i < toks.len() {
        match &toks[i].tok {
            Tok::Punct('(') => depth += 1,
            Tok::Punct(')') if depth == 0 => break,
            Tok::Punct(')') => depth -= 1,
            Tok::Punct(',') if depth == 0 => {
                items.push(&toks[item_start..i]);
                item_start = i + 1;
            }
            _ => {}
        }
        i += 1;
    }
    items.push(&toks[item_start..i.min(toks.len())]);
    for item in items.into_iter().filter(|it| !it.is_empty()) {
        read_item(sql, item, &mut table, &mut fks);
    }
    // Table options after the list: COMMENT [=] '…'.
    let mut k = i + 1;
    while k < toks.len() {
        if is_kw(toks.get(k), "COMMENT") {
            let mut v = k + 1;
            if is_punct(toks.get(v), '=') {
                v += 1;
            }
            if let Some(Spanned { tok: Tok::Str(s), .. }) = toks.get(v) {
                table.description = Some(s.clone());
            }
        }
        k += 1;
    }
    for fk in &mut fks {
        fk.from = name.clone();
        fk.origin = origin.to_string();
    }
    Some((table, fks))
}

/// Names inside the parenthesised list starting at `item[at]`; the index
/// after the closing parenthesis.
fn paren_names(item: &[Spanned], at: usize) -> (Vec<String>, usize) {
    let mut names = Vec::new();
    if !is_punct(item.get(at), '(') {
        return (names, at);
    }
    let mut k = at + 1;
    let mut depth = 0;
    let mut first_in_element = true;
    while k < item.len() {
        match &item[k].tok {
            Tok::Punct('(') => depth += 1,
            Tok::Punct(')') if depth == 0 => return (names, k + 1),
            Tok::Punct(')') => depth -= 1,
            Tok::Punct(',') if depth == 0 => first_in_element = true,
            Tok::Word { text, .. } if depth == 0 && first_in_element => {
                names.push(text.clone());
                first_in_element = false;
            }
            _ => {}
        }
        k += 1;
    }
    (names, k)
}

/// `REFERENCES t [(cols)]` starting at `item[at]` (the word after REFERENCES).
fn references(item: &[Spanned], at: usize) -> Option<(String, Vec<String>)> {
    let mut to = word(item.get(at))?.to_string();
    let mut k = at + 1;
    while is_punct(item.get(k), '.') {
        if let Some(w) = word(item.get(k + 1)) {
            to = w.to_string();
        }
        k += 2;
    }
    let (cols, _) = paren_names(item, k);
    Some((to, cols))
}

fn read_item(sql: &str, item: &[Spanned], table: &mut RawTable, fks: &mut Vec<RawForeignKey>) {
    let mut k = 0;
    if is_kw(item.first(), "CONSTRAINT") {
        k = 2;
    }
    let head = item.get(k);
    if is_kw(head, "PRIMARY") && is_kw(item.get(k + 1), "KEY") {
        let at = (k + 2..item.len()).find(|&j| is_punct(item.get(j), '(')).unwrap_or(item.len());
        table.primary_key = paren_names(item, at).0;
        return;
    }
    if is_kw(head, "UNIQUE") {
        let at = (k + 1..item.len()).find(|&j| is_punct(item.get(j), '(')).unwrap_or(item.len());
        table.unique.push(paren_names(item, at).0);
        return;
    }
    if is_kw(head, "FOREIGN") && is_kw(item.get(k + 1), "KEY") {
        let at = (k + 2..item.len()).find(|&j| is_punct(item.get(j), '(')).unwrap_or(item.len());
        let (cols, after) = paren_names(item, at);
        if let Some(r) = (after..item.len()).find(|&j| is_kw(item.get(j), "REFERENCES")) {
            if let Some((to, to_columns)) = references(item, r + 1) {
                fks.push(RawForeignKey {
                    from: String::new(),
                    columns: cols,
                    to,
                    to_columns,
                    origin: String::new(),
                    description: None,
                    provenance: None,
                });
            }
        }
        return;
    }
    if ["KEY", "INDEX", "FULLTEXT", "SPATIAL", "CHECK", "EXCLUDE", "PERIOD", "LIKE"].iter().any(|w| is_kw(head, w)) {
        return;
    }
    // A column definition.
    let Some(name) = word(item.first()) else { return };
    let mut col = Column { name: name.to_string(), sql_type: String::new(), nullable: true, ..Column::default() };
    let mut j = 1;
    let is_option = |t: Option<&Spanned>| OPTION_WORDS.iter().any(|w| is_kw(t, w));
    if word(item.get(j)).is_some() && !is_option(item.get(j)) {
        let type_start = item[j].start;
        let mut type_end = item[j].end;
        j += 1;
        loop {
            if is_punct(item.get(j), '(') {
                let mut depth = 0;
                while j < item.len() {
                    match item[j].tok {
                        Tok::Punct('(') => depth += 1,
                        Tok::Punct(')') => {
                            depth -= 1;
                            if depth == 0 {
                                break;
                            }
                        }
                        _ => {}
                    }
                    j += 1;
                }
                type_end = item.get(j).map_or(type_end, |t| t.end);
                j += 1;
            } else if TYPE_CONTINUATIONS.iter().any(|w| is_kw(item.get(j), w))
                || (is_punct(item.get(j), '[') && is_punct(item.get(j + 1), ']'))
            {
                let step = if is_punct(item.get(j), '[') { 2 } else { 1 };
                type_end = item[j + step - 1].end;
                j += step;
            } else {
                break;
            }
        }
        col.sql_type = sql.get(type_start..type_end).unwrap_or_default().to_string();
    }
    while j < item.len() {
        if is_kw(item.get(j), "NOT") && is_kw(item.get(j + 1), "NULL") {
            col.nullable = false;
            j += 2;
            continue;
        }
        if is_kw(item.get(j), "PRIMARY") && is_kw(item.get(j + 1), "KEY") {
            table.primary_key.push(col.name.clone());
            j += 2;
            continue;
        }
        if is_kw(item.get(j), "UNIQUE") {
            table.unique.push(vec![col.name.clone()]);
        }
        if is_kw(item.get(j), "REFERENCES") {
            if let Some((to, to_columns)) = references(item, j + 1) {
                fks.push(RawForeignKey {
                    from: String::new(),
                    columns: vec![col.name.clone()],
                    to,
                    to_columns,
                    origin: String::new(),
                    description: None,
                    provenance: None,
                });
            }
        }
        if is_kw(item.get(j), "COMMENT") {
            let mut v = j + 1;
            if is_punct(item.get(v), '=') {
                v += 1;
            }
            match item.get(v) {
                Some(Spanned { tok: Tok::Str(s), .. }) => col.description = Some(s.clone()),
                // Unquoted comment text (seen in hand-written DDL): the rest of the item.
                Some(t) => {
                    let text = sql.get(t.start..item[item.len() - 1].end).unwrap_or_default().trim();
                    if !text.is_empty() {
                        col.description = Some(text.split_whitespace().collect::<Vec<_>>().join(" "));
                    }
                    break;
                }
                None => {}
            }
        }
        j += 1;
    }
    table.columns.push(col);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_columns_keys_and_unknown_options() {
        let sql = "CREATE TABLE IF NOT EXISTS s.Orders (\n  id bigint unsigned NOT NULL ENCODE zstd PRIMARY KEY,\n  cust_id int REFERENCES Customer(id) COMMENT 'who ordered',\n  price double precision DISTKEY,\n  note varchar(20) COMMENT unquoted, text here\n) COMMENT='All orders'";
        let (t, fks) = parse_create_table(sql, "line 1").unwrap();
        assert_eq!(t.name, "Orders");
        assert_eq!(t.description.as_deref(), Some("All orders"));
        let names: Vec<&str> = t.columns.iter().map(|c| c.name.as_str()).collect();
        assert_eq!(names, ["id", "cust_id", "price", "note", "text"]);
        assert_eq!(t.columns[0].sql_type, "bigint unsigned");
        assert!(!t.columns[0].nullable);
        assert_eq!(t.columns[2].sql_type, "double precision");
        assert_eq!(t.columns[3].sql_type, "varchar(20)");
        assert_eq!(t.columns[3].description.as_deref(), Some("unquoted"));
        assert_eq!(t.columns[1].description.as_deref(), Some("who ordered"));
        assert_eq!(t.primary_key, vec!["id"]);
        assert_eq!(fks.len(), 1);
        assert_eq!((fks[0].from.as_str(), fks[0].to.as_str()), ("Orders", "Customer"));
    }

    #[test]
    fn table_constraints_and_truncation() {
        let sql = "create table `t` (a int, b int, constraint pk primary key (a, b), foreign key (a, b) references u (x, y), unique (b), key k (a), c varch";
        let (t, fks) = parse_create_table(sql, "").unwrap();
        assert_eq!(t.primary_key, vec!["a", "b"]);
        assert_eq!(t.unique, vec![vec!["b".to_string()]]);
        assert_eq!(fks[0].columns, vec!["a", "b"]);
        assert_eq!(fks[0].to_columns, vec!["x", "y"]);
        assert_eq!(t.columns.len(), 3);
    }

    #[test]
    fn no_name_is_none() {
        assert!(parse_create_table("create table", "").is_none());
        assert!(parse_create_table("drop view x", "").is_none());
    }
}
