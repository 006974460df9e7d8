//! One minimal bad model per validation rule: each must be reported with the
//! JSON path of the offending element (and never panic).

use lucy::error::ModelIssue;
use lucy::model::{parse, validate};
use lucy::{Error, SchemaGraph};
use serde_json::{json, Value};

/// A small valid model: A→B, C→A, D→C, junction J between A and B, and an
/// isolated table L.
fn base() -> Value {
    json!({
        "name": "t",
        "tables": [
            {"name": "A", "primary_key": ["id"], "columns": [{"name": "id"}, {"name": "b_id"}]},
            {"name": "B", "primary_key": ["id"], "columns": [{"name": "id"}]},
            {"name": "C", "primary_key": ["id"], "columns": [{"name": "id"}, {"name": "a_id"}]},
            {"name": "D", "primary_key": ["id"], "columns": [{"name": "id"}, {"name": "c_id"}]},
            {"name": "J", "primary_key": ["a_id", "b_id"], "columns": [{"name": "a_id"}, {"name": "b_id"}]},
            {"name": "L", "primary_key": ["id"], "columns": [{"name": "id"}]}
        ],
        "relationships": [
            {"from": "A", "to": "B", "cardinality": "M:1", "on": [["b_id", "id"]]},
            {"from": "C", "to": "A", "cardinality": "M:1", "on": [["a_id", "id"]]},
            {"from": "D", "to": "C", "cardinality": "M:1", "on": [["c_id", "id"]]},
            {"from": "J", "to": "A", "cardinality": "M:1", "on": [["a_id", "id"]]},
            {"from": "J", "to": "B", "cardinality": "M:1", "on": [["b_id", "id"]]}
        ],
        "patterns": []
    })
}

fn with(patch: impl FnOnce(&mut Value)) -> Value {
    let mut v = base();
    patch(&mut v);
    v
}

fn patterns(p: Value) -> Value {
    with(|v| v["patterns"] = p)
}

/// Parse errors or validation issues of a model, checking on the way that
/// `SchemaGraph::new` agrees with `validate::issues`.
fn issues_of_text(text: &str) -> Vec<ModelIssue> {
    match parse(text, Some("bad.json")) {
        Err(Error::Model(v)) => v,
        Err(e) => panic!("unexpected error kind: {e}"),
        Ok(m) => {
            let v = validate::issues(&m);
            match SchemaGraph::new(m) {
                Ok(_) => assert!(v.is_empty(), "graph built despite issues {v:?}"),
                Err(Error::Model(g)) => assert_eq!(g, v, "SchemaGraph::new reports the validation issues"),
                Err(e) => panic!("unexpected graph error {e}"),
            }
            v
        }
    }
}

fn issues_of(v: &Value) -> Vec<ModelIssue> {
    issues_of_text(&v.to_string())
}

/// Assert that some issue has exactly `path` and a message containing `needle`.
#[track_caller]
fn expect(issues: &[ModelIssue], path: &str, needle: &str) {
    assert!(
        issues.iter().any(|i| i.path == path && i.message.contains(needle)),
        "expected an issue at {path} containing {needle:?}, got:\n{}",
        issues.iter().map(|i| format!("  {i}")).collect::<Vec<_>>().join("\n")
    );
    for i in issues {
        assert!(!i.hint.is_empty(), "every issue has a hint: {i}");
    }
}

#[test]
fn the_base_model_is_valid() {
    assert_eq!(issues_of(&base()), vec![]);
}

// ---- JSON syntax and types -------------------------------------------------

#[test]
fn json_syntax_error_names_line_and_file() {
    let i = issues_of_text("{\"name\": \"t\", \"tables\": [}");
    expect(&i, "$", "line 1 column");
    assert_eq!(i[0].file.as_deref(), Some("bad.json"));
}

#[test]
fn truncated_json() {
    let text = base().to_string();
    expect(&issues_of_text(&text[..text.len() / 2]), "$", "end of JSON input");
}

#[test]
fn wrong_type_is_located() {
    let i = issues_of(&with(|v| v["tables"][0]["columns"][1]["nullable"] = json!("no")));
    expect(&i, "$.tables[0].columns[1].nullable", "invalid type");
}

#[test]
fn unknown_field_is_located() {
    let i = issues_of(&with(|v| v["relationships"][2]["cardinalty"] = json!("M:1")));
    expect(&i, "$.relationships[2].cardinalty", "unknown field `cardinalty`");
}

#[test]
fn unknown_cardinality() {
    let i = issues_of(&with(|v| v["relationships"][1]["cardinality"] = json!("M:N")));
    expect(&i, "$.relationships[1].cardinality", "unknown variant `M:N`");
    assert!(i[0].hint.contains("many_to_many"), "{}", i[0].hint);
}

#[test]
fn missing_required_field() {
    let i = issues_of(&with(|v| {
        v.as_object_mut().unwrap().remove("name");
    }));
    expect(&i, "$", "missing field `name`");
}

#[test]
fn unknown_top_level_field_suggests_the_right_one() {
    let i = issues_of(&with(|v| v["relationship"] = json!([])));
    expect(&i, "$.relationship", "unknown top-level field");
    assert!(i.iter().any(|x| x.hint.contains("relationships")));
}

#[test]
fn every_type_error_is_reported_not_just_the_first() {
    let i = issues_of(&with(|v| {
        v["tables"][0]["columns"][0]["name"] = json!(1);
        v["tables"][3]["primary_key"] = json!("id");
        v["relationships"][4]["on"] = json!([["b_id"]]);
    }));
    expect(&i, "$.tables[0].columns[0].name", "invalid type");
    expect(&i, "$.tables[3].primary_key", "invalid type");
    expect(&i, "$.relationships[4].on[0]", "invalid length");
    assert_eq!(i.len(), 3);
}

#[test]
fn pattern_with_unknown_kind() {
    let i = issues_of(&patterns(json!([{"kind": "galaxy", "root": "A", "children": []}])));
    expect(&i, "$.patterns[0].kind", "unknown variant `galaxy`");
}

// ---- names and keys --------------------------------------------------------

#[test]
fn duplicate_table_names_case_insensitive() {
    let i = issues_of(&with(|v| {
        v["tables"].as_array_mut().unwrap().push(json!({"name": "a", "columns": [{"name": "x"}]}));
    }));
    expect(&i, "$.tables[6].name", "duplicate table name `a`");
}

#[test]
fn duplicate_column_names_case_insensitive() {
    let i = issues_of(&with(|v| {
        v["tables"][1]["columns"].as_array_mut().unwrap().push(json!({"name": "ID"}));
    }));
    expect(&i, "$.tables[1].columns[1].name", "duplicate column `ID`");
}

#[test]
fn duplicate_relationship_names() {
    let i = issues_of(&with(|v| {
        v["relationships"][0]["name"] = json!("fk");
        v["relationships"][1]["name"] = json!("FK");
    }));
    expect(&i, "$.relationships[1].name", "duplicate relationship name `FK`");
}

#[test]
fn relationship_declared_twice() {
    let i = issues_of(&with(|v| {
        let r = v["relationships"][2].clone();
        v["relationships"].as_array_mut().unwrap().push(r);
    }));
    expect(&i, "$.relationships[5]", "same tables on the same columns");
}

#[test]
fn primary_key_column_must_exist() {
    let i = issues_of(&with(|v| v["tables"][2]["primary_key"] = json!(["ident"])));
    expect(&i, "$.tables[2].primary_key[0]", "primary key column `ident` is not a column of table `C`");
}

#[test]
fn table_without_columns() {
    let i = issues_of(&with(|v| v["tables"][5]["columns"] = json!([])));
    expect(&i, "$.tables[5].columns", "has no columns");
}

// ---- relationships ---------------------------------------------------------

#[test]
fn relationship_unknown_table_suggests_a_name() {
    let i = issues_of(&with(|v| v["relationships"][3]["to"] = json!("AA")));
    expect(&i, "$.relationships[3].to", "unknown table `AA`");
}

#[test]
fn relationship_unknown_column() {
    let i = issues_of(&with(|v| v["relationships"][3]["on"] = json!([["a_id", "idd"]])));
    expect(&i, "$.relationships[3].on[0][1]", "unknown column `idd` in table `A`");
}

#[test]
fn relationship_without_join_columns() {
    let i = issues_of(&with(|v| v["relationships"][0]["on"] = json!([])));
    expect(&i, "$.relationships[0].on", "no join columns");
}

// ---- patterns --------------------------------------------------------------

#[test]
fn lookup_unknown_table() {
    let i = issues_of(&patterns(json!([{"kind": "lookup", "tables": ["LL"]}])));
    expect(&i, "$.patterns[0].tables[0]", "unknown table `LL`");
}

#[test]
fn many_to_many_unknown_junction() {
    let i = issues_of(&patterns(json!([{"kind": "many_to_many", "junction": "JJ", "sides": ["A", "B"]}])));
    expect(&i, "$.patterns[0].junction", "unknown table `JJ`");
}

#[test]
fn junction_not_connected_to_a_side() {
    let i = issues_of(&patterns(json!([{"kind": "many_to_many", "junction": "J", "sides": ["A", "L"]}])));
    expect(&i, "$.patterns[0].sides[1]", "junction `J` has no relationship to side table `L`");
}

#[test]
fn junction_relationship_that_does_not_connect_its_side() {
    let i = issues_of(&patterns(json!([{
        "kind": "many_to_many", "junction": "J", "sides": ["A", "B"],
        "relationships": ["J(a_id)->A(id)", "A(b_id)->B(id)"]
    }])));
    expect(&i, "$.patterns[0].relationships[1]", "does not connect junction `J` and side `B`");
}

#[test]
fn junction_unknown_relationship_name() {
    let i = issues_of(&patterns(json!([{
        "kind": "many_to_many", "junction": "J", "sides": ["A", "B"], "relationships": ["nope", "J(b_id)->B(id)"]
    }])));
    expect(&i, "$.patterns[0].relationships[0]", "unknown relationship `nope`");
}

#[test]
fn junction_is_its_own_side() {
    let i = issues_of(&patterns(json!([{"kind": "many_to_many", "junction": "J", "sides": ["J", "B"]}])));
    expect(&i, "$.patterns[0].sides[0]", "both the junction and a side");
}

#[test]
fn ambiguous_junction_relationships() {
    let i = issues_of(&with(|v| {
        v["relationships"]
            .as_array_mut()
            .unwrap()
            .push(json!({"from": "J", "to": "A", "cardinality": "M:1", "on": [["b_id", "id"]]}));
        v["patterns"] = json!([{"kind": "many_to_many", "junction": "J", "sides": ["A", "B"]}]);
    }));
    expect(&i, "$.patterns[0].sides[0]", "ambiguous");
}

#[test]
fn snowflake_cycle_back_to_the_root() {
    let i = issues_of(&patterns(json!([{
        "kind": "snowflake", "root": "A",
        "children": [{"table": "C", "children": [{"table": "A"}]}]
    }])));
    expect(&i, "$.patterns[0].children[0].children[0].table", "not a tree");
}

#[test]
fn snowflake_table_repeated() {
    let i = issues_of(&patterns(json!([{
        "kind": "snowflake", "root": "A", "children": [{"table": "C"}, {"table": "c"}]
    }])));
    expect(
        &i,
        "$.patterns[0].children[1].table",
        "not a tree: `C` appears in the snowflake rooted at `A` as a second time",
    );
}

#[test]
fn tree_parent_and_child_without_relationship() {
    let i = issues_of(&patterns(json!([{"kind": "star", "root": "A", "children": [{"table": "D"}]}])));
    expect(&i, "$.patterns[0].children[0].table", "no relationship between `D` and its parent `A`");
}

#[test]
fn tree_unknown_inner_table() {
    let i = issues_of(&patterns(json!([{"kind": "star", "root": "A", "children": [{"table": "Q"}]}])));
    expect(&i, "$.patterns[0].children[0].table", "unknown table `Q`");
}

#[test]
fn tree_node_relationship_that_does_not_join_it() {
    let i = issues_of(&patterns(json!([{
        "kind": "star", "root": "A", "children": [{"table": "C", "relationship": "D(c_id)->C(id)"}]
    }])));
    expect(&i, "$.patterns[0].children[0].relationship", "does not join `C` to its parent `A`");
}

#[test]
fn tree_ambiguous_parent_relationship() {
    let i = issues_of(&with(|v| {
        v["tables"][2]["columns"].as_array_mut().unwrap().push(json!({"name": "a2_id"}));
        v["relationships"]
            .as_array_mut()
            .unwrap()
            .push(json!({"from": "C", "to": "A", "cardinality": "M:1", "on": [["a2_id", "id"]]}));
        v["patterns"] = json!([{"kind": "star", "root": "A", "children": [{"table": "C"}]}]);
    }));
    expect(&i, "$.patterns[0].children[0].table", "ambiguous");
    // Naming the relationship resolves it.
    let ok = with(|v| {
        v["tables"][2]["columns"].as_array_mut().unwrap().push(json!({"name": "a2_id"}));
        v["relationships"]
            .as_array_mut()
            .unwrap()
            .push(json!({"from": "C", "to": "A", "cardinality": "M:1", "on": [["a2_id", "id"]]}));
        v["patterns"] =
            json!([{"kind": "star", "root": "A", "children": [{"table": "C", "relationship": "C(a2_id)->A(id)"}]}]);
    });
    assert_eq!(issues_of(&ok), vec![]);
}

#[test]
fn tree_without_inner_tables() {
    let i = issues_of(&patterns(json!([{"kind": "star", "root": "A", "children": []}])));
    expect(&i, "$.patterns[0].children", "has no inner tables");
}

// ---- conflicting roles -----------------------------------------------------

#[test]
fn inner_table_of_two_trees() {
    let i = issues_of(&patterns(json!([
        {"kind": "star", "root": "A", "children": [{"table": "C"}]},
        {"kind": "star", "root": "D", "children": [{"table": "C"}]}
    ])));
    expect(&i, "$.patterns[1].children[0].table", "`C` is an inner table of two trees");
}

#[test]
fn root_of_two_trees() {
    let i = issues_of(&patterns(json!([
        {"kind": "star", "root": "A", "children": [{"table": "C"}]},
        {"kind": "snowflake", "root": "a", "children": [{"table": "B"}]}
    ])));
    expect(&i, "$.patterns[1].root", "is the root of two patterns");
}

#[test]
fn root_that_is_inner_table_of_another_tree() {
    let i = issues_of(&patterns(json!([
        {"kind": "star", "root": "A", "children": [{"table": "C"}]},
        {"kind": "star", "root": "C", "children": [{"table": "D"}]}
    ])));
    expect(
        &i,
        "$.patterns[1].root",
        "`C` is the root of a star ($.patterns[1]) and an inner table of the star rooted at `A` ($.patterns[0])",
    );
}

#[test]
fn lookup_that_is_a_junction() {
    let i = issues_of(&patterns(json!([
        {"kind": "many_to_many", "junction": "J", "sides": ["A", "B"]},
        {"kind": "lookup", "tables": ["J"]}
    ])));
    expect(&i, "$.patterns[1].tables[0]", "lookup table `J` is also the junction");
}

#[test]
fn lookup_that_is_a_root() {
    let i = issues_of(&patterns(json!([
        {"kind": "lookup", "tables": ["A"]},
        {"kind": "star", "root": "A", "children": [{"table": "C"}]}
    ])));
    expect(&i, "$.patterns[0].tables[0]", "lookup table `A` is also the root");
}

#[test]
fn lookup_that_is_an_inner_table() {
    let i = issues_of(&patterns(json!([
        {"kind": "lookup", "tables": ["C"]},
        {"kind": "star", "root": "A", "children": [{"table": "C"}]}
    ])));
    expect(&i, "$.patterns[0].tables[0]", "lookup table `C` is also an inner table");
}

#[test]
fn lookup_declared_twice() {
    let i = issues_of(&patterns(json!([
        {"kind": "lookup", "tables": ["L"]},
        {"kind": "lookup", "tables": ["l"]}
    ])));
    expect(&i, "$.patterns[1].tables[0]", "declared a lookup twice");
}

#[test]
fn junction_that_is_an_inner_table() {
    let i = issues_of(&patterns(json!([
        {"kind": "star", "root": "A", "children": [{"table": "J"}]},
        {"kind": "many_to_many", "junction": "J", "sides": ["A", "B"]}
    ])));
    expect(&i, "$.patterns[1].junction", "junction `J` is also an inner table");
}

#[test]
fn junction_of_two_patterns() {
    let i = issues_of(&patterns(json!([
        {"kind": "many_to_many", "junction": "J", "sides": ["A", "B"]},
        {"kind": "many_to_many", "junction": "J", "sides": ["B", "A"]}
    ])));
    expect(&i, "$.patterns[1].junction", "junction of two m:m patterns");
}

#[test]
fn many_to_many_side_that_is_an_inner_table() {
    let i = issues_of(&patterns(json!([
        {"kind": "star", "root": "A", "children": [{"table": "B"}]},
        {"kind": "many_to_many", "junction": "J", "sides": ["A", "B"]}
    ])));
    expect(&i, "$.patterns[1].sides[1]", "m:m side `B` is an inner table");
}

// ---- constraints -----------------------------------------------------------

#[test]
fn forbid_unknown_table() {
    let i = issues_of(&with(|v| v["constraints"] = json!({"forbid_tables": ["Z"]})));
    expect(&i, "$.constraints.forbid_tables[0]", "unknown table `Z`");
}

#[test]
fn require_unknown_table() {
    let i = issues_of(&with(|v| v["constraints"] = json!({"require_tables": ["B", "Bee"]})));
    expect(&i, "$.constraints.require_tables[1]", "unknown table `Bee`");
}

#[test]
fn table_both_forbidden_and_required() {
    let i = issues_of(&with(|v| v["constraints"] = json!({"forbid_tables": ["B"], "require_tables": ["b"]})));
    expect(&i, "$.constraints.require_tables[0]", "both required and forbidden");
}

#[test]
fn forbidden_relationship_that_matches_nothing() {
    let i = issues_of(&with(|v| v["constraints"] = json!({"forbid_relationships": ["A(x)->B(id)"]})));
    expect(&i, "$.constraints.forbid_relationships[0]", "matches no relationship");
}

#[test]
fn forbidden_pair_without_relationship() {
    let i = issues_of(&with(|v| v["constraints"] = json!({"forbid_relationships": ["A-L"]})));
    expect(&i, "$.constraints.forbid_relationships[0]", "no relationship between `A` and `L`");
}

#[test]
fn forbidden_relationship_forms_that_resolve() {
    let v = with(|v| {
        v["relationships"][0]["name"] = json!("a_to_b");
        v["constraints"] = json!({"forbid_relationships": ["A_TO_B", "j-a", "C(a_id)->A(id)"]});
    });
    assert_eq!(issues_of(&v), vec![]);
    let g = SchemaGraph::new(parse(&v.to_string(), None).unwrap()).unwrap();
    assert_eq!(g.forbidden_relationships(), vec![0, 1, 3]);
}

// ---- reporting -------------------------------------------------------------

#[test]
fn all_issues_are_collected_and_check_names_the_file() {
    let v = with(|v| {
        v["relationships"][0]["from"] = json!("X");
        v["tables"][1]["primary_key"] = json!(["nope"]);
        v["patterns"] = json!([{"kind": "lookup", "tables": ["Y"]}]);
        v["constraints"] = json!({"forbid_tables": ["Z"]});
    });
    let m = parse(&v.to_string(), None).unwrap();
    let Err(Error::Model(issues)) = validate::check(&m, Some("models/bad.json")) else { panic!("must fail") };
    assert_eq!(issues.len(), 4, "{issues:?}");
    assert!(issues.iter().all(|i| i.file.as_deref() == Some("models/bad.json")));
    let text = Error::Model(issues).to_string();
    assert!(text.contains("models/bad.json: $.relationships[0].from: unknown table `X`"), "{text}");
}

#[test]
fn role_names_are_plain_described_only_when_named_and_unique_per_table() {
    // C has two relationships to A: both roles `owner` -> duplicate at A.
    let v = with(|v| {
        v["tables"][2]["columns"].as_array_mut().unwrap().push(json!({"name": "a2_id"}));
        let rels = v["relationships"].as_array_mut().unwrap();
        rels[1]["role"] = json!("owner");
        rels.push(json!({"from": "C", "to": "A", "cardinality": "M:1", "on": [["a2_id", "id"]], "role": "Owner"}));
        rels[0]["role"] = json!("bad role");
        rels[2]["role_description"] = json!("a description without a role");
    });
    let is = issues_of(&v);
    expect(&is, "$.relationships[5].role", "also the role of $.relationships[1]");
    expect(&is, "$.relationships[0].role", "not a plain name");
    expect(&is, "$.relationships[2].role_description", "names none");
    assert_eq!(is.len(), 3, "{is:?}");
    // The same role name on relationships of different tables is fine.
    let ok = with(|v| {
        let rels = v["relationships"].as_array_mut().unwrap();
        rels[0]["role"] = json!("owner");
        rels[2]["role"] = json!("owner");
        rels[2]["role_description"] = json!("the C a D belongs to");
    });
    assert!(issues_of(&ok).is_empty(), "{:?}", issues_of(&ok));
}

#[test]
fn exclusive_children_need_two_and_show_in_model_show() {
    // A star rooted at A: C with children D and (via a new table E) E.
    let tree = |exclusive_kids: Value| {
        with(|v| {
            v["tables"]
                .as_array_mut()
                .unwrap()
                .push(json!({"name": "E", "primary_key": ["id"], "columns": [{"name": "id"}, {"name": "c_id"}]}));
            v["relationships"]
                .as_array_mut()
                .unwrap()
                .push(json!({"from": "E", "to": "C", "cardinality": "M:1", "on": [["c_id", "id"]]}));
            v["relationships"][1]["role"] = json!("parent_a");
            v["relationships"][1]["role_description"] = json!("the A a C belongs to");
            v["patterns"] = json!([{"kind": "star", "root": "A", "children": [{"table": "C", "exclusive": true, "children": exclusive_kids}]}]);
        })
    };
    let bad = tree(json!([{"table": "D"}]));
    let is = issues_of(&bad);
    expect(&is, "$.patterns[0].children[0].exclusive", "marks its children exclusive but has 1 child table");
    assert_eq!(is.len(), 1, "{is:?}");
    let good = tree(json!([{"table": "D"}, {"table": "E"}]));
    assert!(issues_of(&good).is_empty(), "{:?}", issues_of(&good));
    let g = SchemaGraph::new(parse(&good.to_string(), None).unwrap()).unwrap();
    let c = g.table_id("C").unwrap();
    assert!(g.exclusive_children(c) && !g.exclusive_children(g.table_id("A").unwrap()));
    let text = lucy::graph::render::show_text(&g);
    assert!(text.contains("└ D (exclusive: each row is one kind)"), "{text}");
    assert!(text.contains("role A: parent_a — the A a C belongs to"), "{text}");
}

#[test]
fn an_exclusive_star_root_needs_two_children() {
    // The root itself may say its children are exclusive (`Pattern::Star::exclusive`).
    let star = |kids: Value| {
        with(|v| v["patterns"] = json!([{"kind": "star", "root": "C", "exclusive": true, "children": kids}]))
    };
    let bad = star(json!([{"table": "D"}]));
    let is = issues_of(&bad);
    expect(&is, "$.patterns[0].exclusive", "`C` marks its children exclusive but has 1 child table");
    assert_eq!(is.len(), 1, "{is:?}");
    let v = with(|v| {
        v["tables"]
            .as_array_mut()
            .unwrap()
            .push(json!({"name": "E", "primary_key": ["id"], "columns": [{"name": "id"}, {"name": "c_id"}]}));
        v["relationships"]
            .as_array_mut()
            .unwrap()
            .push(json!({"from": "E", "to": "C", "cardinality": "M:1", "on": [["c_id", "id"]]}));
        v["patterns"] = json!([{"kind": "snowflake", "root": "C", "exclusive": true, "children": [{"table": "D"}, {"table": "E"}]}]);
    });
    assert!(issues_of(&v).is_empty(), "{:?}", issues_of(&v));
    let g = SchemaGraph::new(parse(&v.to_string(), None).unwrap()).unwrap();
    assert!(g.exclusive_children(g.table_id("C").unwrap()));
    assert!(lucy::graph::render::show_text(&g).contains("└ E (exclusive: each row is one kind)"));
}

#[test]
fn via_names_a_third_table_joined_to_both_ends() {
    // A→B short-cuts J (J joins A and B): valid.
    let ok = with(|v| v["relationships"][0]["via"] = json!("J"));
    assert_eq!(issues_of(&ok), vec![]);
    let bad = with(|v| {
        let rels = v["relationships"].as_array_mut().unwrap();
        rels[0]["via"] = json!("Q"); // unknown
        rels[1]["via"] = json!("A"); // C→A names its own end
        rels[2]["via"] = json!("L"); // D→C: L joins neither
    });
    let is = issues_of(&bad);
    expect(&is, "$.relationships[0].via", "unknown table `Q`");
    expect(&is, "$.relationships[1].via", "its own end `A`");
    expect(&is, "$.relationships[2].via", "no relationship joins `L` and `D`");
    expect(&is, "$.relationships[2].via", "no relationship joins `L` and `C`");
    assert_eq!(is.len(), 4, "{is:?}");
}
