//! `--inner-branches named` (issue 23; the default since session 19): after
//! the answer, the pattern branch the question names and the SQL reads is
//! joined by INNER JOIN instead of LEFT JOIN and the same SQL runs again.
//! End to end through `lucy ask` with a scripted OpenAI-compatible mock on
//! 127.0.0.1 on the paper's DDO data: the view joins RETENTION's BONUS
//! branch by LEFT JOIN, so "the total retention bonus amount per client"
//! also lists the clients whose retention strategies gave no bonus (a NULL
//! total), which the gold SQL does not.

mod support;

use lucy::llm::mock::{MockServer, Script};
use support::{rows_of, rule, sqlite_rows};

const MODEL: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels/ddo.json");
const DB: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels/ddo.sqlite");
const SQL: &str = "SELECT CLIENT_name, SUM(BONUS_amount) AS total_bonus FROM lucy_view GROUP BY CLIENT_name";

fn ask(question: &str, sql: &str, extra: &[&str]) -> support::Asked {
    let script = Script::new().rule(rule(&["I created a view table lucy_view"], &[sql]));
    let server = MockServer::start(script);
    let mut args = vec!["--tables", "CLIENT,RETENTION,BONUS"];
    args.extend_from_slice(extra);
    support::ask_traced(&server.url(), MODEL, DB, question, &args)
}

#[test]
fn the_branch_the_answer_is_about_is_inner_joined() {
    let gold = sqlite_rows(
        DB,
        "SELECT CLIENT.name, SUM(BONUS.amount) FROM CLIENT JOIN RETENTION ON RETENTION.client_id = CLIENT.id \
         JOIN BONUS ON BONUS.retention_id = RETENTION.id GROUP BY CLIENT.name",
    );
    assert!(gold.len() >= 5, "{gold:?}");
    let q = "What is the total retention bonus amount per client?";

    // Off: the LEFT JOIN's clients without a bonus come along.
    let off = ask(q, SQL, &["--inner-branches", "off"]);
    let rows = rows_of(&off.json());
    assert!(rows.len() > gold.len() && gold.is_subset(&rows), "{rows:?}");
    assert!(off.trace().get("inner_branches").is_none());

    // The default: BONUS by INNER JOIN, the gold rows.
    let on = ask(q, SQL, &[]);
    assert_eq!(rows_of(&on.json()), gold);
    let t = on.trace();
    assert_eq!(t["inner_branches"]["tables"], serde_json::json!(["BONUS"]), "{}", t["inner_branches"]);
    assert_eq!(t["inner_branches"]["used"], true);
    let view_sql = t["inner_branches"]["view"]["result"]["view_sql"].as_str().unwrap();
    assert!(view_sql.contains("INNER JOIN BONUS"), "{view_sql}");
    let explain = on.explain();
    assert!(
        explain.contains("== Inner branches (--inner-branches): BONUS by INNER JOIN instead of LEFT JOIN"),
        "{explain}"
    );
    assert!(explain.contains(&format!("the same SQL over it: {} row(s), the answer", gold.len())), "{explain}");
}

#[test]
fn a_question_about_missing_rows_keeps_the_left_join() {
    // "no bonus": the NULLs are the answer.
    let sql = "SELECT CLIENT_name FROM lucy_view WHERE BONUS_id IS NULL";
    let a = ask("Which clients have a retention strategy but no bonus?", sql, &[]);
    assert!(!rows_of(&a.json()).is_empty());
    assert!(a.trace().get("inner_branches").is_none(), "{}", a.trace()["inner_branches"]);
    // Not named by the question: left alone too.
    let a = ask("What is the total amount per client?", SQL, &[]);
    assert!(a.trace().get("inner_branches").is_none(), "{}", a.trace()["inner_branches"]);
}
