//! The view the check tests run on: GenerateView over the paper's DDO model
//! for the given tables and attributes (shared by the fan-out, DISTINCT and
//! COUNT(*) tests).

use std::path::Path;

use crate::types::{ColumnRef, ViewRequest, ViewResult};
use crate::SchemaGraph;

const MODEL: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/dbmodels/ddo.json");

/// DDO's view over `tables` with the attributes `attrs` (table, column).
pub(super) fn ddo_view(tables: &[&str], attrs: &[(&str, &str)]) -> ViewResult {
    let g = SchemaGraph::new(crate::model::load(Path::new(MODEL)).unwrap()).unwrap();
    let mut req = ViewRequest::new(tables.iter().map(|t| t.to_string()).collect());
    req.attributes = attrs.iter().map(|(t, c)| ColumnRef::new(*t, *c)).collect();
    crate::solve::generate_view(&g, &req).unwrap()
}
