//! `/openapi.json`: an OpenAPI 3.1 document whose schemas are generated
//! from the same Rust types the handlers (de)serialize, with schemars (the
//! crate that already generates `docs/dbmodel.schema.json`). OpenAPI 3.1
//! takes JSON Schema 2020-12 as is, so nothing is translated by hand.

use schemars::generate::SchemaSettings;
use schemars::{JsonSchema, SchemaGenerator};
use serde_json::{json, Map, Value};

use super::api::{
    AskBody, AskResponse, CheckBody, ExampleAdded, ExampleBody, ExampleList, Health, ModelDetail, ModelList,
    PhaseEvent, Reloaded, ViewBody, ViewResponse,
};
use super::error::ErrorBody;

/// Schemas of request bodies (deserialization contract) and of responses
/// (serialization contract), as `$ref`s into `components.schemas`.
struct Schemas {
    req: SchemaGenerator,
    resp: SchemaGenerator,
}

impl Schemas {
    fn new() -> Self {
        let settings = || SchemaSettings::draft2020_12().with(|s| s.definitions_path = "/components/schemas".into());
        Schemas {
            req: settings().for_deserialize().into_generator(),
            resp: settings().for_serialize().into_generator(),
        }
    }
    fn req<T: JsonSchema>(&mut self) -> Value {
        self.req.subschema_for::<T>().to_value()
    }
    fn resp<T: JsonSchema>(&mut self) -> Value {
        self.resp.subschema_for::<T>().to_value()
    }
    /// Every definition; a type whose request and response schemas differ
    /// keeps both, the request one renamed `<Name>Input`.
    fn components(mut self) -> Map<String, Value> {
        let mut out = self.resp.take_definitions(true);
        for (k, v) in self.req.take_definitions(true) {
            match out.get(&k) {
                Some(existing) if existing != &v => {
                    out.insert(format!("{k}Input"), v);
                }
                _ => {
                    out.insert(k, v);
                }
            }
        }
        out
    }
}

fn json_body(schema: Value) -> Value {
    json!({"content": {"application/json": {"schema": schema}}})
}

/// Error responses every operation may give, besides its own.
fn errors(err: &Value, codes: &[(&str, &str)]) -> Map<String, Value> {
    let mut m = Map::new();
    for (code, what) in codes {
        let mut r = json_body(err.clone());
        r["description"] = json!(what);
        m.insert((*code).to_string(), r);
    }
    m
}

fn op(
    summary: &str,
    description: &str,
    ok: Value,
    errs: Map<String, Value>,
    body: Option<Value>,
    params: Option<Value>,
) -> Value {
    let mut responses = Map::new();
    responses.insert("200".into(), ok);
    responses.extend(errs);
    let mut o = json!({"summary": summary, "description": description, "responses": responses});
    if let Some(b) = body {
        let mut rb = json_body(b);
        rb["required"] = json!(true);
        o["requestBody"] = rb;
    }
    if let Some(p) = params {
        o["parameters"] = p;
    }
    o
}

/// The OpenAPI document of `lucy serve`.
pub fn document() -> Value {
    let mut s = Schemas::new();
    let err = s.resp::<ErrorBody>();
    let model_list = s.resp::<ModelList>();
    let model_detail = s.resp::<ModelDetail>();
    let reloaded = s.resp::<Reloaded>();
    let health = s.resp::<Health>();
    let view_body = s.req::<ViewBody>();
    let view_resp = s.resp::<ViewResponse>();
    let ask_body = s.req::<AskBody>();
    let ask_resp = s.resp::<AskResponse>();
    // Data of the event stream's phase and progress events: no operation
    // returns them as JSON, but clients of the stream find their schemas here.
    let _ = s.resp::<PhaseEvent>();
    let _ = s.resp::<crate::serve::progress::ProgressEvent>();
    let check_body = s.req::<CheckBody>();
    let check_resp = s.resp::<crate::check::CheckReport>();
    let example_list = s.resp::<ExampleList>();
    let example_body = s.req::<ExampleBody>();
    let example_added = s.resp::<ExampleAdded>();
    let trace = json!({"type": "object", "description": "A lucy trace (the format of `lucy ask --trace`, documented in docs/phases.md)."});
    let svg = json!({"description": "The join path as an SVG document.", "content": {"image/svg+xml": {"schema": {"type": "string"}}}});
    let auth = [("401", "Missing or wrong bearer token (only when the server has LUCY_SERVE_TOKEN).")];
    let body_errs = [
        ("400", "Bad input: unknown model, table or column, bad option, malformed JSON."),
        ("413", "Request body larger than the server's --max-body."),
        ("415", "The body is not sent as application/json."),
        ("422", "The body's JSON does not have the documented fields."),
    ];
    let busy = [
        ("429", "The server already runs --max-concurrent ask/view requests; retry after the Retry-After seconds."),
        ("504", "The request took longer than the server's --request-timeout."),
    ];
    let errs = |list: &[&[(&str, &str)]]| {
        let mut m = Map::new();
        for l in list {
            m.extend(errors(&err, l));
        }
        m
    };
    let ok = |schema: &Value, what: &str| {
        let mut r = json_body(schema.clone());
        r["description"] = json!(what);
        r
    };
    let name_param = json!([{"name": "name", "in": "path", "required": true, "schema": {"type": "string"}, "description": "Model name"}]);
    let id_param = json!([{"name": "id", "in": "path", "required": true, "schema": {"type": "string"}, "description": "Trace id from POST /v1/ask"}]);
    let mut ask_ok = ok(&ask_resp, "The ask's result (phase failures are results too: see `failure`).");
    ask_ok["content"]["text/event-stream"] = json!({
        "schema": {"type": "string"},
        "description": "With `Accept: text/event-stream`: `progress` events as a step starts and each LLM prompt is sent and answered (data: ProgressEvent), one event per finished phase (`match_tables`, `generate_view`, `query_view`; data: PhaseEvent), then `result` (data: AskResponse) or `error` (data: ErrorBody)."
    });
    let paths = json!({
        "/healthz": {"get": op("Liveness", "Always answers, without a token.", ok(&health, "The server is up."), Map::new(), None, None)},
        "/v1/models": {"get": op("List the loaded dbModels", "", ok(&model_list, "The models."), errs(&[&auth]), None, None)},
        "/v1/models/{name}": {"get": op(
            "One dbModel",
            "Tables, relationships, patterns, constraints and core tables.",
            ok(&model_detail, "The model."),
            errs(&[&auth, &[("404", "No model of that name.")]]),
            None,
            Some(name_param.clone()),
        )},
        "/v1/models/{name}/examples": {
            "get": op(
                "The model's verified queries",
                "The (question, SQL) pairs of MODEL.examples.jsonl beside the model file, like `lucy examples list --json`. An unreadable file is a 400 naming its line.",
                ok(&example_list, "The examples (none when the file does not exist)."),
                errs(&[&auth, &[("400", "The examples file has a bad line."), ("404", "No model of that name.")]]),
                None,
                Some(name_param.clone()),
            ),
            "post": op(
                "Add a verified query",
                "Like `lucy examples add`: the SQL is checked against the model with `lucy check`'s rules (and run on the model's database when `execute`), then appended to MODEL.examples.jsonl. A finding, an execution error or a duplicate question is a 400 and nothing is written.",
                ok(&example_added, "Added."),
                errs(&[&auth, &body_errs, &busy, &[("404", "No model of that name.")]]),
                Some(example_body),
                Some(name_param.clone()),
            ),
        },
        "/v1/models/reload": {"post": op(
            "Reload every model from disk",
            "Like SIGHUP. A bad model keeps the previous set loaded and answers 500 naming the file.",
            ok(&reloaded, "Reloaded."),
            errs(&[&auth, &[("500", "A model file is invalid; the previous models stay loaded.")]]),
            None,
            None,
        )},
        "/v1/view": {"post": op(
            "GenerateView for given tables (no LLM)",
            "The same result as `lucy view --json`; an infeasible request is a 200 with status `infeasible` and an explanation.",
            ok(&view_resp, "The view."),
            errs(&[&auth, &body_errs, &busy]),
            Some(view_body),
            None,
        )},
        "/v1/ask": {"post": op(
            "A question end to end",
            "MatchTables, GenerateView, QueryView and optional execution, like `lucy ask --json`. Send `Accept: text/event-stream` to receive each phase as it finishes.",
            ask_ok,
            errs(&[&auth, &body_errs, &busy, &[("502", "The LLM failed in a way the pipeline could not record as a phase failure.")]]),
            Some(ask_body),
            None,
        )},
        "/v1/check": {"post": op(
            "Check SQL over the model's base tables",
            "Like `lucy check --json`: declared joins, C3 (m:m through the junction), C4 (lookups), forbidden tables and relationships, names, fan-out of aggregates. Findings are a 200; SQL that is not one SELECT is a 400.",
            ok(&check_resp, "The findings (empty: clean)."),
            errs(&[&auth, &body_errs, &busy]),
            Some(check_body),
            None,
        )},
        "/v1/traces/{id}": {"get": op(
            "The trace of an earlier ask",
            "The server keeps the last --trace-cap traces in memory.",
            ok(&trace, "The trace, as `lucy ask --trace` writes it."),
            errs(&[&auth, &[("404", "No such trace (never made, or dropped).")]]),
            None,
            Some(id_param.clone()),
        )},
        "/v1/traces/{id}/svg": {"get": op(
            "The join path of an earlier ask, as SVG",
            "",
            svg.clone(),
            errs(&[&auth, &[("404", "No such trace."), ("422", "The trace has no GenerateView result.")]]),
            None,
            Some(id_param),
        )},
        "/v1/traces/svg": {"post": op(
            "The join path of a trace file, as SVG",
            "For a trace written by `lucy ask --trace` (the web page's drag and drop). The model named in the trace adds the refused neighbourhood when it is loaded.",
            svg,
            errs(&[&auth, &body_errs]),
            Some(trace),
            None,
        )},
    });
    let components = s.components();
    json!({
        "openapi": "3.1.0",
        "info": {
            "title": "lucy serve",
            "version": env!("CARGO_PKG_VERSION"),
            "description": "Text-to-SQL query planner: an LLM understands the question, a constraint solver owns the joins. Same JSON shapes as `lucy … --json`. See docs/serve.md."
        },
        "paths": paths,
        "components": {
            "schemas": components,
            "securitySchemes": {"bearer": {"type": "http", "scheme": "bearer", "description": "LUCY_SERVE_TOKEN; required when the server has one (always on a non-loopback address)."}}
        },
        "security": [{}, {"bearer": []}]
    })
}
