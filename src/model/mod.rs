//! Loading, validating and importing dbModels.
//!
//! A dbModel comes in two forms (docs/dbmodel.md): the native one-file form
//! (`DbModel` serialized) and the split-file form of the Lucy paper's
//! Appendix D.1, recognised by `tables` being a JSON object whose entries
//! point at `<Table>.json` / `<Table>_types.json` files. Both load into the
//! same `DbModel`.

pub mod diff;
pub mod import;
pub mod lint;
pub mod parse;
pub mod resolve;
pub mod schema;
pub mod split;
pub mod validate;

pub(crate) use resolve::closest;

use std::path::Path;

use crate::error::{Error, Result};
use crate::types::DbModel;

/// Parse a dbModel from JSON text. `file` is used in error messages and,
/// for the split-file form, to resolve the relative paths of the table files
/// (against the file's directory; the current directory when `file` is
/// `None`). Only JSON syntax and types are checked here; `load` also
/// validates.
pub fn parse(text: &str, file: Option<&str>) -> Result<DbModel> {
    let value = parse::value(text, file).map_err(Error::Model)?;
    if split::is_split(&value) {
        let base = file.and_then(|f| Path::new(f).parent()).unwrap_or(Path::new(""));
        return split::convert(&value, file, base).map_err(Error::Model);
    }
    parse::native(&value, file).map_err(Error::Model)
}

/// Read, parse and fully validate a dbModel file (either form). Issues in
/// a split-form model point at the main file's entries
/// (`$.tables.Client.primary_key[0]`).
pub fn load(path: impl AsRef<Path>) -> Result<DbModel> {
    let path = path.as_ref();
    let text = crate::error::read_to_string(path)?;
    let file = path.display().to_string();
    let value = parse::value(&text, Some(&file)).map_err(Error::Model)?;
    if split::is_split(&value) {
        let base = path.parent().unwrap_or(Path::new(""));
        let (model, origins) = split::convert_with_origins(&value, Some(&file), base).map_err(Error::Model)?;
        return match validate::check(&model, Some(&file)) {
            Ok(()) => Ok(model),
            Err(Error::Model(issues)) => Err(Error::Model(
                issues
                    .into_iter()
                    .map(|mut i| {
                        i.path = origins.locate(&i.path);
                        i
                    })
                    .collect(),
            )),
            Err(e) => Err(e),
        };
    }
    let model = parse::native(&value, Some(&file)).map_err(Error::Model)?;
    validate::check(&model, Some(&file))?;
    Ok(model)
}
