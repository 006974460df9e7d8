//! Loading, validating and importing dbModels.

pub mod import;
pub mod validate;

use std::path::Path;

use crate::error::{Error, Result};
use crate::types::DbModel;

/// Parse a dbModel from JSON text. `file` is used in error messages.
pub fn parse(text: &str, file: Option<&str>) -> Result<DbModel> {
    serde_json::from_str(text).map_err(|e| {
        Error::Model(vec![crate::error::ModelIssue {
            file: file.map(str::to_string),
            path: "$".into(),
            message: e.to_string(),
            hint: "fix the JSON syntax or field names".into(),
        }])
    })
}

/// Read, parse and validate a dbModel file.
pub fn load(path: impl AsRef<Path>) -> Result<DbModel> {
    let path = path.as_ref();
    let text = crate::error::read_to_string(path)?;
    let file = path.display().to_string();
    let model = parse(&text, Some(&file))?;
    validate::check(&model, Some(&file))?;
    Ok(model)
}
