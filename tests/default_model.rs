//! The embedded default model itself (Qwen2.5-Coder-1.5B-Instruct Q4_K_M,
//! the file `scripts/fetch-model.sh` fetches), not the tiny generated GGUF
//! of `tests/embedded_model.rs`: what QueryView's grammar does to the answer
//! of the model users run.
//!
//! Issue 23: on an AMD EPYC without AVX-512, `lucy ask` on DDO Q1 answered
//! `SELECT CLIENT_CLIENT_name, DATACENTER_DATACENTER_name FROM lucy_view …`
//! five times out of five. Decoding differs across CPUs, so this test does
//! not wait for the model to make that mistake: it asks the model to copy
//! exactly that SQL. Unconstrained, it does (the control: the model is
//! primed to write the made-up names); under the grammar lucy builds for
//! the Q1 view, every answer is a sentence of the grammar that the guard
//! accepts and names only the view's columns.
//!
//! The model file is ~1.1 GB: the test runs when it is present (the default
//! path, or `LUCY_MODEL_DIR`); with `LUCY_REQUIRE_MODEL=1` — `scripts/test.sh`
//! sets it after fetching the file — its absence is a failure.

use lucy::graph::SchemaGraph;
use lucy::llm::embedded::{default_model_path, EmbeddedModel, EmbeddedOptions};
use lucy::llm::{ChatModel, ChatRequest, Message};
use lucy::query::extract::extract_sql;
use lucy::query::grammar::{check_text, view_grammar_with, NameRules, QueryNames};
use lucy::sql::guard::check_query;
use lucy::types::{ColumnRef, Dialect, ViewRequest};

const MODEL: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels/ddo.json");

fn default_model() -> Option<EmbeddedModel> {
    let path = default_model_path(&|k| std::env::var(k).ok()).filter(|p| p.is_file());
    let Some(path) = path else {
        assert!(
            std::env::var_os("LUCY_REQUIRE_MODEL").is_none(),
            "LUCY_REQUIRE_MODEL is set but the default model is absent: run scripts/fetch-model.sh"
        );
        eprintln!("default_model: the default model file is absent (scripts/fetch-model.sh fetches it); not run");
        return None;
    };
    let mut o = EmbeddedOptions::new(&path);
    o.threads = 2;
    o.n_ctx = 4096;
    Some(EmbeddedModel::load(&o, "run scripts/fetch-model.sh", &|_| None).unwrap().with_max_tokens(Some(120)))
}

const PRIMED: &str =
    "SELECT CLIENT_CLIENT_name, DATACENTER_DATACENTER_name FROM lucy_view WHERE DATACENTER_DATACENTER_name LIKE 'dev%'";

fn ask(grammar: Option<String>) -> ChatRequest {
    ChatRequest {
        phase: "test".into(),
        messages: vec![Message::user(format!(
            "Copy this SQL query exactly as it is written, in a ```sql code block, and write nothing else:\n\n{PRIMED}"
        ))],
        temperature: 0.0,
        n: 1,
        response_schema: None,
        grammar,
        max_tokens: None,
    }
}

#[test]
fn primed_with_client_client_name_the_default_model_writes_view_columns_under_the_grammar() {
    let Some(m) = default_model() else { return };
    let graph = SchemaGraph::new(lucy::model::load(MODEL).unwrap()).unwrap();
    let req = ViewRequest {
        attributes: vec![ColumnRef::new("CLIENT", "name"), ColumnRef::new("DATACENTER", "name")],
        ..ViewRequest::new(vec!["CLIENT".into(), "DATACENTER".into()])
    };
    let view = lucy::solve::generate_view(&graph, &req).unwrap();
    let cols: Vec<String> = view.columns.iter().map(|c| c.alias.clone()).collect();
    assert!(cols.contains(&"CLIENT_name".to_string()) && !cols.contains(&"CLIENT_CLIENT_name".to_string()), "{cols:?}");
    let reserved: Vec<String> = graph
        .model()
        .tables
        .iter()
        .flat_map(|t| std::iter::once(t.name.clone()).chain(t.columns.iter().map(|c| c.name.clone())))
        .collect();

    // The control: unconstrained, the model copies the made-up names.
    let free = m.chat(&ask(None)).unwrap();
    assert!(free.choices[0].contains("CLIENT_CLIENT_name"), "the model did not copy the SQL: {:?}", free.choices);

    // Under the strict grammar (the default; `scoped` was deleted in session 26).
    let rules = NameRules::new(QueryNames::Strict);
    {
        let g = view_grammar_with("lucy_view", &cols, &reserved, Dialect::Sqlite, &rules);
        let a = m.chat(&ask(Some(g.clone()))).unwrap();
        let answer = &a.choices[0];
        let local = a.local.unwrap();
        assert_eq!(local.unconstrained, 0, "{:?}: the grammar did not hold: {answer:?}", rules.names);
        assert_eq!(a.truncated, 0, "{:?}: cut at the token limit: {answer:?}", rules.names);
        check_text(&g, answer).unwrap_or_else(|e| panic!("{:?}: {answer:?}: {e}", rules.names));
        let (sql, _) = extract_sql(answer).unwrap_or_else(|| panic!("{:?}: no SQL in {answer:?}", rules.names));
        assert!(!sql.to_ascii_uppercase().contains("CLIENT_CLIENT"), "{:?}: {sql}", rules.names);
        check_query(&sql, "lucy_view", &cols, Dialect::Sqlite)
            .unwrap_or_else(|e| panic!("{:?}: the guard rejects {sql}: {e}", rules.names));
        eprintln!("{}: {sql}", rules.names.as_str());
    }
}

/// The plan form's grammar (issue 46) with the model users run: primed to
/// copy a plan that sums a key (`PAYMENT_id`, PAYMENT's primary key) over a
/// view with one measure (`PAYAMOUNT_amount`), the model copies it
/// unconstrained (the control); under the grammar lucy builds for the view,
/// the answer is a sentence of the grammar, parses as a plan, sums no key
/// (only the measure can follow `sum`), and compiles to SQL the guard
/// admits. Temperature 0: the answer is fixed for a CPU.
#[test]
fn primed_with_a_sum_over_a_key_the_default_model_plans_no_such_sum_under_the_plan_grammar() {
    use lucy::query::plan::ast::Agg;
    use lucy::query::plan::{compile, grammar::plan_grammar, parse_answer, PlanView};
    let Some(m) = default_model() else { return };
    let graph = SchemaGraph::new(lucy::model::load(MODEL).unwrap()).unwrap();
    let req = ViewRequest {
        attributes: vec![
            ColumnRef::new("CLIENT", "name"),
            ColumnRef::new("PAYMENT", "id"),
            ColumnRef::new("PAYAMOUNT", "amount"),
        ],
        ..ViewRequest::new(vec!["CLIENT".into(), "PAYMENT".into(), "PAYAMOUNT".into()])
    };
    let view = lucy::solve::generate_view(&graph, &req).unwrap();
    let cols: Vec<String> = view.columns.iter().map(|c| c.alias.clone()).collect();
    assert!(cols.contains(&"PAYMENT_id".to_string()), "{cols:?}");
    let pv = PlanView::of_view(&graph, &view, Dialect::Sqlite, lucy::types::FanoutMode::Rewrite, None, &[]);
    assert!(!pv.column("PAYMENT_id").unwrap().measure && pv.column("PAYAMOUNT_amount").unwrap().measure);
    const PRIMED_PLAN: &str = r#"{"kind": "query", "select": [{"col": "CLIENT_name"}, {"agg": "sum", "col": "PAYMENT_id"}], "group_by": ["CLIENT_name"]}"#;
    let ask = |grammar: Option<String>| ChatRequest {
        phase: "test".into(),
        messages: vec![Message::user(format!(
            "Copy this JSON exactly as it is written, and write nothing else:\n\n{PRIMED_PLAN}"
        ))],
        temperature: 0.0,
        n: 1,
        response_schema: None,
        grammar,
        max_tokens: None,
    };
    let free = m.chat(&ask(None)).unwrap();
    // The model may lay the JSON out on several lines: compare without blanks.
    let compact: String = free.choices[0].chars().filter(|c| !c.is_whitespace()).collect();
    assert!(
        compact.contains(r#""agg":"sum","col":"PAYMENT_id""#),
        "the model did not copy the plan: {:?}",
        free.choices
    );
    let g = plan_grammar(&pv, &lucy::query::plan::Cues::ALL);
    let a = m.chat(&ask(Some(g.clone()))).unwrap();
    let answer = &a.choices[0];
    assert_eq!(a.local.unwrap().unconstrained, 0, "the grammar did not hold: {answer:?}");
    assert_eq!(a.truncated, 0, "cut at the token limit: {answer:?}");
    check_text(&g, answer).unwrap_or_else(|e| panic!("{answer:?}: {e}"));
    let plan = parse_answer(answer).unwrap_or_else(|e| panic!("{answer:?}: {e}"));
    for it in plan.select.iter().chain(plan.order_by.iter().map(|o| o.item()).collect::<Vec<_>>().iter()) {
        if matches!(it.agg, Some(Agg::Sum | Agg::Avg)) {
            assert!(pv.column(it.col.as_deref().unwrap()).unwrap().measure, "{answer}");
        }
    }
    let sql = compile(&plan, &pv).unwrap_or_else(|e| panic!("{answer}: {e}"));
    check_query(&sql, "lucy_view", &cols, Dialect::Sqlite).unwrap_or_else(|e| panic!("{sql}: {e}"));
    eprintln!("plan: {answer}\nsql: {sql}");
}
