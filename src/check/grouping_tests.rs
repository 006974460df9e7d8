//! Adding the grouping a question asks "by" to a query that aggregated
//! every row into one, and the queries it never touches.

use super::*;

const V: &str = "lucy_view";

fn by(pairs: &[(&str, &str)]) -> Vec<(String, String)> {
    pairs.iter().map(|(p, a)| (p.to_string(), a.to_string())).collect()
}

fn run(sql: &str, pairs: &[(&str, &str)]) -> Option<GroupNote> {
    rewrite(sql, V, &by(pairs), Dialect::Sqlite).unwrap()
}

#[test]
fn a_total_by_policy_number_becomes_one_per_policy_number() {
    let n = run(
        "SELECT SUM(Policy_Amount_Premium_Policy_Amount) AS total FROM lucy_view",
        &[("policy number", "Policy_Policy_Number")],
    )
    .unwrap();
    assert_eq!(
        n.rewritten,
        "SELECT Policy_Policy_Number, SUM(Policy_Amount_Premium_Policy_Amount) AS total FROM lucy_view GROUP BY Policy_Policy_Number"
    );
    assert_eq!(n.columns, vec!["Policy_Policy_Number"]);
    assert!(n.describe().contains("\"policy number\""));
}

#[test]
fn several_phrases_and_arithmetic_over_aggregates() {
    let n = run(
        "SELECT SUM(a) / COUNT(DISTINCT b) FROM lucy_view AS v WHERE c > 1",
        &[("claim number", "Claim_Number"), ("catastrophe name", "Cat_Name"), ("claim no", "claim_number")],
    )
    .unwrap();
    assert_eq!(
        n.rewritten,
        "SELECT Claim_Number, Cat_Name, SUM(a) / COUNT(DISTINCT b) FROM lucy_view AS v WHERE c > 1 GROUP BY Claim_Number, Cat_Name"
    );
}

#[test]
fn queries_that_already_group_list_or_fix_the_column_are_left_alone() {
    let p = [("policy number", "Policy_Policy_Number")];
    for sql in [
        "SELECT Policy_Policy_Number, SUM(a) FROM lucy_view GROUP BY Policy_Policy_Number",
        "SELECT Policy_Policy_Number FROM lucy_view",
        "SELECT a + SUM(b) FROM lucy_view",
        "SELECT SUM(a) FROM lucy_view HAVING SUM(a) > 1",
        "SELECT SUM(a) FROM lucy_view LIMIT 1",
        "SELECT SUM(a) FROM lucy_view WHERE Policy_Policy_Number = '1'",
        "SELECT SUM(a) FROM lucy_view WHERE Policy_Policy_Number IS NULL",
        "SELECT SUM(a) FROM lucy_view WHERE Policy_Policy_Number IS NOT NULL AND Policy_Policy_Number <> '1'",
        "SELECT SUM(a) OVER () FROM lucy_view",
        "SELECT COUNT(*) FROM other_table",
        "SELECT SUM(a) FROM lucy_view UNION SELECT SUM(b) FROM lucy_view",
        "SELECT (SELECT MAX(a) FROM lucy_view) FROM lucy_view",
    ] {
        assert_eq!(run(sql, &p), None, "{sql}");
    }
    assert_eq!(run("SELECT SUM(a) FROM lucy_view", &[]), None);
}

#[test]
fn a_presence_test_alone_does_not_fix_the_column() {
    // "the loss amounts by claim number": the model kept the claims that
    // have a number and summed over all of them.
    let n = run(
        "SELECT SUM(lp) + SUM(lr) AS total FROM lucy_view WHERE Claim_Number IS NOT NULL",
        &[("claim number", "Claim_Number")],
    )
    .unwrap();
    assert_eq!(
        n.rewritten,
        "SELECT Claim_Number, SUM(lp) + SUM(lr) AS total FROM lucy_view WHERE Claim_Number IS NOT NULL GROUP BY Claim_Number"
    );
}
