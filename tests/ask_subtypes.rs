//! MatchTables' subtype question (issue 17, item 5): a pattern root whose
//! children are exclusive subtypes (`"exclusive": true` on the star), when
//! the pattern-children answer chose two or more of them, gets one
//! `match_roles` prompt offering one instance per chosen kind
//! (`ROOT@CHILD`) plus the plain instance; the kept subtype instances get
//! their own attribute prompt and the view holds one root instance per
//! kind, each with its child. End to end through `lucy ask` with a
//! scripted OpenAI-compatible mock on 127.0.0.1, on a temp copy of the
//! paper's DDO in which PAYAMOUNT is the root of an exclusive star (TAX |
//! SUPERCHARGE | INCOME) and PAYMENT a plain core table; the SQL runs on
//! dbmodels/ddo.sqlite. One chosen kind, or an exclusive *inner* node (the
//! bundled DDO shape, where GenerateView has no subtype instances), costs
//! no extra call.

mod support;

use std::path::{Path, PathBuf};

use lucy::llm::mock::{MockServer, Script};
use support::{json_ok, rows_of, rule, run, run_mock, sqlite_rows, trace_and_explain};

const MODEL: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels/ddo.json");
const DB: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels/ddo.sqlite");
const Q: &str = "For each payment, show its tax amount next to its supercharge amount.";
const SUBTYPE_PROMPT: &str = "Each row of the table PAYAMOUNT is exactly one of several kinds";
const ROLE_WORDS: &str = "can be joined to the other tables of the question in several ways";

/// DDO with its PAYMENT star replaced by an exclusive star rooted at
/// PAYAMOUNT (PAYMENT becomes a plain core table).
fn exclusive_root_model(dir: &Path) -> PathBuf {
    let mut m: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(MODEL).unwrap()).unwrap();
    let patterns = m["patterns"].as_array_mut().unwrap();
    let star = patterns.iter_mut().find(|p| p["root"] == "PAYMENT").expect("DDO's PAYMENT star");
    *star = serde_json::json!({
        "kind": "star",
        "root": "PAYAMOUNT",
        "exclusive": true,
        "children": [{"table": "TAX"}, {"table": "SUPERCHARGE"}, {"table": "INCOME"}],
        "description": "Each payment amount is exactly one of TAX, SUPERCHARGE or INCOME."
    });
    let path = dir.join("ddo-exclusive.json");
    std::fs::write(&path, serde_json::to_string_pretty(&m).unwrap()).unwrap();
    path
}

/// The bundled DDO shape with PAYAMOUNT's node (inner, under PAYMENT)
/// marked exclusive.
fn exclusive_inner_model(dir: &Path) -> PathBuf {
    let mut m: serde_json::Value = serde_json::from_str(&std::fs::read_to_string(MODEL).unwrap()).unwrap();
    let patterns = m["patterns"].as_array_mut().unwrap();
    let star = patterns.iter_mut().find(|p| p["root"] == "PAYMENT").expect("DDO's PAYMENT star");
    star["children"][0]["exclusive"] = serde_json::json!(true);
    let path = dir.join("ddo-exclusive-inner.json");
    std::fs::write(&path, serde_json::to_string_pretty(&m).unwrap()).unwrap();
    path
}

/// The question's answers: PAYMENT and PAYAMOUNT, TAX and SUPERCHARGE
/// chosen under PAYAMOUNT, then `subtype_answers` for the subtype prompt.
fn script(children: &str, subtype_answers: &[&str]) -> Script {
    Script::new()
        .rule(rule(&["JSON schema of the database"], &["[\"PAYMENT\", \"PAYAMOUNT\"]"]))
        .rule(rule(&[SUBTYPE_PROMPT], subtype_answers))
        .rule(rule(&["The table PAYAMOUNT is part of a star"], &[children]))
        .rule(rule(&["The table PAYMENT is part of a star"], &["[\"PAYAMOUNT\", \"id\"]"]))
        .rule(rule(&["JSON schema of the table PAYAMOUNT", "is used in one role"], &["[\"amount\"]"]))
        .rule(rule(&["JSON schema of the table PAYMENT"], &["[\"id\"]"]))
        .rule(rule(&["JSON schema of the table"], &["[\"id\"]"]))
        .rule(rule(
            &["I created a view table lucy_view"],
            &["SELECT DISTINCT PAYMENT_id, PAYAMOUNT_TAX_amount, PAYAMOUNT_SUPERCHARGE_amount FROM lucy_view"],
        ))
}

#[test]
fn two_exclusive_kinds_get_one_subtype_prompt_and_two_instances() {
    let dir = tempfile::tempdir().unwrap();
    let model = exclusive_root_model(dir.path());
    let check = run(&["model", "check", model.to_str().unwrap()]);
    assert!(check.status.success(), "lucy model check: {}", String::from_utf8_lossy(&check.stdout));
    // One sample writes the instance the short way (`ROOT@CHILD`): read back
    // by the instance syntax.
    let server = MockServer::start(script(
        "[\"TAX\", \"SUPERCHARGE\", \"amount\"]",
        &[
            "[\"PAYAMOUNT@TAX.payamt_id\", \"PAYAMOUNT@SUPERCHARGE.payamt_id\"]",
            "[\"PAYAMOUNT@TAX\", \"PAYAMOUNT@SUPERCHARGE\"]",
        ],
    ));
    let trace = dir.path().join("t.json");
    let out = run_mock(
        &[
            "--json",
            "ask",
            "--model",
            model.to_str().unwrap(),
            Q,
            "--samples",
            "2",
            "--execute",
            DB,
            "--trace",
            trace.to_str().unwrap(),
            // The paper's view: each kept instance gets its attribute
            // prompt (the default view, of every column, asks none).
            "--view-columns",
            "selected",
        ],
        &server.url(),
    );
    let v = json_ok(&out);
    assert_eq!(
        v["tables"],
        serde_json::json!([
            "PAYMENT",
            "PAYAMOUNT@TAX.payamt_id",
            "PAYAMOUNT@SUPERCHARGE.payamt_id",
            "TAX",
            "SUPERCHARGE"
        ]),
        "the plain PAYAMOUNT was not kept"
    );

    // Exactly one subtype prompt, offering both kinds and the plain
    // instance, in the model's words, enum-constrained to those labels.
    let reqs = server.chat_requests();
    let sub: Vec<_> = reqs.iter().filter(|r| r.body.contains(SUBTYPE_PROMPT)).collect();
    assert_eq!(sub.len(), 1);
    let body = sub[0].json().unwrap();
    let prompt = body["messages"][0]["content"].as_str().unwrap();
    assert!(
        prompt.contains("- PAYAMOUNT@TAX.payamt_id: PAYAMOUNT as a TAX row: Marks a payment amount as a tax."),
        "{prompt}"
    );
    assert!(prompt.contains("- PAYAMOUNT@SUPERCHARGE.payamt_id: PAYAMOUNT as a SUPERCHARGE row"), "{prompt}");
    assert!(prompt.contains("- PAYAMOUNT: every PAYAMOUNT row, all kinds together"), "{prompt}");
    assert!(!prompt.contains("INCOME row"), "only the chosen kinds are offered: {prompt}");
    let schema = body["response_format"]["json_schema"]["schema"]["properties"]["answer"]["items"]["enum"].clone();
    assert_eq!(
        schema,
        serde_json::json!(["PAYAMOUNT@TAX.payamt_id", "PAYAMOUNT@SUPERCHARGE.payamt_id", "PAYAMOUNT"]),
        "{body}"
    );
    // One attribute prompt per kept subtype instance, naming its kind.
    let per_instance: Vec<_> = reqs.iter().filter(|r| r.body.contains("PAYAMOUNT is used in one role")).collect();
    assert_eq!(per_instance.len(), 2);
    assert!(per_instance.iter().any(|r| r.body.contains("PAYAMOUNT@TAX.payamt_id, PAYAMOUNT as a TAX row")));
    assert!(!reqs.iter().any(|r| r.body.contains(ROLE_WORDS)), "no relationship role prompt");

    // The view: one PAYAMOUNT instance per kind, named by it, each with
    // its child, and it runs on the DDO data.
    let view_sql = v["view"]["view_sql"].as_str().unwrap();
    assert!(
        view_sql.contains("PAYAMOUNT AS PAYAMOUNT_TAX") && view_sql.contains("PAYAMOUNT AS PAYAMOUNT_SUPERCHARGE"),
        "{view_sql}"
    );
    assert!(view_sql.contains("PAYAMOUNT_TAX.amount AS PAYAMOUNT_TAX_amount"), "{view_sql}");
    assert!(view_sql.contains("PAYAMOUNT_SUPERCHARGE.amount AS PAYAMOUNT_SUPERCHARGE_amount"), "{view_sql}");
    assert!(!view_sql.contains("PAYAMOUNT.amount"), "no plain PAYAMOUNT instance: {view_sql}");
    let from_view = rows_of(&v);
    let gold = sqlite_rows(
        DB,
        "SELECT DISTINCT p.id, a.amount, b.amount FROM PAYMENT p \
         JOIN PAYAMOUNT a ON a.pay_id = p.id JOIN TAX t ON t.payamt_id = a.id \
         JOIN PAYAMOUNT b ON b.pay_id = p.id JOIN SUPERCHARGE s ON s.payamt_id = b.id",
    );
    assert!(!gold.is_empty(), "the DDO data has payments with both a tax and a supercharge");
    assert_eq!(from_view, gold);

    // The trace and explain show the subtype step and the instances.
    let t = trace_and_explain(
        &trace,
        &["[match_roles PAYAMOUNT]", "[attributes PAYAMOUNT@SUPERCHARGE.payamt_id]", "PAYAMOUNT@TAX.payamt_id"],
    );
    let steps = t["match_tables"]["steps"].as_array().unwrap();
    let step = steps.iter().find(|s| s["prompt"] == "match_roles").unwrap();
    assert_eq!(step["subject"], "PAYAMOUNT");
    assert_eq!(step["tables"], serde_json::json!(["PAYAMOUNT@TAX.payamt_id", "PAYAMOUNT@SUPERCHARGE.payamt_id"]));
    assert_eq!(step["votes"][0], serde_json::json!({"item": "PAYAMOUNT@TAX.payamt_id", "votes": 2, "kept": true}));
}

/// The relevant tables of `lucy --json ask … --stop-after view` on `model`,
/// answered by `server`, with the kinds the question names and the single
/// marker kind's instance off (on by default since session 18): these
/// tests are about the subtype prompt alone.
fn view_tables(model: &Path, server: &MockServer) -> serde_json::Value {
    let args = ["--json", "ask", "--model", model.to_str().unwrap(), Q, "--stop-after", "view"];
    let off = ["--kind-names", "off", "--kind-instance", "off"];
    let out = run_mock(&[&args[..], &off[..]].concat(), &server.url());
    let v = json_ok(&out);
    v["tables"].clone()
}

#[test]
fn one_kind_or_an_exclusive_inner_node_costs_no_call() {
    let dir = tempfile::tempdir().unwrap();
    // One chosen kind: no subtype prompt, today's plain PAYAMOUNT.
    let model = exclusive_root_model(dir.path());
    let server = MockServer::start(script("[\"TAX\", \"amount\"]", &["[\"PAYAMOUNT@TAX.payamt_id\"]"]));
    assert_eq!(view_tables(&model, &server), serde_json::json!(["PAYMENT", "PAYAMOUNT", "TAX"]));
    let reqs = server.chat_requests();
    assert!(!reqs.iter().any(|r| r.body.contains(SUBTYPE_PROMPT)));
    assert_eq!(
        reqs.len(),
        2,
        "match_tables and PAYAMOUNT's pattern prompt (the default view of every column asks no attribute prompt)"
    );

    // PAYAMOUNT exclusive as an inner node of the PAYMENT star (DDO's
    // shape): GenerateView has no subtype instances of inner tables, so
    // nothing is asked even with two kinds chosen.
    let model = exclusive_inner_model(dir.path());
    let server =
        MockServer::start(script("[\"TAX\", \"SUPERCHARGE\", \"amount\"]", &["[\"PAYAMOUNT@TAX.payamt_id\"]"]));
    assert_eq!(view_tables(&model, &server), serde_json::json!(["PAYMENT", "PAYAMOUNT", "TAX", "SUPERCHARGE"]));
    assert!(!server.chat_requests().iter().any(|r| r.body.contains(SUBTYPE_PROMPT) || r.body.contains(ROLE_WORDS)));

    // Two kinds chosen, but the model keeps only the plain instance: as
    // without the question.
    let model = exclusive_root_model(dir.path());
    let server = MockServer::start(script("[\"TAX\", \"SUPERCHARGE\", \"amount\"]", &["[\"PAYAMOUNT\"]"]));
    assert_eq!(view_tables(&model, &server), serde_json::json!(["PAYMENT", "PAYAMOUNT", "TAX", "SUPERCHARGE"]));
}
