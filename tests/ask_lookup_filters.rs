//! `--lookup-filters named` (issue 23; the default since session 19): a
//! lookup row the question names filters the view after the answer, and
//! the same SQL runs again. End to end through `lucy ask` with a scripted
//! OpenAI-compatible mock on 127.0.0.1 on ACME (the curated model, the
//! benchmark's SQLite under ../shared): "policy holder" names `Party_Role`'s
//! `PolicyHolder` row, so the view keeps the `Agreement_Party_Role` rows
//! with code `PH`; QueryView's SQL does not filter the role itself.

mod support;

use lucy::llm::mock::{MockServer, Script};
use support::{rows_of, rule, sqlite_rows};

const MODEL: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels/acme.json");
const DB: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/benchmarks/acme/acme_small.sqlite");
const SQL: &str = "SELECT Agreement_Party_Role_Party_Identifier, COUNT(DISTINCT Policy_Policy_Number) \
                   FROM lucy_view GROUP BY Agreement_Party_Role_Party_Identifier";

fn ask(question: &str, sql: &str, extra: &[&str]) -> support::Asked {
    let script = Script::new().rule(rule(&["I created a view table lucy_view"], &[sql]));
    let server = MockServer::start(script);
    let mut args = vec!["--tables", "Policy,Agreement_Party_Role"];
    args.extend_from_slice(extra);
    support::ask_traced(&server.url(), MODEL, DB, question, &args)
}

#[test]
fn a_role_the_question_names_filters_the_view() {
    let gold = sqlite_rows(
        DB,
        "SELECT a.Party_Identifier, COUNT(DISTINCT p.Policy_Number) FROM Agreement_Party_Role a \
         JOIN Policy p ON p.Policy_Identifier = a.Agreement_Identifier WHERE a.Party_Role_Code = 'PH' \
         GROUP BY a.Party_Identifier",
    );
    assert!(!gold.is_empty());
    let q = "How many policies does each policy holder have by policy holder id?";

    // Off: every role's parties (agents too).
    let off = ask(q, SQL, &["--lookup-filters", "off"]);
    let rows = rows_of(&off.json());
    assert!(rows.len() > gold.len(), "{rows:?}");
    assert!(off.trace().get("lookup_filters").is_none());

    // The default: the policy holders only.
    let on = ask(q, SQL, &[]);
    assert_eq!(rows_of(&on.json()), gold);
    let t = on.trace();
    let lf = &t["lookup_filters"];
    assert_eq!(lf["filters"][0]["column"]["table"], "Agreement_Party_Role", "{lf}");
    assert_eq!(lf["filters"][0]["values"], serde_json::json!(["PH"]));
    assert_eq!(lf["because"][0], "Party_Role.Party_Role_Name 'PolicyHolder'");
    assert_eq!(lf["used"], true);
    let explain = on.explain();
    assert!(
        explain.contains(
            "Agreement_Party_Role.Party_Role_Code = 'PH': the question names Party_Role.Party_Role_Name 'PolicyHolder'"
        ),
        "{explain}"
    );
}

#[test]
fn no_filter_when_the_sql_reads_the_code_or_two_roles_are_named() {
    let by_code = "SELECT Agreement_Party_Role_Party_Identifier FROM lucy_view \
                   WHERE Agreement_Party_Role_Party_Role_Code = 'AG'";
    let a = ask("Which agents sold policies?", by_code, &[]);
    assert!(a.trace().get("lookup_filters").is_none(), "{}", a.trace()["lookup_filters"]);
    let a = ask("Which policy holders are also agents?", SQL, &[]);
    assert!(a.trace().get("lookup_filters").is_none(), "{}", a.trace()["lookup_filters"]);
}
