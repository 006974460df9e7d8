//! `--narrow-view empty` (issue 23; session 17's default) and `unnamed`
//! (session 18's): an answer (with `empty`: one with no row) runs again over
//! the view without the relevant tables its SQL reads nothing of (with
//! `unnamed`: and the question does not name). End to end through `lucy
//! ask` with a scripted OpenAI-compatible mock on 127.0.0.1 on the paper's
//! DDO data: MatchTables lists RETENTION beside CLIENT and LOCATION, so the
//! view holds only clients with a retention strategy, and no client in
//! Nairobi has one.

mod support;

use lucy::llm::mock::{MockServer, Script};
use support::{rows_of, rule, sqlite_rows};

const MODEL: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels/ddo.json");
const DB: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels/ddo.sqlite");

fn script(city: &str) -> Script {
    Script::new()
        .rule(rule(&["JSON schema of the database"], &["[\"CLIENT\", \"LOCATION\", \"RETENTION\"]"]))
        .rule(rule(&["is part of a star"], &["[]"]))
        .rule(rule(&["JSON schema of the table"], &["[\"name\", \"city\"]"]))
        .rule(rule(
            &["I created a view table lucy_view"],
            &[&format!("SELECT CLIENT_name FROM lucy_view WHERE LOCATION_city = '{city}'")],
        ))
}

/// `lucy --json ask` about `city` with `extra` flags, and its trace.
fn ask(city: &str, extra: &[&str]) -> (serde_json::Value, serde_json::Value) {
    ask_question(city, &format!("Which clients are located in {city}?"), extra)
}

/// [`ask`] with the question's words given.
fn ask_question(city: &str, q: &str, extra: &[&str]) -> (serde_json::Value, serde_json::Value) {
    let server = MockServer::start(script(city));
    let a = support::ask_traced(&server.url(), MODEL, DB, q, extra);
    (a.json(), a.trace())
}

fn gold(city: &str) -> std::collections::BTreeSet<Vec<String>> {
    sqlite_rows(DB, &format!("SELECT c.name FROM CLIENT c JOIN LOCATION l ON l.id = c.loc_id WHERE l.city = '{city}'"))
}

#[test]
fn an_empty_answer_runs_again_without_the_unread_table() {
    let gold = gold("Nairobi");
    assert_eq!(gold.len(), 3);

    // Off: RETENTION's inner join leaves no client.
    let (off, t) = ask("Nairobi", &["--narrow-view", "off"]);
    assert!(rows_of(&off).is_empty(), "{off}");
    assert!(t.get("narrowed").is_none());

    // Empty (and the default, unnamed): dropped, run again, the three clients.
    let (on, t) = ask("Nairobi", &["--narrow-view", "empty"]);
    assert_eq!(rows_of(&on), gold);
    assert_eq!(t["narrowed"]["dropped"], serde_json::json!(["RETENTION"]), "{}", t["narrowed"]);
    assert_eq!(t["narrowed"]["used"], true);
    let (on, t2) = ask("Nairobi", &[]);
    assert_eq!(rows_of(&on), gold);
    assert_eq!(t2["narrowed"]["dropped"], t["narrowed"]["dropped"]);
}

#[test]
fn an_answer_with_rows_stands_unless_narrowing_is_on() {
    // Clients of this city have strategy rows: the view's answer has
    // rows, so `empty` leaves it alone; `on` narrows it all the same.
    let city = "Madrid";
    let (empty, t) = ask(city, &["--narrow-view", "empty"]);
    assert!(!rows_of(&empty).is_empty(), "{empty}");
    assert!(t.get("narrowed").is_none(), "{}", t["narrowed"]);
    let (_, t) = ask(city, &["--narrow-view", "on"]);
    assert_eq!(t["narrowed"]["dropped"], serde_json::json!(["RETENTION"]), "{}", t["narrowed"]);
}

#[test]
fn unnamed_narrows_every_answer_but_keeps_a_table_the_question_names() {
    // The default (unnamed): Madrid's answer has rows, but RETENTION, read
    // by nothing and named by nothing, still drops clients without a
    // strategy: narrowed, every Madrid client.
    let city = "Madrid";
    let gold = gold(city);
    let (v, t) = ask(city, &[]);
    assert_eq!(t["narrowed"]["dropped"], serde_json::json!(["RETENTION"]), "{}", t["narrowed"]);
    assert_eq!(rows_of(&v), gold);
    // The question names the retention strategies: RETENTION stays, and
    // the answer is the clients that have one.
    let q = "Which clients with a retention strategy are located in Madrid?";
    let (v, t) = ask_question(city, q, &[]);
    assert!(t.get("narrowed").is_none(), "{}", t["narrowed"]);
    let with = sqlite_rows(
        DB,
        "SELECT DISTINCT c.name FROM CLIENT c JOIN LOCATION l ON l.id = c.loc_id \
         JOIN RETENTION r ON r.client_id = c.id WHERE l.city = 'Madrid'",
    );
    assert!(with.len() < gold.len(), "{with:?} vs {gold:?}");
    assert_eq!(rows_of(&v), with);
}
