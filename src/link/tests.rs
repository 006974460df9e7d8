//! MatchTables on the paper's DDO examples with scripted answers.

use super::*;
use crate::llm::fake::FakeChat;

use crate::graph::fixtures::ddo;

const Q1: &str =
    "List customers who use datacenters with names starting with 'dev'. Output clients and datacenters names.";
const Q2: &str = "List resource pool names with CPU overhead limit greater than runtime overall usage by 100";

fn run_with(chat: &FakeChat, q: &str, opts: &MatchOptions) -> (Result<()>, MatchTrace) {
    let g = ddo();
    let mut t = MatchTrace::default();
    let r = match_tables(&g, q, opts, chat, &Prompts::embedded(), &mut t);
    if let Ok(found) = &r {
        // The ids returned and the names traced say the same.
        let mut tables: Vec<String> = found.tables.iter().map(|&x| g.name(x).to_string()).collect();
        tables.extend(found.roles.iter().map(|r| g.instance_label(r.table, Some(r.rel))));
        let mut traced = t.tables.clone();
        if found.roles.is_empty() {
            assert_eq!(tables, traced);
        }
        tables.sort();
        traced.sort();
        assert_eq!(tables, traced);
        let cols: Vec<ColumnRef> =
            found.columns.iter().map(|&c| g.column_names(c)).map(|(a, b)| ColumnRef::new(a, b)).collect();
        assert_eq!(cols, t.attributes);
    }
    (r.map(|_| ()), t)
}

#[test]
fn q1_core_tables_then_attributes() {
    let chat = FakeChat::new()
        .on(
            &["JSON schema of the database"],
            &["[\"CLIENT\", \"DATACENTER\"]", "['CLIENT', 'DATACENTER', 'LOCATION']", "CLIENT, DATACENTER"],
        )
        .on(&["JSON schema of the table CLIENT"], &["[name, gender]", "[\"name\"]"])
        .on(&["JSON schema of the table DATACENTER"], &["```json\n[\"name\"]\n```"])
        // LOCATION, a lookup referenced by both other tables, gets its role
        // question (issue 17); the samples keep the client's location.
        .on(&["The table LOCATION can be joined"], &["[\"LOCATION@CLIENT.loc_id\"]", "[]"])
        .on(&["JSON schema of the table LOCATION"], &["[]"]);
    let (r, t) = run_with(&chat, Q1, &MatchOptions::default());
    r.unwrap();
    // Paper's rule: every named item, ranked by votes, at most 8.
    assert_eq!(t.tables, ["CLIENT", "DATACENTER", "LOCATION@CLIENT.loc_id"]);
    let s0 = &t.steps[0];
    assert_eq!(s0.prompt, "match_tables");
    assert_eq!(s0.votes[0], Vote { item: "CLIENT".into(), votes: 5, kept: true });
    assert_eq!(s0.votes[2], Vote { item: "LOCATION".into(), votes: 2, kept: true });
    assert!(s0.call.messages[0].content.contains("Properties of RESOURCEPOOL"));
    assert!(
        s0.call.messages[0].content.contains("Inner tables of its snowflake: CONFIG("),
        "pattern roots show their inner tables"
    );
    assert!(t.attributes.contains(&ColumnRef::new("CLIENT", "name")));
    assert!(t.attributes.contains(&ColumnRef::new("CLIENT", "gender")));
    assert!(t.attributes.contains(&ColumnRef::new("DATACENTER", "name")));
    let steps: Vec<&str> = t.steps.iter().map(|s| s.prompt.as_str()).collect();
    assert_eq!(steps, ["match_tables", "attributes", "attributes", "match_roles", "attributes"]);
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
        .on(
            &["JSON schema of the database"],
            &["[\"CLIENT\", \"DATACENTER\"]", "['CLIENT', 'DATACENTER', 'LOCATION']", "CLIENT, DATACENTER"],
        )
        .on(&["JSON schema of the table"], &["[name]"]);
    let opts = MatchOptions { min_votes: 3, ..MatchOptions::default() };
    let (r, t) = run_with(&chat, Q1, &opts);
    r.unwrap();
    assert_eq!(t.tables, ["CLIENT", "DATACENTER"]);
    assert_eq!(t.steps[0].votes[2], Vote { item: "LOCATION".into(), votes: 2, kept: false });
}

#[test]
fn core_majority_drops_the_tables_few_samples_named_unless_the_question_names_them() {
    let chat = || {
        FakeChat::new()
            .on(
                &["JSON schema of the database"],
                &["[\"CLIENT\", \"DATACENTER\"]", "['CLIENT', 'DATACENTER', 'PAYMENT']", "CLIENT, DATACENTER"],
            )
            .on(&["JSON schema of the table"], &["[name]"])
    };
    let opts = MatchOptions { core_majority: true, ..MatchOptions::default() };
    let (r, t) = run_with(&chat(), Q1, &opts);
    r.unwrap();
    assert_eq!(t.tables, ["CLIENT", "DATACENTER"]);
    assert!(
        t.steps[0].warnings.iter().any(|w| w.contains("--core-votes majority: dropped PAYMENT (2 of 5)")),
        "{:?}",
        t.steps[0].warnings
    );
    // Off: any vote keeps it.
    let (_, t) = run_with(&chat(), Q1, &MatchOptions { core_majority: false, ..MatchOptions::default() });
    assert!(t.tables.iter().any(|x| x == "PAYMENT"), "{:?}", t.tables);
    // Named by the question: kept with two votes.
    let (_, t) = run_with(&chat(), "Which clients use datacenters, and what payment did they make?", &opts);
    assert!(t.tables.iter().any(|x| x == "PAYMENT"), "{:?}", t.tables);
    // No table has a majority: all stay.
    let chat = FakeChat::new()
        .on(&["JSON schema of the database"], &["[CLIENT]", "[DATACENTER]", "[LOCATION]", "[COMPUTE]", "[PAYMENT]"])
        .on(&["JSON schema of the table"], &["[name]"]);
    let (_, t) = run_with(&chat, "Which of them are there?", &opts);
    assert!(!t.steps[0].warnings.iter().any(|w| w.contains("--core-votes")), "{:?}", t.steps[0].warnings);
    assert!(t.tables.iter().any(|x| x == "COMPUTE"), "{:?}", t.tables);
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
    assert_eq!(
        chat.phases(),
        ["match_tables", "pattern_children", "pattern_children", "pattern_children", "attributes", "attributes"]
    );
}

#[test]
fn without_attribute_prompts_the_same_tables_are_found_and_only_pattern_nodes_name_columns() {
    // What a view of every column (`view.columns=all`) asks: the tables,
    // the roles and the pattern walk as with the attribute prompts.
    let chat = || {
        FakeChat::new()
            .on(&["JSON schema of the database"], &["[\"RESOURCEPOOL\", \"CLIENT\", \"LOCATION\"]"])
            .on(&["The table RESOURCEPOOL is part of a snowflake"], &["[CONFIG, name]"])
            .on(&["The table CONFIG is part of a snowflake"], &["[CCPU]"])
            .on(&["The table RUNTIME is part of a snowflake"], &["[RCPU]"])
            .on(&["The table LOCATION can be joined"], &["[\"LOCATION@CLIENT.loc_id\"]"])
            .on(&["JSON schema of the table"], &["[name]"])
    };
    let asked = chat();
    let (r, with) = run_with(&asked, Q2, &MatchOptions { samples: 1, ..MatchOptions::default() });
    r.unwrap();
    assert!(asked.phases().iter().filter(|p| *p == "attributes").count() >= 2, "{:?}", asked.phases());
    let skipped = chat();
    let (r, without) =
        run_with(&skipped, Q2, &MatchOptions { samples: 1, attributes: false, ..MatchOptions::default() });
    r.unwrap();
    assert_eq!(without.tables, with.tables);
    // (Explorations of different core tables run concurrently: in any order.)
    let mut others = asked.phases();
    others.retain(|p| p != "attributes");
    others.sort();
    let mut phases = skipped.phases();
    phases.sort();
    assert_eq!(phases, others, "every other prompt is asked as before");
    assert_eq!(without.attributes, [ColumnRef::new("RESOURCEPOOL", "name")]);
    assert!(with.attributes.contains(&ColumnRef::new("CLIENT", "name")), "{:?}", with.attributes);
}

#[test]
fn unknown_and_near_miss_names_are_remapped_or_dropped_with_warnings() {
    let chat = FakeChat::new()
        .on(
            &["JSON schema of the database"],
            &["[\"CUSTOMER\", \"DATACENTRE\", \"clients\", \"CCPU\", \"resource_pool\"]"],
        )
        .on(&["The table RESOURCEPOOL"], &["[]"])
        .on(&["JSON schema of the table"], &["[CLIENT.name, nme, salary]"]);
    let (r, t) = run_with(&chat, Q1, &MatchOptions { samples: 1, ..MatchOptions::default() });
    r.unwrap();
    let s0 = &t.steps[0];
    assert!(
        s0.warnings.iter().any(|w| w.starts_with("dropped unknown table `CUSTOMER`") && w.contains("did you mean")),
        "{:?}",
        s0.warnings
    );
    let hows: Vec<(&str, &str, &str)> =
        s0.remaps.iter().map(|r| (r.from.as_str(), r.to.as_str(), r.how.as_str())).collect();
    assert!(hows.contains(&("DATACENTRE", "DATACENTER", "fuzzy")), "{hows:?}");
    assert!(hows.contains(&("clients", "CLIENT", "fuzzy")), "{hows:?}");
    assert!(hows.contains(&("CCPU", "RESOURCEPOOL", "inner_to_root")), "{hows:?}");
    assert!(hows.contains(&("resource_pool", "RESOURCEPOOL", "normalized")), "{hows:?}");
    assert_eq!(s0.tables, ["DATACENTER", "CLIENT", "RESOURCEPOOL"]);
    let client = t.steps.iter().find(|s| s.subject.as_deref() == Some("CLIENT")).unwrap();
    assert_eq!(client.attributes, vec![ColumnRef::new("CLIENT", "name")]);
    assert!(
        client.warnings.iter().any(|w| w.contains("unknown attribute of CLIENT `salary`")),
        "{:?}",
        client.warnings
    );
    assert!(client.remaps.iter().any(|r| r.from == "nme" && r.to == "name"), "{:?}", client.remaps);
}

#[test]
fn garbage_answers_give_an_empty_result_with_warnings() {
    let chat = FakeChat::new().on(
        &["JSON schema of the database"],
        &["", "I am sorry, I cannot help with that.", "[]", "{\"oops\": 1", "42"],
    );
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
    let chat = FakeChat::new()
        .on(&["JSON schema of the database"], &["[CLIENT, DATACENTER]"])
        .on(&["JSON schema of the table"], &["[name]"]);
    let opts = MatchOptions {
        samples: 1,
        restrict_core_tables: Some(vec!["client".into(), "CCPU".into(), "NOPE".into()]),
        ..MatchOptions::default()
    };
    let (r, t) = run_with(&chat, Q1, &opts);
    r.unwrap();
    assert_eq!(t.core_tables, ["CLIENT", "RESOURCEPOOL"]);
    assert_eq!(t.tables, ["CLIENT"]);
    assert!(t.warnings.iter().any(|w| w.contains("unknown table `NOPE`")));
    assert!(
        t.steps[0].warnings.iter().any(|w| w.contains("DATACENTER") && w.contains("not offered")),
        "{:?}",
        t.steps[0].warnings
    );
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

// Roles (issue 17, item 5).

const Q20: &str = "Which clients use a resource pool hosted in a datacenter located in their own city? Output client and datacenter names.";

fn role_labels(t: &MatchTrace) -> Vec<&str> {
    t.tables.iter().filter(|x| x.contains('@')).map(String::as_str).collect()
}

#[test]
fn a_table_referenced_twice_gets_one_role_question_and_attributes_per_instance() {
    let chat = FakeChat::new()
        .on(&["JSON schema of the database"], &["[CLIENT, DATACENTER, LOCATION]"])
        .on(&["The table LOCATION can be joined"], &["[\"LOCATION@CLIENT.loc_id\", \"LOCATION@DATACENTER.loc_id\"]"])
        .on(&["JSON schema of the table LOCATION", "LOCATION@CLIENT.loc_id, LOCATION joined to CLIENT"], &["[city]"])
        .on(
            &["JSON schema of the table LOCATION", "LOCATION@DATACENTER.loc_id, LOCATION joined to DATACENTER"],
            &["[city, country]"],
        )
        .on(&["JSON schema of the table"], &["[name]"]);
    let (r, t) = run_with(&chat, Q20, &MatchOptions { samples: 1, ..MatchOptions::default() });
    r.unwrap();
    assert_eq!(t.tables, ["CLIENT", "DATACENTER", "LOCATION@CLIENT.loc_id", "LOCATION@DATACENTER.loc_id"]);
    // The trace is in table order (the requests run concurrently).
    let steps: Vec<&str> = t.steps.iter().map(|s| s.prompt.as_str()).collect();
    assert_eq!(steps, ["match_tables", "attributes", "attributes", "match_roles", "attributes", "attributes"]);
    assert_eq!(chat.phases().len(), 6);
    let roles = t.steps.iter().find(|s| s.prompt == "match_roles").unwrap();
    assert_eq!(roles.subject.as_deref(), Some("LOCATION"));
    assert_eq!(roles.candidates, ["LOCATION@CLIENT.loc_id", "LOCATION@DATACENTER.loc_id"]);
    assert_eq!(roles.tables, ["LOCATION@CLIENT.loc_id", "LOCATION@DATACENTER.loc_id"]);
    let prompt = &roles.call.messages[0].content;
    assert!(prompt.contains("- LOCATION@CLIENT.loc_id: LOCATION joined to CLIENT on CLIENT.loc_id = LOCATION.id: Where a client is based."), "{prompt}");
    assert!(prompt.trim_end().ends_with(Q20), "the question comes last");
    // The answer is grammar-constrained to the offered labels.
    let reqs = chat.requests.lock().unwrap();
    let req = reqs.iter().find(|r| r.phase == "match_roles").unwrap();
    assert_eq!(
        req.response_schema.as_ref().unwrap()["items"]["enum"],
        serde_json::json!(["LOCATION@CLIENT.loc_id", "LOCATION@DATACENTER.loc_id"])
    );
    drop(reqs);
    // One attribute step per instance, named by the instance.
    let subjects: Vec<&str> =
        t.steps.iter().filter(|s| s.prompt == "attributes").filter_map(|s| s.subject.as_deref()).collect();
    assert_eq!(subjects, ["CLIENT", "DATACENTER", "LOCATION@CLIENT.loc_id", "LOCATION@DATACENTER.loc_id"]);
    assert!(
        t.attributes.contains(&ColumnRef::new("LOCATION", "city"))
            && t.attributes.contains(&ColumnRef::new("LOCATION", "country"))
    );
    // The relevance hands GenerateView two instances and no plain LOCATION.
    let g = ddo();
    let mut t2 = MatchTrace::default();
    let found = match_tables(
        &g,
        Q20,
        &MatchOptions { samples: 1, ..MatchOptions::default() },
        &chat,
        &Prompts::embedded(),
        &mut t2,
    )
    .unwrap();
    let loc = g.table_id("LOCATION").unwrap();
    assert!(!found.all_tables().contains(&loc));
    assert_eq!(found.roles.len(), 2);
    let view = crate::solve::generate(&g, &found, &crate::types::ViewOptions::default()).unwrap();
    let sql = view.view_sql.as_str();
    assert!(
        sql.contains("LOCATION AS LOCATION_CLIENT\n")
            && sql.contains("JOIN LOCATION AS LOCATION_DATACENTER ON DATACENTER.loc_id = LOCATION_DATACENTER.id"),
        "{sql}"
    );
    assert!(sql.contains("JOIN RSPOOL2CLIENT"), "clients reach datacenters through their pools: {sql}");
    assert!(!view.tables.iter().any(|x| x == "LOCATION"), "{:?}", view.tables);
}

#[test]
fn no_choice_costs_no_extra_call() {
    // LOCATION is referenced by one relevant table only.
    let chat = FakeChat::new()
        .on(&["JSON schema of the database"], &["[CLIENT, LOCATION]"])
        .on(&["JSON schema of the table"], &["[name, city]"]);
    let (r, t) = run_with(&chat, "In which city is each client?", &MatchOptions::default());
    r.unwrap();
    assert_eq!(chat.phases(), ["match_tables", "attributes", "attributes"]);
    assert_eq!(t.tables, ["CLIENT", "LOCATION"]);
    // A junction between its two relevant sides has no roles (the paper's
    // m:m path), and its sides are not referenced by it from the one side.
    let chat = FakeChat::new()
        .on(&["JSON schema of the database"], &["[CLIENT, RSPOOL2CLIENT, RESOURCEPOOL]"])
        .on(&["The table RESOURCEPOOL"], &["[name]"])
        .on(&["JSON schema of the table"], &["[name]"]);
    let (r, t) = run_with(&chat, "Which resource pools does each client use?", &MatchOptions::default());
    r.unwrap();
    assert!(!chat.phases().iter().any(|p| p == "match_roles"), "{:?}", chat.phases());
    assert!(role_labels(&t).is_empty());
}

#[test]
fn role_answers_are_voted_like_tables() {
    let chat = FakeChat::new()
        .on(&["JSON schema of the database"], &["[CLIENT, DATACENTER, LOCATION]"])
        .on(
            &["The table LOCATION can be joined"],
            &[
                "[\"LOCATION@CLIENT.loc_id\"]",
                "[\"LOCATION@CLIENT.loc_id\", \"LOCATION@DATACENTER.loc_id\"]",
                "[\"CLIENT.loc_id\"]",
                "[LOCATION@client]",
                "[]",
            ],
        )
        .on(&["JSON schema of the table"], &["[name]"]);
    let (r, t) = run_with(&chat, Q20, &MatchOptions { min_votes: 2, ..MatchOptions::default() });
    r.unwrap();
    let roles = t.steps.iter().find(|s| s.prompt == "match_roles").unwrap();
    assert_eq!(roles.votes[0], Vote { item: "LOCATION@CLIENT.loc_id".into(), votes: 4, kept: true });
    assert_eq!(roles.votes[1], Vote { item: "LOCATION@DATACENTER.loc_id".into(), votes: 1, kept: false });
    // The role alone and the other table's name map to the instance.
    assert!(roles.remaps.iter().any(|r| r.from == "CLIENT.loc_id" && r.how == "role"), "{:?}", roles.remaps);
    assert!(roles.remaps.iter().any(|r| r.from == "LOCATION@client" && r.how == "role"), "{:?}", roles.remaps);
    assert_eq!(role_labels(&t), ["LOCATION@CLIENT.loc_id"]);
    // Nothing kept: the plain instance, with a warning.
    let chat = FakeChat::new()
        .on(&["JSON schema of the database"], &["[CLIENT, DATACENTER, LOCATION]"])
        .on(&["The table LOCATION can be joined"], &["[]", "[LOCATION]"])
        .on(&["JSON schema of the table"], &["[name]"]);
    let (r, t) = run_with(&chat, Q20, &MatchOptions::default());
    r.unwrap();
    assert_eq!(t.tables, ["CLIENT", "DATACENTER", "LOCATION"]);
    let roles = t.steps.iter().find(|s| s.prompt == "match_roles").unwrap();
    assert!(roles.warnings.iter().any(|w| w.contains("no role of LOCATION kept")), "{:?}", roles.warnings);
    // The plain instance's attribute prompt is the usual one.
    let attr = t.steps.iter().rfind(|s| s.prompt == "attributes").unwrap();
    assert_eq!(attr.subject.as_deref(), Some("LOCATION"));
    assert!(!attr.call.messages[0].content.contains("is used in one role"));
}

#[test]
fn llm_errors_in_the_role_question_end_the_phase() {
    let chat = FakeChat::new()
        .on(&["JSON schema of the database"], &["[CLIENT, DATACENTER, LOCATION]"])
        .fail(&["The table LOCATION can be joined"], "HTTP 500")
        .on(&["JSON schema of the table"], &["[name]"]);
    let (r, t) = run_with(&chat, Q20, &MatchOptions { samples: 1, ..MatchOptions::default() });
    assert!(r.unwrap_err().to_string().contains("HTTP 500"));
    assert!(t.steps.iter().any(|s| s.prompt == "match_roles" && s.call.error.is_some()));
}

/// Adaptive consistency (issue 47): with `--min-votes 3` of 5, three
/// samples naming one attribute decide the table's vote; the other two are
/// not decoded, and the kept result is the full vote's. A split first batch
/// decodes the rest.
#[test]
fn a_decided_attribute_vote_stops_early_and_keeps_what_the_full_vote_keeps() {
    let chat = |client: &[&str]| {
        FakeChat::new()
            .on(&["JSON schema of the database"], &["[\"CLIENT\", \"DATACENTER\"]"])
            .on(&["JSON schema of the table CLIENT"], client)
            .on(&["JSON schema of the table DATACENTER"], &["[name]", "[name]", "[name]", "[name, id]", "[id]"])
    };
    let opts = MatchOptions { min_votes: 3, ..MatchOptions::default() };
    let full = MatchOptions { adaptive: false, ..opts.clone() };
    let unanimous = ["[name]", "[name]", "[name]", "[gender]", "[gender, name]"];
    let (r, t) = run_with(&chat(&unanimous).adaptive(), Q1, &opts);
    r.unwrap();
    let (r2, t2) = run_with(&chat(&unanimous).adaptive(), Q1, &full);
    r2.unwrap();
    assert_eq!((&t.tables, &t.attributes), (&t2.tables, &t2.attributes), "the full vote's result");
    let client = t.steps.iter().find(|s| s.subject.as_deref() == Some("CLIENT")).unwrap();
    assert_eq!((client.samples.len(), client.call.skipped), (3, 2), "{client:?}");
    assert!(!client.warnings.iter().any(|w| w.contains("asked for")), "{:?}", client.warnings);
    // The first prompt's vote is read again (the top-voted table): all five.
    assert_eq!(t.steps[0].samples.len(), 5);
    // DATACENTER's first three agree too; its full vote keeps the same.
    let dc = t.steps.iter().find(|s| s.subject.as_deref() == Some("DATACENTER")).unwrap();
    assert_eq!(dc.samples.len(), 3);
    // A split first batch: every sample is decoded.
    let split = ["[name]", "[gender]", "[name]", "[gender]", "[name]"];
    let (r, t) = run_with(&chat(&split).adaptive(), Q1, &opts);
    r.unwrap();
    let client = t.steps.iter().find(|s| s.subject.as_deref() == Some("CLIENT")).unwrap();
    assert_eq!((client.samples.len(), client.call.skipped), (5, 0));
    let (_, t2) = run_with(&chat(&split).adaptive(), Q1, &full);
    assert_eq!(t.attributes, t2.attributes);
    // The default vote (--min-votes 1) is decided by no first batch over
    // several candidates: never asked.
    let (r, t) = run_with(&chat(&unanimous).adaptive(), Q1, &MatchOptions::default());
    r.unwrap();
    assert!(t.steps.iter().all(|s| s.call.skipped == 0 && s.samples.len() == 5));
}
