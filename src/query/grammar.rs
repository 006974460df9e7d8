//! Grammars for SQL answers: a Lark grammar (llguidance dialect) per task,
//! so a grammar-capable backend can only produce one read-only query over
//! what the task allows.
//!
//! - QueryView ([`view_grammar`]): `SELECT` over the view only, plus CTEs
//!   and derived tables the query defines; column references are the
//!   view's columns or names the query defines (aliases, CTE columns).
//! - The direct baseline ([`tables_grammar`]): the same over the model's
//!   tables and their columns.
//!
//! Names the query defines are identifiers that are not SQL keywords, not
//! function names, and not names of the model's tables or columns: so a
//! table outside the view (`JOIN DATACENTER`) or a column the view does not
//! have (`T2.loc_id`) cannot be written, not even disguised as a CTE or an
//! alias. The constructs are those the suites' gold queries use (DISTINCT,
//! aggregates, GROUP BY, HAVING, ORDER BY, LIMIT, CASE, CAST, arithmetic,
//! LIKE/IN/BETWEEN/IS NULL, scalar/IN/EXISTS subqueries, CTEs, UNION, the
//! dialect's date and string functions). The answer is wrapped in the
//! ```` ```sql ```` fence the prompts ask for.
//!
//! A grammar narrows; the guard (`sql::guard`) still decides.

use serde::{Deserialize, Serialize};

use crate::types::Dialect;

/// SQL keywords that can never be a name the query defines.
const KEYWORDS: &[&str] = &[
    "select",
    "from",
    "where",
    "group",
    "by",
    "having",
    "order",
    "limit",
    "offset",
    "union",
    "all",
    "intersect",
    "except",
    "distinct",
    "as",
    "on",
    "using",
    "join",
    "left",
    "right",
    "inner",
    "outer",
    "cross",
    "full",
    "natural",
    "and",
    "or",
    "not",
    "in",
    "is",
    "null",
    "like",
    "glob",
    "ilike",
    "between",
    "exists",
    "case",
    "when",
    "then",
    "else",
    "end",
    "cast",
    "with",
    "recursive",
    "asc",
    "desc",
    "nulls",
    "first",
    "last",
    "true",
    "false",
    "escape",
    "insert",
    "update",
    "delete",
    "drop",
    "create",
    "alter",
    "attach",
    "detach",
    "pragma",
    "replace",
    "into",
    "values",
    "set",
    "table",
    "view",
    "index",
    "trigger",
    "begin",
    "commit",
    "rollback",
    "vacuum",
    "over",
    "partition",
    "window",
    "filter",
    "collate",
    "interval",
    "extract",
    "current_date",
    "current_time",
    "current_timestamp",
    "returning",
    "lateral",
    "fetch",
    "top",
];

/// Catalog relations no query may read, nor define as a name.
const SYSTEM_RELATIONS: &[&str] = &[
    "sqlite_master",
    "sqlite_schema",
    "sqlite_temp_master",
    "sqlite_temp_schema",
    "sqlite_sequence",
    "sqlite_stat1",
    "information_schema",
    "pg_catalog",
    "pg_class",
    "pg_tables",
    "pg_user",
    "pg_shadow",
    "mysql",
    "performance_schema",
];

/// Aggregate functions (all dialects).
const AGGREGATES: &[&str] = &["count", "sum", "avg", "min", "max"];

/// Scalar functions every dialect here has.
const COMMON_FUNCS: &[&str] = &[
    "abs",
    "round",
    "length",
    "lower",
    "upper",
    "trim",
    "ltrim",
    "rtrim",
    "replace",
    "coalesce",
    "nullif",
    "substr",
    "substring",
    "min",
    "max",
];

fn dialect_funcs(d: Dialect) -> (&'static [&'static str], &'static [&'static str]) {
    // (scalar functions, extra aggregates)
    match d {
        Dialect::Sqlite => (
            &[
                "ifnull",
                "iif",
                "instr",
                "strftime",
                "date",
                "time",
                "datetime",
                "julianday",
                "printf",
                "typeof",
                "unixepoch",
                "cast",
            ],
            &["group_concat", "total"],
        ),
        Dialect::Mysql => (
            &[
                "ifnull",
                "if",
                "concat",
                "concat_ws",
                "year",
                "month",
                "day",
                "dayofweek",
                "hour",
                "minute",
                "date",
                "now",
                "curdate",
                "date_format",
                "datediff",
                "timestampdiff",
                "date_add",
                "date_sub",
                "locate",
                "left",
                "right",
                "char_length",
                "floor",
                "ceil",
                "ceiling",
                "truncate",
                "str_to_date",
                "unix_timestamp",
            ],
            &["group_concat"],
        ),
        Dialect::Postgres => (
            &[
                "concat",
                "date_part",
                "date_trunc",
                "to_char",
                "to_date",
                "now",
                "age",
                "position",
                "strpos",
                "left",
                "right",
                "char_length",
                "floor",
                "ceil",
                "greatest",
                "least",
                "split_part",
                "make_date",
            ],
            &["string_agg", "array_agg", "bool_and", "bool_or"],
        ),
        Dialect::Spark => (
            &[
                "concat",
                "concat_ws",
                "if",
                "ifnull",
                "nvl",
                "year",
                "month",
                "day",
                "dayofweek",
                "hour",
                "minute",
                "quarter",
                "current_date",
                "current_timestamp",
                "date_format",
                "datediff",
                "months_between",
                "date_add",
                "date_sub",
                "add_months",
                "date_trunc",
                "to_date",
                "to_timestamp",
                "instr",
                "locate",
                "left",
                "right",
                "length",
                "char_length",
                "floor",
                "ceil",
                "greatest",
                "least",
                "split_part",
                "make_date",
                "cast",
            ],
            &["collect_list", "collect_set", "count_if", "string_agg", "any_value", "bool_and", "bool_or"],
        ),
    }
}

/// A Lark string literal for `s`, case-insensitive when `ci`.
fn lit(s: &str, ci: bool) -> String {
    let mut out = serde_json::to_string(s).expect("a string serialises");
    if ci {
        out.push('i');
    }
    out
}

/// A regex alternation matching any of `names` exactly, ASCII
/// case-insensitively (see [`ci_regex`]).
fn names_regex(names: &[String]) -> String {
    let mut v: Vec<String> = names.iter().map(|n| ci_regex(n)).collect();
    v.sort();
    v.dedup();
    format!("/({})/", v.join("|"))
}

/// `s` as a regex matching it with any ASCII letter case: `[sS][eE]…`.
/// Not `(?i)`: Unicode case folding would also admit e.g. `ſELECT`
/// (U+017F folds to `s`), which no SQL parser reads as SELECT.
fn ci_regex(s: &str) -> String {
    s.chars()
        .map(|c| {
            if c.is_ascii_alphabetic() {
                format!("[{}{}]", c.to_ascii_lowercase(), c.to_ascii_uppercase())
            } else {
                escape_regex(&c.to_string())
            }
        })
        .collect()
}

/// `s` as a regex matching it literally, inside a Lark `/…/` literal.
fn escape_regex(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    for c in s.chars() {
        if "\\.+*?()|[]{}^$#&-~/ ".contains(c) {
            out.push('\\');
        }
        out.push(c);
    }
    out
}

/// Rule `name` matching any of `names`, as written or quoted the dialect's
/// way (unquoted names match case-insensitively, like SQL).
fn name_rule(rule: &str, names: &[String], d: Dialect) -> String {
    let mut alts: Vec<String> = Vec::new();
    let mut seen = std::collections::HashSet::new();
    for n in names {
        if !seen.insert(n.to_ascii_lowercase()) {
            continue;
        }
        alts.push(format!("/{}/", ci_regex(n)));
        // Spark reads a double-quoted text as a string, never a name.
        if d != Dialect::Spark {
            alts.push(lit(&format!("\"{n}\""), false));
        }
        if d.backtick_names() || d == Dialect::Sqlite {
            alts.push(lit(&format!("`{n}`"), false));
        }
        if d == Dialect::Sqlite {
            alts.push(lit(&format!("[{n}]"), false));
        }
    }
    if alts.is_empty() {
        // A rule that matches nothing would be rejected; no name can appear.
        alts.push(lit("\u{1}never\u{1}", false));
    }
    format!("{rule}: {}\n", alts.join(" | "))
}

/// Which names a column reference may be, outside the names of the view
/// (or the model's tables): `--query-names`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum QueryNames {
    /// Any identifier that is not a keyword, function or model name may be
    /// written wherever a column may (the grammar the first committed
    /// cassettes were recorded with).
    Free,
    /// In a query without WITH, the select list, WHERE, ON and USING name
    /// only the view's columns, unqualified or after a qualifier, and FROM
    /// names only the view (no derived table: a CTE instead); GROUP BY,
    /// HAVING and ORDER BY may read select-list aliases. After WITH, names
    /// stay free (CTE columns). The repair round forbids the names the
    /// guard rejected. String literals are one line of at most
    /// [`MAX_STRING_CHARS`] characters. The default since issue 23
    /// (docs/phases.md has the measurements).
    #[default]
    Strict,
    /// [`QueryNames::Strict`] as session 9 had it: FROM may also hold a
    /// derived table, and after a qualifier any name is admitted (a derived
    /// table's column). Its recordings replay with it.
    #[serde(rename = "strict-derived")]
    StrictDerived,
}

impl QueryNames {
    /// The flag's spelling.
    pub fn as_str(self) -> &'static str {
        match self {
            QueryNames::Free => "free",
            QueryNames::Strict => "strict",
            QueryNames::StrictDerived => "strict-derived",
        }
    }

    /// A strict rule (`strict` or `strict-derived`).
    pub fn is_strict(self) -> bool {
        matches!(self, QueryNames::Strict | QueryNames::StrictDerived)
    }
}

/// The longest string literal the strict grammar admits, in characters
/// (`''` counts as one). DDO Q8 and Q18 once ran an unterminated literal to
/// the token limit; the longest literal of a DDO or ACME gold query is far
/// shorter.
pub const MAX_STRING_CHARS: usize = 200;

/// The rules a grammar is built with: the name rule and the names that may
/// not be written at all (the repair round forbids the unknown names the
/// guard reported, in the strict grammar).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct NameRules {
    pub names: QueryNames,
    /// Names no identifier may be (case-insensitive), on top of keywords
    /// and the model's names. Ignored by the free grammar, which stays the
    /// recorded one byte for byte.
    pub forbidden: Vec<String>,
}

impl NameRules {
    /// The rules of `names`, forbidding nothing more.
    pub fn new(names: QueryNames) -> Self {
        NameRules { names, forbidden: Vec::new() }
    }
}

/// The free grammar for QueryView ([`QueryNames::Free`]): SQL over `view`
/// (whose columns are `columns`) only. `reserved` lists every table and
/// column name of the model; none of them can be used as a name the query
/// defines. [`view_grammar_with`] takes the name rules.
pub fn view_grammar(view: &str, columns: &[String], reserved: &[String], dialect: Dialect) -> String {
    view_grammar_with(view, columns, reserved, dialect, &NameRules::new(QueryNames::Free))
}

/// [`view_grammar`] under the name rules `rules`.
pub fn view_grammar_with(
    view: &str,
    columns: &[String],
    reserved: &[String],
    dialect: Dialect,
    rules: &NameRules,
) -> String {
    build(&[view.to_string()], columns, reserved, dialect, rules, &view_prefixes(columns))
}

/// The first `_`-separated segment of each view column (`CLIENT` of
/// `CLIENT_name`: the table GenerateView named it after), once each.
fn view_prefixes(columns: &[String]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    for c in columns {
        if let Some((head, _)) = c.split_once('_') {
            if !head.is_empty() && !out.iter().any(|o| o.eq_ignore_ascii_case(head)) {
                out.push(head.to_string());
            }
        }
    }
    out
}

/// The free grammar for the direct baseline ([`QueryNames::Free`]): SQL
/// over the model's `tables` (name, columns).
pub fn tables_grammar(tables: &[(String, Vec<String>)], dialect: Dialect) -> String {
    tables_grammar_with(tables, dialect, &NameRules::new(QueryNames::Free))
}

/// [`tables_grammar`] under the name rules `rules`.
pub fn tables_grammar_with(tables: &[(String, Vec<String>)], dialect: Dialect, rules: &NameRules) -> String {
    let names: Vec<String> = tables.iter().map(|(t, _)| t.clone()).collect();
    let cols: Vec<String> = tables.iter().flat_map(|(_, c)| c.iter().cloned()).collect();
    let reserved: Vec<String> = names.iter().chain(&cols).cloned().collect();
    build(&names, &cols, &reserved, dialect, rules, &[])
}

/// `prefixes`: under the strict rules, a table alias (or qualifier) may not
/// start with one of them and `_`, so `CLIENT_CLIENT_name` cannot be begun
/// as a qualifier either.
fn build(
    relations: &[String],
    columns: &[String],
    reserved: &[String],
    dialect: Dialect,
    rules: &NameRules,
    prefixes: &[String],
) -> String {
    let strict = rules.names.is_strict();
    let derived = rules.names == QueryNames::StrictDerived;
    let (scalar, extra_aggs) = dialect_funcs(dialect);
    let aggs: Vec<String> = AGGREGATES.iter().chain(extra_aggs).map(|s| s.to_string()).collect();
    let funcs: Vec<String> = COMMON_FUNCS.iter().chain(scalar).map(|s| s.to_string()).collect();
    // Names a query may not define: keywords, the catalog, every name of
    // the model. (Function names may be aliases: `SUM(x) AS total`.)
    let mut forbidden: Vec<String> = KEYWORDS.iter().chain(SYSTEM_RELATIONS).map(|s| s.to_string()).collect();
    forbidden.extend(relations.iter().cloned());
    forbidden.extend(columns.iter().cloned());
    forbidden.extend(reserved.iter().cloned());
    if strict {
        forbidden.extend(rules.forbidden.iter().cloned());
    }

    // The rules with keyword literals first (they become KW_ terminals),
    // then the per-task names and terminals.
    let mut r = String::new();
    r.push_str(GRAMMAR_HEAD);
    // Two copies of the query rules: without CTEs in scope (FROM names
    // only the allowed relations) and, after a WITH clause, with them
    // (FROM may also name a CTE the query defined).
    // LIKE everywhere, ILIKE in PostgreSQL, GLOB (no ESCAPE) in SQLite.
    let (like, glob) = match dialect {
        Dialect::Postgres | Dialect::Spark => ("(\"LIKE\"i | \"ILIKE\"i)", ""),
        Dialect::Sqlite => ("\"LIKE\"i", "\n    | sum_expr{e} \"NOT\"i? \"GLOB\"i sum_expr{e}"),
        Dialect::Mysql => ("\"LIKE\"i", ""),
    };
    if strict {
        // Without WITH: the select list, WHERE and ON name view columns
        // only, so a name the view lacks cannot be written there.
        r.push_str(&GRAMMAR_QUERY_STRICT.replace("{derived}", if derived { STRICT_DERIVED_TABLE } else { "" }));
    } else {
        r.push_str(&GRAMMAR_QUERY.replace("{s}", "").replace("{k}", "_k").replace("{cte_ref}", ""));
    }
    r.push_str(&GRAMMAR_QUERY.replace("{s}", "_w").replace("{k}", "_kw").replace("{cte_ref}", " | IDENT"));
    let expr = GRAMMAR_EXPR.replace("{like}", like).replace("{glob}", glob);
    // (suffix, subqueries' rules, the column references admitted, the copy
    // of function arguments and CASE conditions)
    let mut copies = vec![
        ("", "", "column_ref", ""),
        ("_w", "_w", "column_ref", "_w"),
        ("_k", "", "", "_k"),
        ("_kw", "_w", "", "_kw"),
    ];
    if strict {
        copies.push(("_v", "", "column_ref_v", "_v"));
    }
    for &(e, q, colref, a) in &copies {
        let colref = if colref.is_empty() { String::new() } else { format!("\n    | {colref}") };
        r.push_str(
            &expr
                .replace("{arith}", ARITH_ANY)
                .replace("{agg}", AGG_ANY)
                .replace("{a}", a)
                .replace("{e}", e)
                .replace("{q}", q)
                .replace("{colref}", &colref),
        );
    }
    r.push_str(GRAMMAR_SHARED);
    if strict {
        r.push_str(
            &GRAMMAR_SHARED_STRICT
                .replace("{after_qualifier}", if derived { "(column_name | IDENT)" } else { "column_name" }),
        );
    }
    for &(e, ..) in &copies {
        if dialect != Dialect::Sqlite {
            r.push_str(&format!("primary_extra{e}: \"EXTRACT\"i \"(\" DATE_UNIT \"FROM\"i expr{e} \")\"\n"));
        } else {
            // SQLite has no EXTRACT.
            r.push_str(&format!("primary_extra{e}: \"CURRENT_TIME\"i\n"));
        }
    }
    if dialect != Dialect::Sqlite {
        r.push_str("interval_lit: \"INTERVAL\"i (STRING | NUMBER DATE_UNIT)\n");
    } else {
        // SQLite has no INTERVAL.
        r.push_str("interval_lit: \"CURRENT_TIME\"i\n");
    }
    let mut g = keyword_terminals(&r);
    g.push_str(&name_rule("relation_name", relations, dialect));
    g.push_str(&name_rule("column_name", columns, dialect));
    g.push_str(&format!("AGG_NAME: {}\n", names_regex(&aggs)));
    g.push_str(&format!("FUNC_NAME: {}\n", names_regex(&funcs)));
    g.push_str(&format!("DATE_UNIT: {}\n", names_regex(&words(DATE_UNITS))));
    // MySQL strings take backslash escapes; standard SQL strings do not.
    // Strict: one line, at most MAX_STRING_CHARS characters.
    if strict {
        let n = MAX_STRING_CHARS;
        if dialect.backslash_escapes() {
            g.push_str(&format!("STRING: /'([^'\\\\\\r\\n]|''|\\\\[^\\r\\n]){{0,{n}}}'/\n"));
        } else {
            g.push_str(&format!("STRING: /'([^'\\r\\n]|''){{0,{n}}}'/\n"));
        }
    } else if dialect.backslash_escapes() {
        g.push_str("STRING: /'([^'\\\\]|''|\\\\.)*'/\n");
    } else {
        g.push_str("STRING: /'([^']|'')*'/\n");
    }
    // Identifiers the query defines: anything name-like that is not a
    // keyword or a name of the model.
    g.push_str(&format!("RESERVED: {}\n", names_regex(&forbidden)));
    let quote = dialect.name_quote().to_string();
    g.push_str(&format!(
        "IDENT: /[A-Za-z_][A-Za-z0-9_]*/ & ~RESERVED | /{q}[A-Za-z_][A-Za-z0-9_ ]*{q}/ & ~QUOTED_RESERVED\n",
        q = escape_regex(&quote)
    ));
    if strict {
        // Table aliases and qualifiers of a query without WITH.
        if prefixes.is_empty() {
            g.push_str("QUAL: IDENT\n");
        } else {
            let heads: Vec<String> = prefixes.iter().map(|p| format!("{}_", ci_regex(p))).collect();
            g.push_str(&format!("QUAL: IDENT & ~/({})[A-Za-z0-9_]*/\n", heads.join("|")));
        }
    }
    let quoted: Vec<String> = forbidden.iter().map(|n| format!("{quote}{n}{quote}")).collect();
    g.push_str(&format!("QUOTED_RESERVED: {}\n", names_regex(&quoted)));
    g.push_str(&format!("TYPE_WORD: {}\n", names_regex(&words(TYPE_WORDS))));
    g
}

fn words(w: &[&str]) -> Vec<String> {
    w.iter().map(|s| s.to_string()).collect()
}

const DATE_UNITS: &[&str] =
    &["year", "month", "day", "hour", "minute", "second", "week", "quarter", "dow", "doy", "epoch"];
const TYPE_WORDS: &[&str] = &[
    "integer",
    "int",
    "bigint",
    "smallint",
    "real",
    "float",
    "double",
    "double precision",
    "numeric",
    "decimal",
    "text",
    "varchar",
    "char",
    "date",
    "datetime",
    "timestamp",
    "boolean",
    "signed",
    "unsigned",
];

/// Keywords that may be followed directly by punctuation (`COUNT(`,
/// `END)`, `NULL,`); every other keyword ends with one whitespace
/// character, so it cannot be glued to the name after it (`SELECTx`,
/// `WITHt AS`), which SQL would read as one identifier.
const MAY_PRECEDE_PUNCTUATION: &[&str] = &[
    "COUNT",
    "CAST",
    "EXTRACT",
    "EXISTS",
    "IN",
    "USING",
    "ANY",
    "ALL",
    "END",
    "NULL",
    "TRUE",
    "FALSE",
    "CURRENT_DATE",
    "CURRENT_TIME",
    "CURRENT_TIMESTAMP",
    "ASC",
    "DESC",
    "FIRST",
    "LAST",
];

/// Replace every keyword literal `"KW"i` by a terminal `KW_KW` matching it
/// in any ASCII case, and define those terminals. (Lark's `"kw"i` is
/// Unicode case-insensitive: it admits `ſelect`.)
fn keyword_terminals(g: &str) -> String {
    let mut out = String::with_capacity(g.len() + 4096);
    let mut defs = std::collections::BTreeMap::new();
    let mut rest = g;
    while let Some(start) = rest.find('"') {
        let after = &rest[start + 1..];
        let end = after.find('"').map(|e| e + start + 1);
        match end {
            Some(end)
                if rest[end + 1..].starts_with('i')
                    && rest[start + 1..end].chars().all(|c| c.is_ascii_alphabetic() || c == '_') =>
            {
                let word = rest[start + 1..end].to_ascii_uppercase();
                out.push_str(&rest[..start]);
                out.push_str(&format!("KW_{word}"));
                let trail = if MAY_PRECEDE_PUNCTUATION.contains(&word.as_str()) { "" } else { "[ \\t\\r\\n]" };
                defs.insert(word.clone(), format!("KW_{word}: /{}{trail}/\n", ci_regex(&word)));
                rest = &rest[end + 2..];
            }
            Some(end) => {
                out.push_str(&rest[..=end]);
                rest = &rest[end + 1..];
            }
            None => break,
        }
    }
    out.push_str(rest);
    for d in defs.values() {
        out.push_str(d);
    }
    out
}

/// Whether `text` is a complete sentence of `grammar`: `Err` says where it
/// stops matching (or why the grammar is invalid). Runs llguidance over
/// single bytes, so no model is needed (tests and the coverage corpus).
pub fn check_text(grammar: &str, text: &str) -> Result<(), String> {
    use llguidance::api::TopLevelGrammar;
    use llguidance::toktrie::ApproximateTokEnv;
    use llguidance::{Matcher, ParserFactory};
    thread_local! {
        static FACTORY: ParserFactory = {
            let mut f = ParserFactory::new_simple(&ApproximateTokEnv::single_byte_env()).expect("byte tokenizer");
            f.set_stderr_log_level(0);
            f
        };
    }
    let parser = FACTORY
        .with(|f| f.create_parser(TopLevelGrammar::from_lark(grammar.to_string())))
        .map_err(|e| format!("invalid grammar: {e}"))?;
    let mut m = Matcher::new(Ok(parser));
    for (i, b) in text.bytes().enumerate() {
        if m.consume_token(b as u32).is_err() || m.is_error() {
            let start = floor_boundary(text, i.saturating_sub(30));
            return Err(format!("rejected at byte {i}: …{}⟨here⟩", &text[start..floor_boundary(text, i)]));
        }
    }
    match m.is_accepting() {
        Ok(true) => Ok(()),
        _ => Err("incomplete: the text ends before the query does".into()),
    }
}

fn floor_boundary(s: &str, mut i: usize) -> usize {
    while i > 0 && !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

/// The dialect-independent part. Whitespace between tokens is bounded (at
/// most 24 characters, once), so no backend can loop on blanks. `relation_name`, `column_name`,
/// `AGG_NAME`, `FUNC_NAME`, `IDENT`, `primary_extra` and `interval_lit` are
/// appended per task.
const GRAMMAR_HEAD: &str = r#"%llguidance {"ignore_once": true}
%ignore /[ \t\r\n]{1,24}/
start: "```sql" (query | with_clause query_w) ";"? "```"
with_clause: "WITH"i "RECURSIVE"i? cte ("," cte)*
cte: IDENT ("(" IDENT ("," IDENT)* ")")? "AS"i "(" query_w ")"
"#;

/// The query rules, instantiated twice (`{s}` = "" and "_w"; `{cte_ref}`
/// adds CTE names to FROM in the second copy; `{k}` names the copy's
/// column-free expressions, [`GRAMMAR_EXPR`]).
///
/// A SELECT that reads columns has a FROM clause; one without FROM selects
/// column-free expressions only (literals, functions of them, scalar
/// subqueries, which have their own FROM). Without FROM no column or name
/// can be in scope, so this refuses no query SQLite would run, and it shuts
/// the path a model takes when the grammar masks the table it wanted: DDO
/// Q18 in session 5 answered `IN (SELECT loc_idFROM LOCATIONWHERE_country_name
/// INTERSECT SELECT …` (names run together into "names the query defines",
/// no FROM) and repeated it to the token limit, twice (243 s).
const GRAMMAR_QUERY: &str = r#"query{s}: compound{s} order_by{s}? limit_clause?
compound{s}: select_core{s} (set_op select_core{s})*
select_core{s}: "SELECT"i ("DISTINCT"i | "ALL"i)? select_item{s} ("," select_item{s})* from_clause{s} where_clause{s}? group_by{s}? having{s}?
    | "SELECT"i ("DISTINCT"i | "ALL"i)? expr{k} ("AS"i? IDENT)? ("," expr{k} ("AS"i? IDENT)?)*
select_item{s}: "*" | qualifier "." "*" | expr{s} ("AS"i? IDENT)?
from_clause{s}: "FROM"i from_item{s} join{s}*
from_item{s}: (relation_name{cte_ref}) ("AS"i? IDENT)? | "(" query{s} ")" ("AS"i? IDENT ("(" IDENT ("," IDENT)* ")")?)?
join{s}: "," from_item{s} | join_kind? "JOIN"i from_item{s} join_cond{s}?
join_cond{s}: "ON"i expr{s} | "USING"i "(" column_ref ("," column_ref)* ")"
where_clause{s}: "WHERE"i expr{s}
group_by{s}: "GROUP"i "BY"i expr{s} ("," expr{s})*
having{s}: "HAVING"i expr{s}
order_by{s}: "ORDER"i "BY"i order_item{s} ("," order_item{s})*
order_item{s}: expr{s} ("ASC"i | "DESC"i)? ("NULLS"i ("FIRST"i | "LAST"i))?
"#;

/// The query rules without WITH under [`QueryNames::Strict`]. The select
/// list, WHERE, ON and USING name the allowed relations' columns,
/// unqualified or after a qualifier (`v.CLIENT_name`); FROM names allowed
/// relations only, no derived table, so a qualifier always stands for one
/// of them and what follows it is one of their columns. A table alias
/// (`QUAL`) does not start like a view column's table (`CLIENT_…`), so a
/// made-up column cannot be begun as a qualifier either. A query that
/// needs a derived table writes it as a CTE (`WITH t AS (…)`, the free
/// copy of the rules). Session 9 measured why: after `t.` the earlier rule
/// admitted any name (a derived table's column), and Spider-style aliases
/// (`lucy_view AS T1`) led the model to `T1.StuID1` and to names run
/// together to the token limit; the derived tables it did write in strict
/// recordings were all runaway nestings (`FROM (SELECT … FROM (SELECT …`).
/// GROUP BY, HAVING and ORDER BY also read select-list aliases, so there
/// any name is admitted. The choice falls where the name is written, with
/// nothing to undo later: a context-free grammar cannot see the FROM clause
/// before the select list. A SELECT without FROM is column-free as in
/// [`GRAMMAR_QUERY`].
const GRAMMAR_QUERY_STRICT: &str = r#"query: compound order_by? limit_clause?
compound: select_core (set_op select_core)*
select_core: "SELECT"i ("DISTINCT"i | "ALL"i)? select_item ("," select_item)* from_clause where_clause? group_by? having?
    | "SELECT"i ("DISTINCT"i | "ALL"i)? expr_k ("AS"i? IDENT)? ("," expr_k ("AS"i? IDENT)?)*
select_item: "*" | qualifier_v "." "*" | expr_v ("AS"i? IDENT)?
from_clause: "FROM"i from_item join*
from_item: relation_name ("AS"i? QUAL)?{derived}
join: "," from_item | join_kind? "JOIN"i from_item join_cond?
join_cond: "ON"i expr_v | "USING"i "(" column_name ("," column_name)* ")"
where_clause: "WHERE"i expr_v
group_by: "GROUP"i "BY"i expr ("," expr)*
having: "HAVING"i expr
order_by: "ORDER"i "BY"i order_item ("," order_item)*
order_item: expr ("ASC"i | "DESC"i)? ("NULLS"i ("FIRST"i | "LAST"i))?
"#;

/// [`QueryNames::StrictDerived`]'s derived table in FROM (session 9's rule).
const STRICT_DERIVED_TABLE: &str = r#" | "(" query ")" ("AS"i? QUAL ("(" IDENT ("," IDENT)* ")")?)?"#;

/// The expression rules, instantiated four times (five under
/// [`QueryNames::Strict`]: `_v`, whose unqualified column references are
/// the allowed relations' columns only): `{e}` is the
/// copy's suffix and `{q}` the query rules its subqueries use ("" and "_w"
/// with column references; "_k" and "_kw", the column-free copies for a
/// SELECT without FROM, with `{colref}` empty). `{a}` is the copy that
/// function arguments, CAST and CASE conditions use (`{e}` itself; typed
/// measures, deleted in session 26, used another); `{agg}` and `{arith}`
/// are [`AGG_ANY`] and [`ARITH_ANY`].
const GRAMMAR_EXPR: &str = r#"expr{e}: or_expr{e}
or_expr{e}: and_expr{e} ("OR"i and_expr{e})*
and_expr{e}: not_expr{e} ("AND"i not_expr{e})*
not_expr{e}: "NOT"i not_expr{e} | predicate{e}
predicate{e}: sum_expr{e}
    | sum_expr{e} comp_op sum_expr{e}
    | sum_expr{e} comp_op ("ANY"i | "ALL"i) "(" query{q} ")"
    | sum_expr{e} "IS"i "NOT"i? ("NULL"i | sum_expr{e})
    | sum_expr{e} "NOT"i? "IN"i "(" (query{q} | expr{e} ("," expr{e})*) ")"
    | sum_expr{e} "NOT"i? "BETWEEN"i sum_expr{e} "AND"i sum_expr{e}
    | sum_expr{e} "NOT"i? {like} sum_expr{e} ("ESCAPE"i STRING)?{glob}
    | "EXISTS"i "(" query{q} ")"
{arith}unary{e}: "-" unary{e} | "+" unary{e} | primary{e}
primary{e}: literal{colref}
    | {agg}
    | "COUNT"i "(" "*" ")"
    | FUNC_NAME "(" (expr{a} ("," expr{a})*)? ")"
    | "(" expr{e} ")"
    | "(" query{q} ")"
    | "CASE"i expr{a}? ("WHEN"i expr{a} "THEN"i expr{e})+ ("ELSE"i expr{e})? "END"i
    | "CAST"i "(" expr{a} "AS"i type_name ")"
    | primary_extra{e}
"#;

/// The arithmetic rules of a copy of [`GRAMMAR_EXPR`] (`{arith}`).
const ARITH_ANY: &str = r#"sum_expr{e}: product{e} (("+" | "-" | "||") product{e})*
product{e}: unary{e} (("*" | "/" | "%") unary{e})*
"#;

/// The aggregate call of a copy of [`GRAMMAR_EXPR`] (`{agg}`).
const AGG_ANY: &str = r#"AGG_NAME "(" "DISTINCT"i? expr{e} ")""#;

/// Rules that do not contain queries.
const GRAMMAR_SHARED: &str = r#"set_op: "UNION"i "ALL"i? | "INTERSECT"i | "EXCEPT"i
join_kind: "LEFT"i "OUTER"i? | "INNER"i | "CROSS"i
limit_clause: "LIMIT"i INT (("OFFSET"i | ",") INT)?
comp_op: "=" | "==" | "!=" | "<>" | "<" | "<=" | ">" | ">="
literal: NUMBER | STRING | "NULL"i | "TRUE"i | "FALSE"i | "CURRENT_DATE"i | "CURRENT_TIMESTAMP"i | interval_lit
column_ref: column_name | IDENT | qualifier "." (column_name | IDENT)
qualifier: relation_name | IDENT
type_name: TYPE_WORD ("(" NUMBER ("," NUMBER)? ")")?
INT: /[0-9]+/
NUMBER: /[0-9]+(\.[0-9]+)?([eE][-+]?[0-9]+)?/
"#;

/// Rules of the strict grammar only.
const GRAMMAR_SHARED_STRICT: &str = r#"column_ref_v: column_name | qualifier_v "." {after_qualifier}
qualifier_v: relation_name | QUAL
"#;

#[cfg(test)]
mod tests;
