//! `lucy mcp` with the official SDK's client (rmcp) over a child process's
//! stdio: list the tools and their input schemas, call `view`, `ask` (the
//! scripted mock LLM on loopback), `explain`, and an erroring call.

use rmcp::model::CallToolRequestParams;
use rmcp::transport::{ConfigureCommandExt, TokioChildProcess};
use rmcp::ServiceExt;
use serde_json::{json, Value};

use lucy::llm::mock::{MockServer, Script};

const MODEL: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels/ddo.json");
const SENTINEL: &str = "sk-SENTINEL-mcp-0123456789";
const Q1: &str =
    "List customers who use datacenters with names starting with 'dev'. Output clients and datacenters names.";

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn mcp_lists_tools_and_answers_view_ask_explain() {
    let mock = MockServer::start(
        Script::from_file(concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/mock/ddo-q1.json")).unwrap(),
    );
    let url = mock.url();
    let child = TokioChildProcess::new(tokio::process::Command::new(env!("CARGO_BIN_EXE_lucy")).configure(|c| {
        c.args(["mcp", "--models", MODEL, "--llm-url", &url, "--llm-model", "mock-model", "--llm-retries", "0"])
            .env("LUCY_API_KEY", SENTINEL)
            .env_remove("LUCY_LLM_MODEL")
            .env_remove("LUCY_LLM_URL");
    }))
    .expect("spawn lucy mcp");
    let client = ().serve(child).await.expect("MCP handshake");
    let info = client.peer_info().expect("server info");
    assert_eq!(info.server_info.as_ref().map(|s| s.name.as_str()), Some("lucy"));

    let tools = client.list_all_tools().await.unwrap();
    let mut names: Vec<String> = tools.iter().map(|t| t.name.to_string()).collect();
    names.sort();
    assert_eq!(names, ["ask", "check", "describe_model", "explain", "list_models", "view"]);
    let view_tool = tools.iter().find(|t| t.name == "view").unwrap();
    let schema = Value::Object((*view_tool.input_schema).clone());
    assert_eq!(schema["type"], "object");
    let required: Vec<&str> = schema["required"].as_array().unwrap().iter().map(|v| v.as_str().unwrap()).collect();
    assert!(required.contains(&"model") && required.contains(&"tables"), "{schema}");
    assert!(schema["properties"]["attributes"].is_object());

    let call = |name: &'static str, args: Value| {
        let args = args.as_object().unwrap().clone();
        let client = &client;
        async move { client.call_tool(CallToolRequestParams::new(name).with_arguments(args)).await.unwrap() }
    };
    let r = call("list_models", json!({})).await;
    assert_eq!(r.structured_content.as_ref().unwrap()["models"][0]["name"], "ddo");

    let r = call("view", json!({"model": "ddo", "tables": ["CLIENT", "DATACENTER"]})).await;
    assert_ne!(r.is_error, Some(true));
    let v = r.structured_content.unwrap();
    assert_eq!(v["status"], "optimal");
    assert!(v["view_sql"].as_str().unwrap().contains("RSPOOL2CLIENT"));

    let r = call("ask", json!({"model": "ddo", "question": Q1, "execute": true, "min_votes": 2})).await;
    assert_ne!(r.is_error, Some(true), "{:?}", r.content);
    let a = r.structured_content.unwrap();
    assert_eq!(a["rows"]["rows"].as_array().unwrap().len(), 29);
    assert!(!a.to_string().contains(SENTINEL));
    let id = a["trace_id"].as_str().unwrap().to_string();

    let r = call("explain", json!({"trace_id": id})).await;
    let e = r.structured_content.unwrap();
    assert!(e["report"].as_str().unwrap().contains("RESULT: ok"), "{e}");

    let r = call("check", json!({"model": "ddo", "sql": "SELECT c.name FROM CLIENT c JOIN LOCATION l ON l.id = c.loc_id JOIN DATACENTER d ON d.loc_id = l.id"})).await;
    let c = r.structured_content.unwrap();
    assert!(!c["findings"].as_array().unwrap().is_empty(), "CLIENT–LOCATION–DATACENTER passes through a lookup: {c}");

    // A tool error is a result the assistant can read, not a protocol failure.
    let r = call("view", json!({"model": "ddo", "tables": ["CLIENTS"]})).await;
    assert_eq!(r.is_error, Some(true));
    assert!(r.structured_content.unwrap()["error"].as_str().unwrap().contains("CLIENTS"));
    client.cancel().await.unwrap();
}
