//! Prompt templates (minijinja), one file per prompt under `prompts/`.
//!
//! The files are embedded in the binary as defaults; `--prompts DIR`
//! overrides them file by file (`DIR/<name>.j2`). Every template documents
//! its variables in a `{# … #}` header, and rendering is strict: a variable
//! the template uses but the caller did not pass is an error, not an empty
//! string.

use std::path::Path;

use minijinja::{Environment, UndefinedBehavior};
use serde::Serialize;

use crate::error::{Error, Result};
use crate::types::Dialect;

/// Every prompt name, with its embedded default text.
pub const DEFAULTS: &[(&str, &str)] = &[
    ("match_tables", include_str!("../prompts/match_tables.j2")),
    ("pattern_children", include_str!("../prompts/pattern_children.j2")),
    ("attributes", include_str!("../prompts/attributes.j2")),
    ("match_roles", include_str!("../prompts/match_roles.j2")),
    ("query_view", include_str!("../prompts/query_view.j2")),
    ("query_view_schema", include_str!("../prompts/query_view_schema.j2")),
    ("query_plan", include_str!("../prompts/query_plan.j2")),
    ("repair_sql", include_str!("../prompts/repair_sql.j2")),
    ("direct_sql", include_str!("../prompts/direct_sql.j2")),
    ("describe_table", include_str!("../prompts/describe_table.j2")),
    ("crush_hallucinate", include_str!("../prompts/crush_hallucinate.j2")),
    ("fewshot_sql", include_str!("../prompts/fewshot_sql.j2")),
    ("rasl_keywords", include_str!("../prompts/rasl_keywords.j2")),
    ("rasl_tables", include_str!("../prompts/rasl_tables.j2")),
    ("tasql_describe", include_str!("../prompts/tasql_describe.j2")),
    ("tasql_dummy_sql", include_str!("../prompts/tasql_dummy_sql.j2")),
    ("tasql_talog", include_str!("../prompts/tasql_talog.j2")),
    ("tasql_sql", include_str!("../prompts/tasql_sql.j2")),
];

/// A set of prompt templates ready to render.
pub struct Prompts {
    env: Environment<'static>,
    /// Names overridden from a directory (for traces and messages).
    overridden: Vec<String>,
}

impl std::fmt::Debug for Prompts {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Prompts").field("overridden", &self.overridden).finish()
    }
}

fn new_env() -> Environment<'static> {
    let mut env = Environment::new();
    env.set_undefined_behavior(UndefinedBehavior::Strict);
    // Block tags on their own line leave no blank lines behind.
    if let Ok(syntax) = minijinja::syntax::SyntaxConfig::builder().trim_blocks(true).lstrip_blocks(true).build() {
        env.set_syntax(syntax);
    }
    env
}

impl Prompts {
    /// The embedded default templates.
    pub fn embedded() -> Self {
        let mut env = new_env();
        for (name, text) in DEFAULTS {
            // The defaults are compiled in and covered by tests.
            if let Err(e) = env.add_template(name, text) {
                panic!("embedded prompt {name} does not parse: {e}");
            }
        }
        Prompts { env, overridden: Vec::new() }
    }

    /// The defaults, with every `DIR/<name>.j2` that exists replacing its
    /// default. Unknown `.j2` files in `dir` are an error (a typo would
    /// otherwise be silently ignored).
    pub fn with_overrides(dir: &Path) -> Result<Self> {
        let entries = std::fs::read_dir(dir).map_err(|e| Error::io(dir, e))?;
        let mut p = Prompts::embedded();
        let mut files: Vec<std::path::PathBuf> = entries.filter_map(|e| e.ok().map(|e| e.path())).collect();
        files.sort();
        for path in files {
            if path.extension().and_then(|e| e.to_str()) != Some("j2") {
                continue;
            }
            let stem = path.file_stem().and_then(|s| s.to_str()).unwrap_or_default().to_string();
            if !DEFAULTS.iter().any(|(n, _)| *n == stem) {
                let names: Vec<&str> = DEFAULTS.iter().map(|(n, _)| *n).collect();
                return Err(Error::Input(format!(
                    "{}: unknown prompt `{stem}`; prompt files are named {}.j2",
                    path.display(),
                    names.join(".j2, ")
                )));
            }
            let text = crate::error::read_to_string(&path)?;
            p.env
                .add_template_owned(stem.clone(), text)
                .map_err(|e| Error::Input(format!("{}: template does not parse: {e}", path.display())))?;
            p.overridden.push(stem);
        }
        Ok(p)
    }

    /// Defaults, or defaults overridden from `dir` when given.
    pub fn load(dir: Option<&Path>) -> Result<Self> {
        match dir {
            Some(d) => Prompts::with_overrides(d),
            None => Ok(Prompts::embedded()),
        }
    }

    /// Names of the prompts replaced by files.
    pub fn overridden(&self) -> &[String] {
        &self.overridden
    }

    /// Render prompt `name` with the variables of `ctx`.
    pub fn render<S: Serialize>(&self, name: &str, ctx: S) -> Result<String> {
        let t = self.env.get_template(name).map_err(|e| Error::Input(format!("unknown prompt `{name}`: {e}")))?;
        // Strict mode lets filters see undefined values (`undefined | join`
        // renders empty), so check that every variable the template uses is given.
        let given =
            serde_json::to_value(&ctx).map_err(|e| Error::Input(format!("prompt `{name}`: bad variables: {e}")))?;
        if let Some(obj) = given.as_object() {
            let mut missing: Vec<String> =
                t.undeclared_variables(false).into_iter().filter(|v| !obj.contains_key(v)).collect();
            if !missing.is_empty() {
                missing.sort();
                return Err(Error::Input(format!(
                    "prompt `{name}` uses variables that were not given: {}",
                    missing.join(", ")
                )));
            }
        }
        let out = t.render(minijinja::value::Serde(&ctx)).map_err(|e| {
            let origin = if self.overridden.iter().any(|o| o == name) { "overridden" } else { "embedded" };
            Error::Input(format!("prompt `{name}` ({origin}) failed to render: {e:#}"))
        })?;
        Ok(out.trim().to_string() + "\n")
    }

    /// Top-level variables a template uses.
    pub fn variables(&self, name: &str) -> Result<Vec<String>> {
        let t = self.env.get_template(name).map_err(|e| Error::Input(format!("unknown prompt `{name}`: {e}")))?;
        let mut v: Vec<String> = t.undeclared_variables(false).into_iter().collect();
        v.sort();
        Ok(v)
    }
}

/// How a dialect is named in prompts.
pub fn dialect_label(d: Dialect) -> &'static str {
    match d {
        Dialect::Sqlite => "SQLite",
        Dialect::Mysql => "MySQL",
        Dialect::Postgres => "PostgreSQL",
        Dialect::Spark => "Spark SQL",
    }
}

/// What QueryView is told about a server dialect's functions (strings,
/// dates, aggregation, quoting); empty for SQLite, whose prompt stays the
/// paper's PROMPTC.
pub fn dialect_notes(d: Dialect) -> &'static str {
    match d {
        Dialect::Sqlite => "",
        Dialect::Postgres => "PostgreSQL notes: concatenate strings with || or concat(); dates with CURRENT_DATE, EXTRACT(YEAR FROM d), d - INTERVAL '1 day', to_char(d, 'YYYY-MM'), age(); string_agg(x, ', ') instead of group_concat; integer division truncates, so cast to numeric for ratios; unquoted names fold to lower case, so write the view's column names exactly as listed.",
        Dialect::Mysql => "MySQL notes: concatenate strings with CONCAT(a, b) (|| means OR); dates with CURDATE(), YEAR(d), DATE_SUB(d, INTERVAL 1 DAY), DATE_FORMAT(d, '%Y-%m'), DATEDIFF(a, b); GROUP_CONCAT(x SEPARATOR ', '); quote names with backticks, never double quotes; LIMIT n.",
        Dialect::Spark => "Spark SQL notes: concatenate strings with concat(a, b) or ||; dates with current_date(), year(d), month(d), date_sub(d, 1), date_add(d, 1), add_months(d, n), date_format(d, 'yyyy-MM'), datediff(end, start); concat_ws(', ', collect_list(x)) instead of group_concat; quote names with backticks, never double quotes (a double-quoted text is a string); LIMIT n.",
    }
}

/// Variables a template documents in its header: the first word of each
/// indented line under `Variables:`.
pub fn documented_variables(text: &str) -> Vec<String> {
    let header = text.split("#}").next().unwrap_or("");
    let mut in_vars = false;
    let mut out = Vec::new();
    for line in header.lines() {
        let t = line.trim();
        if t.starts_with("Variables:") {
            in_vars = true;
            continue;
        }
        if !in_vars {
            continue;
        }
        if t.starts_with("Answer:") || t.is_empty() {
            in_vars = false;
            continue;
        }
        // Continuation lines are indented deeper than variable lines.
        let indent = line.len() - line.trim_start().len();
        if indent <= 4 {
            if let Some(w) = t.split_whitespace().next() {
                out.push(w.to_string());
            }
        }
    }
    out.sort();
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn fixture(name: &str) -> serde_json::Value {
        let cols = json!([{"alias": "CLIENT_name", "table": "CLIENT", "column": "name", "description": "Client name."},
                          {"alias": "CLIENT_id", "table": "CLIENT", "column": "id", "description": null}]);
        match name {
            "match_tables" => {
                json!({"question": "Q?", "database": "ddo", "schema_json": "{\"CLIENT\": \"x\"}", "elements": ["CLIENT", "DATACENTER"]})
            }
            "pattern_children" => {
                json!({"question": "Q?", "table": "RESOURCEPOOL", "kind": "snowflake", "schema_json": "{}", "elements": ["CONFIG", "name"]})
            }
            "attributes" => {
                json!({"question": "Q?", "table": "CLIENT", "schema_json": "{}", "elements": ["id", "name"], "role": "", "values": []})
            }
            "match_roles" => json!({"question": "Q?", "table": "LOCATION", "summary": "Places.",
                                    "ways": [{"label": "LOCATION@CLIENT.loc_id", "text": "where a client is based"},
                                             {"label": "LOCATION@DATACENTER.loc_id", "text": "where a datacenter is"}],
                                    "elements": ["LOCATION@CLIENT.loc_id", "LOCATION@DATACENTER.loc_id"], "subtypes": false}),
            "query_view" => {
                json!({"question": "Q?", "dialect": "SQLite", "dialect_notes": "", "view_name": "lucy_view", "view_sql": "CREATE VIEW lucy_view AS SELECT 1", "columns": cols, "evidence": "", "examples": [], "values": [], "hints": []})
            }
            "query_view_schema" => {
                json!({"question": "Q?", "dialect": "SQLite", "dialect_notes": "MySQL notes: …", "view_name": "lucy_view", "view_sql": "CREATE VIEW v", "columns": cols, "schema": "CREATE TABLE CLIENT(id)", "evidence": "dev means development",
                       "examples": [{"question": "Q0?", "sql": "SELECT CLIENT_name FROM lucy_view"}],
                       "hints": ["\"client name\": CLIENT_name"]})
            }
            "query_plan" => {
                let cols = json!([{"alias": "CLIENT_name", "table": "CLIENT", "column": "name", "source": null, "kind": "text", "measure": false, "description": "Client name."},
                                  {"alias": "PAYMENT_amount", "table": "PAYMENT", "column": "amount", "source": null, "kind": "number", "measure": true, "description": null}]);
                let tables = json!([{"name": "CLIENT", "note": null}, {"name": "PAYMENT", "note": null}]);
                json!({"question": "Q?", "view_name": "lucy_view", "columns": cols, "tables": tables, "evidence": "",
                       "values": ["CLIENT_name: 'Acme'"], "hints": [], "bucket": true})
            }
            "repair_sql" => {
                json!({"sql": "SELECT x", "error": "no x", "dialect": "SQLite", "allowed": "the view lucy_view"})
            }
            "direct_sql" => {
                json!({"question": "Q?", "dialect": "MySQL", "ddl": "CREATE TABLE A(id INT);", "evidence": ""})
            }
            "describe_table" => {
                json!({"table": "Loan", "columns": [{"name": "id", "type": "INTEGER", "description": ""}], "max_words": 15})
            }
            "crush_hallucinate" => json!({"question": "Q?"}),
            "rasl_keywords" => json!({"question": "Q?"}),
            "rasl_tables" => {
                json!({"question": "Q?", "database": "ddo", "schema": "CREATE TABLE CLIENT(id INT);", "evidence": ""})
            }
            "fewshot_sql" => {
                json!({"question": "Q?", "dialect": "SQLite", "ddl": "CREATE TABLE A(id INT);", "evidence": "",
                                    "examples": [{"question": "How many A?", "sql": "SELECT COUNT(*) FROM A"}]})
            }
            "tasql_describe" => json!({"database": "ddo", "table": "CLIENT", "column": "name", "type": "TEXT",
                                       "description": "", "values": "\"acme\", \"globex\""}),
            "tasql_dummy_sql" => json!({"schema": "{\"CLIENT\": {\"name\": \"client name\"}}", "primary_keys": "{}",
                                        "foreign_keys": "{}", "question": "Q?", "evidence": ""}),
            "tasql_talog" => json!({"column_description": "{\"CLIENT.name\": \"client name\"}", "question": "Q?",
                                    "schema": "[CLIENT.name]", "evidence": ""}),
            "tasql_sql" => json!({"schema": "{\"CLIENT\": {\"name\": \"client name\"}}", "primary_keys": "{}",
                                  "foreign_keys": "{}", "question": "Q?", "evidence": "", "sr": "res = df.select(CLIENT.name)",
                                  "dialect": "SQLite"}),
            other => panic!("no fixture for {other}"),
        }
    }

    #[test]
    fn every_template_documents_exactly_the_variables_it_uses() {
        let p = Prompts::embedded();
        for (name, text) in DEFAULTS {
            let used = p.variables(name).unwrap();
            let documented = documented_variables(text);
            assert_eq!(used, documented, "{name}: used vs documented variables");
        }
    }

    #[test]
    fn every_template_renders_with_its_documented_variables_and_fails_without() {
        let p = Prompts::embedded();
        for (name, text) in DEFAULTS {
            let ctx = fixture(name);
            let out = p.render(name, &ctx).unwrap();
            assert!(!out.contains("{{") && !out.contains("{#"), "{name}: {out}");
            assert!(out.len() > 40, "{name}");
            for var in documented_variables(text) {
                let mut partial = ctx.clone();
                partial.as_object_mut().unwrap().remove(&var);
                assert!(p.render(name, &partial).is_err(), "{name} renders without `{var}`");
            }
        }
    }

    #[test]
    fn prompts_carry_the_papers_instructions() {
        let p = Prompts::embedded();
        let mt = p.render("match_tables", fixture("match_tables")).unwrap();
        assert!(mt.contains("[CLIENT, DATACENTER]") && mt.contains("Do not explain") && mt.contains("list"));
        let qv = p.render("query_view", fixture("query_view")).unwrap();
        assert!(qv.contains("SQLite query") && qv.contains("NO column renaming") && qv.contains("```sql"));
        assert!(qv.contains("- CLIENT_name (CLIENT.name): Client name.\n- CLIENT_id (CLIENT.id)\n"), "{qv}");
        let qs = p.render("query_view_schema", fixture("query_view_schema")).unwrap();
        assert!(qs.contains("Additional knowledge to answer: dev means development"));
        // The name hints sit after the evidence, just before the question.
        assert!(
            qs.contains("Columns that words of the question name:\n- \"client name\": CLIENT_name\nThe question: Q?"),
            "{qs}"
        );
        assert!(!qv.contains("Columns that words of the question name"), "{qv}");
        let d = p.render("direct_sql", fixture("direct_sql")).unwrap();
        assert!(d.contains("MySQL query") && !d.contains("Additional knowledge"));
    }

    #[test]
    fn overrides_replace_single_files_and_reject_unknown_names() {
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join("attributes.j2"), "ATTRS of {{ table }}").unwrap();
        let p = Prompts::with_overrides(dir.path()).unwrap();
        assert_eq!(p.render("attributes", fixture("attributes")).unwrap(), "ATTRS of CLIENT\n");
        assert!(p.render("match_tables", fixture("match_tables")).unwrap().contains("JSON schema"));
        assert_eq!(p.overridden(), ["attributes"]);
        std::fs::write(dir.path().join("atributes.j2"), "x").unwrap();
        let e = Prompts::with_overrides(dir.path()).unwrap_err().to_string();
        assert!(e.contains("unknown prompt `atributes`"), "{e}");
        assert!(Prompts::with_overrides(Path::new("/nonexistent/prompts")).is_err());
    }
}
