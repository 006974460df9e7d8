use super::*;

fn opts() -> ServeOptions {
    ServeOptions {
        addr: "127.0.0.1:0".parse().unwrap(),
        models: vec![PathBuf::from(concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels/ddo.json"))],
        dbs: Vec::new(),
        token: None,
        max_concurrent: 2,
        request_timeout: 30.0,
        max_body: 1 << 20,
        trace_cap: 3,
    }
}

#[test]
fn non_loopback_bind_needs_a_long_token() {
    let mut o = opts();
    o.addr = "0.0.0.0:8000".parse().unwrap();
    let e = o.check().unwrap_err().to_string();
    assert!(e.contains("LUCY_SERVE_TOKEN") && e.contains("0.0.0.0:8000"), "{e}");
    o.token = Some("short".into());
    assert!(o.check().unwrap_err().to_string().contains("shorter than 16"));
    o.token = Some("0123456789abcdef0123".into());
    o.check().unwrap();
    assert!(opts().check().is_ok(), "loopback needs no token");
}

#[test]
fn host_names_and_token_comparison() {
    assert_eq!(host_name("127.0.0.1:8000"), "127.0.0.1");
    assert_eq!(host_name("[::1]:8000"), "::1");
    assert_eq!(host_name("localhost"), "localhost");
    assert_eq!(host_name("evil.example:80"), "evil.example");
    assert!(same(b"abc", b"abc"));
    assert!(!same(b"abc", b"abd"));
    assert!(!same(b"abc", b"abcd"));
}

#[test]
fn a_bad_model_is_a_startup_error_naming_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let bad = dir.path().join("broken.json");
    std::fs::write(&bad, r#"{"name": "x", "tables": [{"name": "A", "columns": []}], "relationships": [{"from": "A", "to": "B", "cardinality": "M:1", "on": [["a", "b"]]}]}"#).unwrap();
    let mut o = opts();
    o.models = vec![dir.path().to_path_buf()];
    let e = state(o, None).err().expect("must fail").to_string();
    assert!(e.contains("broken.json"), "{e}");
}

#[test]
fn duplicate_model_names_are_refused() {
    let mut o = opts();
    o.models.push(o.models[0].clone());
    let e = state(o, None).err().expect("must fail").to_string();
    assert!(e.contains("both define the dbModel `ddo`"), "{e}");
}

#[test]
fn models_load_with_their_sibling_database_and_reload() {
    let st = state(opts(), None).unwrap();
    let m = st.model("DDO").unwrap();
    assert!(m.database.as_ref().unwrap().ends_with("ddo.sqlite"));
    assert!(st.model("nope").unwrap_err().to_string().contains("loaded models: ddo"));
    assert_eq!(st.reload().unwrap(), 1);
}

#[test]
fn trace_store_is_bounded() {
    let st = state(opts(), None).unwrap();
    let ids: Vec<String> = (0..5).map(|_| st.keep_trace(Default::default())).collect();
    assert!(st.trace(&ids[0]).is_none() && st.trace(&ids[1]).is_none());
    assert!(ids[2..].iter().all(|id| st.trace(id).is_some()));
}

#[test]
fn openapi_document_references_only_defined_schemas() {
    let doc = openapi::document();
    assert_eq!(doc["openapi"], "3.1.0");
    let schemas = doc["components"]["schemas"].as_object().unwrap();
    for name in [
        "ViewBody",
        "ViewResponse",
        "AskBody",
        "AskResponse",
        "ErrorBody",
        "ModelList",
        "ModelDetail",
        "PhaseEvent",
        "ProgressEvent",
        "ViewResult",
    ] {
        assert!(schemas.contains_key(name), "{name} missing from components: {:?}", schemas.keys().collect::<Vec<_>>());
    }
    let text = doc.to_string();
    let mut rest = text.as_str();
    let pat = "\"$ref\":\"#/components/schemas/";
    while let Some(i) = rest.find(pat) {
        let after = &rest[i + pat.len()..];
        let name = &after[..after.find('"').unwrap()];
        assert!(schemas.contains_key(name), "dangling $ref {name}");
        rest = after;
    }
    for path in ["/v1/models", "/v1/models/{name}", "/v1/view", "/v1/ask", "/v1/traces/{id}", "/healthz"] {
        assert!(doc["paths"][path].is_object(), "{path}");
    }
}
