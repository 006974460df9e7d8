//! Validation of a dbModel beyond what serde checks.

use crate::error::{Error, ModelIssue, Result};
use crate::graph::SchemaGraph;
use crate::types::DbModel;

/// Every issue found in `model`.
pub fn issues(model: &DbModel) -> Vec<ModelIssue> {
    match SchemaGraph::new(model.clone()) {
        Ok(_) => Vec::new(),
        Err(Error::Model(v)) => v,
        Err(e) => vec![ModelIssue { file: None, path: "$".into(), message: e.to_string(), hint: String::new() }],
    }
}

/// `Ok` when the model has no issues; otherwise `Error::Model` with `file` set.
pub fn check(model: &DbModel, file: Option<&str>) -> Result<()> {
    let mut v = issues(model);
    if v.is_empty() {
        return Ok(());
    }
    for i in &mut v {
        i.file = file.map(str::to_string);
    }
    Err(Error::Model(v))
}
