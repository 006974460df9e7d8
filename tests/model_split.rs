//! The split-file form of Lucy Appendix D.1 as an import format.

use std::path::Path;

use lucy::graph::load as load_graph;
use lucy::model::load;
use lucy::types::{Cardinality, Pattern};
use lucy::Error;

const MAIN: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/split/financial.json");

#[test]
fn split_form_loads_into_a_dbmodel() {
    let m = load(MAIN).unwrap();
    assert_eq!(m.name, "financial_mini");
    let names: Vec<&str> = m.tables.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(names, ["Client", "District", "Account", "Disp"]);

    let client = &m.tables[0];
    assert_eq!(client.primary_key, ["client_id"]);
    assert!(client.description.as_deref().unwrap().starts_with("Focuses on client information"));
    let cols: Vec<(&str, &str, bool)> =
        client.columns.iter().map(|c| (c.name.as_str(), c.sql_type.as_str(), c.nullable)).collect();
    assert_eq!(
        cols,
        [
            ("client_id", "bigint", false),
            ("gender", "varchar(46)", false),
            ("birth_date", "date", false),
            ("district_id", "bigint", false)
        ]
    );
    assert_eq!(client.column("gender").unwrap().description.as_deref(), Some(" Description: 'F: female; M: male '"));
    assert!(m.tables[1].column("A3").unwrap().nullable, "DEFAULT NULL means nullable");

    assert_eq!(m.relationships.len(), 4);
    let r = &m.relationships[0];
    assert_eq!((r.name.as_deref(), r.from.as_str(), r.to.as_str()), (Some("Client, District"), "Client", "District"));
    assert_eq!(r.cardinality, Cardinality::ManyToOne);
    assert_eq!(r.on, [["district_id".to_string(), "district_id".to_string()]]);

    match &m.patterns[0] {
        Pattern::ManyToMany { junction, sides, relationships, .. } => {
            assert_eq!(junction, "Disp");
            assert_eq!(sides, &["Client".to_string(), "Account".to_string()]);
            assert_eq!(relationships.as_ref().unwrap(), &["Disp, Client".to_string(), "Disp, Account".to_string()]);
        }
        other => panic!("expected m:m, got {other:?}"),
    }
    assert!(matches!(&m.patterns[1], Pattern::Lookup { tables, .. } if tables == &["District"]));
    assert_eq!(m.constraints.forbid_relationships, ["Client-District"]);
}

#[test]
fn split_form_builds_a_graph() {
    let g = load_graph(MAIN).unwrap();
    let disp = g.table_id("disp").unwrap();
    let j = g.junction_of(disp).unwrap();
    assert_eq!(g.name(j.sides[0]), "Client");
    assert!(g.is_lookup(g.table_id("District").unwrap()));
    assert_eq!(g.forbidden_relationships(), vec![0]);
}

/// Copy the fixture to a temp dir, let `edit` break it, return the error.
fn broken(edit: impl FnOnce(&Path)) -> Vec<lucy::error::ModelIssue> {
    let src = Path::new(MAIN).parent().unwrap();
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir(dir.path().join("tables")).unwrap();
    for f in std::fs::read_dir(src.join("tables")).unwrap() {
        let f = f.unwrap().path();
        std::fs::copy(&f, dir.path().join("tables").join(f.file_name().unwrap())).unwrap();
    }
    std::fs::copy(MAIN, dir.path().join("financial.json")).unwrap();
    edit(dir.path());
    match load(dir.path().join("financial.json")) {
        Err(Error::Model(v)) => v,
        other => panic!("expected a model error, got {other:?}"),
    }
}

#[test]
fn missing_table_file_is_named() {
    let issues = broken(|d| std::fs::remove_file(d.join("tables/Disp.json")).unwrap());
    let i = &issues[0];
    assert_eq!(i.path, "$.tables.Disp.path");
    assert!(i.message.contains("cannot read") && i.message.contains("Disp.json"), "{i}");
    assert!(i.file.as_deref().unwrap().ends_with("financial.json"));
}

#[test]
fn syntax_error_in_a_types_file_names_that_file() {
    let issues =
        broken(|d| std::fs::write(d.join("tables/Account_types.json"), "{\"account_id\": {\"type\": ").unwrap());
    let i = &issues[0];
    assert!(i.file.as_deref().unwrap().ends_with("Account_types.json"), "{i}");
    assert!(i.message.contains("end of JSON input"), "{i}");
}

#[test]
fn bad_column_description_is_located_in_its_file() {
    let issues =
        broken(|d| std::fs::write(d.join("tables/District.json"), r#"{"NameField": "District", "A2": 7}"#).unwrap());
    let i = issues.iter().find(|i| i.path == "$.A2").expect("issue at $.A2");
    assert!(i.file.as_deref().unwrap().ends_with("District.json"));
}

#[test]
fn converted_model_is_validated() {
    let issues = broken(|d| {
        let p = d.join("financial.json");
        let text = std::fs::read_to_string(&p)
            .unwrap()
            .replace("\"m2m_middle_table\": \"Disp\"", "\"m2m_middle_table\": \"Dsp\"");
        std::fs::write(p, text).unwrap();
    });
    // Validation paths point at the main file's entries.
    assert!(
        issues
            .iter()
            .any(|i| i.path == "$.patterns[\"Account, Client\"].junction" && i.message.contains("unknown table `Dsp`")),
        "{issues:?}"
    );
}

#[test]
fn validation_issues_point_at_split_entries() {
    let issues = broken(|d| {
        let p = d.join("financial.json");
        let text = std::fs::read_to_string(&p)
            .unwrap()
            .replace("\"primary\": [\"account_id\"]", "\"primary\": [\"acct_id\"]")
            .replace(
                "\"foreign_relation_ref_table_keys\": [\"client_id\"]",
                "\"foreign_relation_ref_table_keys\": [\"clientid\"]",
            )
            .replace("\"forbid_relationships\": [\"Client-District\"]", "\"forbid_tables\": [\"Nope\"]");
        std::fs::write(p, text).unwrap();
    });
    let paths: Vec<&str> = issues.iter().map(|i| i.path.as_str()).collect();
    assert!(paths.contains(&"$.tables.Account.primary_key[0]"), "{paths:?}");
    assert!(paths.contains(&"$.constraints[\"Disp, Client\"].on[0][1]"), "{paths:?}");
    assert!(paths.contains(&"$.user_constraints.forbid_tables[0]"), "{paths:?}");
}
