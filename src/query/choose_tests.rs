//! The execution vote: the count (majority, ties, failing candidates, ORDER
//! BY, cell values) and the choice over DDO with scripted answers.

use std::time::Duration;

use super::*;
use crate::llm::fake::FakeChat;
use crate::query::{Allowed, ExecTarget};
use crate::types::ViewResult;

const DB: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels/ddo.sqlite");

fn int(i: i64) -> SqlValue {
    SqlValue::Integer(i)
}

fn text(s: &str) -> SqlValue {
    SqlValue::Text(s.into())
}

/// Key of a one-column result.
fn col(values: &[i64], ordered: bool) -> Option<ResultKey> {
    let rows: Vec<Vec<SqlValue>> = values.iter().map(|&v| vec![int(v)]).collect();
    Some(ResultKey::of(1, &rows, ordered))
}

fn key(rows: &[Vec<SqlValue>]) -> ResultKey {
    ResultKey::of(rows.first().map_or(1, Vec::len), rows, false)
}

#[test]
fn the_majority_wins() {
    let t = tally(&[col(&[1], false), col(&[2], false), col(&[2], false)]);
    assert_eq!(t.chosen, Some(1));
    assert_eq!(t.results.len(), 2);
    assert_eq!((t.results[0].members.clone(), t.results[0].votes), (vec![1, 2], 2));
    assert_eq!((t.results[1].members.clone(), t.results[1].votes), (vec![0], 1));
}

#[test]
fn ties_go_to_the_earliest_candidate() {
    assert_eq!(tally(&[col(&[1], false), col(&[2], false)]).chosen, Some(0));
    assert_eq!(tally(&[col(&[1], false), col(&[2], false), col(&[2], false), col(&[1], false)]).chosen, Some(0));
    assert_eq!(tally(&[col(&[2], false), col(&[1], false), col(&[1], false), col(&[2], false)]).chosen, Some(0));
    // The first candidate failed: the tie goes to the next earliest.
    assert_eq!(tally(&[None, col(&[2], false), col(&[1], false)]).chosen, Some(1));
}

#[test]
fn failing_candidates_do_not_vote() {
    let t = tally(&[None, col(&[1], false), None, col(&[2], false), col(&[2], false)]);
    assert_eq!(t.chosen, Some(3));
    assert_eq!(t.results.iter().map(|r| r.votes).sum::<usize>(), 3);
    let none = tally(&[None, None, None]);
    assert_eq!(none.chosen, None);
    assert!(none.results.is_empty());
    assert_eq!(tally(&[]).chosen, None);
}

#[test]
fn rows_compare_as_a_multiset_unless_the_sql_orders_them() {
    // Unordered: the order rows come in does not matter, duplicates do.
    assert_eq!(col(&[1, 2, 2], false), col(&[2, 1, 2], false));
    assert_ne!(col(&[1, 2, 2], false), col(&[1, 2], false));
    // Ordered: two orders of the same rows are two answers; the majority's wins.
    let asc = col(&[1, 2], true);
    let desc = col(&[2, 1], true);
    assert_ne!(asc.as_ref().unwrap().label(), desc.as_ref().unwrap().label());
    assert!(asc.as_ref().unwrap().label().starts_with("seq:"));
    assert!(col(&[1, 2], false).unwrap().label().starts_with("set:"));
    let t = tally(&[asc.clone(), desc.clone(), desc.clone()]);
    assert_eq!(t.chosen, Some(1));
    assert_eq!(t.results[0].votes, 2);
    // An unordered candidate agrees with any order of its rows: ordered and
    // unordered versions of one query vote together, against a third result.
    let t = tally(&[col(&[9], false), asc.clone(), col(&[2, 1], false)]);
    assert_eq!(t.chosen, Some(1), "{t:?}");
    assert_eq!(t.results[0].votes, 2);
    // Orders disputed, rows agreed: the unordered result collects every vote.
    let t = tally(&[asc, desc, col(&[2, 1], false)]);
    assert_eq!(t.chosen, Some(2));
    assert_eq!(t.results[0].votes, 3);
    assert_eq!(t.results[1].votes, 2);
}

#[test]
fn cells_compare_as_values() {
    // NULL equals NULL, and nothing else.
    assert_eq!(key(&[vec![SqlValue::Null]]), key(&[vec![SqlValue::Null]]));
    assert_ne!(key(&[vec![SqlValue::Null]]), key(&[vec![int(0)]]));
    assert_ne!(key(&[vec![SqlValue::Null]]), key(&[vec![text("")]]));
    assert_ne!(key(&[vec![SqlValue::Null]]), key(&[vec![text("NULL")]]));
    // Numbers: an integral float is the integer; others to 10 significant digits.
    assert_eq!(key(&[vec![SqlValue::Real(3.0)]]), key(&[vec![int(3)]]));
    assert_eq!(key(&[vec![SqlValue::Real(-0.0)]]), key(&[vec![int(0)]]));
    assert_eq!(key(&[vec![SqlValue::Real(0.1 + 0.2)]]), key(&[vec![SqlValue::Real(0.3)]]));
    assert_eq!(key(&[vec![SqlValue::Real(2.999_999_999_999)]]), key(&[vec![int(3)]]));
    assert_ne!(key(&[vec![SqlValue::Real(1.5)]]), key(&[vec![SqlValue::Real(1.500_001)]]));
    assert_eq!(key(&[vec![SqlValue::Real(f64::NAN)]]), key(&[vec![SqlValue::Real(f64::NAN)]]));
    assert_ne!(key(&[vec![SqlValue::Real(f64::INFINITY)]]), key(&[vec![SqlValue::Real(f64::NEG_INFINITY)]]));
    assert_eq!(key(&[vec![int(i64::MAX)]]), key(&[vec![int(i64::MAX)]]));
    assert_ne!(key(&[vec![int(i64::MAX)]]), key(&[vec![int(i64::MAX - 1)]]));
    // Text is not a number, and cell boundaries count.
    assert_ne!(key(&[vec![text("1")]]), key(&[vec![int(1)]]));
    assert_ne!(key(&[vec![text("a"), text("bc")]]), key(&[vec![text("ab"), text("c")]]));
    assert_ne!(key(&[vec![SqlValue::Blob(b"a".to_vec())]]), key(&[vec![text("a")]]));
    // The column count counts, even with no rows; column names do not exist here.
    assert_ne!(ResultKey::of(2, &[], false), ResultKey::of(3, &[], false));
    assert_eq!(ResultKey::of(2, &[], false), ResultKey::of(2, &[], false));
}

#[test]
fn order_by_is_read_at_the_top_level() {
    let d = Dialect::Sqlite;
    assert!(orders_rows("SELECT a FROM v ORDER BY a DESC", d));
    assert!(orders_rows("SELECT a FROM v UNION SELECT b FROM v ORDER BY 1", d));
    assert!(!orders_rows("SELECT a FROM (SELECT a FROM v ORDER BY a LIMIT 3) AS t", d));
    assert!(!orders_rows("SELECT a FROM v", d));
}

// ---- the choice over DDO, with scripted answers

fn q1_view() -> ViewResult {
    let select = "SELECT CLIENT.id AS CLIENT_id, CLIENT.name AS CLIENT_name, DATACENTER.id AS DATACENTER_id, DATACENTER.name AS DATACENTER_name FROM DATACENTER JOIN COMPUTE ON DATACENTER.id = COMPUTE.dc_id JOIN RESOURCEPOOL ON COMPUTE.id = RESOURCEPOOL.compute_id JOIN RSPOOL2CLIENT ON RESOURCEPOOL.id = RSPOOL2CLIENT.rspool_id JOIN CLIENT ON CLIENT.id = RSPOOL2CLIENT.client_id";
    let body = crate::types::ViewBody { name: "lucy_view".into(), select: select.into() };
    let columns: Vec<serde_json::Value> = [
        ("CLIENT_id", "CLIENT", "id"),
        ("CLIENT_name", "CLIENT", "name"),
        ("DATACENTER_id", "DATACENTER", "id"),
        ("DATACENTER_name", "DATACENTER", "name"),
    ]
    .iter()
    .map(|(a, t, c)| serde_json::json!({"alias": a, "table": t, "column": c}))
    .collect();
    let mut view: ViewResult = serde_json::from_value(serde_json::json!({
        "status": "optimal", "tables": [], "joins": [], "objective": 3.0, "path_length": 5, "solve_ms": 0.0,
        "view_name": "lucy_view", "view_sql": body.create_sql(), "columns": columns, "walk": []
    }))
    .unwrap();
    view.body = Some(body);
    view
}

fn task<'a>(view: &'a ViewResult, db: Option<&'a crate::sql::exec::Database>) -> SqlTask<'a> {
    let (name, prompt) =
        super::super::view_prompt(&Prompts::embedded(), view, "Q1?", Dialect::Sqlite, None, None).unwrap();
    SqlTask {
        prompt_name: name,
        prompt,
        allowed: Allowed::View {
            name: view.view_name.clone(),
            columns: view.columns.iter().map(|c| c.alias.clone()).collect(),
        },
        dialect: Dialect::Sqlite,
        temperature: 0.2,
        execute: db.map(|db| ExecTarget {
            db,
            view: view.body.as_ref(),
            limit: None,
            timeout: Duration::from_secs(30),
            max_result_bytes: crate::sql::exec::DEFAULT_MAX_RESULT_BYTES,
        }),
        fanout: None,
        model_check: None,
        grammar: None,
        repair_grammar: None,
        distinct: None,
        counted: None,
        grounding: None,
        rename: None,
        feedback: crate::query::Feedback::default(),
    }
}

const WRONG: &str =
    "```sql\nSELECT DISTINCT CLIENT_name, DATACENTER_name FROM lucy_view WHERE DATACENTER_name LIKE 'prod%'\n```";
const GOOD: &str =
    "```sql\nSELECT DISTINCT CLIENT_name, DATACENTER_name FROM lucy_view WHERE DATACENTER_name LIKE 'dev%'\n```";
const GOOD_GROUPED: &str = "```sql\nSELECT CLIENT_name AS client, DATACENTER_name AS dc FROM lucy_view WHERE DATACENTER_name LIKE 'dev%' GROUP BY CLIENT_name, DATACENTER_name ORDER BY dc\n```";
const REJECTED: &str = "```sql\nDELETE FROM CLIENT\n```";

fn ddo() -> crate::sql::exec::Database {
    crate::sql::exec::Database::Sqlite(DB.into())
}

#[test]
fn the_vote_answers_with_the_result_most_candidates_agree_on() {
    let v = q1_view();
    let db = ddo();
    let chat = FakeChat::new().on(&["I created a view table lucy_view"], &[WRONG, GOOD, REJECTED, GOOD_GROUPED, GOOD]);
    let mut t = QueryTrace::default();
    let o = generate_sql_voted(&task(&v, Some(&db)), 5, &chat, &Prompts::embedded(), &mut t).unwrap();
    assert_eq!(o.rows.unwrap().rows.len(), 29, "dbmodels/README.md lists 29 pairs");
    assert!(o.checked.sql.contains("LIKE 'dev%'") && o.checked.sql.starts_with("SELECT DISTINCT"));
    // One call for the five answers.
    let reqs = chat.requests.lock().unwrap().clone();
    assert_eq!(reqs.len(), 1);
    assert_eq!((reqs[0].n, reqs[0].phase.as_str()), (5, "query_view"));
    let vote = t.exec_vote.as_ref().unwrap();
    assert_eq!((vote.k, vote.chosen, vote.candidates.len()), (5, Some(1), 5));
    let c = &vote.candidates;
    assert!(c[1].chosen && !c[0].chosen && !c[3].chosen);
    assert_eq!(c.iter().map(|c| c.votes).collect::<Vec<_>>(), [1, 3, 0, 3, 3]);
    // The rejected one did not run; the repeated one was not run again.
    assert!(!c[2].validation.ok && c[2].execution.is_none() && c[2].result_hash.is_none());
    assert_eq!((c[4].same_as, c[1].same_as), (Some(1), None));
    // ORDER BY makes the grouped query's result a sequence, which agrees with the unordered set.
    assert!(c[3].result_hash.as_deref().unwrap().starts_with("seq:"));
    assert!(c[1].result_hash.as_deref().unwrap().starts_with("set:"));
    assert_eq!(vote.results[0].members, [1, 4]);
    assert_eq!((vote.results[0].votes, vote.results[0].row_count), (3, 29));
    assert!(vote.call.is_none(), "the call is the chosen attempt's");
    // The attempt is the chosen candidate's, with the sampling call.
    assert_eq!(t.attempts.len(), 1);
    assert_eq!(t.attempts[0].call.choices.len(), 5);
    assert_eq!(t.attempts[0].execution.as_ref().unwrap().row_count, 29);
    assert_eq!(t.sql.as_deref(), Some(o.checked.sql.as_str()));
    assert!(!t.repaired);
    assert_eq!(t.cost.llm_calls, 1);
    // The trace round-trips, and one without the vote still loads.
    // (Timings are floats that serde_json may not round-trip to the last bit.)
    let json = serde_json::to_string(&t).unwrap();
    let back = serde_json::from_str::<QueryTrace>(&json).unwrap().exec_vote.unwrap();
    let vote = t.exec_vote.as_ref().unwrap();
    assert_eq!((back.k, back.chosen, &back.results, &back.call), (vote.k, vote.chosen, &vote.results, &vote.call));
    let brief = |v: &ExecVote| -> Vec<_> {
        v.candidates
            .iter()
            .map(|c| (c.extracted.clone(), c.same_as, c.result_hash.clone(), c.votes, c.chosen))
            .collect()
    };
    assert_eq!(brief(&back), brief(vote));
    let mut old = serde_json::to_value(&t).unwrap();
    old.as_object_mut().unwrap().remove("exec_vote");
    assert!(serde_json::from_value::<QueryTrace>(old).unwrap().exec_vote.is_none());
}

#[test]
fn without_a_passing_candidate_query_view_runs_as_without_the_vote() {
    let v = q1_view();
    let db = ddo();
    let chat = FakeChat::new().on(&["cannot be used"], &[GOOD]).on(
        &["I created a view table lucy_view"],
        &[REJECTED, "```sql\nSELECT no_such_fn(CLIENT_name) FROM lucy_view\n```"],
    );
    let mut t = QueryTrace::default();
    let o = generate_sql_voted(&task(&v, Some(&db)), 2, &chat, &Prompts::embedded(), &mut t).unwrap();
    assert_eq!(o.rows.unwrap().rows.len(), 29);
    let reqs = chat.requests.lock().unwrap().clone();
    let asked: Vec<(usize, &str)> = reqs.iter().map(|r| (r.n, r.phase.as_str())).collect();
    assert_eq!(asked, [(2, "query_view"), (1, "query_view"), (1, "query_view_repair")]);
    let vote = t.exec_vote.as_ref().unwrap();
    assert_eq!(vote.chosen, None);
    assert!(vote.results.is_empty());
    assert!(vote.candidates.iter().all(|c| c.votes == 0 && !c.chosen));
    assert!(!vote.candidates[1].execution.as_ref().unwrap().ok, "it ran and failed");
    assert_eq!(vote.call.as_ref().unwrap().n, 2);
    assert!(t.repaired);
    assert_eq!(t.attempts.len(), 2);
    assert_eq!(t.cost.llm_calls, 3);
}

#[test]
fn off_is_query_view_unchanged_and_on_needs_execution() {
    let v = q1_view();
    let db = ddo();
    for k in [0, 1] {
        let voted = FakeChat::new().on(&["I created a view table lucy_view"], &[WRONG, GOOD, GOOD]);
        let plain = FakeChat::new().on(&["I created a view table lucy_view"], &[WRONG, GOOD, GOOD]);
        let (mut a, mut b) = (QueryTrace::default(), QueryTrace::default());
        let o = generate_sql_voted(&task(&v, Some(&db)), k, &voted, &Prompts::embedded(), &mut a).unwrap();
        generate_sql(&task(&v, Some(&db)), &plain, &Prompts::embedded(), &mut b).unwrap();
        assert!(o.checked.sql.contains("prod%"), "the first answer, as without the vote");
        assert_eq!(*voted.requests.lock().unwrap(), *plain.requests.lock().unwrap());
        assert!(a.exec_vote.is_none());
        assert!(!serde_json::to_string(&a).unwrap().contains("exec_vote"));
    }
    let chat = FakeChat::new().on(&["I created a view table lucy_view"], &[GOOD]);
    let e =
        generate_sql_voted(&task(&v, None), 3, &chat, &Prompts::embedded(), &mut QueryTrace::default()).unwrap_err();
    assert!(matches!(e, Error::Input(_)) && e.to_string().contains("--execute"), "{e}");
    let e = generate_sql_voted(&task(&v, Some(&db)), 17, &chat, &Prompts::embedded(), &mut QueryTrace::default())
        .unwrap_err();
    assert!(e.to_string().contains("more than 16"), "{e}");
    assert!(chat.requests.lock().unwrap().is_empty(), "no call before the checks");
}
