//! docs/dbmodel.schema.json is generated from the types; keep it in sync.

#[test]
fn committed_schema_matches_the_types() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/docs/dbmodel.schema.json");
    let committed = std::fs::read_to_string(path).unwrap_or_default();
    let generated = lucy::model::schema::json_schema_text();
    assert!(
        committed == generated,
        "docs/dbmodel.schema.json is out of date with src/types/model.rs; regenerate it with\n    cargo run -- model schema > docs/dbmodel.schema.json"
    );
}

#[test]
fn schema_describes_the_format() {
    let s = lucy::model::schema::json_schema();
    let props = s["properties"].as_object().unwrap();
    for key in ["name", "tables", "relationships", "patterns", "constraints"] {
        assert!(props.contains_key(key), "schema lacks {key}");
    }
    let text = s.to_string();
    for kind in ["many_to_many", "star", "snowflake", "lookup", "1:M", "M:1", "1:1"] {
        assert!(text.contains(kind), "schema lacks {kind}");
    }
}
