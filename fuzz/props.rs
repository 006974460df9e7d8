//! The fuzz properties, one function per target. Shared by the cargo-fuzz
//! targets in `fuzz/fuzz_targets/` (coverage-guided, `scripts/fuzz.sh`) and
//! by `tests/fuzz_props.rs` (proptest generators in the normal test suite),
//! so both check the same things. Each function panics only on a defect.

#![allow(dead_code)]

use lucy::model::import::ddl_with_warnings;
use lucy::model::{parse, validate};
use lucy::sql::analyze::{parse_query, resolve_scopes, RelationTarget};
use lucy::sql::guard::check_query;
use lucy::types::Dialect;
use lucy::SchemaGraph;

/// The view the SQL properties check against.
pub const VIEW_COLS: [&str; 5] = ["CLIENT_id", "CLIENT_name", "CLIENT_gender", "DATACENTER_id", "DATACENTER_name"];

/// dbModel parse + validate: never a panic; the graph builds exactly when
/// validation finds nothing, and then reports the same issues.
pub fn dbmodel(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    let Ok(model) = parse(&text, Some("fuzz.json")) else { return };
    let issues = validate::issues(&model);
    match SchemaGraph::new(model) {
        Ok(_) => assert!(issues.is_empty(), "graph built although validation found {issues:?}"),
        Err(lucy::Error::Model(v)) => assert_eq!(v, issues, "SchemaGraph::new and validate::issues disagree"),
        Err(e) => panic!("unexpected error type: {e}"),
    }
}

/// DDL import in every dialect: never a panic; what it imports validates.
pub fn ddl(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    for d in [None, Some(Dialect::Sqlite), Some(Dialect::Mysql), Some(Dialect::Postgres)] {
        if let Ok(imported) = ddl_with_warnings(&text, d, "fuzz") {
            let issues = validate::issues(&imported.model);
            assert!(issues.is_empty(), "an imported model does not validate: {issues:?}");
        }
    }
}

/// The SQL guard, differentially against the scope resolver: never a
/// panic; whatever the guard admits, the resolver attributes every relation
/// reference only to the view, a CTE in scope or a derived table.
pub fn sql_guard(data: &[u8]) {
    let sql = String::from_utf8_lossy(data);
    let cols: Vec<String> = VIEW_COLS.iter().map(|c| c.to_string()).collect();
    for d in [Dialect::Sqlite, Dialect::Postgres, Dialect::Mysql] {
        if check_query(&sql, "lucy_view", &cols, d).is_err() {
            continue;
        }
        let q =
            parse_query(sql.trim().trim_end_matches(';').trim(), d).expect("the guard admitted what does not parse");
        let res = resolve_scopes(&q, d, &[("lucy_view".to_string(), cols.clone())]);
        for r in &res.relations {
            match &r.target {
                RelationTarget::Cte | RelationTarget::Derived | RelationTarget::View => {}
                RelationTarget::Table { name, .. } if name == "lucy_view" => {}
                other => panic!("the guard admitted {sql:?} ({d:?}), which reads {other:?} ({})", r.written),
            }
        }
    }
}

/// LLM answer parsing: a chat-completions body, a list answer and an SQL
/// answer; never a panic, and a parsed completion has text choices.
pub fn llm_answer(data: &[u8]) {
    let text = String::from_utf8_lossy(data);
    if let Ok(v) = serde_json::from_str::<serde_json::Value>(&text) {
        if let Ok(c) = lucy::llm::parse_completion(&v) {
            assert!(!c.choices.is_empty(), "a completion without choices parsed");
        }
    }
    let _ = lucy::link::parse::parse_list(&text);
    if let Some((sql, _)) = lucy::query::extract::extract_sql(&text) {
        let _ = check_query(
            &sql,
            "lucy_view",
            &VIEW_COLS.iter().map(|c| c.to_string()).collect::<Vec<_>>(),
            Dialect::Sqlite,
        );
    }
}
