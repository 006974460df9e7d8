//! TA-SQL (Qu et al., 2024, "Before Generation, Align it!"; `docs/benchmarks.md`,
//! "Seed methods"): task-aligned schema linking (TASL: a dummy SQL over the
//! whole schema as `{table: {column: description}}`, never run; the names it
//! uses are the linked schema), task-aligned logical synthesis (TALOG: a
//! pandas-like symbolic representation, 6-shot), then the SR turned into SQL
//! by the direct baseline's call over the linked tables.
//!
//! Columns the model leaves undescribed get the paper's succinct description
//! (Figure 6), asked once per database and process and reused by every later
//! question (the first question that needs them carries the calls).

use std::collections::{BTreeSet, HashMap};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Instant;

use super::rasl::ask_once;
use super::{direct_over, failure, kind_of, new_trace, no_llm, AskOptions, DirectOutcome, SqlPrompt};
use crate::error::{Error, Result};
use crate::graph::{SchemaGraph, TableId};
use crate::llm::ChatModel;
use crate::prompts::Prompts;
use crate::sql::exec::{run, Database, ExecOptions};
use crate::types::trace::MatchTrace;

/// The paper's token cap per call.
pub const MAX_TOKENS: usize = 800;
/// A generated description is cut to this many characters (the prompt's
/// `assert len(overall_description) <= 100`).
pub const DESCRIPTION_CHARS: usize = 100;

/// Descriptions per table and column, by model identity.
type Descriptions = Arc<Vec<Vec<String>>>;

fn cache() -> &'static Mutex<HashMap<String, Descriptions>> {
    static CACHE: OnceLock<Mutex<HashMap<String, Descriptions>>> = OnceLock::new();
    CACHE.get_or_init(|| Mutex::new(HashMap::new()))
}

/// A model's identity for the description cache: its name and every
/// table's and column's name and description.
fn model_key(graph: &SchemaGraph) -> String {
    use std::hash::{Hash, Hasher};
    let mut h = std::collections::hash_map::DefaultHasher::new();
    for t in &graph.model().tables {
        t.name.hash(&mut h);
        for c in &t.columns {
            c.name.hash(&mut h);
            c.description.hash(&mut h);
        }
    }
    format!("{}#{:016x}", graph.model().name, h.finish())
}

/// A Python/JSON string literal.
fn lit(s: &str) -> String {
    serde_json::to_string(s).unwrap_or_else(|_| "\"\"".into())
}

/// One line, at most `n` characters.
fn clip(s: &str, n: usize) -> String {
    let one: String = s.split_whitespace().collect::<Vec<_>>().join(" ");
    let one = one.trim_matches(|c: char| c == '"' || c == '\'' || c == '`').trim().to_string();
    one.chars().take(n).collect()
}

/// Example values of a column: every distinct value when there are at most
/// 10, else the first 3 (the paper's rule); empty without a database or when
/// the read fails.
fn example_values(db: Option<&Database>, graph: &SchemaGraph, t: TableId, column: &str) -> String {
    let Some(db) = db else { return String::new() };
    let q = db.dialect().name_quote();
    let table = &graph.table(t).name;
    let sql = format!("SELECT DISTINCT {q}{column}{q} FROM {q}{table}{q} WHERE {q}{column}{q} IS NOT NULL LIMIT 11");
    let opts =
        ExecOptions { limit: Some(11), timeout: crate::types::limits::duration(5.0), max_result_bytes: 64 * 1024 };
    let Ok(rows) = run(db, None, &sql, &opts) else { return String::new() };
    let vals: Vec<String> =
        rows.rows.iter().filter_map(|r| r.first()).map(|v| lit(&clip(&v.to_string(), 40))).collect();
    let keep = if vals.len() <= 10 { vals.len() } else { 3 };
    vals[..keep].join(", ")
}

/// Every column's description: the model's where it has one, else the
/// paper's generated one (cached per model for the process).
fn descriptions(
    graph: &SchemaGraph,
    opts: &AskOptions,
    llm: &dyn ChatModel,
    prompts: &Prompts,
    mt: &mut MatchTrace,
) -> Result<Descriptions> {
    let key = model_key(graph);
    if let Some(d) = cache().lock().ok().and_then(|c| c.get(&key).cloned()) {
        return Ok(d);
    }
    let mut out = Vec::new();
    for (t, table) in graph.model().tables.iter().enumerate() {
        let mut cols = Vec::new();
        for c in &table.columns {
            if let Some(d) = c.description.as_deref().filter(|d| !d.trim().is_empty()) {
                cols.push(clip(d, 400));
                continue;
            }
            let vars = serde_json::json!({
                "database": graph.model().name,
                "table": table.name,
                "column": c.name,
                "type": c.sql_type,
                "description": "",
                "values": example_values(opts.execute.as_ref(), graph, t, &c.name),
            });
            let answer =
                ask_once(llm, "tasql_describe", prompts.render("tasql_describe", &vars)?, mt, Some(MAX_TOKENS))?;
            let line = answer.lines().map(str::trim).find(|l| !l.is_empty() && !l.starts_with("```")).unwrap_or("");
            cols.push(clip(line, DESCRIPTION_CHARS));
        }
        out.push(cols);
    }
    let d = Arc::new(out);
    if let Ok(mut c) = cache().lock() {
        c.insert(key, d.clone());
    }
    Ok(d)
}

/// `{table: {column: description}}` of `tables`, in model order.
fn schema_dict(graph: &SchemaGraph, tables: &[TableId], descs: &[Vec<String>]) -> String {
    let parts: Vec<String> = tables
        .iter()
        .map(|&t| {
            let cols: Vec<String> = graph
                .table(t)
                .columns
                .iter()
                .zip(&descs[t])
                .map(|(c, d)| format!("{}: {}", lit(&c.name), lit(d)))
                .collect();
            format!("{}: {{{}}}", lit(graph.name(t)), cols.join(", "))
        })
        .collect();
    format!("{{{}}}", parts.join(",\n "))
}

/// `{table: [primary key]}` of `tables`.
fn primary_keys(graph: &SchemaGraph, tables: &[TableId]) -> String {
    let parts: Vec<String> = tables
        .iter()
        .filter(|&&t| !graph.table(t).primary_key.is_empty())
        .map(|&t| {
            let pk: Vec<String> = graph.table(t).primary_key.iter().map(|c| lit(c)).collect();
            format!("{}: [{}]", lit(graph.name(t)), pk.join(", "))
        })
        .collect();
    format!("{{{}}}", parts.join(", "))
}

/// `{"from.column": "to.column"}` of the relationships among `tables`.
fn foreign_keys(graph: &SchemaGraph, tables: &[TableId]) -> String {
    let names: BTreeSet<String> = tables.iter().map(|&t| graph.name(t).to_ascii_lowercase()).collect();
    let mut parts = Vec::new();
    for r in &graph.model().relationships {
        if !names.contains(&r.from.to_ascii_lowercase()) || !names.contains(&r.to.to_ascii_lowercase()) {
            continue;
        }
        for [a, b] in &r.on {
            parts.push(format!("{}: {}", lit(&format!("{}.{a}", r.from)), lit(&format!("{}.{b}", r.to))));
        }
    }
    format!("{{{}}}", parts.join(", "))
}

/// The dummy SQL of a TASL answer: the text after `SQL = "` or a code
/// fence's body, with the primed `SELECT` put back, cut at the string's end.
pub fn dummy_sql(answer: &str) -> String {
    let mut s = answer.trim();
    if let Some(i) = s.find("```") {
        let body = &s[i + 3..];
        let body = body.strip_prefix("sql").or_else(|| body.strip_prefix("python")).unwrap_or(body);
        s = body.split("```").next().unwrap_or(body);
    }
    if let Some(i) = s.find("SQL = \"") {
        s = &s[i + 7..];
    }
    let s = s.split('"').next().unwrap_or(s).trim();
    if s.get(..6).is_some_and(|p| p.eq_ignore_ascii_case("select")) {
        s.to_string()
    } else {
        format!("SELECT {s}")
    }
}

/// The linked schema of a dummy SQL: the tables it names (and the tables
/// of the columns it qualifies with an alias or table name), and the
/// columns of those tables it names. Names are matched case-insensitively,
/// quotes dropped.
pub fn linked_schema(graph: &SchemaGraph, sql: &str) -> (Vec<TableId>, Vec<(TableId, String)>) {
    let tokens: Vec<String> = sql
        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '.'))
        .filter(|t| !t.is_empty())
        .map(str::to_string)
        .collect();
    let table_of = |name: &str| graph.table_id(name);
    let mut tables: BTreeSet<TableId> = BTreeSet::new();
    let mut alias: HashMap<String, TableId> = HashMap::new();
    for (i, tok) in tokens.iter().enumerate() {
        if let Some(t) = table_of(tok) {
            tables.insert(t);
            let mut j = i + 1;
            if tokens.get(j).is_some_and(|a| a.eq_ignore_ascii_case("as")) {
                j += 1;
            }
            if let Some(a) = tokens.get(j) {
                const KEYWORDS: &[&str] =
                    &["on", "where", "join", "inner", "left", "group", "order", "limit", "natural", "cross", "using"];
                if !KEYWORDS.iter().any(|k| a.eq_ignore_ascii_case(k)) && !a.contains('.') {
                    alias.insert(a.to_ascii_lowercase(), t);
                }
            }
        }
    }
    let mut columns: Vec<(TableId, String)> = Vec::new();
    let add = |t: TableId, c: &str, columns: &mut Vec<(TableId, String)>| {
        if let Some(col) = graph.table(t).columns.iter().find(|x| x.name.eq_ignore_ascii_case(c)) {
            if !columns.iter().any(|(u, n)| *u == t && n == &col.name) {
                columns.push((t, col.name.clone()));
            }
        }
    };
    for tok in &tokens {
        if let Some((q, c)) = tok.rsplit_once('.') {
            let q = q.rsplit('.').next().unwrap_or(q);
            let t = table_of(q).or_else(|| alias.get(&q.to_ascii_lowercase()).copied());
            match t {
                Some(t) => {
                    tables.insert(t);
                    add(t, c, &mut columns);
                }
                None => {
                    for &t in tables.clone().iter() {
                        add(t, c, &mut columns);
                    }
                }
            }
        } else {
            for &t in tables.clone().iter() {
                add(t, tok, &mut columns);
            }
        }
    }
    (tables.into_iter().collect(), columns)
}

/// The SR of a TALOG answer: the text after `SR =`, quotes and fences
/// dropped; an error when nothing is left.
pub fn parse_sr(answer: &str) -> Result<String> {
    let mut s = answer.replace("```python", "").replace("```", "");
    if let Some(i) = s.find("SR =") {
        s = s[i + 4..].to_string();
    }
    let s = s.trim().trim_matches('"').trim();
    // A second `question =` is the model continuing the few-shot pattern.
    let s = s.split("\nquestion =").next().unwrap_or(s).trim().trim_end_matches('"').trim();
    if s.is_empty() {
        return Err(Error::llm("tasql_talog", "answer holds no symbolic representation (SR)"));
    }
    Ok(s.to_string())
}

/// TA-SQL end to end for one question.
pub fn tasql_sql(
    graph: &SchemaGraph,
    question: &str,
    evidence: Option<&str>,
    opts: &AskOptions,
    llm: Option<&dyn ChatModel>,
) -> Result<DirectOutcome> {
    let started = Instant::now();
    let Some(llm) = llm else { return Err(no_llm("the ta-sql method")) };
    let prompts = Prompts::load(opts.prompts_dir.as_deref())?;
    let mut trace = new_trace(graph, "ta-sql", question, opts, Some(llm));
    let mut mt =
        MatchTrace { source: "ta-sql (TASL dummy SQL, TALOG symbolic representation)".into(), ..Default::default() };
    let evidence_text = evidence.unwrap_or("").to_string();
    let linked = (|| -> Result<(Vec<TableId>, String, Descriptions)> {
        let descs = descriptions(graph, opts, llm, &prompts, &mut mt)?;
        let all: Vec<TableId> = (0..graph.len()).collect();
        let vars = serde_json::json!({
            "schema": schema_dict(graph, &all, &descs),
            "primary_keys": primary_keys(graph, &all),
            "foreign_keys": foreign_keys(graph, &all),
            "question": question,
            "evidence": evidence_text,
        });
        let answer =
            ask_once(llm, "tasql_dummy_sql", prompts.render("tasql_dummy_sql", &vars)?, &mut mt, Some(MAX_TOKENS))?;
        let dummy = dummy_sql(&answer);
        let (tables, columns) = linked_schema(graph, &dummy);
        if let Some(s) = mt.steps.last_mut() {
            s.samples = vec![tables.iter().map(|&t| graph.name(t).to_string()).collect()];
        }
        if tables.is_empty() {
            return Err(Error::llm(
                "tasql_dummy_sql",
                format!("the dummy SQL names no table of the model: {:?}", dummy.chars().take(200).collect::<String>()),
            ));
        }
        mt.core_tables = tables.iter().map(|&t| graph.name(t).to_string()).collect();
        mt.attributes =
            columns.iter().map(|(t, c)| crate::types::plan::ColumnRef::new(graph.name(*t), c.as_str())).collect();
        let linked_cols: Vec<String> = columns.iter().map(|(t, c)| format!("{}.{c}", graph.name(*t))).collect();
        let col_desc: Vec<String> = columns
            .iter()
            .map(|(t, c)| {
                let i = graph.table(*t).columns.iter().position(|x| &x.name == c).unwrap_or(0);
                format!("{}: {}", lit(&format!("{}.{c}", graph.name(*t))), lit(&descs[*t][i]))
            })
            .collect();
        let vars = serde_json::json!({
            "column_description": format!("{{{}}}", col_desc.join(", ")),
            "question": question,
            "schema": format!("[{}]", linked_cols.join(", ")),
            "evidence": evidence_text,
        });
        let sr =
            parse_sr(&ask_once(llm, "tasql_talog", prompts.render("tasql_talog", &vars)?, &mut mt, Some(MAX_TOKENS))?)?;
        Ok((tables, sr, descs))
    })();
    let (ids, sr, descs) = match linked {
        Ok(x) => x,
        Err(e) => {
            let f = failure("match_tables", kind_of(&e), e.to_string());
            return Ok(super::phase1_failed(trace, mt, f, started));
        }
    };
    mt.tables = ids.iter().map(|&t| graph.name(t).to_string()).collect();
    mt.cost.ms = started.elapsed().as_secs_f64() * 1000.0;
    trace.match_tables = Some(mt);
    let prompt = SqlPrompt {
        name: "tasql_sql",
        vars: serde_json::json!({
            "schema": schema_dict(graph, &ids, &descs),
            "primary_keys": primary_keys(graph, &ids),
            "foreign_keys": foreign_keys(graph, &ids),
            "question": question,
            "evidence": evidence.unwrap_or(""),
            "sr": sr,
        }),
    };
    direct_over(graph, question, evidence, opts, Some(llm), Some(&ids), trace, started, Some(prompt))
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::graph::fixtures::ddo;

    #[test]
    fn dummy_sql_restores_the_primed_select_and_stops_at_the_string_end() {
        assert_eq!(dummy_sql(" name FROM CLIENT\"\n    return SQL"), "SELECT name FROM CLIENT");
        assert_eq!(dummy_sql("```sql\nSELECT a FROM b\n```"), "SELECT a FROM b");
        assert_eq!(dummy_sql("SQL = \"SELECT x FROM y\""), "SELECT x FROM y");
    }

    #[test]
    fn linked_schema_resolves_aliases_and_bare_columns() {
        let g = ddo();
        let (tables, cols) = linked_schema(
            &g,
            "SELECT T1.name, d.name FROM client AS T1 JOIN RSPOOL2CLIENT r ON T1.id = r.client_id \
             JOIN DATACENTER d WHERE name LIKE 'dev%'",
        );
        let names: Vec<&str> = tables.iter().map(|&t| g.name(t)).collect();
        assert_eq!(names.len(), 3, "{names:?}");
        for n in ["CLIENT", "RSPOOL2CLIENT", "DATACENTER"] {
            assert!(names.contains(&n), "{n} in {names:?}");
        }
        assert!(cols.iter().any(|(t, c)| g.name(*t) == "CLIENT" && c == "name"));
        assert!(cols.iter().any(|(t, c)| g.name(*t) == "DATACENTER" && c == "name"));
        let (none, _) = linked_schema(&g, "SELECT 1");
        assert!(none.is_empty());
    }

    #[test]
    fn sr_parses_or_fails_clearly() {
        let sr =
            parse_sr("SR = \"df1 = df.where(element = CLIENT.name, filter = 'x')\n  res = df1.select(CLIENT.name)\"")
                .unwrap();
        assert!(sr.starts_with("df1 = df.where") && sr.ends_with("select(CLIENT.name)"), "{sr}");
        assert!(parse_sr("SR = \"\"").unwrap_err().to_string().contains("no symbolic representation"));
    }

    #[test]
    fn dicts_are_python_literals_of_the_model() {
        let g = ddo();
        let all: Vec<TableId> = (0..g.len()).collect();
        let descs: Vec<Vec<String>> =
            g.model().tables.iter().map(|t| t.columns.iter().map(|_| "d".to_string()).collect()).collect();
        let s = schema_dict(&g, &all, &descs);
        assert!(s.starts_with("{\"") && s.contains("\"CLIENT\": {"), "{s}");
        assert!(primary_keys(&g, &all).contains("\"CLIENT\": ["));
        assert!(foreign_keys(&g, &all).contains("\"RSPOOL2CLIENT."), "{}", foreign_keys(&g, &all));
    }

    #[test]
    fn three_calls_over_the_linked_tables_and_undescribed_columns_described_once() {
        let mut model = crate::model::load(concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels/ddo.json")).unwrap();
        // DATACENTER's columns lose their descriptions: TA-SQL writes them.
        let dc = model.tables.iter_mut().find(|t| t.name == "DATACENTER").unwrap();
        for c in &mut dc.columns {
            c.description = None;
        }
        let n_dc = dc.columns.len();
        let g = SchemaGraph::new(model).unwrap();
        let llm = crate::llm::fake::FakeChat::new()
            .on(&["convert_schema_to_comprehensive_description"], &["The datacenter's value.\nmore"])
            .on(&["def question_to_SQL"], &[" CLIENT.name, d.name FROM CLIENT JOIN DATACENTER AS d WHERE d.name LIKE 'dev%'\"\n    return SQL"])
            .on(&["SR is a piece of pandas-like code"], &["SR = \"df1 = df.where(element = DATACENTER.name, filter = 'LIKE dev%')\n  res = df1.select(CLIENT.name, DATACENTER.name)\""])
            .on(&["Convert SR into one"], &["```sql\nSELECT name FROM CLIENT\n```"]);
        let opts = AskOptions {
            execute: Some(Database::Sqlite(concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels/ddo.sqlite").into())),
            ..AskOptions::default()
        };
        let out = tasql_sql(&g, "Clients of dev datacenters?", None, &opts, Some(&llm)).unwrap();
        assert!(out.failure.is_none(), "{:?}", out.failure);
        assert_eq!(out.sql.as_deref(), Some("SELECT name FROM CLIENT"));
        let phases = llm.phases();
        let describes = phases.iter().filter(|p| *p == "tasql_describe").count();
        assert_eq!(describes, n_dc, "{phases:?}");
        assert_eq!(&phases[n_dc..], ["tasql_dummy_sql", "tasql_talog", "tasql_sql"]);
        let reqs = llm.requests.lock().unwrap().clone();
        // A described value is one line, and the example values were read.
        assert!(reqs[0].messages[0].content.contains("example_values = [\""), "{}", reqs[0].messages[0].content);
        let dummy = &reqs[n_dc].messages[0].content;
        assert!(dummy.contains("\"The datacenter's value.\"") && dummy.contains("\"RSPOOL2CLIENT\": {"));
        let talog = &reqs[n_dc + 1].messages[0].content;
        assert!(talog.contains("schema = [CLIENT.name, DATACENTER.name]"), "{talog}");
        let sql = &reqs[n_dc + 2].messages[0].content;
        assert!(sql.contains("\"CLIENT\": {") && !sql.contains("\"RSPOOL2CLIENT\": {"), "{sql}");
        assert!(sql.contains("res = df1.select(CLIENT.name, DATACENTER.name)"));
        let mt = out.trace.match_tables.unwrap();
        assert_eq!(mt.tables, vec!["CLIENT", "DATACENTER"]);
        // The second question reuses the descriptions.
        let out = tasql_sql(&g, "Clients of dev datacenters, again?", None, &opts, Some(&llm)).unwrap();
        assert!(out.failure.is_none());
        assert_eq!(llm.phases().iter().filter(|p| *p == "tasql_describe").count(), n_dc);
    }

    #[test]
    fn a_dummy_sql_naming_no_table_fails_in_phase_one() {
        let g = ddo();
        let llm = crate::llm::fake::FakeChat::new().on(&["def question_to_SQL"], &["I cannot answer that."]);
        let out = tasql_sql(&g, "Anything?", None, &AskOptions::default(), Some(&llm)).unwrap();
        let f = out.failure.unwrap();
        assert_eq!((f.phase.as_str(), f.kind.as_str()), ("match_tables", "llm"));
        assert!(f.message.contains("names no table"), "{}", f.message);
        assert!(out.sql.is_none());
    }
}
