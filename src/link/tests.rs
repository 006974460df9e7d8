//! MatchTables on the paper's DDO examples with scripted answers.

use super::*;
use crate::llm::fake::FakeChat;

fn ddo() -> SchemaGraph {
    let m = crate::model::load(concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels/ddo.json")).unwrap();
    SchemaGraph::new(m).unwrap()
}

const Q1: &str = "List customers who use datacenters with names starting with 'dev'. Output clients and datacenters names.";
const Q2: &str = "List resource pool names with CPU overhead limit greater than runtime overall usage by 100";

fn run_with(chat: &FakeChat, q: &str, opts: &MatchOptions) -> (Result<()>, MatchTrace) {
    let g = ddo();
    let mut t = MatchTrace::default();
    let r = match_tables(&g, q, opts, chat, &Prompts::embedded(), &mut t);
    if let Ok(found) = &r {
        // The ids returned and the names traced say the same.
        let tables: Vec<&str> = found.tables.iter().map(|&x| g.name(x)).collect();
        assert_eq!(tables, t.tables);
        let cols: Vec<ColumnRef> = found.columns.iter().map(|&c| g.column_names(c)).map(|(a, b)| ColumnRef::new(a, b)).collect();
        assert_eq!(cols, t.attributes);
    }
    (r.map(|_| ()), t)
}

#[test]
fn q1_core_tables_then_attributes() {
    let chat = FakeChat::new()
        .on(&["JSON schema of the database"], &["[\"CLIENT\", \"DATACENTER\"]", "['CLIENT', 'DATACENTER', 'LOCATION']", "CLIENT, DATACENTER"])
        .on(&["JSON schema of the table CLIENT"], &["[name, gender]", "[\"name\"]"])
        .on(&["JSON schema of the table DATACENTER"], &["```json\n[\"name\"]\n```"])
        .on(&["JSON schema of the table LOCATION"], &["[]"]);
    let (r, t) = run_with(&chat, Q1, &MatchOptions::default());
    r.unwrap();
    // Paper's rule: every named item, ranked by votes, at most 8.
    assert_eq!(t.tables, ["CLIENT", "DATACENTER", "LOCATION"]);
    let s0 = &t.steps[0];
    assert_eq!(s0.prompt, "match_tables");
    assert_eq!(s0.votes[0], Vote { item: "CLIENT".into(), votes: 5, kept: true });
    assert_eq!(s0.votes[2], Vote { item: "LOCATION".into(), votes: 2, kept: true });
    assert!(s0.call.messages[0].content.contains("Properties of RESOURCEPOOL"));
    assert!(s0.call.messages[0].content.contains("Inner tables of its snowflake: CONFIG("), "pattern roots show their inner tables");
    assert!(t.attributes.contains(&ColumnRef::new("CLIENT", "name")));
    assert!(t.attributes.contains(&ColumnRef::new("CLIENT", "gender")));
    assert!(t.attributes.contains(&ColumnRef::new("DATACENTER", "name")));
    assert_eq!(chat.phases(), ["match_tables", "attributes", "attributes", "attributes"]);
    // Every request offered the enum of valid names.
    let reqs = chat.requests.lock().unwrap();
    assert_eq!(reqs[0].n, 5);
    assert_eq!(reqs[0].temperature, 0.2);
    let enum_ = &reqs[0].response_schema.as_ref().unwrap()["items"]["enum"];
    assert!(enum_.as_array().unwrap().iter().any(|v| v == "RSPOOL2CLIENT"));
    assert!(!enum_.as_array().unwrap().iter().any(|v| v == "CCPU"), "inner tables are not core");
}

#[test]
fn min_votes_option_drops_minority_items() {
    let chat = FakeChat::new()
        .on(&["JSON schema of the database"], &["[\"CLIENT\", \"DATACENTER\"]", "['CLIENT', 'DATACENTER', 'LOCATION']", "CLIENT, DATACENTER"])
        .on(&["JSON schema of the table"], &["[name]"]);
    let opts = MatchOptions { min_votes: 3, ..MatchOptions::default() };
    let (r, t) = run_with(&chat, Q1, &opts);
    r.unwrap();
    assert_eq!(t.tables, ["CLIENT", "DATACENTER"]);
    assert_eq!(t.steps[0].votes[2], Vote { item: "LOCATION".into(), votes: 2, kept: false });
}

#[test]
fn q2_walks_the_snowflake_breadth_first() {
    let chat = FakeChat::new()
        .on(&["JSON schema of the database"], &["[\"RESOURCEPOOL\"]"])
        .on(&["The table RESOURCEPOOL is part of a snowflake"], &["[CONFIG, RUNTIME, name]"])
        .on(&["The table CONFIG is part of a snowflake"], &["[CCPU]"])
        .on(&["The table RUNTIME is part of a snowflake"], &["[\"RCPU\"]"])
        .on(&["JSON schema of the table CCPU"], &["[overheadlimit]"])
        .on(&["JSON schema of the table RCPU"], &["[overallusage]"]);
    let (r, t) = run_with(&chat, Q2, &MatchOptions { samples: 1, ..MatchOptions::default() });
    r.unwrap();
    assert_eq!(t.tables, ["RESOURCEPOOL", "CONFIG", "RUNTIME", "CCPU", "RCPU"]);
    assert_eq!(
        t.attributes,
        vec![
            ColumnRef::new("RESOURCEPOOL", "name"),
            ColumnRef::new("CCPU", "overheadlimit"),
            ColumnRef::new("RCPU", "overallusage")
        ]
    );
    assert_eq!(chat.phases(), ["match_tables", "pattern_children", "pattern_children", "pattern_children", "attributes", "attributes"]);
}

#[test]
fn unknown_and_near_miss_names_are_remapped_or_dropped_with_warnings() {
    let chat = FakeChat::new()
        .on(&["JSON schema of the database"], &["[\"CUSTOMER\", \"DATACENTRE\", \"clients\", \"CCPU\", \"resource_pool\"]"])
        .on(&["The table RESOURCEPOOL"], &["[]"])
        .on(&["JSON schema of the table"], &["[CLIENT.name, nme, salary]"]);
    let (r, t) = run_with(&chat, Q1, &MatchOptions { samples: 1, ..MatchOptions::default() });
    r.unwrap();
    let s0 = &t.steps[0];
    assert!(s0.warnings.iter().any(|w| w.starts_with("dropped unknown table `CUSTOMER`") && w.contains("did you mean")), "{:?}", s0.warnings);
    let hows: Vec<(&str, &str, &str)> = s0.remaps.iter().map(|r| (r.from.as_str(), r.to.as_str(), r.how.as_str())).collect();
    assert!(hows.contains(&("DATACENTRE", "DATACENTER", "fuzzy")), "{hows:?}");
    assert!(hows.contains(&("clients", "CLIENT", "fuzzy")), "{hows:?}");
    assert!(hows.contains(&("CCPU", "RESOURCEPOOL", "inner_to_root")), "{hows:?}");
    assert!(hows.contains(&("resource_pool", "RESOURCEPOOL", "normalized")), "{hows:?}");
    assert_eq!(s0.tables, ["DATACENTER", "CLIENT", "RESOURCEPOOL"]);
    let client = t.steps.iter().find(|s| s.subject.as_deref() == Some("CLIENT")).unwrap();
    assert_eq!(client.attributes, vec![ColumnRef::new("CLIENT", "name")]);
    assert!(client.warnings.iter().any(|w| w.contains("unknown attribute of CLIENT `salary`")), "{:?}", client.warnings);
    assert!(client.remaps.iter().any(|r| r.from == "nme" && r.to == "name"), "{:?}", client.remaps);
}

#[test]
fn garbage_answers_give_an_empty_result_with_warnings() {
    let chat = FakeChat::new().on(&["JSON schema of the database"], &["", "I am sorry, I cannot help with that.", "[]", "{\"oops\": 1", "42"]);
    let (r, t) = run_with(&chat, Q1, &MatchOptions::default());
    r.unwrap();
    assert!(t.tables.is_empty());
    assert!(t.warnings.iter().any(|w| w.contains("found no relevant table")));
    let w = &t.steps[0].warnings;
    assert!(w.iter().any(|x| x.starts_with("sample 1 was empty")), "{w:?}");
    assert!(w.iter().any(|x| x.starts_with("sample 2 named no offered element")), "{w:?}");
    assert!(w.iter().any(|x| x.starts_with("sample 3 was an empty list")), "{w:?}");
    assert!(w.iter().any(|x| x.starts_with("sample 4 named no offered element")), "{w:?}");
    assert!(w.iter().any(|x| x == "dropped unknown table `42`"), "no silly suggestion: {w:?}");
}

#[test]
fn llm_errors_end_the_phase_and_keep_the_trace() {
    let chat = FakeChat::new().fail(&["JSON schema"], "HTTP 500 after 4 retries");
    let (r, t) = run_with(&chat, Q1, &MatchOptions::default());
    assert!(r.unwrap_err().to_string().contains("HTTP 500"));
    assert_eq!(t.steps.len(), 1);
    assert!(t.steps[0].call.error.as_deref().unwrap().contains("HTTP 500"));
}

#[test]
fn prefilter_restricts_core_tables() {
    let chat = FakeChat::new().on(&["JSON schema of the database"], &["[CLIENT, DATACENTER]"]).on(&["JSON schema of the table"], &["[name]"]);
    let opts = MatchOptions { samples: 1, restrict_core_tables: Some(vec!["client".into(), "CCPU".into(), "NOPE".into()]), ..MatchOptions::default() };
    let (r, t) = run_with(&chat, Q1, &opts);
    r.unwrap();
    assert_eq!(t.core_tables, ["CLIENT", "RESOURCEPOOL"]);
    assert_eq!(t.tables, ["CLIENT"]);
    assert!(t.warnings.iter().any(|w| w.contains("unknown table `NOPE`")));
    assert!(t.steps[0].warnings.iter().any(|w| w.contains("DATACENTER") && w.contains("not offered")), "{:?}", t.steps[0].warnings);
}

#[test]
fn bad_options_are_input_errors() {
    let chat = FakeChat::new();
    let (r, _) = run_with(&chat, Q1, &MatchOptions { samples: 2, min_votes: 3, ..MatchOptions::default() });
    assert!(r.unwrap_err().to_string().contains("--min-votes 3 exceeds --samples 2"));
}

#[test]
fn concurrent_exploration_merges_in_table_order() {
    // CLIENT's attribute answer arrives last, yet its step comes first.
    let chat = FakeChat::new()
        .slow("JSON schema of the table CLIENT", 150)
        .on(&["JSON schema of the database"], &["[CLIENT, DATACENTER, RESOURCEPOOL]"])
        .on(&["The table RESOURCEPOOL"], &["[name]"])
        .on(&["JSON schema of the table CLIENT"], &["[name]"])
        .on(&["JSON schema of the table DATACENTER"], &["[name]"]);
    let (r, t) = run_with(&chat, Q1, &MatchOptions { samples: 1, ..MatchOptions::default() });
    r.unwrap();
    let order: Vec<Option<&str>> = t.steps.iter().map(|s| s.subject.as_deref()).collect();
    assert_eq!(order, [None, Some("CLIENT"), Some("DATACENTER"), Some("RESOURCEPOOL")]);
    assert_eq!(t.tables, ["CLIENT", "DATACENTER", "RESOURCEPOOL"]);
    assert_eq!(t.cost.llm_calls, 4);
    assert_eq!(chat.phases().len(), 4);
}
