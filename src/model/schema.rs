//! The JSON Schema of the native dbModel format, generated from the types
//! with schemars. `docs/dbmodel.schema.json` is this output
//! (`lucy model schema > docs/dbmodel.schema.json`); a test keeps the two
//! equal.

use crate::types::DbModel;

/// The JSON Schema of `DbModel`.
pub fn json_schema() -> serde_json::Value {
    schemars::schema_for!(DbModel).to_value()
}

/// The schema as committed in docs/: pretty JSON with a final newline.
pub fn json_schema_text() -> String {
    let mut s = serde_json::to_string_pretty(&json_schema()).unwrap_or_default();
    s.push('\n');
    s
}
