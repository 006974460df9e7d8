//! Hand-made cases for the benchmark metrics.

use super::*;
use crate::types::ColumnRef;

fn i(v: i64) -> Cell {
    Cell::Int(v)
}
fn r(v: f64) -> Cell {
    Cell::Real(v)
}
fn t(v: &str) -> Cell {
    Cell::Text(v.into())
}

#[test]
fn ex_ignores_row_order_without_order_by() {
    let gold = vec![vec![i(1), t("a")], vec![i(2), t("b")]];
    let pred = vec![vec![i(2), t("b")], vec![i(1), t("a")]];
    assert!(ex(&gold, &pred, false));
    assert!(!ex(&gold, &pred, true), "ORDER BY in the gold makes order matter");
    assert!(ex(&gold, &gold.clone(), true));
}

#[test]
fn ex_counts_duplicates() {
    let gold = vec![vec![t("a")], vec![t("a")], vec![t("b")]];
    let pred = vec![vec![t("a")], vec![t("b")], vec![t("b")]];
    assert!(!ex(&gold, &pred, false));
    let pred2 = vec![vec![t("a")], vec![t("b")]];
    assert!(!ex(&gold, &pred2, false));
    let pred3 = vec![vec![t("b")], vec![t("a")], vec![t("a")]];
    assert!(ex(&gold, &pred3, false));
}

#[test]
fn ex_numbers_nulls_and_text() {
    assert!(ex(&vec![vec![i(1)]], &vec![vec![r(1.0)]], false), "1 == 1.0");
    assert!(ex(&vec![vec![r(0.1 + 0.2)]], &vec![vec![r(0.3)]], false));
    assert!(ex(&vec![vec![r(12563.58)]], &vec![vec![r(12563.580000001)]], false));
    assert!(!ex(&vec![vec![r(1.0)]], &vec![vec![r(1.001)]], false));
    assert!(ex(&vec![vec![Cell::Null, i(3)]], &vec![vec![Cell::Null, i(3)]], false), "NULL matches NULL");
    assert!(!ex(&vec![vec![Cell::Null]], &vec![vec![i(0)]], false));
    assert!(!ex(&vec![vec![t("1")]], &vec![vec![i(1)]], false), "text never equals a number");
    assert!(!ex(&vec![vec![t("A")]], &vec![vec![t("a")]], false), "text is case-sensitive");
}

#[test]
fn ex_column_count_and_order_matter() {
    let gold = vec![vec![i(1), t("a")]];
    assert!(!ex(&gold, &vec![vec![t("a"), i(1)]], false));
    assert!(!ex(&gold, &vec![vec![i(1), t("a"), t("x")]], false));
    assert!(ex(&vec![], &vec![], false), "two empty results match");
    assert!(!ex(&vec![], &vec![vec![i(1)]], false));
}

#[test]
fn esx_accepts_extra_and_reordered_columns() {
    let gold = vec![vec![t("rp-1")], vec![t("rp-2")]];
    let pred = vec![vec![i(7), t("rp-2")], vec![i(3), t("rp-1")]];
    assert!(!ex(&gold, &pred, false));
    assert!(esx(&gold, &pred, false));
    let gold2 = vec![vec![t("a"), i(1)], vec![t("b"), i(2)]];
    let pred2 = vec![vec![i(1), t("x"), t("a")], vec![i(2), t("y"), t("b")]];
    assert!(esx(&gold2, &pred2, false), "columns may be permuted and interleaved");
}

#[test]
fn esx_requires_rows_to_line_up() {
    // Both gold columns appear, but never together in one row.
    let gold = vec![vec![t("a"), i(1)], vec![t("b"), i(2)]];
    let pred = vec![vec![t("a"), i(2)], vec![t("b"), i(1)]];
    assert!(!esx(&gold, &pred, false));
    // A missing gold column cannot be mapped.
    assert!(!esx(&gold, &vec![vec![t("a")], vec![t("b")]], false));
    // Injective: one predicted column cannot serve two gold columns.
    let gold3 = vec![vec![i(1), i(1)]];
    assert!(!esx(&gold3, &vec![vec![i(1)]], false));
    assert!(esx(&gold3, &vec![vec![i(1), t("z"), i(1)]], false));
}

#[test]
fn esx_ignores_duplicates_created_by_extra_columns() {
    // Gold: distinct clients; prediction adds the datacenter, so a client
    // using two datacenters appears twice.
    let gold = vec![vec![t("Acme")], vec![t("Beacon")]];
    let pred = vec![vec![t("Acme"), t("dc1")], vec![t("Acme"), t("dc2")], vec![t("Beacon"), t("dc1")]];
    assert!(esx(&gold, &pred, false));
    // When the gold itself has duplicates, multiplicities must agree.
    let gold_dup = vec![vec![t("Acme")], vec![t("Acme")], vec![t("Beacon")]];
    assert!(esx(&gold_dup, &pred, false));
    let pred_more = vec![vec![t("Acme"), i(1)], vec![t("Acme"), i(2)], vec![t("Acme"), i(3)], vec![t("Beacon"), i(1)]];
    assert!(!esx(&gold_dup, &pred_more, false));
}

#[test]
fn esx_respects_order_when_gold_is_ordered() {
    let gold = vec![vec![t("b")], vec![t("a")]];
    let pred_ok = vec![vec![i(2), t("b")], vec![i(1), t("a")]];
    let pred_bad = vec![vec![i(1), t("a")], vec![i(2), t("b")]];
    assert!(esx(&gold, &pred_ok, true));
    assert!(!esx(&gold, &pred_bad, true));
    assert!(esx(&gold, &pred_bad, false));
}

#[test]
fn coverage_is_fraction_of_gold() {
    let g: BTreeSet<&str> = ["a", "b", "c", "d"].into_iter().collect();
    let p: BTreeSet<&str> = ["a", "c", "x"].into_iter().collect();
    assert_eq!(coverage(&g, &p), 0.5);
    assert_eq!(coverage(&BTreeSet::<&str>::new(), &p), 1.0);
    assert_eq!(coverage(&g, &BTreeSet::new()), 0.0);
}

#[test]
fn cov_resolves_aliases_on_both_sides() {
    use crate::sql::analyze::analyze;
    use crate::types::Dialect;
    let gold = analyze(
        "SELECT T1.name FROM client AS T1 JOIN account AS T2 ON T1.id = T2.client_id WHERE T2.kind = 'x'",
        Dialect::Sqlite,
        None,
    )
    .unwrap();
    let pred =
        analyze("SELECT c.name FROM CLIENT c JOIN ACCOUNT a ON a.client_id = c.id", Dialect::Sqlite, None).unwrap();
    let c = cov(&gold, &pred);
    assert_eq!(c.cov_t, 1.0);
    assert_eq!(c.cov_a, 0.75, "account.kind is missing");
}

fn pair(a: &str, b: &str) -> JoinPair {
    let (at, ac) = a.split_once('.').unwrap();
    let (bt, bc) = b.split_once('.').unwrap();
    JoinPair::new(&ColumnRef::new(at, ac), &ColumnRef::new(bt, bc))
}

#[test]
fn join_accuracy_cases() {
    let gold: BTreeSet<JoinPair> = [pair("A.id", "B.a_id"), pair("B.id", "C.b_id")].into_iter().collect();
    let same = vec![vec![pair("a.id", "b.a_id")], vec![pair("c.b_id", "b.id")]];
    let j = join_accuracy(&gold, &same);
    assert!(j.matched && j.exact);
    // Composite key: the view joins on two columns, the gold on one.
    let composite = vec![vec![pair("a.id", "b.a_id"), pair("a.d", "b.d")], vec![pair("b.id", "c.b_id")]];
    let j = join_accuracy(&gold, &composite);
    assert!(j.matched && !j.exact);
    assert_eq!(j.extra, vec![pair("a.d", "b.d")]);
    // A different path.
    let other = vec![vec![pair("a.id", "b.a_id")], vec![pair("b.id", "d.b_id")], vec![pair("d.id", "c.d_id")]];
    let j = join_accuracy(&gold, &other);
    assert!(!j.matched);
    assert_eq!(j.missing, vec![pair("b.id", "c.b_id")]);
}
