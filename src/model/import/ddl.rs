//! `CREATE TABLE` DDL into a dbModel, with sqlparser.
//!
//! Reads primary keys (inline and table constraints, composite), foreign
//! keys (inline `REFERENCES` and table constraints, composite, also from
//! `ALTER TABLE … ADD`), unique keys (for 1:1 detection), `NOT NULL`,
//! types as written, and comments as descriptions: column `COMMENT '…'`,
//! table `COMMENT='…'` and Postgres `COMMENT ON TABLE|COLUMN … IS '…'`.
//!
//! Real dumps are messy, so nothing in the text is fatal: when the whole
//! script does not parse, it is split into statements
//! ([`super::ddl_split`]) and each is parsed alone, in the requested
//! dialect and then the others; a `CREATE TABLE` that still fails is read
//! by [`super::ddl_tolerant`] with a warning, any other failing statement is
//! skipped with a warning naming it.

use std::panic::{catch_unwind, AssertUnwindSafe};

use sqlparser::ast::{
    AlterTableOperation, ColumnOption, CommentDef, CommentObject, CreateTable, CreateTableOptions, Expr, IndexColumn,
    ObjectName, SqlOption, Statement, TableConstraint,
};
use sqlparser::dialect::{Dialect as SqlDialect, GenericDialect};
use sqlparser::parser::Parser;

use super::build::{build, RawForeignKey, RawSchema, RawTable};
use super::{ddl_split, ddl_tolerant, same_name, ImportWarning, Imported};
use crate::error::Result;
use crate::types::{Column, Dialect};

/// Import `CREATE TABLE` statements. `dialect` picks the sqlparser dialect
/// tried first (generic when `None`) and is recorded in the model.
pub fn ddl_with_warnings(sql: &str, dialect: Option<Dialect>, name: &str) -> Result<Imported> {
    // A UTF-8 byte-order mark would glue onto the first `CREATE`.
    let sql = sql.strip_prefix('\u{feff}').unwrap_or(sql);
    let mut reader = Reader { raw: RawSchema { name: name.to_string(), dialect, ..Default::default() }, lines: None };
    let first = sql_dialect(dialect);
    match parse(first.as_ref(), sql) {
        Ok(stmts) => {
            for s in &stmts {
                reader.statement(s, sql, 1);
            }
        }
        Err(_) => {
            for chunk in ddl_split::split(sql) {
                reader.chunk(chunk, dialect);
            }
        }
    }
    build(reader.raw)
}

fn sql_dialect(d: Option<Dialect>) -> Box<dyn SqlDialect> {
    d.map_or_else(|| Box::new(GenericDialect {}) as Box<dyn SqlDialect>, Dialect::parser)
}

/// sqlparser on untrusted text, with a panic inside the parser turned
/// into an error so one odd statement cannot take the import down.
fn parse(dialect: &dyn SqlDialect, sql: &str) -> std::result::Result<Vec<Statement>, String> {
    match catch_unwind(AssertUnwindSafe(|| Parser::parse_sql(dialect, sql))) {
        Ok(Ok(v)) => Ok(v),
        Ok(Err(e)) => Err(e.to_string()),
        Err(_) => Err("the SQL parser crashed on this statement".into()),
    }
}

struct Reader {
    raw: RawSchema,
    /// Line starts of the text statements were last parsed from (the
    /// whole script or one chunk), built once per text: positions of every
    /// column are looked up in it, so a lookup must not rescan the text.
    lines: Option<LineIndex>,
}

impl Reader {
    fn warn(&mut self, location: impl Into<String>, message: impl Into<String>) {
        self.raw.warnings.push(ImportWarning::new(location, message));
    }

    /// One statement from the splitter: try every dialect, then the
    /// tolerant reader.
    fn chunk(&mut self, chunk: ddl_split::Chunk<'_>, dialect: Option<Dialect>) {
        let mut order = vec![dialect];
        for d in [None, Some(Dialect::Mysql), Some(Dialect::Postgres), Some(Dialect::Sqlite)] {
            if !order.contains(&d) {
                order.push(d);
            }
        }
        let mut first_err = None;
        for d in order {
            match parse(sql_dialect(d).as_ref(), chunk.text) {
                Ok(stmts) => {
                    for s in &stmts {
                        self.statement(s, chunk.text, chunk.line);
                    }
                    return;
                }
                Err(e) => {
                    first_err.get_or_insert(e);
                }
            }
        }
        let err = first_err.unwrap_or_default();
        let at = format!("line {}", chunk.line);
        let head = statement_head(chunk.text);
        if is_create_table(chunk.text) {
            match ddl_tolerant::parse_create_table(chunk.text, &at) {
                Some((table, fks)) => {
                    self.warn(
                        at.clone(),
                        format!(
                            "`{head}` does not parse with sqlparser ({err}); read with the tolerant reader — check table {}'s columns and keys",
                            table.name
                        ),
                    );
                    self.raw.tables.push(table);
                    self.raw.foreign_keys.extend(fks);
                }
                None => self.warn(at, format!("`{head}` skipped: no table name found ({err})")),
            }
        } else {
            self.warn(at, format!("`{head}` skipped: does not parse ({err})"));
        }
    }

    fn statement(&mut self, stmt: &Statement, text: &str, first_line: usize) {
        match stmt {
            Statement::CreateTable(ct) => self.create_table(ct, text, first_line),
            Statement::AlterTable(at) => {
                let table = last_ident(&at.name);
                for op in &at.operations {
                    if let AlterTableOperation::AddConstraint { constraint, .. } = op {
                        let origin = format!("ALTER TABLE {table}");
                        match self.raw.tables.iter().position(|t| same_name(&t.name, &table)) {
                            Some(ti) => {
                                let mut t = std::mem::take(&mut self.raw.tables[ti]);
                                self.constraint(&mut t, constraint, &origin);
                                self.raw.tables[ti] = t;
                            }
                            None => self.warn(origin, "constraint on a table that is not defined (yet); ignored"),
                        }
                    }
                }
            }
            Statement::CreateIndex(ci) if ci.unique => {
                let table = last_ident(&ci.table_name);
                let cols: Vec<String> = ci.columns.iter().map(index_column).collect();
                match self.raw.tables.iter_mut().find(|t| same_name(&t.name, &table)) {
                    Some(t) => t.unique.push(cols),
                    None => self.warn(format!("CREATE UNIQUE INDEX on {table}"), "table is not defined (yet); ignored"),
                }
            }
            Statement::Comment { object_type, object_name, comment: Some(c), .. } => {
                self.comment_on(object_type, object_name, c)
            }
            Statement::CreateView(v) => {
                self.warn(format!("CREATE VIEW {}", last_ident(&v.name)), "views are not imported; only tables")
            }
            _ => {}
        }
    }

    fn comment_on(&mut self, kind: &CommentObject, name: &ObjectName, comment: &str) {
        let parts: Vec<String> = name.0.iter().filter_map(|p| p.as_ident().map(|i| i.value.clone())).collect();
        let location = format!("COMMENT ON {}", parts.join("."));
        match kind {
            CommentObject::Table => {
                let Some(t) = parts.last() else { return };
                match self.raw.tables.iter_mut().find(|x| same_name(&x.name, t)) {
                    Some(x) => x.description = Some(comment.to_string()),
                    None => self.warn(location, "table is not defined (yet); comment ignored"),
                }
            }
            CommentObject::Column if parts.len() >= 2 => {
                let (t, c) = (&parts[parts.len() - 2], &parts[parts.len() - 1]);
                let col = self
                    .raw
                    .tables
                    .iter_mut()
                    .find(|x| same_name(&x.name, t))
                    .and_then(|x| x.columns.iter_mut().find(|k| same_name(&k.name, c)));
                match col {
                    Some(k) => k.description = Some(comment.to_string()),
                    None => self.warn(location, "column is not defined (yet); comment ignored"),
                }
            }
            _ => {}
        }
    }

    fn create_table(&mut self, ct: &CreateTable, text: &str, first_line: usize) {
        let name = last_ident(&ct.name);
        let line = ct.name.0.last().and_then(|p| p.as_ident()).map(|i| i.span.start.line as usize).unwrap_or(0);
        let origin = if line > 0 { format!("line {}", first_line + line - 1) } else { String::new() };
        let mut table = RawTable { name: name.clone(), origin: origin.clone(), ..Default::default() };
        for cd in &ct.columns {
            let mut col = Column {
                name: cd.name.value.clone(),
                sql_type: type_as_written(text, self.line_index(text), cd),
                nullable: true,
                description: None,
                synonyms: Vec::new(),
                origin: None,
            };
            for opt in &cd.options {
                match &opt.option {
                    ColumnOption::NotNull => col.nullable = false,
                    ColumnOption::Null => col.nullable = true,
                    ColumnOption::PrimaryKey(_) => table.primary_key.push(col.name.clone()),
                    ColumnOption::Unique(_) => table.unique.push(vec![col.name.clone()]),
                    ColumnOption::ForeignKey(fk) => self.raw.foreign_keys.push(RawForeignKey {
                        from: name.clone(),
                        columns: vec![col.name.clone()],
                        to: last_ident(&fk.foreign_table),
                        to_columns: fk.referred_columns.iter().map(|i| i.value.clone()).collect(),
                        origin: origin.clone(),
                        description: None,
                        provenance: None,
                    }),
                    ColumnOption::Comment(c) => col.description = Some(c.clone()),
                    _ => {}
                }
            }
            table.columns.push(col);
        }
        for c in &ct.constraints {
            self.constraint(&mut table, c, &origin);
        }
        table.description = table_comment(ct);
        self.raw.tables.push(table);
    }

    fn constraint(&mut self, table: &mut RawTable, c: &TableConstraint, origin: &str) {
        match c {
            TableConstraint::PrimaryKey(pk) => table.primary_key = pk.columns.iter().map(index_column).collect(),
            TableConstraint::Unique(u) => table.unique.push(u.columns.iter().map(index_column).collect()),
            TableConstraint::ForeignKey(fk) => self.raw.foreign_keys.push(RawForeignKey {
                from: table.name.clone(),
                columns: fk.columns.iter().map(|i| i.value.clone()).collect(),
                to: last_ident(&fk.foreign_table),
                to_columns: fk.referred_columns.iter().map(|i| i.value.clone()).collect(),
                origin: origin.to_string(),
                description: None,
                provenance: None,
            }),
            _ => {}
        }
    }
}

/// The table name without schema or catalog qualifiers.
fn last_ident(name: &ObjectName) -> String {
    name.0
        .last()
        .map(|p| match p.as_ident() {
            Some(i) => i.value.clone(),
            None => p.to_string(),
        })
        .unwrap_or_default()
}

/// A key column: normally a plain identifier (an `ASC`/`DESC` is dropped).
fn index_column(c: &IndexColumn) -> String {
    match &c.column.expr {
        Expr::Identifier(i) => i.value.clone(),
        Expr::CompoundIdentifier(v) => v.last().map(|i| i.value.clone()).unwrap_or_default(),
        e => e.to_string(),
    }
}

/// `COMMENT='…'` (MySQL table option), `COMMENT '…'` (Hive), or `None`.
fn table_comment(ct: &CreateTable) -> Option<String> {
    let text = |c: &CommentDef| match c {
        CommentDef::WithEq(s) | CommentDef::WithoutEq(s) => s.clone(),
    };
    if let Some(c) = &ct.comment {
        return Some(text(c));
    }
    let opts = match &ct.table_options {
        CreateTableOptions::With(v)
        | CreateTableOptions::Options(v)
        | CreateTableOptions::Plain(v)
        | CreateTableOptions::TableProperties(v) => v.as_slice(),
        CreateTableOptions::None => &[],
    };
    opts.iter().find_map(|o| match o {
        SqlOption::Comment(c) => Some(text(c)),
        SqlOption::KeyValue { key, value } if key.value.eq_ignore_ascii_case("comment") => Some(match value {
            Expr::Value(v) => v.value.clone().into_string().unwrap_or_else(|| v.to_string()),
            other => other.to_string(),
        }),
        _ => None,
    })
}

/// The column type as the author wrote it (`varchar(20)`, not the
/// normalised `VARCHAR(20)`) when it can be found right after the column
/// name in the source; sqlparser's rendering otherwise.
fn type_as_written(text: &str, lines: &LineIndex, cd: &sqlparser::ast::ColumnDef) -> String {
    let rendered = cd.data_type.to_string();
    let span = cd.name.span;
    let Some(at) = lines.byte_offset(text, span.end.line as usize, span.end.column as usize) else { return rendered };
    let rest = &text[at..];
    let skip = rest.len() - rest.trim_start().len();
    let cand = &rest[skip..];
    let bytes = cand.as_bytes();
    let want = rendered.as_bytes();
    if bytes.len() >= want.len() && bytes[..want.len()].eq_ignore_ascii_case(want) && cand.is_char_boundary(want.len())
    {
        cand[..want.len()].to_string()
    } else {
        rendered
    }
}

/// Where each line of one text starts, for (line, column) → byte offset
/// in constant time (on ASCII text) instead of a scan from the start.
struct LineIndex {
    /// Identity of the text: address and length.
    key: (usize, usize),
    starts: Vec<usize>,
    ascii: bool,
}

impl LineIndex {
    fn new(text: &str) -> Self {
        let mut starts = vec![0];
        starts.extend(text.bytes().enumerate().filter(|(_, b)| *b == b'\n').map(|(i, _)| i + 1));
        LineIndex { key: (text.as_ptr() as usize, text.len()), starts, ascii: text.is_ascii() }
    }

    /// Byte offset of a 1-based (line, column) location, counting
    /// characters; the end location of a span points after the last
    /// character.
    fn byte_offset(&self, text: &str, line: usize, column: usize) -> Option<usize> {
        if line == 0 || column == 0 {
            return None;
        }
        let line_start = *self.starts.get(line - 1)?;
        let line_end = self.starts.get(line).map_or(text.len(), |&s| s - 1);
        if self.ascii {
            return Some((line_start + column - 1).min(line_end));
        }
        let l = &text[line_start..];
        match l.char_indices().nth(column - 1) {
            Some((i, _)) => Some(line_start + i),
            None => Some(text.len().min(line_start + l.len())),
        }
    }
}

impl Reader {
    fn line_index(&mut self, text: &str) -> &LineIndex {
        let key = (text.as_ptr() as usize, text.len());
        if self.lines.as_ref().is_none_or(|l| l.key != key) {
            self.lines = Some(LineIndex::new(text));
        }
        self.lines.get_or_insert_with(|| LineIndex::new(text))
    }
}

#[cfg(test)]
fn byte_offset(text: &str, line: usize, column: usize) -> Option<usize> {
    LineIndex::new(text).byte_offset(text, line, column)
}

fn is_create_table(text: &str) -> bool {
    let words: Vec<String> = text.split_whitespace().take(6).map(|w| w.to_ascii_uppercase()).collect();
    words.first().map(String::as_str) == Some("CREATE") && words.iter().any(|w| w == "TABLE" || w.starts_with("TABLE"))
}

/// The first words of a statement, for warnings.
fn statement_head(text: &str) -> String {
    let s: String = text.split_whitespace().take(4).collect::<Vec<_>>().join(" ");
    if s.chars().count() > 60 {
        s.chars().take(60).collect::<String>() + "…"
    } else {
        s
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn types_keep_their_spelling() {
        let sql = "CREATE TABLE t (a varchar(20) NOT NULL, b decimal(15,2), c int);";
        let m = ddl_with_warnings(sql, None, "x").unwrap().model;
        let types: Vec<&str> = m.tables[0].columns.iter().map(|c| c.sql_type.as_str()).collect();
        assert_eq!(types, ["varchar(20)", "decimal(15,2)", "int"]);
    }

    #[test]
    fn a_byte_order_mark_does_not_drop_the_first_table() {
        for sql in [
            "\u{feff}CREATE TABLE a (x int);\nCREATE TABLE b (y int);",
            "\u{feff}CREATE TABLE a (x int)\nCREATE TABLE b (y int broken",
        ] {
            let m = ddl_with_warnings(sql, None, "x").unwrap().model;
            let names: Vec<&str> = m.tables.iter().map(|t| t.name.as_str()).collect();
            assert_eq!(names, ["a", "b"], "{sql:?}");
        }
    }

    #[test]
    fn column_types_are_found_on_long_lines_and_many_lines() {
        let cols: Vec<String> = (0..3000).map(|i| format!("c{i} varchar({i})")).collect();
        for sep in [", ", ",\n"] {
            let sql = format!("CREATE TABLE wide ({});", cols.join(sep));
            let m = ddl_with_warnings(&sql, None, "x").unwrap().model;
            assert_eq!(m.tables[0].columns.len(), 3000);
            assert_eq!(m.tables[0].columns[2999].sql_type, "varchar(2999)");
        }
    }

    #[test]
    fn byte_offsets() {
        assert_eq!(byte_offset("ab\ncd", 2, 2), Some(4));
        assert_eq!(byte_offset("é x", 1, 2), Some(2));
        assert_eq!(byte_offset("ab", 3, 1), None);
    }
}
