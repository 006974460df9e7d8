//! The SQL grammars: coverage on a corpus of QueryView answers over DDO and
//! ACME views (each also accepted by the guard), and refusals of what the
//! guard rejects.

use super::*;
use crate::sql::guard::{check_over_tables, check_query};

/// (table, columns) of a dbModel file, read directly (no validation needed).
fn model_tables(file: &str) -> Vec<(String, Vec<String>)> {
    let path = format!("{}/dbmodels/{file}", env!("CARGO_MANIFEST_DIR"));
    let v: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    v["tables"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| {
            let cols =
                t["columns"].as_array().unwrap().iter().map(|c| c["name"].as_str().unwrap().to_string()).collect();
            (t["name"].as_str().unwrap().to_string(), cols)
        })
        .collect()
}

/// A view over every column of the model, named `TABLE_column` like
/// GenerateView's aliases; and the model's reserved names.
fn wide_view(file: &str) -> (Vec<String>, Vec<String>) {
    let tables = model_tables(file);
    let cols = tables.iter().flat_map(|(t, cs)| cs.iter().map(move |c| format!("{t}_{c}"))).collect();
    let reserved = tables.iter().flat_map(|(t, cs)| std::iter::once(t.clone()).chain(cs.iter().cloned())).collect();
    (cols, reserved)
}

fn corpus(file: &str) -> Vec<String> {
    let path = format!("{}/tests/fixtures/grammar/{file}", env!("CARGO_MANIFEST_DIR"));
    std::fs::read_to_string(path)
        .unwrap()
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.starts_with("--"))
        .map(str::to_string)
        .collect()
}

fn fenced(sql: &str) -> String {
    format!("```sql\n{sql}\n```")
}

fn coverage(model: &str, corpus_file: &str) -> usize {
    let (cols, reserved) = wide_view(model);
    let g = view_grammar("lucy_view", &cols, &reserved, Dialect::Sqlite);
    let queries = corpus(corpus_file);
    let mut failures = Vec::new();
    for q in &queries {
        if let Err(e) = check_query(q, "lucy_view", &cols, Dialect::Sqlite) {
            failures.push(format!("GUARD rejects {q}\n    {e}"));
        }
        if let Err(e) = check_text(&g, &fenced(q)) {
            failures.push(format!("GRAMMAR rejects {q}\n    {e}"));
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} corpus queries fail:\n{}",
        failures.len(),
        queries.len(),
        failures.join("\n")
    );
    queries.len()
}

#[test]
fn corpus_covers_ddo_and_acme_views() {
    let n = coverage("ddo.json", "ddo_view.sql") + coverage("acme.json", "acme_view.sql");
    assert!(n >= 100, "the corpus has only {n} queries");
}

#[test]
fn answer_forms_the_prompt_allows() {
    let (cols, reserved) = wide_view("ddo.json");
    let g = view_grammar("lucy_view", &cols, &reserved, Dialect::Sqlite);
    for text in [
        "```sql\nSELECT CLIENT_name FROM lucy_view;\n```",
        "```sql SELECT CLIENT_name FROM lucy_view```",
        "```sql\n  SELECT\n    CLIENT_name\n  FROM\n    lucy_view\n  WHERE DATACENTER_name LIKE 'dev%';\n```",
    ] {
        check_text(&g, text).unwrap_or_else(|e| panic!("{text:?}: {e}"));
    }
    // No prose around the query, no second statement.
    for text in [
        "Here is the query: ```sql\nSELECT 1\n```",
        "```sql\nSELECT CLIENT_name FROM lucy_view\n``` Done.",
        "```sql\nSELECT 1; SELECT 2\n```",
    ] {
        assert!(check_text(&g, text).is_err(), "accepted {text:?}");
    }
}

/// Every case the guard's tests reject over the Q1 view, and the paper's
/// failure (a join back to a base table), is refused by the grammar too.
#[test]
fn refuses_what_the_guard_rejects() {
    let cols: Vec<String> = ["CLIENT_id", "CLIENT_name", "CLIENT_gender", "DATACENTER_id", "DATACENTER_name"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let (_, reserved) = wide_view("ddo.json");
    let g = view_grammar("lucy_view", &cols, &reserved, Dialect::Sqlite);
    let rejected = [
        "DROP TABLE CLIENT",
        "DELETE FROM lucy_view",
        "INSERT INTO lucy_view VALUES (1)",
        "UPDATE lucy_view SET CLIENT_name = 'x'",
        "CREATE TABLE x AS SELECT * FROM lucy_view",
        "ALTER TABLE CLIENT ADD COLUMN z INT",
        "PRAGMA table_info(CLIENT)",
        "ATTACH DATABASE 'x.db' AS x",
        "VACUUM",
        "SELECT CLIENT_name FROM lucy_view; DROP TABLE CLIENT;",
        "SELECT 1; SELECT 2",
        "SELECT CLIENT_name INTO backup FROM lucy_view",
        "SELECT name FROM CLIENT",
        "SELECT CLIENT_name FROM lucy_view JOIN DATACENTER d ON d.id = DATACENTER_id",
        "SELECT CLIENT_name FROM lucy_view AS T1 JOIN DATACENTER AS T2 ON T1.DATACENTER_loc_id = T2.loc_id",
        "SELECT * FROM pragma_table_info('CLIENT')",
        "SELECT * FROM sqlite_master",
        "SELECT CLIENT_name FROM lucy_view WHERE CLIENT_id IN (SELECT id FROM CLIENT)",
        "SELECT name FROM lucy_view",
        "SELECT CLIENT.name FROM lucy_view",
        "SELECT CLIENT_name FROM lucy_view WHERE DATACENTER_name LIKE \"dev%\"",
        "SELECT load_extension('x') FROM lucy_view",
        "",
        "Here is the query you asked for",
        "WITH CLIENT AS (SELECT CLIENT_id FROM lucy_view) SELECT * FROM CLIENT",
        "SELECT CLIENT_name FROM lucy_view AS DATACENTER",
        "SELECT loc_id FROM lucy_view",
    ];
    for sql in rejected {
        assert!(
            check_query(sql, "lucy_view", &cols, Dialect::Sqlite).is_err()
                || sql.contains("AS DATACENTER")
                || sql.contains("WITH CLIENT"),
            "the guard accepts {sql}"
        );
        assert!(check_text(&g, &fenced(sql)).is_err(), "the grammar accepts {sql}");
    }
    // Left to the guard: a context-free grammar cannot tell an invented
    // name that is no name of the model from an alias the query defines.
    for sql in ["SELECT v.nope FROM lucy_view v", "SELECT nope FROM lucy_view"] {
        assert!(check_query(sql, "lucy_view", &cols, Dialect::Sqlite).is_err(), "the guard accepts {sql}");
        assert!(check_text(&g, &fenced(sql)).is_ok(), "{sql}");
    }
}

/// DDO Q18 in session 5: the model wanted `IN (SELECT loc_id FROM LOCATION
/// WHERE …)`, the grammar masked LOCATION and `loc_id`, and the answer ran
/// words together into "names the query defines" in a SELECT without FROM
/// and repeated it to the token limit. A SELECT without FROM now selects
/// column-free expressions only.
#[test]
fn refuses_names_in_a_select_without_from() {
    let (cols, reserved) = wide_view("ddo.json");
    let g = view_grammar("lucy_view", &cols, &reserved, Dialect::Sqlite);
    let q18 = format!(
        "SELECT DATACENTER_name, COUNT(*) FROM lucy_view WHERE DATACENTER_loc_id IN (SELECT loc_idFROM LOCATIONWHERE_country_name {})",
        " INTERSECT SELECT loc_idFROM LOCATIONWHERE_country_name".repeat(3)
    );
    for sql in [
        q18.as_str(),
        "SELECT loc_idFROM",
        "SELECT CLIENT_name",
        "SELECT COUNT(CLIENT_id)",
        "SELECT 1 AS one, nope",
        "SELECT CLIENT_name FROM lucy_view WHERE CLIENT_id IN (SELECT x UNION SELECT y)",
    ] {
        assert!(check_text(&g, &fenced(sql)).is_err(), "the grammar accepts {sql}");
    }
    // What SQLite runs without FROM stays open: constants, functions of
    // them, scalar subqueries (which read the view in their own FROM).
    for sql in [
        "SELECT 1",
        "SELECT ROUND(100.0 * 3 / 4, 2) AS pct",
        "SELECT (SELECT COUNT(*) FROM lucy_view WHERE CLIENT_gender = 'F') * 1.0 / (SELECT COUNT(*) FROM lucy_view) AS ratio",
        "SELECT CASE WHEN EXISTS (SELECT 1 FROM lucy_view WHERE DATACENTER_name LIKE 'dev%') THEN 'yes' ELSE 'no' END",
        "WITH t AS (SELECT COUNT(*) AS n FROM lucy_view) SELECT (SELECT n FROM t) + 1",
    ] {
        check_query(sql, "lucy_view", &cols, Dialect::Sqlite).unwrap_or_else(|e| panic!("guard: {sql}: {e}"));
        check_text(&g, &fenced(sql)).unwrap_or_else(|e| panic!("{sql}: {e}"));
    }
}

#[test]
fn direct_grammar_allows_model_tables_only() {
    let tables = model_tables("ddo.json");
    let g = tables_grammar(&tables, Dialect::Sqlite);
    let good = [
        "SELECT DISTINCT CLIENT.name, DATACENTER.name FROM DATACENTER JOIN COMPUTE ON COMPUTE.dc_id = DATACENTER.id JOIN RESOURCEPOOL ON RESOURCEPOOL.compute_id = COMPUTE.id JOIN RSPOOL2CLIENT ON RSPOOL2CLIENT.rspool_id = RESOURCEPOOL.id JOIN CLIENT ON CLIENT.id = RSPOOL2CLIENT.client_id WHERE DATACENTER.name LIKE 'dev%'",
        "SELECT c.name FROM CLIENT c LEFT JOIN LOCATION l ON l.id = c.loc_id WHERE l.country = 'France'",
        "SELECT ROUND(SUM(PAYAMOUNT.amount), 2) FROM PAYMENT JOIN PAYAMOUNT ON PAYAMOUNT.pay_id = PAYMENT.id LEFT JOIN TAX ON TAX.payamt_id = PAYAMOUNT.id WHERE TAX.id IS NOT NULL",
    ];
    for q in good {
        check_over_tables(q, &tables, Dialect::Sqlite).unwrap();
        check_text(&g, &fenced(q)).unwrap_or_else(|e| panic!("{q}: {e}"));
    }
    for bad in [
        "SELECT * FROM CUSTOMER",
        "SELECT c.name FROM CLIENT c JOIN sqlite_master m ON 1 = 1",
        "WITH t AS (SELECT 1) SELECT * FROM sqlite_master",
    ] {
        assert!(check_text(&g, &fenced(bad)).is_err(), "the grammar accepts {bad}");
    }
}

#[test]
fn other_dialects_build_valid_grammars() {
    let cols = vec!["CLIENT_name".to_string(), "PAYMENT_date".to_string()];
    let g = view_grammar("lucy_view", &cols, &[], Dialect::Mysql);
    check_text(
        &g,
        &fenced("SELECT `CLIENT_name`, YEAR(PAYMENT_date) FROM lucy_view WHERE CLIENT_name LIKE 'O\\'Brien%'"),
    )
    .unwrap();
    let g = view_grammar("lucy_view", &cols, &[], Dialect::Postgres);
    check_text(&g, &fenced("SELECT \"CLIENT_name\", EXTRACT(YEAR FROM PAYMENT_date) FROM lucy_view WHERE PAYMENT_date > CURRENT_DATE - INTERVAL '30 days'")).unwrap();
}

/// The view columns a recorded QueryView prompt lists (`- NAME (TABLE.col): …`).
fn prompt_columns(prompt: &str) -> Vec<String> {
    let Some(at) = prompt.find("Columns of lucy_view:") else { return Vec::new() };
    prompt[at..]
        .lines()
        .skip(1)
        .take_while(|l| l.starts_with("- "))
        .filter_map(|l| l[2..].split(' ').next().map(str::to_string))
        .collect()
}

/// Every QueryView answer of the committed real-model runs
/// (`benchmarks/cassettes/`, first round and repair) that the guard accepts
/// over its own view, checked against the grammar `rules` build for that
/// view: (answers checked, failures).
fn recorded_answers(rules: &NameRules) -> (usize, Vec<String>) {
    recorded_answers_with(&|_, _| rules.clone())
}

/// [`recorded_answers`] with the rules of each model file (`ddo.json`,
/// `acme.json`) and recorded prompt: `rules_of(model, prompt)`.
fn recorded_answers_with(rules_of: &dyn Fn(&str, &str) -> NameRules) -> (usize, Vec<String>) {
    let mut checked = 0;
    let mut failures = Vec::new();
    for (cassette, model) in
        [("ddo-qwen2.5-coder-1.5b.jsonl", "ddo.json"), ("acme-qwen2.5-coder-1.5b.jsonl", "acme.json")]
    {
        let path = format!("{}/benchmarks/cassettes/{cassette}", env!("CARGO_MANIFEST_DIR"));
        let reserved = wide_view(model).1;
        for line in std::fs::read_to_string(&path).unwrap().lines() {
            let e: serde_json::Value = serde_json::from_str(line).unwrap();
            let phase = e["phase"].as_str().unwrap_or_default();
            if phase != "query_view" && phase != "query_view_repair" {
                continue;
            }
            let prompt = e["messages"][0]["content"].as_str().unwrap_or_default();
            let cols = prompt_columns(prompt);
            assert!(!cols.is_empty(), "{cassette}: a {phase} prompt without its column list");
            let g = view_grammar_with("lucy_view", &cols, &reserved, Dialect::Sqlite, &rules_of(model, prompt));
            for answer in e["response"]["choices"].as_array().into_iter().flatten().filter_map(|c| c.as_str()) {
                let Some((sql, _)) = crate::query::extract::extract_sql(answer) else { continue };
                if check_query(&sql, "lucy_view", &cols, Dialect::Sqlite).is_err() {
                    continue;
                }
                checked += 1;
                if let Err(err) = check_text(&g, &fenced(&sql)) {
                    failures.push(format!("{cassette} {phase}: {sql}\n    {err}"));
                }
            }
        }
    }
    (checked, failures)
}

/// Every recorded answer the guard accepted is admitted by the grammar
/// today's code builds for that view: a grammar change that would have
/// refused what the model wrote and the guard took fails here, with the
/// answer.
#[test]
fn recorded_answers_the_guard_accepted_are_in_the_grammar() {
    let (checked, failures) = recorded_answers(&NameRules::new(QueryNames::Free));
    assert!(
        failures.is_empty(),
        "{} recorded answers the guard accepts are outside the grammar:\n{}",
        failures.len(),
        failures.join("\n")
    );
    assert!(checked >= 15, "only {checked} recorded answers checked");
}

fn strict() -> NameRules {
    NameRules::new(QueryNames::Strict)
}

/// `text` is a prefix some sentence of `grammar` continues (no byte refused).
fn open_prefix(grammar: &str, text: &str) -> bool {
    match check_text(grammar, text) {
        Ok(()) => true,
        Err(e) => e.starts_with("incomplete"),
    }
}

/// The free grammar is the recorded one: its text does not depend on the
/// strict grammar's options (the cassettes key every call on it).
#[test]
fn free_grammar_ignores_the_strict_options() {
    let (cols, reserved) = wide_view("ddo.json");
    let free = view_grammar("lucy_view", &cols, &reserved, Dialect::Sqlite);
    let rules = NameRules { names: QueryNames::Free, forbidden: vec!["CLIENT_CLIENT_name".into()] };
    assert_eq!(free, view_grammar_with("lucy_view", &cols, &reserved, Dialect::Sqlite, &rules));
    let strict = view_grammar_with("lucy_view", &cols, &reserved, Dialect::Sqlite, &strict());
    assert_ne!(free, strict);
}

/// DDO Q1 on the embedded model: `SELECT CLIENT_CLIENT_name,
/// DATACENTER_DATACENTER_name FROM lucy_view …`. Under the strict rules no
/// byte after `SELECT CLIENT_C` can be written: no view column starts so.
#[test]
fn strict_grammar_refuses_a_column_the_view_lacks() {
    let cols: Vec<String> =
        ["CLIENT_id", "CLIENT_name", "DATACENTER_id", "DATACENTER_name"].iter().map(|s| s.to_string()).collect();
    let (_, reserved) = wide_view("ddo.json");
    let free = view_grammar("lucy_view", &cols, &reserved, Dialect::Sqlite);
    let g = view_grammar_with("lucy_view", &cols, &reserved, Dialect::Sqlite, &strict());
    let q1 = "SELECT CLIENT_CLIENT_name, DATACENTER_DATACENTER_name FROM lucy_view WHERE DATACENTER_DATACENTER_name LIKE 'dev%'";
    assert!(check_text(&free, &fenced(q1)).is_ok(), "the free grammar admits it (the recorded hole)");
    let e = check_text(&g, &fenced(q1)).unwrap_err();
    assert!(e.contains("rejected at byte 21"), "{e}");
    assert!(open_prefix(&g, "```sql\nSELECT CLIENT_"));
    assert!(!open_prefix(&g, "```sql\nSELECT CLIENT_C"));
    assert!(!open_prefix(&g, "```sql\nSELECT DISTINCT CLIENT_name, DATACENTER_DATACENTER"));
    assert!(!open_prefix(&g, "```sql\nSELECT CLIENT_name FROM lucy_view WHERE CLIENT_CLIENT"));
    assert!(!open_prefix(&g, "```sql\nSELECT COUNT(DISTINCT DATACENTER_DATA"));
    // Nor begun as a qualifier: a table alias does not start like a view column's table.
    assert!(!open_prefix(&g, "```sql\nSELECT v.CLIENT_name FROM lucy_view AS client_"));
    // Any other name must be a qualifier: `nope` can only go on with `.`.
    assert!(open_prefix(&g, "```sql\nSELECT nope"));
    assert!(!open_prefix(&g, "```sql\nSELECT nope,"));
    for bad in [
        "SELECT nope FROM lucy_view",
        "SELECT CLIENT_name FROM lucy_view v JOIN lucy_view w ON v.CLIENT_id = w.DATACENTER_id AND x = 1",
        "SELECT CLIENT_name AS n FROM lucy_view WHERE n LIKE 'A%'",
        "SELECT MAX(n) FROM (SELECT COUNT(*) AS n FROM lucy_view GROUP BY DATACENTER_id) AS t",
        // After a qualifier, only a view column: Spider's `T1.StuID1`.
        "SELECT T1.CLIENT_name FROM lucy_view AS T1 WHERE T1.CLIENT_name1 = 'x'",
        "SELECT T1.nope FROM lucy_view AS T1",
        // No derived table without WITH (its columns would have to be free).
        "SELECT t.DATACENTER_name, t.n FROM (SELECT DATACENTER_name, COUNT(*) AS n FROM lucy_view GROUP BY DATACENTER_name) AS t WHERE t.n > 1",
    ] {
        assert!(check_text(&g, &fenced(bad)).is_err(), "strict admits {bad}");
        assert!(check_text(&free, &fenced(bad)).is_ok(), "free refuses {bad}");
    }
    // What the query defines stays readable where SQL reads it.
    for good in [
        "SELECT DISTINCT CLIENT_name, DATACENTER_name FROM lucy_view WHERE DATACENTER_name LIKE 'dev%'",
        "SELECT DATACENTER_name, COUNT(DISTINCT CLIENT_id) AS n FROM lucy_view GROUP BY DATACENTER_name HAVING n > 1 ORDER BY n DESC",
        "SELECT CLIENT_name AS c FROM lucy_view GROUP BY c",
        "WITH t AS (SELECT DATACENTER_name, COUNT(*) AS n FROM lucy_view GROUP BY DATACENTER_name) SELECT t.DATACENTER_name, t.n FROM t WHERE t.n > 1",
        "SELECT T1.CLIENT_name FROM lucy_view AS T1 JOIN lucy_view AS T2 ON T1.CLIENT_id = T2.CLIENT_id WHERE T2.DATACENTER_name LIKE 'dev%'",
        "SELECT v.CLIENT_name FROM lucy_view AS v WHERE v.CLIENT_id IN (SELECT w.CLIENT_id FROM lucy_view w WHERE w.DATACENTER_name = v.DATACENTER_name)",
        "WITH t AS (SELECT DATACENTER_name AS d, COUNT(*) AS n FROM lucy_view GROUP BY DATACENTER_name) SELECT d, n FROM t WHERE n > 1",
        "SELECT COUNT(*) FROM lucy_view",
    ] {
        check_query(good, "lucy_view", &cols, Dialect::Sqlite).unwrap_or_else(|e| panic!("guard: {good}: {e}"));
        check_text(&g, &fenced(good)).unwrap_or_else(|e| panic!("{good}: {e}"));
    }
}

/// The repair round's strict grammar forbids the names the guard rejected,
/// also where a name the query defines is still free (a CTE's column).
#[test]
fn strict_repair_grammar_forbids_the_rejected_names() {
    let cols: Vec<String> = ["CLIENT_name", "DATACENTER_name"].iter().map(|s| s.to_string()).collect();
    let sql = "WITH v AS (SELECT CLIENT_name AS CLIENT_CLIENT_name FROM lucy_view) SELECT v.CLIENT_CLIENT_name FROM v";
    let g = view_grammar_with("lucy_view", &cols, &[], Dialect::Sqlite, &strict());
    check_text(&g, &fenced(sql)).unwrap();
    let rules = NameRules { names: QueryNames::Strict, forbidden: vec!["client_client_NAME".into()] };
    let g = view_grammar_with("lucy_view", &cols, &[], Dialect::Sqlite, &rules);
    assert!(check_text(&g, &fenced(sql)).is_err());
    assert!(check_text(&g, &fenced("SELECT CLIENT_name AS CLIENT_CLIENT_name FROM lucy_view")).is_err());
    check_text(&g, &fenced("SELECT v.CLIENT_name FROM lucy_view AS v")).unwrap();
}

/// Strict string literals: one line, at most MAX_STRING_CHARS characters
/// (DDO Q8/Q18 ran an unterminated literal to the token limit).
#[test]
fn strict_string_literals_are_bounded() {
    let cols = vec!["CLIENT_name".to_string()];
    for d in [Dialect::Sqlite, Dialect::Postgres, Dialect::Mysql, Dialect::Spark] {
        let free = view_grammar("lucy_view", &cols, &[], d);
        let g = view_grammar_with("lucy_view", &cols, &[], d, &strict());
        let q = |lit: &str| fenced(&format!("SELECT CLIENT_name FROM lucy_view WHERE CLIENT_name = '{lit}'"));
        check_text(&g, &q(&"x".repeat(MAX_STRING_CHARS))).unwrap_or_else(|e| panic!("{d:?}: {e}"));
        check_text(&g, &q("O''Brien")).unwrap_or_else(|e| panic!("{d:?}: {e}"));
        assert!(check_text(&g, &q(&"x".repeat(MAX_STRING_CHARS + 1))).is_err(), "{d:?}");
        assert!(check_text(&g, &q("two\nlines")).is_err(), "{d:?}");
        assert!(check_text(&free, &q(&"x".repeat(MAX_STRING_CHARS + 1))).is_ok(), "{d:?}");
    }
}

#[test]
fn strict_direct_grammar_names_model_columns() {
    let tables = model_tables("ddo.json");
    let g = tables_grammar_with(&tables, Dialect::Sqlite, &strict());
    let good = "SELECT DISTINCT CLIENT.name, DATACENTER.name FROM DATACENTER JOIN COMPUTE ON COMPUTE.dc_id = DATACENTER.id JOIN RESOURCEPOOL ON RESOURCEPOOL.compute_id = COMPUTE.id JOIN RSPOOL2CLIENT ON RSPOOL2CLIENT.rspool_id = RESOURCEPOOL.id JOIN CLIENT ON CLIENT.id = RSPOOL2CLIENT.client_id WHERE DATACENTER.name LIKE 'dev%'";
    check_text(&g, &fenced(good)).unwrap();
    assert!(check_text(&g, &fenced("SELECT client_name FROM CLIENT")).is_err());
}

/// What the grammars of `rules_of(model file)` refuse of the corpus and of
/// the recorded accepted answers (the counts printed under `label`).
fn refused_under(label: &str, rules_of: &dyn Fn(&str) -> NameRules) -> Vec<String> {
    let mut refused = Vec::new();
    let mut n = 0;
    for (model, file) in [("ddo.json", "ddo_view.sql"), ("acme.json", "acme_view.sql")] {
        let (cols, reserved) = wide_view(model);
        let g = view_grammar_with("lucy_view", &cols, &reserved, Dialect::Sqlite, &rules_of(model));
        for q in corpus(file) {
            n += 1;
            if let Err(e) = check_text(&g, &fenced(&q)) {
                refused.push(format!("{file}: {q}\n    {e}"));
            }
        }
    }
    let corpus_refused = refused.len();
    let (checked, recorded) = recorded_answers_with(&|model, _| rules_of(model));
    eprintln!(
        "{label}: corpus {} of {n} admitted; recorded accepted answers {} of {checked} admitted",
        n - corpus_refused,
        checked - recorded.len()
    );
    refused.extend(recorded);
    refused
}

/// The corpus and the recorded answers under the strict rules: which of
/// them it refuses (and why is in the test's comments), so a change that
/// refuses one more fails here.
#[test]
fn strict_grammar_on_the_corpus_and_the_recordings() {
    let refused = refused_under("strict", &|_| strict());
    let expected = [
        // A derived table's column read without its qualifier (`MAX(n)`):
        // the strict select list names only view columns unqualified.
        "SELECT MAX(n) FROM (SELECT COUNT(DISTINCT CLIENT_id) AS n FROM lucy_view GROUP BY DATACENTER_id) AS sub",
        // Derived tables in FROM (session 10: strict FROM names the view
        // only; the same queries with WITH are admitted). Two hand-written
        // corpus queries; no recorded accepted answer has one.
        "SELECT t.DATACENTER_name, t.n FROM (SELECT DATACENTER_name, COUNT(DISTINCT CLIENT_id) AS n FROM lucy_view",
        "SELECT p.Policy_Policy_Number, p.total FROM (SELECT Policy_Policy_Number, SUM(Claim_Amount_Claim_Amount)",
        // An ACME repair answer reading its own select-list aliases in
        // WHERE (`WHERE Claim_Claim_Identifier_1 = (SELECT MAX(…))`): SQLite
        // reads aliases there, standard SQL, PostgreSQL and MySQL do not,
        // and a strict WHERE names view columns only.
        "WHERE \n  Claim_Claim_Identifier_1 = (SELECT MAX(Claim_Claim_Identifier) FROM lucy_view)",
    ];
    let unexpected: Vec<&String> = refused.iter().filter(|r| !expected.iter().any(|x| r.contains(x))).collect();
    assert!(unexpected.is_empty(), "{} refused:\n{}", unexpected.len(), refused.join("\n"));
}

/// Spark SQL: view columns bare or in backticks, never double-quoted (a
/// double-quoted text is a string in Spark); backslash escapes in strings;
/// Spark's functions; ILIKE.
#[test]
fn spark_grammar_quotes_with_backticks() {
    let cols: Vec<String> = ["CLIENT_name", "DATACENTER_name"].iter().map(|s| s.to_string()).collect();
    for rules in [NameRules { names: QueryNames::Free, forbidden: Vec::new() }, strict()] {
        let g = view_grammar_with("lucy_view", &cols, &[], Dialect::Spark, &rules);
        for good in [
            "SELECT `CLIENT_name` FROM lucy_view WHERE DATACENTER_name ILIKE 'dev%'",
            "SELECT CLIENT_name FROM `lucy_view` WHERE CLIENT_name = 'O\\'Brien'",
            "SELECT concat_ws(', ', collect_list(CLIENT_name)) FROM lucy_view",
            "SELECT date_format(current_date(), 'yyyy-MM') FROM lucy_view",
        ] {
            check_text(&g, &fenced(good)).unwrap_or_else(|e| panic!("{good}: {e}"));
            check_query(good, "lucy_view", &cols, Dialect::Spark).unwrap_or_else(|e| panic!("guard: {good}: {e}"));
        }
        assert!(check_text(&g, &fenced("SELECT \"CLIENT_name\" FROM lucy_view")).is_err());
    }
}
