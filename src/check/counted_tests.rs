//! `COUNT(*)` read as a count of the counted table, on the paper's DDO
//! model and database: the rewrite, where it is left alone, and the
//! rewritten answers against SQL over the base tables.

use std::path::Path;

use super::super::fixture::ddo_view as view;
use super::*;
use crate::sql::exec::run_readonly;
use crate::types::ViewResult;

const DB: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels/ddo.sqlite");

/// CLIENT 1:M PAYMENT: each client once per payment.
fn clients_payments() -> ViewResult {
    view(&["CLIENT", "PAYMENT"], &[("CLIENT", "gender"), ("PAYMENT", "date")])
}

fn rows(v: &ViewResult, sql: &str) -> Vec<Vec<String>> {
    let body = if sql.contains(&v.view_name) { v.body.as_ref() } else { None };
    let mut r: Vec<Vec<String>> = run_readonly(Path::new(DB), body, sql, None)
        .unwrap()
        .rows
        .into_iter()
        .map(|r| r.iter().map(|x| x.to_string()).collect())
        .collect();
    r.sort();
    r
}

fn counted(v: &ViewResult, sql: &str, instance: &str) -> Option<CountNote> {
    rewrite(sql, &v.grain, &v.view_name, instance, Dialect::Sqlite).unwrap()
}

#[test]
fn count_star_counts_the_counted_tables_rows() {
    let v = clients_payments();
    let sql = "SELECT CLIENT_gender, COUNT(*) FROM lucy_view GROUP BY CLIENT_gender";
    let note = counted(&v, sql, "CLIENT").expect("rewritten");
    assert_eq!(
        note.rewritten,
        "SELECT CLIENT_gender, COUNT(DISTINCT CLIENT_id) AS \"COUNT(*)\" FROM lucy_view GROUP BY CLIENT_gender"
    );
    assert_eq!((note.instance.as_str(), note.key.as_str()), ("CLIENT", "CLIENT_id"));
    assert_eq!(note.repeated_by, ["PAYMENT"]);
    assert!(note.describe().contains("COUNT(DISTINCT CLIENT_id)"), "{}", note.describe());
    // The rewritten answer is the number of clients (with a payment) per
    // gender; as written it was the number of payments.
    let gold =
        "SELECT c.gender, COUNT(DISTINCT c.id) FROM CLIENT c JOIN PAYMENT p ON p.client_id = c.id GROUP BY c.gender";
    assert_eq!(rows(&v, &note.rewritten), rows(&v, gold));
    assert_ne!(rows(&v, sql), rows(&v, gold), "the test must show a difference");
}

#[test]
fn having_order_by_count_one_and_subqueries_are_read_alike() {
    let v = clients_payments();
    let sql = "SELECT CLIENT_gender FROM lucy_view GROUP BY CLIENT_gender HAVING COUNT(1) > 3 ORDER BY COUNT(*) DESC";
    let note = counted(&v, sql, "CLIENT").expect("rewritten");
    assert_eq!(
        note.rewritten,
        "SELECT CLIENT_gender FROM lucy_view GROUP BY CLIENT_gender HAVING COUNT(DISTINCT CLIENT_id) > 3 ORDER BY COUNT(DISTINCT CLIENT_id) DESC"
    );
    let sql = "SELECT (SELECT COUNT(*) FROM lucy_view) AS n";
    let note = counted(&v, sql, "CLIENT").expect("rewritten");
    assert_eq!(note.rewritten, "SELECT (SELECT COUNT(DISTINCT CLIENT_id) AS \"COUNT(*)\" FROM lucy_view) AS n");
    assert_eq!(rows(&v, &note.rewritten), rows(&v, "SELECT COUNT(DISTINCT client_id) FROM PAYMENT"));
}

#[test]
fn counts_that_already_count_the_table_are_left_alone() {
    let v = clients_payments();
    // PAYMENT's rows appear once each: COUNT(*) counts them already.
    assert!(counted(&v, "SELECT CLIENT_gender, COUNT(*) FROM lucy_view GROUP BY CLIENT_gender", "PAYMENT").is_none());
    // Other counts say what they count.
    for sql in [
        "SELECT COUNT(DISTINCT CLIENT_name) FROM lucy_view",
        "SELECT COUNT(PAYMENT_date) FROM lucy_view",
        "SELECT CLIENT_name FROM lucy_view",
        "SELECT COUNT(*) OVER () FROM lucy_view",
        "SELECT COUNT(*) FROM CLIENT",
    ] {
        assert!(counted(&v, sql, "CLIENT").is_none(), "{sql}");
    }
    // An instance the view lacks, or a view without repeats.
    assert!(counted(&v, "SELECT COUNT(*) FROM lucy_view", "LOCATION").is_none());
    let single = view(&["CLIENT"], &[("CLIENT", "gender")]);
    assert!(counted(&single, "SELECT COUNT(*) FROM lucy_view", "CLIENT").is_none());
}

#[test]
fn postgres_keeps_the_column_name_it_gave() {
    let v = clients_payments();
    let sql = "SELECT CLIENT_gender, COUNT(*) FROM lucy_view GROUP BY CLIENT_gender";
    let note = rewrite(sql, &v.grain, &v.view_name, "CLIENT", Dialect::Postgres).unwrap().expect("rewritten");
    assert_eq!(
        note.rewritten,
        "SELECT CLIENT_gender, COUNT(DISTINCT CLIENT_id) AS \"count\" FROM lucy_view GROUP BY CLIENT_gender"
    );
}

#[test]
fn unparsable_sql_is_a_clear_error() {
    let v = clients_payments();
    let e = rewrite("SELECT COUNT(* FROM", &v.grain, &v.view_name, "CLIENT", Dialect::Sqlite).unwrap_err();
    assert!(e.to_string().contains("COUNT(*) analysis cannot parse"), "{e}");
}
