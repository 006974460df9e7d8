//! QueryView with scripted answers over a hand-written Q1 view.

use super::*;
use crate::llm::fake::FakeChat;
use crate::sql::exec::SqlValue;

const DB: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels/ddo.sqlite");

fn q1_view() -> ViewResult {
    let select = "SELECT CLIENT.id AS CLIENT_id, CLIENT.name AS CLIENT_name, DATACENTER.id AS DATACENTER_id, DATACENTER.name AS DATACENTER_name FROM DATACENTER JOIN COMPUTE ON DATACENTER.id = COMPUTE.dc_id JOIN RESOURCEPOOL ON COMPUTE.id = RESOURCEPOOL.compute_id JOIN RSPOOL2CLIENT ON RESOURCEPOOL.id = RSPOOL2CLIENT.rspool_id JOIN CLIENT ON CLIENT.id = RSPOOL2CLIENT.client_id";
    let body = crate::types::ViewBody { name: "lucy_view".into(), select: select.into() };
    let cols = [
        ("CLIENT_id", "CLIENT", "id"),
        ("CLIENT_name", "CLIENT", "name"),
        ("DATACENTER_id", "DATACENTER", "id"),
        ("DATACENTER_name", "DATACENTER", "name"),
    ];
    let columns: Vec<serde_json::Value> =
        cols.iter().map(|(a, t, c)| serde_json::json!({"alias": a, "table": t, "column": c})).collect();
    let mut view: ViewResult = serde_json::from_value(serde_json::json!({
        "status": "optimal", "tables": [], "joins": [], "objective": 3.0, "path_length": 5, "solve_ms": 0.0,
        "view_name": "lucy_view", "view_sql": body.create_sql(), "columns": columns, "walk": []
    }))
    .unwrap();
    view.body = Some(body);
    view
}

fn task<'a>(view: &'a ViewResult, execute: bool) -> SqlTask<'a> {
    let (name, prompt) = view_prompt(&Prompts::embedded(), view, "Q1?", Dialect::Sqlite, None, None).unwrap();
    SqlTask {
        fanout: None,
        model_check: None,
        prompt_name: name,
        prompt,
        allowed: Allowed::View {
            name: view.view_name.clone(),
            columns: view.columns.iter().map(|c| c.alias.clone()).collect(),
        },
        dialect: Dialect::Sqlite,
        temperature: 0.2,
        execute: execute.then(|| ExecTarget {
            db: Box::leak(Box::new(crate::sql::exec::Database::Sqlite(DB.into()))),
            view: view.body.as_ref(),
            limit: None,
            timeout: Duration::from_secs(30),
            max_result_bytes: crate::sql::exec::DEFAULT_MAX_RESULT_BYTES,
        }),
        grammar: None,
        repair_grammar: None,
        distinct: None,
        counted: None,
        grounding: None,
        rename: None,
        feedback: crate::query::Feedback::default(),
    }
}

const GOOD: &str =
    "```sql\nSELECT DISTINCT CLIENT_name, DATACENTER_name FROM lucy_view WHERE DATACENTER_name LIKE 'dev%'\n```";

#[test]
fn accepted_first_time_and_executed() {
    let v = q1_view();
    let chat = FakeChat::new().on(&["I created a view table lucy_view"], &[GOOD]);
    let mut t = QueryTrace::default();
    let o = generate_sql(&task(&v, true), &chat, &Prompts::embedded(), &mut t).unwrap();
    let rows = o.rows.unwrap();
    assert_eq!(rows.columns, ["CLIENT_name", "DATACENTER_name"]);
    assert_eq!(rows.rows.len(), 29, "dbmodels/README.md lists 29 pairs");
    assert!(rows.rows.contains(&vec![SqlValue::Text("Juniper Labs".into()), SqlValue::Text("dev-apac-2".into())]));
    assert_eq!(t.attempts.len(), 1);
    assert!(!t.repaired);
    assert_eq!(t.attempts[0].extraction, "sql_fence");
    assert_eq!(t.attempts[0].execution.as_ref().unwrap().row_count, 29);
    // QueryView's answers are capped (a rambling answer cannot run to the
    // backend's default), by the view's size: 4 columns, 192 + 4 × 12.
    assert_eq!(chat.requests.lock().unwrap()[0].max_tokens, Some(240));
    let wide = Allowed::View { name: "v".into(), columns: (0..100).map(|i| format!("c{i}")).collect() };
    assert_eq!(wide.max_tokens(), QUERY_VIEW_MAX_TOKENS);
}

#[test]
fn drop_table_gets_one_repair_round_and_is_never_run() {
    let v = q1_view();
    let chat = FakeChat::new()
        .on(&["cannot be used"], &[GOOD])
        .on(&["I created a view table"], &["```sql\nDROP TABLE CLIENT;\n```"]);
    let mut t = QueryTrace::default();
    let o = generate_sql(&task(&v, true), &chat, &Prompts::embedded(), &mut t).unwrap();
    assert_eq!(o.rows.unwrap().rows.len(), 29);
    assert!(t.repaired);
    assert_eq!(
        t.attempts[0].validation.error.as_deref().unwrap(),
        "only a read-only SELECT is allowed, got DROP TABLE"
    );
    assert!(t.attempts[0].execution.is_none(), "a rejected statement is never executed");
    let repair = &t.attempts[1].call.messages;
    assert_eq!(repair.len(), 3);
    assert_eq!(repair[1].role, "assistant");
    assert!(repair[2].content.contains("DROP TABLE CLIENT;") && repair[2].content.contains("read-only SELECT"));
    assert_eq!(t.attempts[1].call.phase, "query_view_repair");
    // The database is intact.
    let n =
        crate::sql::exec::run_readonly(std::path::Path::new(DB), None, "SELECT count(*) FROM CLIENT", None).unwrap();
    assert!(matches!(n.rows[0][0], SqlValue::Integer(k) if k > 0));
}

#[test]
fn still_invalid_after_repair_is_a_clear_error() {
    let v = q1_view();
    let chat = FakeChat::new()
        .on(&["cannot be used"], &["SELECT CLIENT_name FROM lucy_view; DELETE FROM CLIENT"])
        .on(&["I created a view table"], &["```sql\nSELECT name FROM lucy_view\n```"]);
    let mut t = QueryTrace::default();
    let e = generate_sql(&task(&v, true), &chat, &Prompts::embedded(), &mut t).unwrap_err();
    assert!(e.to_string().contains("exactly one statement, found 2"), "{e}");
    assert_eq!(t.attempts.len(), 2, "exactly one repair round");
    assert!(t.attempts[0]
        .validation
        .error
        .as_deref()
        .unwrap()
        .contains("column `name` is not a column of the view lucy_view"));
    assert!(t.attempts.iter().all(|a| a.execution.is_none()));
    assert!(t.sql.is_none());
}

#[test]
fn execution_errors_are_repaired_too() {
    let v = q1_view();
    // Valid for the guard, but fails in SQLite (unknown function).
    let chat = FakeChat::new()
        .on(&["cannot be used"], &[GOOD])
        .on(&["I created a view table"], &["SELECT no_such_fn(CLIENT_name) FROM lucy_view"]);
    let mut t = QueryTrace::default();
    generate_sql(&task(&v, true), &chat, &Prompts::embedded(), &mut t).unwrap();
    let ex = t.attempts[0].execution.as_ref().unwrap();
    assert!(!ex.ok && ex.error.as_deref().unwrap().contains("no_such_fn"));
    assert!(t.repaired);
}

#[test]
fn no_sql_in_answer_and_pragma_attach() {
    let v = q1_view();
    for bad in ["I cannot answer this question.", "PRAGMA writable_schema = 1", "ATTACH DATABASE '/tmp/x.db' AS x"] {
        let chat = FakeChat::new()
            .on(&["I created a view table"], &[bad])
            .on(&["cannot be used"], &[bad])
            .on(&["could not find a SQL query"], &[bad]);
        let mut t = QueryTrace::default();
        let e = generate_sql(&task(&v, true), &chat, &Prompts::embedded(), &mut t).unwrap_err();
        assert!(matches!(e, Error::Sql(_)), "{bad}: {e}");
        assert_eq!(t.attempts.len(), 2);
        assert!(t.attempts.iter().all(|a| a.execution.is_none()), "{bad}");
    }
}

#[test]
fn schema_context_uses_prompt_c_prime() {
    let v = q1_view();
    let (name, p) = view_prompt(
        &Prompts::embedded(),
        &v,
        "Q?",
        Dialect::Mysql,
        Some("CREATE TABLE CLIENT(id INT);"),
        Some("dev = development"),
    )
    .unwrap();
    assert_eq!(name, "query_view_schema");
    assert!(p.contains("MySQL query") && p.contains("CREATE TABLE CLIENT") && p.contains("dev = development"));
    assert!(p.contains("GROUP_CONCAT(x SEPARATOR") && p.contains("backticks"), "{p}");
    let (_, p) = view_prompt(&Prompts::embedded(), &v, "Q?", Dialect::Postgres, None, None).unwrap();
    assert!(
        p.contains("PostgreSQL notes:") && p.contains("string_agg") && p.contains("about.\nPostgreSQL notes"),
        "{p}"
    );
    let (name, p) =
        view_prompt(&Prompts::embedded(), &v, "Q?", Dialect::Sqlite, None, Some("dev = development")).unwrap();
    assert_eq!(name, "query_view");
    assert!(p.contains("Additional knowledge to answer: dev = development"));
    assert!(!p.contains("notes:") && p.contains("asks about.\nOutput one query"), "SQLite keeps PROMPTC: {p}");
    let (_, p) = view_prompt(&Prompts::embedded(), &v, "Q?", Dialect::Sqlite, None, None).unwrap();
    assert!(!p.contains("Additional knowledge"));
}

#[test]
fn the_repair_message_is_bounded_whatever_the_rejection_says() {
    // A garbled answer naming hundreds of unknown columns: the guard lists
    // the view's columns with each, so its reason runs to tens of thousands
    // of characters; the repair message quotes a bounded cut of it.
    let v = q1_view();
    let garbled: Vec<String> = (0..300).map(|i| format!("T{i}.CLIENT_nameAS_{i}_DATACENTER")).collect();
    let bad = format!("```sql\nSELECT {} FROM lucy_view\n```", garbled.join(", "));
    let chat = FakeChat::new().on(&["I created a view table"], &[bad.as_str()]).on(&["cannot be used"], &[GOOD]);
    let mut t = QueryTrace::default();
    generate_sql(&task(&v, false), &chat, &Prompts::embedded(), &mut t).unwrap();
    assert!(t.repaired);
    let first_error = t.attempts[0].validation.error.clone().unwrap();
    assert!(first_error.chars().count() > 2 * REPAIR_ERROR_CHARS, "the reason itself is long: {}", first_error.len());
    let repair = &t.attempts[1].call.messages[2].content;
    let bound = REPAIR_ERROR_CHARS + REPAIR_SQL_CHARS + 1_000;
    assert!(repair.chars().count() < bound, "{} characters", repair.chars().count());
    assert!(repair.contains("characters)"), "a cut says how long the text was");
    assert!(repair.contains("T0.CLIENT_nameAS_0_DATACENTER"), "the first problem is kept");
}

const Q1_DOUBLED: &str = "```sql\nSELECT DISTINCT CLIENT_CLIENT_name, DATACENTER_DATACENTER_name FROM lucy_view WHERE DATACENTER_DATACENTER_name LIKE 'dev%'\n```";

/// DDO Q1 on the embedded model: names with their table written twice. The
/// rename makes them the view's columns before any repair call.
#[test]
fn rename_turns_doubled_table_prefixes_into_the_view_columns() {
    let v = q1_view();
    let chat = FakeChat::new().on(&["cannot be used"], &[Q1_DOUBLED]).on(&["I created a view table"], &[Q1_DOUBLED]);
    let mut t = QueryTrace::default();
    let mut task = task(&v, true);
    task.rename = Some(&v.columns);
    let o = generate_sql(&task, &chat, &Prompts::embedded(), &mut t).unwrap();
    assert_eq!(o.rows.unwrap().rows.len(), 29);
    assert_eq!(
        o.checked.sql,
        "SELECT DISTINCT CLIENT_name, DATACENTER_name FROM lucy_view WHERE DATACENTER_name LIKE 'dev%'"
    );
    assert_eq!(chat.requests.lock().unwrap().len(), 1, "no repair call");
    assert_eq!(t.attempts.len(), 2);
    assert!(!t.attempts[0].validation.ok);
    assert_eq!(t.attempts[1].extraction, "renamed");
    assert_eq!(t.attempts[1].call.phase, "query_view_rename");
    assert!(t.attempts[1].validation.ok);
    assert!(!t.repaired);
}

/// Without the rename the model's repair repeated the refused SQL: that is
/// not a new attempt, and the failure says so.
#[test]
fn a_repair_that_repeats_the_rejected_sql_is_not_run_again() {
    let v = q1_view();
    let again = Q1_DOUBLED.replace("SELECT DISTINCT", "SELECT  DISTINCT").replace("'\n```", "';\n```");
    let chat =
        FakeChat::new().on(&["cannot be used"], &[again.as_str()]).on(&["I created a view table"], &[Q1_DOUBLED]);
    let mut t = QueryTrace::default();
    let e = generate_sql(&task(&v, true), &chat, &Prompts::embedded(), &mut t).unwrap_err().to_string();
    assert!(e.contains("the repair round returned the rejected SQL unchanged"), "{e}");
    assert!(e.contains("CLIENT_CLIENT_name"), "the first refusal is kept: {e}");
    assert_eq!(t.attempts.len(), 2);
    assert_eq!(t.attempts[1].extraction, "repeated");
    assert!(t.attempts[1].execution.is_none());
}

/// A name several view columns fit is not guessed: the trace says so and
/// the repair round runs.
#[test]
fn an_ambiguous_name_is_noted_and_left_to_the_repair() {
    let v = q1_view();
    let chat = FakeChat::new()
        .on(&["cannot be used"], &[GOOD])
        .on(&["I created a view table"], &["```sql\nSELECT name FROM lucy_view\n```"]);
    let mut t = QueryTrace::default();
    let mut task = task(&v, true);
    task.rename = Some(&v.columns);
    generate_sql(&task, &chat, &Prompts::embedded(), &mut t).unwrap();
    assert!(t.repaired);
    assert_eq!(t.attempts.len(), 2);
    let note = t.attempts[0].validation.error.as_deref().unwrap();
    assert!(note.contains("rename: `name` is ambiguous: it could be CLIENT_name, DATACENTER_name"), "{note}");
    // The repair prompt quotes the guard's reason only, as recorded.
    assert!(!t.attempts[1].call.messages[2].content.contains("rename:"));
}

/// Strict names: the repair round's grammar forbids the names the guard
/// rejected; the first round's is the task's.
#[test]
fn strict_repair_grammar_forbids_the_rejected_names() {
    use grammar::{check_text, view_grammar_with, QueryNames};
    let v = q1_view();
    let bad = "SELECT v.CLIENT_CLIENT_name FROM lucy_view AS v";
    let chat = FakeChat::new()
        .on(&["cannot be used"], &[GOOD])
        .on(&["I created a view table"], &[format!("```sql\n{bad}\n```").as_str()]);
    let mut t = QueryTrace::default();
    let mut task = task(&v, false);
    let cols: Vec<String> = v.columns.iter().map(|c| c.alias.clone()).collect();
    // strict-derived: a qualified name is free there, so only the repair's
    // forbidden names keep the rejected one out.
    let rules = NameRules::new(QueryNames::StrictDerived);
    task.grammar = Some(view_grammar_with("lucy_view", &cols, &[], Dialect::Sqlite, &rules));
    task.repair_grammar = Some(RepairGrammar { reserved: Vec::new(), rules });
    generate_sql(&task, &chat, &Prompts::embedded(), &mut t).unwrap();
    let reqs = chat.requests.lock().unwrap();
    let (first, repair) = (reqs[0].grammar.clone().unwrap(), reqs[1].grammar.clone().unwrap());
    let fenced = format!("```sql\n{bad}\n```");
    check_text(&first, &fenced).unwrap();
    assert!(check_text(&repair, &fenced).is_err(), "the repair grammar admits the rejected name");
    check_text(&repair, GOOD).unwrap();
}

mod never_panics {
    use super::*;
    use crate::sql::guard::check_query;
    use proptest::prelude::*;

    fn cols() -> Vec<String> {
        ["CLIENT_id", "CLIENT_name", "DATACENTER_name"].iter().map(|s| s.to_string()).collect()
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(300))]
        /// Extraction, then the guard, on whatever an LLM might answer (the
        /// guard's own properties are in `sql::guard`'s tests).
        #[test]
        fn extraction_on_arbitrary_text(s in "\\PC{0,200}") {
            if let Some((sql, _)) = extract::extract_sql(&s) {
                let _ = check_query(&sql, "lucy_view", &cols(), Dialect::Sqlite);
            }
        }

        #[test]
        fn extraction_on_sql_like_text(s in "(SELECT|WITH|DROP|PRAGMA|;|\\(|\\)|,|\\*|lucy_view|CLIENT_name|FROM|WHERE|AS|x|'a'|\"b\"|\\[|\\]|```sql|\n| ){0,30}") {
            if let Some((sql, _)) = extract::extract_sql(&s) {
                let _ = check_query(&sql, "lucy_view", &cols(), Dialect::Postgres);
                let unknown = crate::sql::guard::unknown_columns(&sql, &[("lucy_view".into(), cols())], Dialect::Sqlite);
                let _ = rename::rename_unknown(&sql, &unknown, &q1_view().columns, Dialect::Sqlite);
            }
        }
    }
}

/// RASL's follow-ups: when every follow-up after an empty result fails,
/// the last query that ran is the answer, and the trace says a follow-up
/// wrote it.
#[test]
fn the_last_empty_result_is_the_answer_when_later_follow_ups_fail() {
    let v = q1_view();
    let empty = "```sql\nSELECT CLIENT_name FROM lucy_view WHERE DATACENTER_name = 'nowhere'\n```";
    let empty_again = "```sql\nSELECT CLIENT_name FROM lucy_view WHERE DATACENTER_name = 'nowhere either'\n```";
    let chat = FakeChat::new()
        .on(&["returned no rows", "'nowhere either'"], &["```sql\nDROP TABLE CLIENT;\n```"])
        .on(&["returned no rows", "'nowhere'"], &[empty_again])
        .on(&["I created a view table"], &[empty]);
    let mut tk = task(&v, true);
    tk.feedback = Feedback::RASL;
    let mut t = QueryTrace::default();
    let o = generate_sql(&tk, &chat, &Prompts::embedded(), &mut t).unwrap();
    assert!(o.rows.unwrap().rows.is_empty());
    assert!(o.checked.sql.contains("nowhere either"), "{}", o.checked.sql);
    assert_eq!(t.attempts.len(), 3);
    assert!(t.repaired, "the first follow-up wrote the answer");
    assert_eq!(chat.requests.lock().unwrap().len(), 3);
}

#[test]
fn descriptions_are_cut_at_a_word() {
    assert_eq!(super::cut_description("short", 60), "short");
    assert_eq!(
        super::cut_description("Policy number shown to customers and used in reports (e.g. 31003000336).", 40),
        "Policy number shown to customers and…"
    );
    assert_eq!(super::cut_description("abcdefghij", 4), "abcd…");
    assert!(super::cut_description(&"é".repeat(100), 10).starts_with("éééééééééé"));
}

/// A scripted looping answer (the recorded DDO loop: two names with 23 and
/// 24 blanks in turn) is stopped early by the repetition stop, reported as
/// cut, and repaired once: the follow-up names the cut and shows the answer
/// only up to the loop, never the loop again.
#[test]
fn a_looping_answer_stops_early_and_is_repaired_with_the_cut_named() {
    let v = q1_view();
    let mut tokens: Vec<String> =
        ["```sql\n", "SELECT", " CLIENT_name", " FROM", " lucy_view", " WHERE", " CLIENT_name", " ="]
            .iter()
            .map(|s| s.to_string())
            .collect();
    for i in 0..600 {
        tokens.push(" ".repeat(23 + i % 2));
        tokens.push(if i % 2 == 0 { "-\"CMEMORY_reservation\"" } else { "-\"CMEMORY_overheadlimit\"" }.into());
    }
    let chat = FakeChat::new().on(&["cannot be used"], &[GOOD]).stream(&["I created a view table"], tokens);
    let mut t = QueryTrace::default();
    let out = generate_sql(&task(&v, false), &chat, &Prompts::embedded(), &mut t).unwrap();
    assert!(out.checked.sql.contains("DATACENTER_name LIKE 'dev%'"));
    let first = &t.attempts[0].call;
    assert_eq!(first.truncated, 1, "reported as cut");
    assert_eq!(first.cuts.len(), 1);
    assert!(first.usage.completion_tokens < 100, "stopped early: {} tokens", first.usage.completion_tokens);
    let why = t.attempts[0].validation.error.clone().unwrap_or_default();
    assert!(why.contains("kept repeating") && !why.contains("raise --llm-max-tokens"), "{why}");
    // One repair; its messages hold the answer up to the loop, and name the cut.
    let reqs = chat.requests.lock().unwrap();
    assert_eq!(reqs.len(), 2);
    let shown = &reqs[1].messages[1].content;
    assert_eq!(reqs[1].messages[1].role, "assistant");
    assert!(shown.len() < first.choices[0].len(), "not re-sent unchanged: {shown:?}");
    assert_eq!(shown.matches("CMEMORY").count(), 2, "{shown:?}");
    assert!(reqs[1].messages[2].content.contains("kept repeating"), "{}", reqs[1].messages[2].content);
}
