//! `--drop-unjoinable` (issue 23): MatchTables' relevant tables lie in
//! parts of the model no relationship joins, so no view can hold them all.
//! End to end through `lucy ask` with a scripted OpenAI-compatible mock on
//! 127.0.0.1, on Spider's `flight_2` as lucy imports it
//! (dbmodels/spider/flight_2.json: `airlines` relates to no table) and its
//! SQLite database from `../shared/benchmarks/spider/`: the vote lists
//! `airports` beside `airlines` for a question about airlines alone.

mod support;

use lucy::llm::mock::{MockServer, Script};
use support::{rows_of, rule, sqlite_rows};

const MODEL: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels/spider/flight_2.json");
const DB: &str =
    concat!(env!("CARGO_MANIFEST_DIR"), "/../shared/benchmarks/spider/spiderman_dev_sqlite/flight_2.sqlite");
const QUESTION: &str = "List all airline names and their abbreviations in USA.";

fn script() -> Script {
    Script::new()
        .rule(rule(&["JSON schema of the database"], &["[\"airlines\", \"airports\"]"]))
        .rule(rule(&["JSON schema of the table airlines"], &["[\"Airline\", \"Abbreviation\"]"]))
        .rule(rule(&["JSON schema of the table airports"], &["[\"Country\"]"]))
        .rule(rule(
            &["I created a view table lucy_view"],
            &["SELECT airlines_Airline, airlines_Abbreviation FROM lucy_view WHERE airlines_Country = 'USA'"],
        ))
}

/// `lucy --json ask` with `extra` flags: its output (or the failure) and
/// trace.
fn ask(extra: &[&str]) -> support::Asked {
    let server = MockServer::start(script());
    support::ask_traced(&server.url(), MODEL, DB, QUESTION, extra)
}

#[test]
fn the_part_the_question_names_is_kept_and_answers() {
    if !std::path::Path::new(DB).exists() {
        panic!("{DB} is missing: the Spider data lives in ../shared beside the checkout (see README)");
    }
    let gold = sqlite_rows(DB, "SELECT Airline, Abbreviation FROM airlines WHERE Country = 'USA'");
    assert_eq!(gold.len(), 12);

    // Off: no relationship path between airlines and airports.
    let a = ask(&["--drop-unjoinable", "off"]);
    let t = a.trace();
    assert!(!a.out.status.success());
    assert_eq!(t["failure"]["phase"], "generate_view", "{}", t["failure"]);
    assert!(t["failure"]["message"].as_str().unwrap().contains("no relationship path"), "{}", t["failure"]);
    assert!(t.get("unjoinable").is_none());

    // On: airports dropped, the view over airlines alone, the gold rows.
    let a = ask(&["--drop-unjoinable", "on"]);
    let (v, t) = (a.json(), a.trace());
    assert_eq!(rows_of(&v), gold);
    let u = &t["unjoinable"];
    assert_eq!(u["kept"], serde_json::json!(["airlines"]), "{u}");
    assert_eq!(u["dropped"], serde_json::json!(["airports"]), "{u}");
    assert!(u["why"].as_str().unwrap().contains("names airlines"), "{u}");
    assert_eq!(u["first"]["result"]["status"], "infeasible", "{u}");
    assert_eq!(t["generate_view"]["request"]["tables"], serde_json::json!(["airlines"]));

    // `lucy explain` says what was dropped and why.
    let text = a.explain();
    assert!(text.contains("parts no relationship joins: [airlines] [airports]"), "{text}");
    assert!(text.contains("kept airlines (the question names airlines); dropped airports"), "{text}");
}
