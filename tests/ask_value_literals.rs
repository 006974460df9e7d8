//! `--value-literals on` (issue 23; the default since session 21): a text
//! filter whose literal the database does not hold in that column is read
//! from the one other view column that holds it (the question holds it
//! too), or respelled to the one value of its own column it equals up to
//! case and accents. End to end through `lucy ask` with a scripted
//! OpenAI-compatible mock on 127.0.0.1 on the paper's DDO data: QueryView
//! filters the city on a country's name, as the embedded model filtered
//! `countries_Continent = 'France'` on the Spider sample (question 113).

mod support;

use lucy::llm::mock::{MockServer, Script};
use support::{rows_of, rule, run_mock, sqlite_rows};

const MODEL: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels/ddo.json");
const DB: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels/ddo.sqlite");
const GOLD: &str =
    "SELECT CLIENT.name FROM CLIENT JOIN LOCATION ON LOCATION.id = CLIENT.loc_id WHERE LOCATION.country = 'Ireland'";

fn ask(question: &str, sql: &str, extra: &[&str]) -> (support::Asked, MockServer) {
    let server = MockServer::start(Script::new().rule(rule(&["I created a view table lucy_view"], &[sql])));
    let mut args = vec!["--tables", "CLIENT,LOCATION"];
    args.extend_from_slice(extra);
    (support::ask_traced(&server.url(), MODEL, DB, question, &args), server)
}

#[test]
fn a_value_of_another_column_moves_the_filter_there() {
    let gold = sqlite_rows(DB, GOLD);
    assert!(!gold.is_empty());
    let q = "Which clients are located in ireland?";
    let sql = "SELECT CLIENT_name FROM lucy_view WHERE LOCATION_city = 'Ireland'";

    // Off: no city is called Ireland, no row.
    let (off, _) = ask(q, sql, &["--value-literals", "off"]);
    assert!(rows_of(&off.json()).is_empty());
    assert!(off.trace()["query_view"]["attempts"][0].get("values").is_none());

    // The default: the country holds it, the gold rows.
    let (on, server) = ask(q, sql, &[]);
    assert_eq!(rows_of(&on.json()), gold);
    let t = on.trace();
    let a = &t["query_view"]["attempts"][0];
    assert_eq!(a["values"]["changes"][0], "LOCATION_city = 'Ireland' → LOCATION_country = 'Ireland'", "{a}");
    assert_eq!(t["query_view"]["sql"], "SELECT CLIENT_name FROM lucy_view WHERE LOCATION_country = 'Ireland'");
    assert!(on.explain().contains("filter mended by the database's values: LOCATION_city = 'Ireland'"));

    // The human output says so, before the SQL.
    let out = run_mock(
        &["ask", "--model", MODEL, q, "--tables", "CLIENT,LOCATION", "--samples", "1", "--execute", DB],
        &server.url(),
    );
    assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("-- SQL rewritten: filter mended by the database's values"), "{text}");
}

#[test]
fn a_value_in_other_case_is_respelled_and_an_unknown_one_left() {
    let gold = sqlite_rows(DB, GOLD);
    let (a, _) = ask(
        "Which clients are in Ireland?",
        "SELECT CLIENT_name FROM lucy_view WHERE LOCATION_country = 'IRELAND'",
        &[],
    );
    assert_eq!(rows_of(&a.json()), gold);
    assert_eq!(
        a.trace()["query_view"]["attempts"][0]["values"]["changes"][0],
        "LOCATION_country = 'IRELAND' → LOCATION_country = 'Ireland'"
    );

    // Held nowhere: the filter stays as written (an empty answer is the truth).
    let (a, _) = ask(
        "Which clients are in Atlantis?",
        "SELECT CLIENT_name FROM lucy_view WHERE LOCATION_country = 'Atlantis'",
        &[],
    );
    assert!(rows_of(&a.json()).is_empty());
    assert!(a.trace()["query_view"]["attempts"][0].get("values").is_none());
}
