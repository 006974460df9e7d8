//! `ask` and `direct_sql` on DDO with an in-process scripted model.

use super::*;
use crate::llm::fake::FakeChat;

use crate::graph::fixtures::ddo;

const DB: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels/ddo.sqlite");
const Q1: &str =
    "List customers who use datacenters with names starting with 'dev'. Output clients and datacenters names.";

fn q1_chat() -> FakeChat {
    FakeChat::new()
        .on(&["JSON schema of the database"], &["[\"CLIENT\", \"DATACENTER\"]"])
        .on(&["JSON schema of the table CLIENT"], &["[name, gender]"])
        .on(&["JSON schema of the table DATACENTER"], &["[name]"])
        .on(&["with a JSON query plan"], &[Q1_PLAN])
        .on(&["I created a view table lucy_view"], &["```sql\nSELECT DISTINCT CLIENT_name, DATACENTER_name FROM lucy_view WHERE DATACENTER_name LIKE 'dev%'\n```"])
}

/// Q1's plan, as QueryView's default form (`auto`) asks for it.
const Q1_PLAN: &str = r#"{"kind": "query", "select": [{"col": "CLIENT_name"}, {"col": "DATACENTER_name"}], "where": {"col": "DATACENTER_name", "op": "like", "value": "dev%"}}"#;

/// Options in QueryView's `sql` form (a test of the free-SQL path).
fn sql_form(opts: AskOptions) -> AskOptions {
    let mut o = opts;
    o.query.form = crate::query::plan::QueryForm::Sql;
    o
}

#[test]
fn q1_end_to_end_through_the_m_to_m() {
    let chat = q1_chat();
    let opts = AskOptions { execute: Some(crate::sql::exec::Database::Sqlite(DB.into())), ..AskOptions::default() };
    let o = ask(&ddo(), Q1, &opts, Some(&chat)).unwrap();
    assert!(o.failure.is_none(), "{:?}", o.failure);
    assert_eq!(o.tables, ["CLIENT", "DATACENTER"]);
    let view = o.view.as_ref().unwrap();
    assert!(
        view.tables.iter().any(|t| t == "RSPOOL2CLIENT"),
        "the view joins through the m:m junction: {:?}",
        view.tables
    );
    assert!(!view.tables.iter().any(|t| t == "LOCATION"), "never through the lookup");
    assert_eq!(o.rows.as_ref().unwrap().rows.len(), 29);
    let t = &o.trace;
    assert_eq!(t.method, "lucy");
    // The default form answered with the plan: one QueryView call, no SQL asked.
    let qv = t.query_view.as_ref().unwrap();
    assert_eq!(qv.plan.as_ref().map(|p| (p.form.as_str(), p.fell_back)), Some(("auto", false)));
    assert_eq!(qv.attempts.len(), 1);
    assert!(t.generate_view.as_ref().unwrap().result.is_some());
    assert_eq!(t.phase_costs().len(), 3);
    let text = explain::render(t);
    assert!(text.contains("RESULT: ok — SQL accepted, 29 row(s)"), "{text}");
    assert!(text.contains("== Phase 2: GenerateView"));
}

#[test]
fn offline_view_from_given_tables() {
    let opts = AskOptions {
        tables: vec!["client".into(), "DATACENTER".into()],
        stop_after: Some(StopAfter::View),
        ..AskOptions::default()
    };
    let o = ask(&ddo(), Q1, &opts, None).unwrap();
    assert_eq!(o.stopped_after, Some(StopAfter::View));
    let v = o.view.unwrap();
    assert!(v.columns.iter().any(|c| c.alias.eq_ignore_ascii_case("CLIENT_gender")), "all columns of given tables");
    assert_eq!(o.trace.match_tables.as_ref().unwrap().source, "given");
    // Without --stop-after view an LLM is needed, and the error says how to configure one.
    let opts = AskOptions { tables: vec!["CLIENT".into()], ..AskOptions::default() };
    let e = ask(&ddo(), Q1, &opts, None).unwrap_err();
    assert_eq!(e.exit_code(), 2);
    assert!(e.to_string().contains("--llm-model"), "{e}");
}

#[test]
fn given_attrs_are_validated() {
    let g = ddo();
    let (t, a) = relevance_names(&g, &given_relevance(&g, &["datacenter".into()], &["client.NAME".into()]).unwrap());
    assert_eq!(t, ["CLIENT", "DATACENTER"]);
    assert_eq!(a[0], ColumnRef::new("CLIENT", "name"));
    assert_eq!(a.len(), 1 + g.table(g.table_id("DATACENTER").unwrap()).columns.len());
    assert!(given_relevance(&g, &[], &["CLIENT.salary".into()])
        .unwrap_err()
        .to_string()
        .contains("CLIENT has columns id, name"));
    assert!(given_relevance(&g, &["CUSTOMERS".into()], &[]).unwrap_err().to_string().contains("unknown table"));
    assert!(given_relevance(&g, &[], &["name".into()]).is_err());
}

#[test]
fn given_role_instances_reach_the_view() {
    let g = ddo();
    let tables: Vec<String> =
        ["CLIENT", "DATACENTER", "LOCATION@CLIENT", "LOCATION@DATACENTER.loc_id"].map(String::from).to_vec();
    let attrs: Vec<String> = ["CLIENT.name", "DATACENTER.name", "LOCATION.city"].map(String::from).to_vec();
    let rel = given_relevance(&g, &tables, &attrs).unwrap();
    let (t, a) = relevance_names(&g, &rel);
    assert_eq!(t, ["CLIENT", "DATACENTER", "LOCATION@CLIENT.loc_id", "LOCATION@DATACENTER.loc_id"]);
    assert_eq!(a.len(), 3);
    let v = crate::solve::generate(&g, &rel, &Default::default()).unwrap();
    let aliases: Vec<&str> = v.columns.iter().map(|c| c.alias.as_str()).collect();
    assert!(aliases.contains(&"LOCATION_CLIENT_city") && aliases.contains(&"LOCATION_DATACENTER_city"), "{aliases:?}");
    assert_eq!(v.tables.iter().filter(|t| t.starts_with("LOCATION")).count(), 2, "no plain LOCATION: {:?}", v.tables);
    let e = given_relevance(&g, &["LOCATION@PAYMENT".into()], &[]).unwrap_err().to_string();
    assert!(e.contains("LOCATION joins through"), "{e}");
}

#[test]
fn failures_come_back_with_the_trace() {
    // Nothing matched.
    let chat = FakeChat::new().on(&["JSON schema of the database"], &["no idea"]);
    let o = ask(&ddo(), Q1, &AskOptions::default(), Some(&chat)).unwrap();
    let f = o.failure.unwrap();
    assert_eq!((f.phase.as_str(), f.kind.as_str()), ("match_tables", "nothing_matched"));
    assert!(o.trace.generate_view.is_none());
    // LLM error in phase 1.
    let chat = FakeChat::new().fail(&["JSON schema"], "HTTP 500 Internal Server Error after 3 retries");
    let o = ask(&ddo(), Q1, &AskOptions::default(), Some(&chat)).unwrap();
    assert_eq!(o.failure.as_ref().unwrap().kind, "llm");
    assert_eq!(o.failure.as_ref().unwrap().exit_code(), 1);
    // SQL still rejected after the repair round.
    let chat = FakeChat::new()
        .on(&["JSON schema of the database"], &["[CLIENT]"])
        .on(&["JSON schema of the table CLIENT"], &["[name]"])
        .on(&["cannot be used"], &["SELECT secret FROM lucy_view"])
        .on(&["I created a view table"], &["DROP TABLE CLIENT"]);
    let o = ask(
        &ddo(),
        "names?",
        &sql_form(AskOptions { execute: Some(crate::sql::exec::Database::Sqlite(DB.into())), ..AskOptions::default() }),
        Some(&chat),
    )
    .unwrap();
    let f = o.failure.unwrap();
    assert_eq!((f.phase.as_str(), f.kind.as_str()), ("query_view", "sql_rejected"), "{}", f.message);
    assert!(f.message.contains("column `secret`"), "{}", f.message);
    let report = explain::render(&o.trace);
    assert!(report.contains("guard: rejected: only a read-only SELECT is allowed, got DROP TABLE"), "{report}");
}

#[test]
fn direct_baseline_uses_prompt_b_and_the_table_guard() {
    let gold = "SELECT DISTINCT c.name, d.name FROM CLIENT c JOIN RSPOOL2CLIENT r ON r.client_id = c.id JOIN RESOURCEPOOL p ON p.id = r.rspool_id JOIN COMPUTE k ON k.id = p.compute_id JOIN DATACENTER d ON d.id = k.dc_id WHERE d.name LIKE 'dev%'";
    let answer = format!("```sql\n{gold}\n```");
    let chat = FakeChat::new().on(&["Given the database described by the following DDL"], &[answer.as_str()]);
    let opts = AskOptions { execute: Some(crate::sql::exec::Database::Sqlite(DB.into())), ..AskOptions::default() };
    let o = direct_sql(&ddo(), Q1, Some("dev = development"), &opts, Some(&chat)).unwrap();
    assert!(o.failure.is_none(), "{:?}", o.failure);
    assert_eq!(o.rows.unwrap().rows.len(), 29);
    let msg = &o.trace.query_view.as_ref().unwrap().attempts[0].call.messages[0].content;
    assert!(
        msg.contains("CREATE TABLE RSPOOL2CLIENT") && msg.contains("Additional knowledge to answer: dev = development")
    );
    assert_eq!(o.trace.method, "direct");
    // A hallucinated column is caught by the same guard.
    let chat =
        FakeChat::new().on(&["DDL"], &["SELECT amount FROM TAX"]).on(&["cannot be used"], &["SELECT amount FROM TAX"]);
    let o = direct_sql(&ddo(), "total tax?", None, &opts, Some(&chat)).unwrap();
    assert!(o.failure.unwrap().message.contains("column `amount`"));
}

#[test]
fn the_top_voted_table_is_the_first_kept_one_with_the_most_votes() {
    use crate::types::trace::{ListStep, Vote};
    let vote = |item: &str, votes: usize, kept: bool| Vote { item: item.into(), votes, kept };
    let step = |prompt: &str, votes: Vec<Vote>| ListStep { prompt: prompt.into(), votes, ..ListStep::default() };
    let mut mt = MatchTrace::default();
    assert_eq!(top_voted(&mt), None, "no listing prompt (given tables)");
    mt.steps.push(step("attributes", vec![vote("name", 9, true)]));
    mt.steps.push(step(
        "match_tables",
        vec![
            vote("RETENTION", 6, false),
            vote("CLIENT", 5, true),
            vote("DATACENTER", 5, true),
            vote("PAYMENT", 1, true),
        ],
    ));
    // RETENTION was not kept (e.g. --max-items); CLIENT and DATACENTER tie: vote order.
    assert_eq!(top_voted(&mt).as_deref(), Some("CLIENT"));
}

#[test]
fn a_query_view_prompt_over_the_context_is_asked_again_with_short_descriptions() {
    let overflow = format!("the prompt has 9113 tokens, {} 8192 (raise --llm-ctx)", crate::llm::CONTEXT_OVERFLOW);
    let chat = FakeChat::new()
        .on(
            &["I created a view table lucy_view", "…"],
            &["```sql\nSELECT DISTINCT Policy_Policy_Number FROM lucy_view\n```"],
        )
        .fail(&["I created a view table lucy_view"], &overflow);
    let opts = sql_form(AskOptions { tables: vec!["Policy".into(), "Claim".into()], ..AskOptions::default() });
    let o = ask(&crate::graph::fixtures::acme(), "How many claims are there?", &opts, Some(&chat)).unwrap();
    assert!(o.failure.is_none(), "{:?}", o.failure);
    assert_eq!(o.sql.as_deref(), Some("SELECT DISTINCT Policy_Policy_Number FROM lucy_view"));
    let requests = chat.requests.lock().unwrap();
    assert_eq!(requests.len(), 2, "the full prompt, then the short one");
    let (full, short) = (&requests[0].messages[0].content, &requests[1].messages[0].content);
    assert!(short.len() < full.len());
    assert!(full.contains("Policy number shown to customers and used in reports (e.g. 31003000336)"));
    assert!(!short.contains("(e.g. 31003000336)"), "{short}");
    let q = o.trace.query_view.as_ref().unwrap();
    assert!(q.compacted.as_deref().is_some_and(|c| c.contains("9113 tokens")));
    assert!(explain::render(&o.trace).contains("asked again with column descriptions cut short"));
}

#[test]
fn other_llm_errors_are_not_retried() {
    let chat = FakeChat::new().fail(&["I created a view table lucy_view"], "connection refused");
    let opts = AskOptions { tables: vec!["Policy".into()], ..AskOptions::default() };
    let o = ask(&crate::graph::fixtures::acme(), "How many policies are there?", &opts, Some(&chat)).unwrap();
    assert!(o.failure.is_some());
    assert_eq!(chat.requests.lock().unwrap().len(), 1);
    assert!(o.trace.query_view.as_ref().unwrap().compacted.is_none());
}

#[test]
fn given_tables_are_never_narrowed_away() {
    // A count of payments per client over the view of the tables the
    // person gave: narrowing would drop PAYMENT (the SQL reads none of its
    // columns) and count one row per client.
    let opts = AskOptions {
        tables: vec!["CLIENT".into(), "PAYMENT".into()],
        sql: Some("SELECT CLIENT_id, COUNT(*) AS n FROM lucy_view GROUP BY CLIENT_id ORDER BY n DESC".into()),
        execute: Some(crate::sql::exec::Database::Sqlite(DB.into())),
        ..AskOptions::default()
    };
    let o = ask(&ddo(), "payments per client", &opts, None).unwrap();
    assert!(o.failure.is_none(), "{:?}", o.failure);
    assert!(o.trace.narrowed.is_none(), "{:?}", o.trace.narrowed);
    let rows = &o.rows.as_ref().unwrap().rows;
    let gold = crate::sql::exec::run(
        &crate::sql::exec::Database::Sqlite(DB.into()),
        None,
        "SELECT CLIENT.id, COUNT(*) AS n FROM CLIENT JOIN PAYMENT ON PAYMENT.client_id = CLIENT.id GROUP BY CLIENT.id ORDER BY n DESC",
        &crate::sql::exec::ExecOptions { limit: None, timeout: std::time::Duration::from_secs(10), max_result_bytes: 1 << 24 },
    )
    .unwrap();
    assert_eq!(rows.len(), gold.rows.len());
    assert_eq!(rows[0], gold.rows[0]);
}

#[test]
fn a_table_with_a_relation_is_read_by_its_qualified_name() {
    // CLIENT found as `main.CLIENT` (SQLite's schema of the file), aliased
    // by its name so the view's columns read the same.
    let mut m = ddo().model().clone();
    m.tables.iter_mut().find(|t| t.name == "CLIENT").unwrap().relation = vec!["main".into(), "CLIENT".into()];
    let g = crate::graph::SchemaGraph::new(m).unwrap();
    let opts = AskOptions {
        tables: vec!["CLIENT".into(), "DATACENTER".into()],
        sql: Some(
            "SELECT DISTINCT CLIENT_name, DATACENTER_name FROM lucy_view WHERE DATACENTER_name LIKE 'dev%'".into(),
        ),
        execute: Some(crate::sql::exec::Database::Sqlite(DB.into())),
        ..AskOptions::default()
    };
    let o = ask(&g, Q1, &opts, None).unwrap();
    assert!(o.failure.is_none(), "{:?}", o.failure);
    let body = &o.view.as_ref().unwrap().view_sql;
    assert!(body.contains("main.CLIENT AS CLIENT"), "{body}");
    assert_eq!(o.rows.as_ref().unwrap().rows.len(), 29);
}
